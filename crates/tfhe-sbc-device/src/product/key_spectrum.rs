//! The secret key's spectra, computed once and reused for every product (the paper's "reuse").

use crate::error::{Error, Result};
use crate::product::NegacyclicProduct;
use tfhe_sbc_core::dimensions::{GlweDimension, PolynomialSize};
use tfhe_sbc_core::entities::{GlweSecretKey, KeyStorage};
use zeroize::Zeroize;

/// The spectra of the `k` polynomials of a binary GLWE key, one after another in `C` (`k * N` elements of
/// `S`: `[f64; N]` for a `k = 1` key on a device, a `Vec` on a server).
///
/// Secret: zeroized on drop, redacted in `Debug`, not `Clone`.
pub struct GlweKeySpectrum<S: Zeroize, C: AsRef<[S]> + AsMut<[S]>> {
    data: C,
    polynomial_size: PolynomialSize,
    _spectral: core::marker::PhantomData<S>,
}

impl<S: Zeroize, C: AsRef<[S]> + AsMut<[S]>> GlweKeySpectrum<S, C> {
    /// Wraps storage for `k * N` spectral elements (its length must be a non-zero multiple of `N`); fill it
    /// with [`compute_glwe_key_spectrum`].
    pub fn from_container(data: C, polynomial_size: PolynomialSize) -> Result<Self> {
        let (len, n) = (data.as_ref().len(), polynomial_size.0);
        if n == 0 || len == 0 || len % n != 0 {
            return Err(Error::WrongLength {
                expected: n,
                found: len,
            });
        }
        Ok(Self {
            data,
            polynomial_size,
            _spectral: core::marker::PhantomData,
        })
    }

    /// `N`.
    pub fn polynomial_size(&self) -> PolynomialSize {
        self.polynomial_size
    }

    /// `k`.
    pub fn glwe_dimension(&self) -> GlweDimension {
        GlweDimension(self.data.as_ref().len() / self.polynomial_size.0)
    }

    /// The `k * N` spectral elements. Handle with care: a function of the secret key.
    pub fn as_slice(&self) -> &[S] {
        self.data.as_ref()
    }

    /// The `k * N` spectral elements, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [S] {
        self.data.as_mut()
    }
}

/// Writes the spectra of `key`'s `k` polynomials into `spectrum` (the same `k` and `N`).
pub fn compute_glwe_key_spectrum<P: NegacyclicProduct, K: KeyStorage>(
    product: &P,
    key: &GlweSecretKey<K>,
    spectrum: &mut [P::Spectral],
) -> Result<()> {
    let n = product.polynomial_size();
    if key.polynomial_size().0 != n {
        return Err(Error::PolynomialSizeMismatch {
            expected: n,
            found: key.polynomial_size().0,
        });
    }
    Error::check_length(key.as_bytes().len(), spectrum.len())?;
    for (i, s) in spectrum.chunks_exact_mut(n).enumerate() {
        product.forward_binary(key.polynomial(i), s);
    }
    Ok(())
}

impl<S: Zeroize, C: AsRef<[S]> + AsMut<[S]>> Drop for GlweKeySpectrum<S, C> {
    fn drop(&mut self) {
        self.data.as_mut().iter_mut().for_each(Zeroize::zeroize);
    }
}

impl<S: Zeroize, C: AsRef<[S]> + AsMut<[S]>> zeroize::ZeroizeOnDrop for GlweKeySpectrum<S, C> {}

impl<S: Zeroize, C: AsRef<[S]> + AsMut<[S]>> core::fmt::Debug for GlweKeySpectrum<S, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweKeySpectrum")
            .field("glwe_dimension", &self.glwe_dimension().0)
            .field("polynomial_size", &self.polynomial_size.0)
            .field("spectrum", &"<redacted>")
            .finish()
    }
}
