//! A GLWE ciphertext `(A_0, …, A_{k-1}, B)`: `k` mask polynomials, then the body, each of `N` coefficients.

use crate::dimensions::{GlweDimension, PolynomialSize};
use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;
use core::marker::PhantomData;

/// A GLWE ciphertext over the torus `T`, stored in `C` (`[T; 2N]`, `&[T]`, `&mut [T]`, `Vec<T>`, …) as
/// tfhe-rs lays it out: the `k` mask polynomials one after another, then the body polynomial.
///
/// With the `serde` feature it serializes as its fields (`data`, `polynomial_size`) and deserializes through
/// [`GlweCiphertext::from_container`], so a length that is not `(k + 1) * N` with `k >= 1`, or `N = 0`, is an
/// error.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        try_from = "GlweCiphertextRepr<C>",
        bound(
            serialize = "C: serde::Serialize",
            deserialize = "T: UnsignedTorus, C: AsRef<[T]> + serde::Deserialize<'de>"
        )
    )
)]
pub struct GlweCiphertext<T, C> {
    data: C,
    polynomial_size: PolynomialSize,
    #[cfg_attr(feature = "serde", serde(skip))]
    _torus: PhantomData<T>,
}

/// The serialized fields of a [`GlweCiphertext`], before validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct GlweCiphertextRepr<C> {
    data: C,
    polynomial_size: PolynomialSize,
}

#[cfg(feature = "serde")]
impl<T: UnsignedTorus, C: AsRef<[T]>> TryFrom<GlweCiphertextRepr<C>> for GlweCiphertext<T, C> {
    type Error = Error;

    fn try_from(repr: GlweCiphertextRepr<C>) -> Result<Self> {
        Self::from_container(repr.data, repr.polynomial_size)
    }
}

/// A GLWE ciphertext that owns a `Vec`.
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub type GlweCiphertextOwned<T> = GlweCiphertext<T, alloc::vec::Vec<T>>;

impl<T: UnsignedTorus, C: AsRef<[T]>> GlweCiphertext<T, C> {
    /// Wraps `data`, whose length must be a non-zero multiple `(k + 1) * N` with `k >= 1`.
    pub fn from_container(data: C, polynomial_size: PolynomialSize) -> Result<Self> {
        let len = data.as_ref().len();
        let n = polynomial_size.0;
        if n == 0 || len % n != 0 || len / n < 2 {
            return Err(Error::WrongLength {
                expected: 2 * n,
                found: len,
            });
        }
        Ok(Self {
            data,
            polynomial_size,
            _torus: PhantomData,
        })
    }

    /// `N`.
    pub fn polynomial_size(&self) -> PolynomialSize {
        self.polynomial_size
    }

    /// `k`.
    pub fn glwe_dimension(&self) -> GlweDimension {
        GlweDimension(self.data.as_ref().len() / self.polynomial_size.0 - 1)
    }

    /// The `k * N` mask coefficients.
    pub fn mask(&self) -> &[T] {
        let data = self.data.as_ref();
        &data[..data.len() - self.polynomial_size.0]
    }

    /// The `N` body coefficients.
    pub fn body(&self) -> &[T] {
        let data = self.data.as_ref();
        &data[data.len() - self.polynomial_size.0..]
    }

    /// All coefficients: mask, then body.
    pub fn as_slice(&self) -> &[T] {
        self.data.as_ref()
    }

    /// The storage.
    pub fn into_container(self) -> C {
        self.data
    }
}

impl<T: UnsignedTorus, C: AsMut<[T]> + AsRef<[T]>> GlweCiphertext<T, C> {
    /// The mask and the body, mutably.
    pub fn mask_and_body_mut(&mut self) -> (&mut [T], &mut [T]) {
        let n = self.polynomial_size.0;
        let data = self.data.as_mut();
        let split = data.len() - n;
        data.split_at_mut(split)
    }
}

impl<T: UnsignedTorus, C: AsRef<[T]>> core::fmt::Debug for GlweCiphertext<T, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweCiphertext")
            .field("glwe_dimension", &self.glwe_dimension().0)
            .field("polynomial_size", &self.polynomial_size.0)
            .finish_non_exhaustive()
    }
}
