//! The Marsaglia–Tsang Ziggurat (J. Stat. Softw. 5(8), 2000) with 256 layers: the TFHE-SBC paper's §6.2
//! sampler.
//!
//! One 32-bit draw gives a sample in 98.5% of cases: bits 0–7 choose the layer, bit 8 the sign, and
//! bits 9–31 a 23-bit magnitude `u`, so the three never share bits (Marsaglia and Tsang's original RNOR
//! reuses the low bits of the magnitude as the layer index, a correlation Doornik (2005) pointed out). The
//! sample is `u * w[i]`, on a grid of step `x[i] / 2^23` (at most `3.66 * 2^-23`); at `sigma * q = 128`
//! that is a step of `6e-5` before rounding to an integer, far below anything the rounding can show.
//!
//! The tables come from `build.rs` (computed with `libm` at build time, never on the device).

use super::{NormalSampler, uniform_open_closed};
use rand_core::Rng;

mod tables {
    include!(concat!(env!("OUT_DIR"), "/ziggurat_tables.rs"));
}
use tables::{ZIGGURAT_F as F, ZIGGURAT_K as K, ZIGGURAT_R as R, ZIGGURAT_W as W};

/// The Ziggurat normal sampler. It holds no state; the randomness comes from the `Rng` passed to it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ziggurat;

impl Ziggurat {
    /// One standard normal sample.
    #[inline]
    pub fn sample_standard<R: Rng + ?Sized>(rng: &mut R) -> f64 {
        loop {
            let bits = rng.next_u32();
            let layer = (bits & 0xff) as usize;
            // Bit 8 moved to the f64 sign bit (bit 63): a sign flip without a branch.
            let sign = u64::from(bits & 0x100) << 55;
            let magnitude = bits >> 9;
            let x = f64::from(magnitude) * W[layer];
            if magnitude < K[layer] {
                // Inside the layer's rectangle: accept (the fast path, 98.5%).
                return f64::from_bits(x.to_bits() | sign);
            }
            if let Some(x) = Self::slow_path(rng, layer, x) {
                return f64::from_bits(x.to_bits() | sign);
            }
        }
    }

    /// The base layer's tail, or a wedge of layer `layer >= 1`: `Some(x)` when accepted.
    #[cold]
    fn slow_path<R: Rng + ?Sized>(rng: &mut R, layer: usize, x: f64) -> Option<f64> {
        if layer == 0 {
            // Beyond r: Marsaglia's tail method (1964), exact for the normal tail.
            loop {
                let t = -libm::log(uniform_open_closed(rng)) / R;
                let y = -libm::log(uniform_open_closed(rng));
                if y + y >= t * t {
                    return Some(R + t);
                }
            }
        }
        // Wedge between f(x[layer]) and f(x[layer - 1]): accept under the density.
        let y = F[layer] + uniform_open_closed(rng) * (F[layer - 1] - F[layer]);
        (y < libm::exp(-0.5 * x * x)).then_some(x)
    }
}

impl NormalSampler for Ziggurat {
    #[inline]
    fn sample<R: Rng + ?Sized>(&mut self, rng: &mut R) -> f64 {
        Self::sample_standard(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_consistent() {
        // The layers' right edges increase towards the base; the last one is r.
        for i in 2..256 {
            assert!(W[i] > W[i - 1], "layer {i}");
            assert!(F[i] < F[i - 1], "layer {i}");
        }
        assert!((W[255] * libm::ldexp(1.0, 23) - R).abs() < 1e-12);
        assert_eq!(K[1], 0);
        // Every layer has the same area, so the fast-path share is the mean of the acceptance ratios: 98.5%.
        let fast: f64 = K.iter().map(|&k| f64::from(k) / libm::ldexp(1.0, 23)).sum::<f64>() / 256.0;
        assert!((0.984..0.986).contains(&fast), "fast-path share {fast}");
    }
}
