//! An LWE ciphertext `(a_0, …, a_{n-1}, b)`.

use crate::dimensions::LweDimension;
use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;
use core::marker::PhantomData;

/// An LWE ciphertext over the torus `T`, stored in `C` as tfhe-rs lays it out: `n` mask elements, then the
/// body.
///
/// With the `serde` feature it serializes as its `data` and deserializes through
/// [`LweCiphertext::from_container`], so fewer than 2 elements is an error.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        try_from = "LweCiphertextRepr<C>",
        bound(
            serialize = "C: serde::Serialize",
            deserialize = "T: UnsignedTorus, C: AsRef<[T]> + serde::Deserialize<'de>"
        )
    )
)]
pub struct LweCiphertext<T, C> {
    data: C,
    #[cfg_attr(feature = "serde", serde(skip))]
    _torus: PhantomData<T>,
}

/// The serialized fields of an [`LweCiphertext`], before validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct LweCiphertextRepr<C> {
    data: C,
}

#[cfg(feature = "serde")]
impl<T: UnsignedTorus, C: AsRef<[T]>> TryFrom<LweCiphertextRepr<C>> for LweCiphertext<T, C> {
    type Error = Error;

    fn try_from(repr: LweCiphertextRepr<C>) -> Result<Self> {
        Self::from_container(repr.data)
    }
}

/// An LWE ciphertext that owns a `Vec`.
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub type LweCiphertextOwned<T> = LweCiphertext<T, alloc::vec::Vec<T>>;

impl<T: UnsignedTorus, C: AsRef<[T]>> LweCiphertext<T, C> {
    /// Wraps `data` (at least 2 elements: a mask of dimension `len - 1`, then the body).
    pub fn from_container(data: C) -> Result<Self> {
        let len = data.as_ref().len();
        if len < 2 {
            return Err(Error::WrongLength {
                expected: 2,
                found: len,
            });
        }
        Ok(Self {
            data,
            _torus: PhantomData,
        })
    }

    /// `n`.
    pub fn lwe_dimension(&self) -> LweDimension {
        LweDimension(self.data.as_ref().len() - 1)
    }

    /// The mask `a`.
    pub fn mask(&self) -> &[T] {
        let data = self.data.as_ref();
        &data[..data.len() - 1]
    }

    /// The body `b`.
    pub fn body(&self) -> T {
        let data = self.data.as_ref();
        data[data.len() - 1]
    }

    /// Mask then body.
    pub fn as_slice(&self) -> &[T] {
        self.data.as_ref()
    }

    /// The storage.
    pub fn into_container(self) -> C {
        self.data
    }
}

impl<T: UnsignedTorus, C: AsMut<[T]> + AsRef<[T]>> LweCiphertext<T, C> {
    /// The mask and the body, mutably.
    pub fn mask_and_body_mut(&mut self) -> (&mut [T], &mut T) {
        let data = self.data.as_mut();
        let (mask, body) = data.split_at_mut(data.len() - 1);
        (mask, &mut body[0])
    }
}

impl<T: UnsignedTorus, C: AsRef<[T]>> core::fmt::Debug for LweCiphertext<T, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LweCiphertext")
            .field("lwe_dimension", &self.lwe_dimension().0)
            .finish_non_exhaustive()
    }
}
