//! A GLWE parameter set ([`GlweParameters`]): its wire id, its shape (`q`, `N`, `k`), its noise and key
//! distributions, the validation of a custom set against tfhe-rs's 132-bit minimal-noise floor
//! ([`secure_noise`]) and the compact body width of each named set. The named sets themselves (and
//! [`GlweParameters::from_id`]) are in `named_sets.rs`, the serialized form in `serde_repr.rs`: both build on
//! this file, which names neither.

use super::noise_distribution::NoiseDistribution;
use super::secure_noise;
use crate::dimensions::{GlweDimension, PolynomialSize};
use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;

/// The smallest polynomial size a parameter set may use.
pub const MIN_POLYNOMIAL_SIZE: usize = 64;
/// The largest polynomial size a parameter set may use.
pub const MAX_POLYNOMIAL_SIZE: usize = 4096;
/// The largest LWE dimension `k * N` a custom set may have (it bounds `k`, and the ciphertext sizes a
/// deserialized set can ask for).
pub const MAX_LWE_DIMENSION: usize = 1 << 16;

/// A parameter set's identifier, as carried in the wire format. `0` means "custom, agreed out of band".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ParameterSetId(pub u16);

impl ParameterSetId {
    /// A custom set, built with [`GlweParameters::new`] or [`GlweParameters::new_allow_insecure`].
    pub const CUSTOM: Self = Self(0);
    /// [`TFHE_LIB_GLWE_1024`](super::TFHE_LIB_GLWE_1024).
    pub const TFHE_LIB_GLWE_1024: Self = Self(1);
    /// [`DEFAULT_KS_PBS_GLWE_512_K3`](super::DEFAULT_KS_PBS_GLWE_512_K3).
    pub const DEFAULT_KS_PBS_GLWE_512_K3: Self = Self(2);
    /// [`ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2`](super::ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2).
    pub const ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2: Self = Self(3);
    /// [`MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048`](super::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048).
    pub const MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048: Self = Self(4);
}

/// The distribution of the secret key's coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum KeyDistribution {
    /// Uniform in `{0, 1}` (TFHE, tfhe-rs).
    Binary,
}

/// The parameters of a GLWE (for `k = 1`, TRLWE) encryption.
///
/// Either a named set (a constant such as [`TFHE_LIB_GLWE_1024`](super::TFHE_LIB_GLWE_1024), found by id with
/// [`GlweParameters::from_id`]) or a validated custom set. With the `serde` feature, a named set serializes
/// as its id only and a custom set as its fields; deserializing runs the same validation as
/// [`GlweParameters::new`] (or [`GlweParameters::new_allow_insecure`] if the set was serialized with that
/// opt-in), so an unknown id, a NaN noise, a bad `N` or a below-floor set without the opt-in is an error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlweParameters {
    pub(super) id: ParameterSetId,
    pub(super) torus_bits: u32,
    pub(super) polynomial_size: PolynomialSize,
    pub(super) glwe_dimension: GlweDimension,
    pub(super) noise: NoiseDistribution,
    pub(super) key_distribution: KeyDistribution,
    /// True only for a custom set below the security floor built with `new_allow_insecure`.
    pub(super) insecure: bool,
}

impl GlweParameters {
    /// A custom parameter set (id [`ParameterSetId::CUSTOM`]) with a binary key, refused below the 132-bit
    /// security floor.
    ///
    /// A [`NoiseDistribution::Gaussian`] standard deviation is in torus units (a fraction of 1, e.g.
    /// `2^-25`). Returns an error for:
    /// - a polynomial size that is not a power of two in `64..=4096`, `k = 0`, `k * N` above
    ///   [`MAX_LWE_DIMENSION`], a torus width other than 32 or 64;
    /// - a Gaussian standard deviation that is not finite, positive and below 1/2, a TUniform bound with
    ///   `bound_log2 < 1` or `bound_log2 + 2 > torus_bits`;
    /// - noise below the floor for the LWE dimension `k * N` and `q = 2^torus_bits`: for a Gaussian, a
    ///   variance below tfhe-rs's `minimal_lwe_variance_for_132_bits_security_gaussian`
    ///   ([`Error::NoiseBelowSecurityFloor`]); for TUniform, a bound below
    ///   [`secure_noise::tuniform_bound_floor`] ([`Error::TUniformBoundBelowSecurityFloor`]).
    ///
    /// The floor is a security check only: whether the noise is small enough for correct decryption (and
    /// for the server's key switch) is the caller's analysis.
    pub fn new(
        torus_bits: u32,
        polynomial_size: PolynomialSize,
        glwe_dimension: GlweDimension,
        noise: NoiseDistribution,
    ) -> Result<Self> {
        let params = Self::new_allow_insecure(torus_bits, polynomial_size, glwe_dimension, noise)?;
        params.check_security_floor()?;
        Ok(params)
    }

