//! Pseudo-random number generation with BLAKE2: TFHE-SBC paper §6.2 ("Pseudo-random number generation
//! with BLAKE2", the "accelerated random number generation" box of Fig. 2). Specified below and in [`xof`].
//!
//! Only a 32-byte seed comes from the operating system or a hardware TRNG ([`seeding`]); the keyed BLAKE2b
//! XOF ([`xof::Blake2bXof`]) expands it into the secret stream (mask seeds and noise) and, under another
//! personalization, expands each public mask seed into the mask ([`mask`]). Its compression runs in
//! several independent lanes (`lanes`), compiled per instruction set (`dispatch`).

pub(crate) mod dispatch;
pub(crate) mod lanes;
pub mod mask;
pub mod seeding;
pub mod xof;

pub use xof::Blake2bXof;
