//! A seeded GLWE ciphertext: the mask is not stored but regenerated from a 32-byte seed.

use crate::dimensions::PolynomialSize;
use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;
use core::marker::PhantomData;

/// The bytes of a mask seed.
pub const MASK_SEED_BYTES: usize = 32;

/// A GLWE ciphertext (any `k`) whose `k` mask polynomials are the expansion of `seed` (see the device crate's
/// `mask` module for the exact expansion), so it travels as `32 + N * BYTES` bytes instead of
/// `(k + 1) * N * BYTES`.
///
/// With the `serde` feature it serializes as `seed`, `polynomial_size` and `body`, and deserializes through
/// [`SeededGlweCiphertext::from_parts`], so a body whose length is not `N`, or `N = 0`, is an error.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Deserialize),
    serde(
        try_from = "SeededGlweCiphertextRepr<C>",
        bound(deserialize = "T: UnsignedTorus, C: AsRef<[T]> + serde::Deserialize<'de>")
    )
)]
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

/// The serialized fields of a [`SeededGlweCiphertext`], borrowed for serialization.
#[cfg(feature = "serde")]
#[derive(serde::Serialize)]
#[serde(rename = "SeededGlweCiphertext")]
struct SeededGlweCiphertextRef<'a, C> {
    seed: &'a [u8; MASK_SEED_BYTES],
    polynomial_size: PolynomialSize,
    body: &'a C,
}

/// The serialized fields of a [`SeededGlweCiphertext`], before validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(rename = "SeededGlweCiphertext")]
struct SeededGlweCiphertextRepr<C> {
    seed: [u8; MASK_SEED_BYTES],
    polynomial_size: PolynomialSize,
    body: C,
}

#[cfg(feature = "serde")]
impl<T: UnsignedTorus, C: AsRef<[T]> + serde::Serialize> serde::Serialize for SeededGlweCiphertext<T, C> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> core::result::Result<S::Ok, S::Error> {
        SeededGlweCiphertextRef {
            seed: &self.seed,
            polynomial_size: self.polynomial_size(),
            body: &self.body,
        }
        .serialize(serializer)
    }
}

#[cfg(feature = "serde")]
impl<T: UnsignedTorus, C: AsRef<[T]>> TryFrom<SeededGlweCiphertextRepr<C>> for SeededGlweCiphertext<T, C> {
    type Error = Error;

    fn try_from(repr: SeededGlweCiphertextRepr<C>) -> Result<Self> {
        Self::from_parts(repr.seed, repr.body, repr.polynomial_size)
    }
}

impl<T: UnsignedTorus, C: AsRef<[T]>> core::fmt::Debug for SeededGlweCiphertext<T, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SeededGlweCiphertext")
            .field("polynomial_size", &self.polynomial_size().0)
            .finish_non_exhaustive()
    }
}
