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

use super::sampler::{NormalSampler, round_to_i64, uniform_open_closed};
use crate::torus::UnsignedTorus;
use rand_core::Rng;
use zeroize::Zeroize;

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
            match Self::fast_path(rng.next_u32()) {
                // Inside the layer's rectangle: accept (the fast path, 98.5%).
                (Ok(x), _, _) => return x,
                (Err(x), sign, layer) => {
                    if let Some(x) = Self::slow_path(rng, layer, x) {
                        return f64::from_bits(x.to_bits() | sign);
                    }
                }
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

/// Words drawn per batch in [`Ziggurat::add_noise_torus`]: 256 bytes of stack.
const BATCH: usize = 64;

impl Ziggurat {
    /// The sample of one 32-bit draw: `Ok(x)` on the fast path, `Err(x)` (the candidate) when the draw
    /// fell outside its layer's rectangle.
    #[inline(always)]
    fn fast_path(bits: u32) -> (Result<f64, f64>, u64, usize) {
        let layer = (bits & 0xff) as usize;
        // Bit 8 moved to the f64 sign bit (bit 63): a sign flip without a branch.
        let sign = u64::from(bits & 0x100) << 55;
        let magnitude = bits >> 9;
        let x = f64::from(magnitude) * W[layer];
        let signed = f64::from_bits(x.to_bits() | sign);
        if magnitude < K[layer] {
            (Ok(signed), sign, layer)
        } else {
            (Err(x), sign, layer)
        }
    }
}

impl NormalSampler for Ziggurat {
    #[inline]
    fn sample<R: Rng + ?Sized>(&mut self, rng: &mut R) -> f64 {
        Self::sample_standard(rng)
    }

    /// Batched: draws 64 words at a time with one `fill_bytes` (little-endian `u32`s), runs the fast path
    /// over them, and finishes the rare rejected draws from `rng` directly.
    fn add_noise_torus<T: UnsignedTorus, R: Rng + ?Sized>(&mut self, rng: &mut R, std_dev_scaled: f64, out: &mut [T]) {
        let mut bytes = [0u8; 4 * BATCH];
        for chunk in out.chunks_mut(BATCH) {
            let bytes = &mut bytes[..4 * chunk.len()];
            rng.fill_bytes(bytes);
            for (x, word) in chunk.iter_mut().zip(bytes.chunks_exact(4)) {
                let bits = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                let z = match Self::fast_path(bits) {
                    (Ok(z), _, _) => z,
                    (Err(candidate), sign, layer) => match Self::slow_path(rng, layer, candidate) {
                        Some(z) => f64::from_bits(z.to_bits() | sign),
                        None => Self::sample_standard(rng),
                    },
                };
                *x = x.wrapping_add(T::from_i64_wrapping(round_to_i64(z * std_dev_scaled)));
            }
        }
        bytes.zeroize();
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