    /// **For tests and toy sizes only**: a custom set like [`GlweParameters::new`], with the same shape and
    /// distribution validation, that may be below the 132-bit security floor (e.g. `N = 64`, or noise so
    /// small that one ciphertext reveals the key).
    ///
    /// A set built this way that is below the floor reports [`GlweParameters::is_insecure_opt_in`], and
    /// serializes that flag, so that it deserializes again while a hand-made below-floor set without it is
    /// refused. A set that meets the floor is identical to the one [`GlweParameters::new`] builds.
    pub fn new_allow_insecure(
        torus_bits: u32,
        polynomial_size: PolynomialSize,
        glwe_dimension: GlweDimension,
        noise: NoiseDistribution,
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
        // k * N must be an LWE dimension the server can index (and the floor formulas can evaluate).
        if glwe_dimension.0.checked_mul(n).is_none_or(|kn| kn > MAX_LWE_DIMENSION) {
            return Err(Error::GlweDimensionTooLarge {
                glwe_dimension: glwe_dimension.0,
                polynomial_size: n,
                max_lwe_dimension: MAX_LWE_DIMENSION,
            });
        }
        if torus_bits != 32 && torus_bits != 64 {
            return Err(Error::UnsupportedTorusBits(torus_bits));
        }
        match noise {
            NoiseDistribution::Gaussian { std_dev } => {
                if !(std_dev.is_finite() && std_dev > 0.0 && std_dev < 0.5) {
                    return Err(Error::InvalidNoiseStdDev(std_dev));
                }
            }
            NoiseDistribution::TUniform { bound_log2 } => {
                // `torus_bits` is 32 or 64 here, so `torus_bits - 2` does not underflow.
                if bound_log2 < 1 || bound_log2 > torus_bits - 2 {
                    return Err(Error::InvalidTUniformBound(bound_log2));
                }
            }
        }
        let mut params = Self {
            id: ParameterSetId::CUSTOM,
            torus_bits,
            polynomial_size,
            glwe_dimension,
            noise,
            key_distribution: KeyDistribution::Binary,
            insecure: false,
        };
        params.insecure = !params.meets_security_floor();
        Ok(params)
    }

    /// The set's wire identifier.
    pub const fn id(&self) -> ParameterSetId {
        self.id
    }
    /// `log2 q`.
    pub const fn torus_bits(&self) -> u32 {
        self.torus_bits
    }

    /// The fewest top bits of each body coefficient a compact frame may send ([`crate::compact_body`]): the
    /// smallest width whose rounding variance, times the set's worst linear combination before a bootstrap
    /// (2-norm squared: 8 for boolean gates, 25 for `MESSAGE_2_CARRY_2`), stays at or below 1% of the variance
    /// the set budgets at the PBS input (key switch and modulus switch; the adapter's tests recompute
    /// this arithmetic from tfhe-rs's parameters). 11 for
    /// [`TFHE_LIB_GLWE_1024`](super::TFHE_LIB_GLWE_1024) and [`DEFAULT_KS_PBS_GLWE_512_K3`](super::DEFAULT_KS_PBS_GLWE_512_K3), 12 for
    /// [`ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2`](super::ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2), 14 for
    /// [`MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048`](super::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048); a custom set gets the torus width (no rounding).
    pub const fn compact_body_bits(&self) -> u32 {
        match self.id.0 {
            1 | 2 => 11,
            3 => 12,
            4 => 14,
            _ => self.torus_bits,
        }
    }

