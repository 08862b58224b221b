//! The device's noise sampler: constant-time TUniform by default, the paper's Ziggurat as an explicit opt-in
//! (feature `ziggurat`: builds without it do not contain the Ziggurat at all).
//!
//! The noise is as secret as the key: the boolean encoding is a multiple of `2^29`, so
//! `b - e = a * s (mod 2^29)` with `a` public, and whoever learns the noise of a couple of ciphertexts solves
//! a linear system over GF(2) for the key. A sampler whose timing or memory accesses depend on the samples
//! hands that noise to a co-resident process (cache timing) or to a power/EM probe.
//!
//! # The default for a Gaussian set: TUniform with at least its standard deviation
//! [`NoiseSampling::ConstantTime`] replaces a set's Gaussian(sigma) by TUniform(b) with the smallest `b`
//! whose standard deviation is at least `sigma`. For `TFHE_LIB_GLWE_1024` (sigma = 2^-25, i.e. 128 in
//! units of `1/q`, `q = 2^32`) that is `b = 8`: std `sqrt((2^17 + 1) / 6) = 147.8`, 15.5% above sigma.
//! * Security: lattice estimates (the lattice-estimator, tfhe-rs's `secure_noise` formulas) see the noise
//!   through its standard deviation; a larger one is at least as secure. tfhe-rs's own current parameter
//!   sets use TUniform.
//! * Correctness: the extracted LWE sample then goes through tfhe-rs's key switch, whose error (std about
//!   2^-8.3 in `TFHE_LIB_PARAMETERS`) dwarfs 147.8 / 2^32 = 2^-24.8; the decision threshold is 2^-4. And the
//!   noise is bounded: `|e| <= 2^8` always, where a Gaussian is not.
//!
//! A TUniform set's own bound is used as it is.
//!
//! # Timing
//! [`DeviceNoise::TUniform`] is constant-time (see `tfhe_sbc_core::tuniform`). `DeviceNoise::Ziggurat` is
//! not: a draw outside its layer's rectangle (1.5%) takes a slower path with `exp`/`log` and may loop, and
//! every draw loads the tables at a secret index. That leaks noise magnitudes (the "Flush, Gauss, and
//! Reload" attack class, CHES 2016). The workspace's constant-time check under valgrind flags it.

use crate::error::{Error, Result};
use rand_core::Rng;
#[cfg(feature = "ziggurat")]
use tfhe_sbc_core::gaussian::{NormalSampler, Ziggurat};
use tfhe_sbc_core::parameters::{GlweParameters, NoiseDistribution};
use tfhe_sbc_core::torus::UnsignedTorus;
use tfhe_sbc_core::tuniform::TUniform;

/// How the device draws its noise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
// A variant behind feature `ziggurat`: another crate cannot match it exhaustively in every build.
#[non_exhaustive]
pub enum NoiseSampling {
    /// Constant-time TUniform: the set's own bound, or for a Gaussian set the smallest bound with at least
    /// its standard deviation (see the module documentation). The default.
    #[default]
    ConstantTime,
    /// The TFHE-SBC paper's Ziggurat at the set's Gaussian sigma. **Not constant-time**: it leaks noise
    /// magnitudes to timing and cache attackers, and the noise is as secret as the key. Only for a device
    /// no attacker can time or probe, or for measuring the paper's method. Feature `ziggurat`.
    #[cfg(feature = "ziggurat")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ziggurat")))]
    Ziggurat,
}

/// The noise sampler an encryptor resolved from a parameter set and a [`NoiseSampling`] choice, validated
/// for a 32-bit torus.
#[derive(Clone, Copy, Debug, PartialEq)]
// A variant behind feature `ziggurat`: another crate cannot match it exhaustively in every build.
#[non_exhaustive]
pub enum DeviceNoise {
    /// TUniform(b): constant-time.
    TUniform(TUniform),
    /// The Ziggurat at this standard deviation in units of `1/q`: not constant-time. Feature `ziggurat`.
    #[cfg(feature = "ziggurat")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ziggurat")))]
    Ziggurat {
        /// The standard deviation in units of `1/q`.
        std_dev_scaled: f64,
    },
}

