//! Noise bookkeeping of the boolean sets (32-bit torus): running moments of phase errors, and the variances
//! the device's noise is modelled with.

use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::parameters::GlweParameters;
use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};

/// `q = 2^32`.
pub const Q: f64 = 4_294_967_296.0;

/// Running moments of the phase errors of encrypted bits, in units of `1/q`.
#[derive(Default)]
pub struct PhaseNoise {
    /// Samples so far.
    pub count: usize,
    sum: f64,
    sum_sq: f64,
    /// The largest `|e|` so far.
    pub max_abs: f64,
}

impl PhaseNoise {
    /// Adds the error of `phase`, a decryption of `bit`.
    pub fn add_phase(&mut self, phase: u32, bit: bool) {
        let e = f64::from(phase.wrapping_sub(encode_bool::<u32>(bit)) as i32);
        self.count += 1;
        self.sum += e;
        self.sum_sq += e * e;
        self.max_abs = self.max_abs.max(e.abs());
    }

    /// The variance in units of `1/q^2`.
    pub fn variance(&self) -> f64 {
        let n = self.count as f64;
        let mean = self.sum / n;
        self.sum_sq / n - mean * mean
    }

    /// The standard deviation in units of `1/q`.
    pub fn std(&self) -> f64 {
        self.variance().sqrt()
    }

    /// The standard deviation as a power of two of the torus.
    pub fn log2_torus_std(&self) -> f64 {
        self.std().log2() - 32.0
    }
}

impl std::fmt::Debug for PhaseNoise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} samples, std 2^{:.2}", self.count, self.log2_torus_std())
    }
}

/// Var(TUniform(b)) in units of `1/q^2`: `(2^(2b+1) + 1) / 6`.
pub fn tuniform_variance(bound_log2: u32) -> f64 {
    (2f64.powi(2 * bound_log2 as i32 + 1) + 1.0) / 6.0
}

/// The bound `b` of the device's default (constant-time) TUniform noise for `params`.
#[allow(
    clippy::wildcard_enum_match_arm,
    reason = "DeviceNoise is #[non_exhaustive]: its Ziggurat variant exists only with the device's feature \
              ziggurat (allow, not expect: without that feature the arm covers no known variant)"
)]
pub fn device_tuniform_bound(params: &GlweParameters) -> u32 {
    match DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime).unwrap() {
        DeviceNoise::TUniform(t) => t.bound_log2(),
        other => panic!("not TUniform: {other:?}"),
    }
}
