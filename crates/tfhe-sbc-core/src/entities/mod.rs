//! Ciphertext and key entities, generic over their storage: a fixed array or a borrowed slice on the device,
//! a `Vec` behind the `alloc` feature. Algorithms take and return these; they never allocate.

mod glwe_ciphertext;
mod glwe_secret_key;
mod lwe_ciphertext;
mod seeded_glwe_ciphertext;

pub use glwe_ciphertext::GlweCiphertext;
pub use glwe_secret_key::{GlweSecretKey, KeyStorage, ReadOnlyBytes, pack_secret_key, unpack_secret_key};
pub use lwe_ciphertext::LweCiphertext;
pub use seeded_glwe_ciphertext::{MASK_SEED_BYTES, SeededGlweCiphertext};

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use glwe_ciphertext::GlweCiphertextOwned;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use glwe_secret_key::GlweSecretKeyOwned;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use lwe_ciphertext::LweCiphertextOwned;
