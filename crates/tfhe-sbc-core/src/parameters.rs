//! GLWE parameter sets: named constants and validated custom sets.

use crate::dimensions::{GlweDimension, PolynomialSize};
use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;

/// The smallest polynomial size a parameter set may use.
pub const MIN_POLYNOMIAL_SIZE: usize = 64;
/// The largest polynomial size a parameter set may use.
pub const MAX_POLYNOMIAL_SIZE: usize = 4096;

/// A parameter set's identifier, as carried in the wire format. `0` means "custom, agreed out of band".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ParameterSetId(pub u16);

impl ParameterSetId {
    /// A custom set, built with [`GlweParameters::new`].
    pub const CUSTOM: Self = Self(0);
    /// [`TFHE_LIB_GLWE_1024`].
    pub const TFHE_LIB_GLWE_1024: Self = Self(1);
}

/// The distribution of the secret key's coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum KeyDistribution {
    /// Uniform in `{0, 1}` (TFHE, tfhe-rs).
    Binary,
}

/// The parameters of a GLWE (for `k = 1`, TRLWE) encryption.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GlweParameters {
    id: ParameterSetId,
    torus_bits: u32,
    polynomial_size: PolynomialSize,
    glwe_dimension: GlweDimension,
    noise_std_dev: f64,
    key_distribution: KeyDistribution,
}

/// The TFHE-SBC paper's Table 3: `q = 2^32`, `N = 1024`, `k = 1`, `sigma = 2^-25`, binary key.
///
/// This is exactly the GLWE side of tfhe-rs's `tfhe::boolean::parameters::TFHE_LIB_PARAMETERS` (which
/// adds an LWE dimension of 630 and its key-switching and bootstrapping decompositions), so ciphertexts
/// sample-extracted from it are inputs of tfhe-rs's boolean key switch.
///
/// # Security
/// tfhe-rs documents `TFHE_LIB_PARAMETERS` at about **120 bits** of security, estimated by Zama with the
/// lattice-estimator (the tfhe-rs `boolean::parameters` documentation). The paper's Table 3 calls the same
/// numbers 128-bit; we rely on tfhe-rs's more conservative estimate. The GLWE side alone (LWE dimension
/// `k*N = 1024`, noise `2^-25` on a 32-bit torus, binary key) is not the weakest link of that set: the
/// 630-dimensional LWE key of the bootstrapping is.
pub const TFHE_LIB_GLWE_1024: GlweParameters = GlweParameters {
    id: ParameterSetId::TFHE_LIB_GLWE_1024,
    torus_bits: 32,
    polynomial_size: PolynomialSize(1024),
    glwe_dimension: GlweDimension(1),
    // 2^-25
    noise_std_dev: 2.980_232_238_769_531_3e-8,
    key_distribution: KeyDistribution::Binary,
};

impl GlweParameters {
    /// A custom parameter set (id [`ParameterSetId::CUSTOM`]) with a binary key.
    ///
    /// `noise_std_dev` is in torus units (a fraction of 1, e.g. `2^-25`). Rejects a polynomial size that is
    /// not a power of two in `64..=4096`, `k = 0`, a torus width other than 32 or 64, and a standard
    /// deviation that is not finite, positive and below 1/2.
    ///
    /// No security or correctness analysis is made here: choosing a secure set is the caller's job.
    pub fn new(
        torus_bits: u32,
        polynomial_size: PolynomialSize,
        glwe_dimension: GlweDimension,
        noise_std_dev: f64,
    ) -> Result<Self> {
        let n = polynomial_size.0;
        if !n.is_power_of_two() {
            return Err(Error::PolynomialSizeNotPowerOfTwo(n));
        }
        if !(MIN_POLYNOMIAL_SIZE..=MAX_POLYNOMIAL_SIZE).contains(&n) {
            return Err(Error::PolynomialSizeOutOfRange {
                size: n,
                min: MIN_POLYNOMIAL_SIZE,
                max: MAX_POLYNOMIAL_SIZE,
            });
        }
        if glwe_dimension.0 == 0 {
            return Err(Error::ZeroGlweDimension);
        }
        if torus_bits != 32 && torus_bits != 64 {
            return Err(Error::TorusBitsMismatch {
                expected: torus_bits,
                found: 32,
            });
        }
        if !(noise_std_dev.is_finite() && noise_std_dev > 0.0 && noise_std_dev < 0.5) {
            return Err(Error::InvalidNoiseStdDev(noise_std_dev));
        }
        Ok(Self {
            id: ParameterSetId::CUSTOM,
            torus_bits,
            polynomial_size,
            glwe_dimension,
            noise_std_dev,
            key_distribution: KeyDistribution::Binary,
        })
    }

