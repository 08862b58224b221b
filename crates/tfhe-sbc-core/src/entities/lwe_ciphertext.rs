//! An LWE ciphertext `(a_0, …, a_{n-1}, b)`.

use crate::dimensions::LweDimension;
use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;
use core::marker::PhantomData;

/// An LWE ciphertext over the torus `T`, stored in `C` as tfhe-rs lays it out: `n` mask elements, then the
/// body.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LweCiphertext<T, C> {
    data: C,
    #[cfg_attr(feature = "serde", serde(skip))]
    _torus: PhantomData<T>,
}

/// An LWE ciphertext that owns a `Vec`.
#[cfg(feature = "alloc")]
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
