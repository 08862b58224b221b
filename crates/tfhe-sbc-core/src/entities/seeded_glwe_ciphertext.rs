//! A seeded GLWE ciphertext: the mask is not stored but regenerated from a 32-byte seed.

use crate::dimensions::PolynomialSize;
use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;
use core::marker::PhantomData;

/// The bytes of a mask seed.
pub const MASK_SEED_BYTES: usize = 32;

/// A GLWE ciphertext with `k = 1` whose mask polynomial is the expansion of `seed` (see the device crate's
/// `mask` module for the exact expansion), so it travels as `32 + N * BYTES` bytes instead of
/// `2 * N * BYTES`.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SeededGlweCiphertext<T, C> {
    seed: [u8; MASK_SEED_BYTES],
    body: C,
    #[cfg_attr(feature = "serde", serde(skip))]
    _torus: PhantomData<T>,
}

impl<T: UnsignedTorus, C: AsRef<[T]>> SeededGlweCiphertext<T, C> {
    /// Wraps a seed and a body of `N` coefficients.
    pub fn from_parts(seed: [u8; MASK_SEED_BYTES], body: C, polynomial_size: PolynomialSize) -> Result<Self> {
        let len = body.as_ref().len();
        if len != polynomial_size.0 || len == 0 {
            return Err(Error::WrongLength {
                expected: polynomial_size.0,
                found: len,
            });
        }
        Ok(Self {
            seed,
            body,
            _torus: PhantomData,
        })
    }

    /// The mask seed.
    pub fn seed(&self) -> &[u8; MASK_SEED_BYTES] {
        &self.seed
    }

    /// The `N` body coefficients.
    pub fn body(&self) -> &[T] {
        self.body.as_ref()
    }

    /// `N`.
    pub fn polynomial_size(&self) -> PolynomialSize {
        PolynomialSize(self.body.as_ref().len())
    }

    /// The seed and the body storage.
    pub fn into_parts(self) -> ([u8; MASK_SEED_BYTES], C) {
        (self.seed, self.body)
    }
}

impl<T: UnsignedTorus, C: AsRef<[T]>> core::fmt::Debug for SeededGlweCiphertext<T, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SeededGlweCiphertext")
            .field("polynomial_size", &self.polynomial_size().0)
            .finish_non_exhaustive()
    }
}
