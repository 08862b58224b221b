//! Marsaglia's polar method (Marsaglia & Bray 1964): the Gaussian sampler of TFHEpp (through
//! `std::normal_distribution`) and of tfhe-rs, kept as the baseline the Ziggurat is measured against.

use super::sampler::NormalSampler;
use rand_core::Rng;

/// The polar method. Each accepted pair gives two samples; the second is kept for the next call, as
/// `std::normal_distribution` does.
#[derive(Clone, Copy, Debug, Default)]
pub struct Polar {
    spare: Option<f64>,
}

impl Polar {
    /// A sampler with no spare sample.
    pub const fn new() -> Self {
        Self { spare: None }
    }

    /// One pair of independent standard normal samples.
    pub fn sample_pair<R: Rng + ?Sized>(rng: &mut R) -> (f64, f64) {
        let unit = libm::ldexp(1.0, -53);
        loop {
            let u = ((rng.next_u64() >> 11) as f64 * unit).mul_add_portable(2.0, -1.0);
            let v = ((rng.next_u64() >> 11) as f64 * unit).mul_add_portable(2.0, -1.0);
            let s = u * u + v * v;
            if s < 1.0 && s > 0.0 {
                let factor = libm::sqrt(-2.0 * libm::log(s) / s);
                return (u * factor, v * factor);
            }
        }
    }
}

/// `a * b + c` with two roundings, the same on every target (no fused multiply-add).
trait MulAddPortable {
    fn mul_add_portable(self, b: f64, c: f64) -> f64;
}

impl MulAddPortable for f64 {
    #[inline(always)]
    fn mul_add_portable(self, b: f64, c: f64) -> f64 {
        self * b + c
    }
}

impl NormalSampler for Polar {
    #[inline]
    fn sample<R: Rng + ?Sized>(&mut self, rng: &mut R) -> f64 {
        if let Some(x) = self.spare.take() {
            return x;
        }
        let (x, y) = Self::sample_pair(rng);
        self.spare = Some(y);
        x
    }
}