    /// Checks that `body_bits` is a width frames of this set may carry: from
    /// [`Self::compact_body_bits`] to the torus width.
    pub fn check_body_bits(&self, body_bits: u32) -> Result<()> {
        if body_bits < self.compact_body_bits() || body_bits > self.torus_bits {
            return Err(Error::UnsupportedBodyBits {
                body_bits,
                torus_bits: self.torus_bits,
            });
        }
        Ok(())
    }
    /// `N`.
    pub const fn polynomial_size(&self) -> PolynomialSize {
        self.polynomial_size
    }
    /// `k`.
    pub const fn glwe_dimension(&self) -> GlweDimension {
        self.glwe_dimension
    }
    /// The noise distribution.
    pub const fn noise_distribution(&self) -> NoiseDistribution {
        self.noise
    }
    /// The noise standard deviation in torus units, whatever the distribution.
    pub fn noise_std_dev(&self) -> f64 {
        self.noise.std_dev(self.torus_bits)
    }
    /// The noise standard deviation in units of `1/q`, whatever the distribution (`2^-25 * 2^32 = 128` for
    /// [`TFHE_LIB_GLWE_1024`](super::TFHE_LIB_GLWE_1024)).
    pub fn noise_std_dev_scaled(&self) -> f64 {
        self.noise.std_dev_scaled(self.torus_bits)
    }
    /// The noise variance in torus units squared (the unit of [`GlweParameters::security_floor_variance`]).
    pub fn noise_variance(&self) -> f64 {
        self.noise.variance(self.torus_bits)
    }
    /// The key distribution.
    pub const fn key_distribution(&self) -> KeyDistribution {
        self.key_distribution
    }

    /// The smallest noise variance (torus units squared) that meets the 132-bit floor for this set's LWE
    /// dimension `k * N`, modulus and kind of distribution: tfhe-rs's
    /// [`minimal_lwe_variance_gaussian`](secure_noise::minimal_lwe_variance_gaussian) for a Gaussian, the
    /// variance of TUniform at [`tuniform_bound_floor`](secure_noise::tuniform_bound_floor) for TUniform.
    pub fn security_floor_variance(&self) -> f64 {
        let n = self.glwe_dimension.to_equivalent_lwe_dimension(self.polynomial_size);
        match self.noise {
            NoiseDistribution::Gaussian { .. } => secure_noise::minimal_lwe_variance_gaussian(n, self.torus_bits),
            NoiseDistribution::TUniform { .. } => NoiseDistribution::TUniform {
                bound_log2: secure_noise::tuniform_bound_floor(n, self.torus_bits),
            }
            .variance(self.torus_bits),
        }
    }

    /// Whether the noise meets the 132-bit floor ([`GlweParameters::security_floor_variance`]). Always true
    /// for a set built with [`GlweParameters::new`]; false for [`TFHE_LIB_GLWE_1024`](super::TFHE_LIB_GLWE_1024) (see its docs).
    pub fn meets_security_floor(&self) -> bool {
        self.check_security_floor().is_ok()
    }

    /// True for a custom set below the security floor that was built with
    /// [`GlweParameters::new_allow_insecure`]. False for named sets, whatever their floor.
    pub const fn is_insecure_opt_in(&self) -> bool {
        self.insecure
    }

    fn check_security_floor(&self) -> Result<()> {
        let n = self.glwe_dimension.to_equivalent_lwe_dimension(self.polynomial_size);
        match self.noise {
            NoiseDistribution::Gaussian { .. } => {
                let variance = self.noise_variance();
                let minimum = secure_noise::minimal_lwe_variance_gaussian(n, self.torus_bits);
                // Written so that NaN fails.
                if variance >= minimum {
                    Ok(())
                } else {
                    Err(Error::NoiseBelowSecurityFloor { variance, minimum })
                }
            }
            NoiseDistribution::TUniform { bound_log2 } => {
                let minimum = secure_noise::tuniform_bound_floor(n, self.torus_bits);
                if bound_log2 >= minimum {
                    Ok(())
                } else {
                    Err(Error::TUniformBoundBelowSecurityFloor { bound_log2, minimum })
                }
            }
        }
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
    fn torus_width_error_names_the_width() {
        let g = NoiseDistribution::Gaussian { std_dev: 1e-9 };
        assert_eq!(
            GlweParameters::new(16, PolynomialSize(2048), GlweDimension(1), g),
            Err(Error::UnsupportedTorusBits(16))
        );
    }
}
