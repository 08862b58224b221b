//! Pseudo-random number generation with BLAKE2: TFHE-SBC paper §6.2 ("Pseudo-random number generation
//! with BLAKE2", the "accelerated random number generation" box of Fig. 2). Specified below and in [`xof`].
//!
//! Only a 32-byte seed comes from the operating system or a hardware TRNG ([`seeding`]); a keyed BLAKE2 XOF
//! ([`xof::KeyedXof`]: BLAKE2b on 64-bit targets, BLAKE2s on 32-bit ones, each named once in
//! [`construction`]) expands it into the secret stream (mask seeds and noise) and, under another
//! personalization, expands each public mask seed into the mask ([`mask`]). Its compressions run in several
//! independent lanes (`lanes` for BLAKE2b, `blake2s`), compiled per instruction set (`dispatch`).

pub(crate) mod blake2s;
pub mod construction;
pub(crate) mod dispatch;
pub(crate) mod lanes;
pub mod mask;
pub mod seeding;
pub mod xof;

pub use construction::{Blake2bCounter, Blake2sCounter, DeviceConstruction, XofConstruction};
pub use mask::MaskXof;
pub use xof::{Blake2bXof, Blake2sXof, DeviceXof, KeyedXof};