    /// The named set with this id, if any.
    pub const fn from_id(id: ParameterSetId) -> Option<Self> {
        match id.0 {
            1 => Some(TFHE_LIB_GLWE_1024),
            _ => None,
        }
    }

    /// The set's wire identifier.
    pub const fn id(&self) -> ParameterSetId {
        self.id
    }
    /// `log2 q`.
    pub const fn torus_bits(&self) -> u32 {
        self.torus_bits
    }
    /// `N`.
    pub const fn polynomial_size(&self) -> PolynomialSize {
        self.polynomial_size
    }
    /// `k`.
    pub const fn glwe_dimension(&self) -> GlweDimension {
        self.glwe_dimension
    }
    /// The noise standard deviation in torus units.
    pub const fn noise_std_dev(&self) -> f64 {
        self.noise_std_dev
    }
    /// The noise standard deviation in units of `1/q` (`2^-25 * 2^32 = 128` for [`TFHE_LIB_GLWE_1024`]).
    pub fn noise_std_dev_scaled(&self) -> f64 {
        libm::ldexp(self.noise_std_dev, self.torus_bits as i32)
    }
    /// The key distribution.
    pub const fn key_distribution(&self) -> KeyDistribution {
        self.key_distribution
    }
    /// Checks that the scalar type `T` has this set's torus width.
    pub fn check_torus<T: UnsignedTorus>(&self) -> Result<()> {
        if T::BITS == self.torus_bits {
            Ok(())
        } else {
            Err(Error::TorusBitsMismatch {
                expected: self.torus_bits,
                found: T::BITS,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tfhe_lib_set_matches_the_paper() {
        let p = TFHE_LIB_GLWE_1024;
        assert_eq!(p.noise_std_dev(), libm::ldexp(1.0, -25));
        assert_eq!(p.noise_std_dev_scaled(), 128.0);
        assert_eq!(p.polynomial_size(), PolynomialSize(1024));
        assert_eq!(p.glwe_dimension(), GlweDimension(1));
        assert_eq!(p.torus_bits(), 32);
        assert_eq!(GlweParameters::from_id(p.id()), Some(p));
        assert!(p.check_torus::<u32>().is_ok());
        assert_eq!(
            p.check_torus::<u64>(),
            Err(Error::TorusBitsMismatch {
                expected: 32,
                found: 64
            })
        );
    }

    #[test]
    fn custom_sets_are_validated() {
        let ok = |n, k, s| GlweParameters::new(32, PolynomialSize(n), GlweDimension(k), s);
        assert!(ok(2048, 1, 1e-9).is_ok());
        assert_eq!(ok(1000, 1, 1e-9), Err(Error::PolynomialSizeNotPowerOfTwo(1000)));
        assert!(matches!(
            ok(32, 1, 1e-9),
            Err(Error::PolynomialSizeOutOfRange { size: 32, .. })
        ));
        assert!(matches!(
            ok(8192, 1, 1e-9),
            Err(Error::PolynomialSizeOutOfRange { size: 8192, .. })
        ));
        assert_eq!(ok(1024, 0, 1e-9), Err(Error::ZeroGlweDimension));
        assert_eq!(ok(1024, 1, 0.0), Err(Error::InvalidNoiseStdDev(0.0)));
        assert_eq!(ok(1024, 1, -1.0), Err(Error::InvalidNoiseStdDev(-1.0)));
        assert!(matches!(ok(1024, 1, f64::NAN), Err(Error::InvalidNoiseStdDev(_))));
        assert!(GlweParameters::new(16, PolynomialSize(1024), GlweDimension(1), 1e-9).is_err());
        assert_eq!(ok(2048, 1, 1e-9).map(|p| p.id()), Ok(ParameterSetId::CUSTOM));
    }
}
