//! The named GLWE parameter sets: the GLWE sides of tfhe-rs's boolean and integer parameter sets, by id.

use super::glwe_parameters::{GlweParameters, KeyDistribution, ParameterSetId};
use super::noise_distribution::NoiseDistribution;
use crate::dimensions::{GlweDimension, PolynomialSize};

/// The TFHE-SBC paper's Table 3: `q = 2^32`, `N = 1024`, `k = 1`, Gaussian `sigma = 2^-25`, binary key.
///
/// This is exactly the GLWE side of tfhe-rs's `tfhe::boolean::parameters::TFHE_LIB_PARAMETERS` (which
/// adds an LWE dimension of 630 and its key-switching and bootstrapping decompositions), so ciphertexts
/// sample-extracted from it are inputs of tfhe-rs's boolean key switch.
///
/// # Security
/// tfhe-rs documents `TFHE_LIB_PARAMETERS` at about **120 bits** of security, estimated by Zama with the
/// lattice-estimator (the tfhe-rs `boolean::parameters` documentation). The paper's Table 3 calls the same
/// numbers 128-bit; we rely on tfhe-rs's more conservative estimate. The 630-dimensional LWE key of the
/// bootstrapping is the weakest link of that set.
///
/// The GLWE side is **below** the 132-bit floor that custom sets must meet ([`super::secure_noise`]): at
/// `k*N = 1024`, `q = 2^32` tfhe-rs's formula asks for a Gaussian variance of `2^-45.66` (standard deviation
/// `2^-22.83`, 4.5 times `2^-25`); this set's variance is `2^-50`, 20 times smaller. It is a named set, kept
/// as the paper and tfhe-rs's boolean layer define it, so it is not refused;
/// [`GlweParameters::meets_security_floor`] says `false` for it. A custom set with these numbers needs
/// [`GlweParameters::new_allow_insecure`].
pub const TFHE_LIB_GLWE_1024: GlweParameters = GlweParameters {
    id: ParameterSetId::TFHE_LIB_GLWE_1024,
    torus_bits: 32,
    polynomial_size: PolynomialSize(1024),
    glwe_dimension: GlweDimension(1),
    // 2^-25
    noise: NoiseDistribution::Gaussian {
        std_dev: 2.980_232_238_769_531_3e-8,
    },
    key_distribution: KeyDistribution::Binary,
    insecure: false,
};

/// The GLWE side of tfhe-rs 1.8.2's `tfhe::boolean::parameters::DEFAULT_PARAMETERS_KS_PBS`: `q = 2^32`,
/// `N = 512`, `k = 3` (LWE dimension `k*N = 1536`), Gaussian `sigma = 9.315272083503367e-10` (about
/// `2^-30`), binary key.
///
/// tfhe-rs documents the set at 128 bits of security with a failure probability of `2^-64`. Its encryption
/// key choice is "big" (`KeyswitchBootstrap` order): a gate key-switches its inputs first, so a
/// sample-extracted ciphertext under the GLWE key read flat is a gate input as it is, with no key switch at
/// intake. Its sigma is at the precision term of tfhe-rs's 132-bit formula (`4 / q`): the set meets the
/// floor only up to that term's rounding, like every tfhe-rs set there ([`GlweParameters::meets_security_floor`]
/// says which).
pub const DEFAULT_KS_PBS_GLWE_512_K3: GlweParameters = GlweParameters {
    id: ParameterSetId::DEFAULT_KS_PBS_GLWE_512_K3,
    torus_bits: 32,
    polynomial_size: PolynomialSize(512),
    glwe_dimension: GlweDimension(3),
    noise: NoiseDistribution::Gaussian {
        std_dev: 9.315_272_083_503_367e-10,
    },
    key_distribution: KeyDistribution::Binary,
    insecure: false,
};

/// The GLWE side of tfhe-rs 1.8.2's `tfhe::boolean::parameters::PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS`:
/// `q = 2^32`, `N = 1024`, `k = 2` (LWE dimension 2048), Gaussian `sigma = 9.313225746198247e-10` (`2^-30`),
/// binary key.
///
/// 128-bit by tfhe-rs's documentation, failure probability `2^-165`, encryption key choice "big": a
/// sample-extracted ciphertext is a gate input as it is (see [`DEFAULT_KS_PBS_GLWE_512_K3`]).
pub const ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2: GlweParameters = GlweParameters {
    id: ParameterSetId::ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2,
    torus_bits: 32,
    polynomial_size: PolynomialSize(1024),
    glwe_dimension: GlweDimension(2),
    noise: NoiseDistribution::Gaussian {
        std_dev: 9.313_225_746_198_247e-10,
    },
    key_distribution: KeyDistribution::Binary,
    insecure: false,
};

/// The GLWE side of tfhe-rs 1.8.2's high-level default, `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`
/// (`V1_8_...`, defined as `V1_4_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`): `q = 2^64`, `N = 2048`, `k = 1`, GLWE noise
/// TUniform(17), binary key. The first 64-bit named set.
///
/// tfhe-rs documents the set at 128 bits of security with a failure probability of `2^-129.6`. Its
/// encryption key choice is "big" (`KeyswitchBootstrap` order), so a coefficient sample-extracted from a
/// GLWE ciphertext under the client key's GLWE key is a shortint ciphertext as it is. What the integer
/// intake needs besides (message and carry moduli 4 and 4, `delta = 2^59`) is in
/// [`super::MESSAGE_2_CARRY_2_TUNIFORM_2M128`]. It meets the 132-bit floor ([`GlweParameters::meets_security_floor`]).
pub const MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048: GlweParameters = GlweParameters {
    id: ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048,
    torus_bits: 64,
    polynomial_size: PolynomialSize(2048),
    glwe_dimension: GlweDimension(1),
    noise: NoiseDistribution::TUniform { bound_log2: 17 },
    key_distribution: KeyDistribution::Binary,
    insecure: false,
};

impl GlweParameters {
    /// The named set with this id, if any.
    pub const fn from_id(id: ParameterSetId) -> Option<Self> {
        match id.0 {
            1 => Some(TFHE_LIB_GLWE_1024),
            2 => Some(DEFAULT_KS_PBS_GLWE_512_K3),
            3 => Some(ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2),
            4 => Some(MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn tfhe_lib_set_matches_the_paper() {
        let p = TFHE_LIB_GLWE_1024;
        assert_eq!(
            p.noise_distribution(),
            NoiseDistribution::Gaussian {
                std_dev: libm::ldexp(1.0, -25)
            }
        );
        assert_eq!(p.noise_std_dev(), libm::ldexp(1.0, -25));
        assert_eq!(p.noise_std_dev_scaled(), 128.0);
        assert_eq!(p.polynomial_size(), PolynomialSize(1024));
        assert_eq!(p.glwe_dimension(), GlweDimension(1));
        assert_eq!(p.torus_bits(), 32);
        assert_eq!(GlweParameters::from_id(p.id()), Some(p));
        assert!(!p.is_insecure_opt_in());
        assert!(p.check_torus::<u32>().is_ok());
        assert_eq!(
            p.check_torus::<u64>(),
            Err(Error::TorusBitsMismatch {
                expected: 32,
                found: 64
            })
        );
    }
}