/// Noise magnitudes must stay below `q / 2^LOG2_MARGIN` for decryption to work at all: `2^-3` of the torus
/// is the boolean encoding's gap (`+-1/8`).
const LOG2_MARGIN: u32 = 3;

impl DeviceNoise {
    /// Resolves `sampling` for `params` on a torus of `torus_bits` bits, and checks the result: a TUniform
    /// bound must satisfy `1 <= b` and `2^b < q / 8`; a Gaussian standard deviation must be at least one
    /// unit of `1/q` (below that, rounding leaves most samples 0 and a ciphertext gives the key away) and
    /// 8 standard deviations must stay below `q / 8`.
    pub fn for_parameters(params: &GlweParameters, sampling: NoiseSampling) -> Result<Self> {
        let bits = params.torus_bits();
        let distribution = params.noise_distribution();
        let noise = match (sampling, distribution) {
            (NoiseSampling::ConstantTime, NoiseDistribution::TUniform { bound_log2 }) => {
                Self::TUniform(TUniform::new(bound_log2)?)
            }
            (NoiseSampling::ConstantTime, NoiseDistribution::Gaussian { .. }) => {
                Self::TUniform(TUniform::new(distribution.tuniform_bound_at_least(bits))?)
            }
            #[cfg(feature = "ziggurat")]
            (NoiseSampling::Ziggurat, NoiseDistribution::Gaussian { .. }) => Self::Ziggurat {
                std_dev_scaled: distribution.std_dev_scaled(bits),
            },
            #[cfg(feature = "ziggurat")]
            (NoiseSampling::Ziggurat, NoiseDistribution::TUniform { .. }) => {
                return Err(Error::ZigguratNeedsGaussianSet);
            }
        };
        noise.check(bits)?;
        Ok(noise)
    }

    /// The constant-time sampler of a set whose noise is TUniform (the integer set's TUniform(17)), resolved
    /// with integer code only: a firmware that encrypts only for such sets links no floating-point code for
    /// it. A Gaussian set is [`Error::NoiseOutOfRange`] here (use [`Self::for_parameters`]).
    pub fn for_tuniform_parameters(params: &GlweParameters) -> Result<Self> {
        match params.noise_distribution() {
            NoiseDistribution::TUniform { bound_log2 } => {
                let noise = Self::TUniform(TUniform::new(bound_log2)?);
                noise.check(params.torus_bits())?;
                Ok(noise)
            }
            NoiseDistribution::Gaussian { .. } => Err(Error::NoiseOutOfRange),
        }
    }

    fn check(&self, torus_bits: u32) -> Result<()> {
        let max_log2 = torus_bits - LOG2_MARGIN;
        let ok = match *self {
            Self::TUniform(t) => t.bound_log2() < max_log2,
            #[cfg(feature = "ziggurat")]
            Self::Ziggurat { std_dev_scaled } => {
                std_dev_scaled.is_finite() && std_dev_scaled >= 1.0 && 8.0 * std_dev_scaled < (1u64 << max_log2) as f64
            }
        };
        if ok { Ok(()) } else { Err(Error::NoiseOutOfRange) }
    }

    /// The standard deviation in units of `1/q`.
    pub fn std_dev_scaled(&self) -> f64 {
        match *self {
            Self::TUniform(t) => t.std_dev_scaled(),
            #[cfg(feature = "ziggurat")]
            Self::Ziggurat { std_dev_scaled } => std_dev_scaled,
        }
    }

    /// Whether this sampler runs in time independent of the samples.
    pub fn is_constant_time(&self) -> bool {
        match self {
            Self::TUniform(_) => true,
            #[cfg(feature = "ziggurat")]
            Self::Ziggurat { .. } => false,
        }
    }

    /// Adds one noise sample to every element of `out`.
    pub fn add_noise<T: UnsignedTorus, R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [T]) {
        match *self {
            Self::TUniform(t) => t.add_noise_torus(rng, out),
            #[cfg(feature = "ziggurat")]
            Self::Ziggurat { std_dev_scaled } => Ziggurat.add_noise_torus(rng, std_dev_scaled, out),
        }
    }
}
