//! Whether a key or a parameter set fits an encryptor: its polynomial size `N`, its GLWE dimension `K` and
//! its torus width are constants of the type, checked once where a key is set.

use crate::error::{Error, Result};
use tfhe_sbc_core::entities::{GlweSecretKey, KeyStorage};
use tfhe_sbc_core::parameters::GlweParameters;
use tfhe_sbc_core::torus::UnsignedTorus;

/// Checks a polynomial size and a GLWE dimension against `N` and `K`.
fn check_dimensions<const N: usize, const K: usize>(polynomial_size: usize, glwe_dimension: usize) -> Result<()> {
    if polynomial_size != N {
        return Err(Error::PolynomialSizeMismatch {
            expected: N,
            found: polynomial_size,
        });
    }
    if glwe_dimension != K {
        return Err(Error::UnsupportedGlweDimension(glwe_dimension));
    }
    Ok(())
}

/// Checks that `key` has `K` polynomials of `N` coefficients.
pub(crate) fn check_key_shape<const N: usize, const K: usize, C: KeyStorage>(key: &GlweSecretKey<C>) -> Result<()> {
    check_dimensions::<N, K>(key.polynomial_size().0, key.glwe_dimension().0)
}

/// Checks that `params` is a set over the torus `T` with polynomial size `N` and GLWE dimension `K`: what an
/// encryptor instantiated for `T`, `N` and `K` can encrypt.
pub(crate) fn check_glwe_parameters<T: UnsignedTorus, const N: usize, const K: usize>(
    params: &GlweParameters,
) -> Result<()> {
    params.check_torus::<T>()?;
    check_dimensions::<N, K>(params.polynomial_size().0, params.glwe_dimension().0)
}
