//! TRLWE (GLWE) encryption on the device: TFHE-SBC paper §6.1 steps 1-2 and §6.2, the device side of Fig. 2.
//!
//! * [`glwe_encryption`]: the one generic core, `b = sum_i a_i * s_i + plaintext + e`, generic in `k`, the
//!   torus and the product (paper §2.2; tfhe-rs `core_crypto::algorithms::glwe_encryption`).
//! * [`public_key_encryption`]: the same under a published public key (no secret key on the device);
//!   [`public_key_check`]: the one check every public key passes first (its body uniform on the torus, not
//!   a rotation of its mask).
//! * [`shell`]: the one encryptor shell, [`Encryptor`], holding a key kind ([`EncryptorKey`]) and one
//!   [`EncryptorState`] (CSPRNG, seeding, noise, body width, readiness, forget and ratchet): every
//!   encryptor has the same lifecycle (`EMPTY` in `.bss`, set key, seed, `is_ready`, `reseed`,
//!   `forget_key`, zeroize on drop).
//! * [`frame_encryptor`]: [`FrameEncryptor`], the one trait through which a frame is sealed.
//! * The key kinds: [`secret_key`] ([`GlweEncryptor`]: boolean bits, fleet or per-device key),
//!   [`public_key`] ([`PublicKeyEncryptor`]), [`integer`] ([`IntegerEncryptor`]: tfhe-rs radix blocks on
//!   the 64-bit torus), [`integer_public_key`] ([`IntegerPublicKeyEncryptor`]: the same blocks under a public
//!   key; one [`public_key::PublicKey`] kind serves both tori).
//! * [`compact_list`]: tfhe-rs's own `CompactCiphertextList` under a raw tfhe-rs compact public key,
//!   streaming ([`CompactListEncryptor`], [`compact_list_encryption`]) or through the NTT
//!   ([`CompactListNttEncryptor`]): lists any unmodified tfhe-rs server expands;
//!   [`compact_list_frame`] ([`CompactListFrameEncryptor`]) seals such lists into authenticated frames.
//! * `shape`: whether a key or a parameter set fits an encryptor's `N`, `K` and torus.
//! * [`decryption`]: the trusted party's side, for tests and provisioning checks.

pub mod compact_list;
pub mod compact_list_encryption;
pub mod compact_list_frame;
pub mod decryption;
pub mod frame_encryptor;
pub mod glwe_encryption;
pub mod integer;
pub mod integer_public_key;
pub mod public_key;
pub mod public_key_body;
pub mod public_key_check;
pub mod public_key_encryption;
pub mod secret_key;
mod shape;
pub mod shell;
pub mod stack_scrub;
mod state;

pub use compact_list::{CompactListEncryptor, CompactListNttEncryptor};
pub use compact_list_frame::CompactListFrameEncryptor;
pub use frame_encryptor::FrameEncryptor;
pub use integer::IntegerEncryptor;
pub use integer_public_key::IntegerPublicKeyEncryptor;
pub use public_key::PublicKeyEncryptor;
pub use secret_key::GlweEncryptor;
pub use shell::{Encryptor, EncryptorKey};
pub use state::EncryptorState;
