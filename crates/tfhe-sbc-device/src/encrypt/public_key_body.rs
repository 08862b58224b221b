//! A public key's body as the caller holds it ([`PublicKeyBody`]): what the encryption
//! ([`crate::encrypt::public_key_encryption`]) and the key check ([`crate::encrypt::public_key_check`]) both
//! read, in a file of its own so that neither imports the other for it.

use crate::error::{Error, Result};
use tfhe_sbc_core::torus::UnsignedTorus;

/// A public key's body `b` as the caller holds it: words, or the little-endian bytes of a public-key file
/// (read in place, so a device never copies a flash-resident key into RAM).
#[derive(Clone, Copy, Debug)]
pub enum PublicKeyBody<'a, T> {
    /// The `N` body words.
    Words(&'a [T]),
    /// The `N` body words' little-endian bytes (`N * T::BYTES`).
    LeBytes(&'a [u8]),
}

impl<T: UnsignedTorus> PublicKeyBody<'_, T> {
    /// The number of body words.
    pub fn len(&self) -> usize {
        match self {
            Self::Words(words) => words.len(),
            Self::LeBytes(bytes) => bytes.len() / T::BYTES,
        }
    }

    /// Whether the body has no word.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that the body has exactly `n` words (and, as bytes, no partial word).
    pub(crate) fn check_length(&self, n: usize) -> Result<()> {
        match self {
            Self::Words(words) => Error::check_length(n, words.len()),
            Self::LeBytes(bytes) => Error::check_length(n * T::BYTES, bytes.len()),
        }
    }

    /// Word `i`.
    pub(crate) fn word(&self, i: usize) -> T {
        match self {
            Self::Words(words) => words[i],
            Self::LeBytes(bytes) => T::from_le_slice(&bytes[i * T::BYTES..(i + 1) * T::BYTES]),
        }
    }
}
