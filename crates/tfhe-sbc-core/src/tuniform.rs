//! TUniform(b) noise, sampled exactly as tfhe-rs samples it (`core_crypto/commons/math/random/t_uniform.rs`):
//! take `b + 2` random bits `r` and return `(r >> 1) + (r & 1) - 2^b`.
//!
//! The result is uniform on `[-2^b, 2^b]` (in units of `1/q`) with the two end points at half weight: each
//! interior value is reached by exactly two values of `r`, each end point by one (`tests/tuniform.rs`
//! checks this over all `2^(b+2)` inputs). Its variance is `(2^(2b+1) + 1) / 6`.
//!
//! # Timing
//! Constant-time: a sample is two shifts, a mask, two additions and a subtraction on the random bits; no
//! branch and no memory access depends on them. The only branch is on `b` (public), which picks how many
//! stream bytes a sample takes. The workspace's constant-time check runs this sampler under valgrind
//! memcheck with the random bits marked secret and fails on any secret-dependent branch or address.
//!
//! # Stream use
//! Each sample takes one little-endian word from the RNG's byte stream: 2 bytes when `b + 2 <= 16`, 4 when
//! `b + 2 <= 32`, 8 otherwise, and keeps its top `b + 2` bits (as tfhe-rs keeps the top bits of a uniform
//! torus word). At `b = 8` that is 2 bytes per sample, half what one Ziggurat draw takes.

use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;
use rand_core::Rng;
use zeroize::Zeroize;

/// The largest supported `b`: `b + 2` random bits must fit a `u64`.
pub const MAX_BOUND_LOG2: u32 = 62;

/// Bytes drawn per batch in [`TUniform::add_noise_torus`] (on the stack, wiped after use).
const BATCH_BYTES: usize = 256;

/// The TUniform(b) noise sampler. It holds only the public `b`; the randomness comes from the `Rng` passed
/// to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TUniform {
    bound_log2: u32,
}

impl TUniform {
    /// TUniform(`bound_log2`): samples in `[-2^bound_log2, 2^bound_log2]`. `bound_log2` must be in
    /// `1..=`[`MAX_BOUND_LOG2`].
    pub const fn new(bound_log2: u32) -> Result<Self> {
        if bound_log2 == 0 || bound_log2 > MAX_BOUND_LOG2 {
            return Err(Error::InvalidTUniformBound(bound_log2));
        }
        Ok(Self { bound_log2 })
    }

    /// `b`.
    pub const fn bound_log2(&self) -> u32 {
        self.bound_log2
    }

    /// The variance in units of `1/q^2`: `(2^(2b+1) + 1) / 6`.
    pub fn variance_scaled(&self) -> f64 {
        (libm::ldexp(1.0, 2 * self.bound_log2 as i32 + 1) + 1.0) / 6.0
    }

    /// The standard deviation in units of `1/q`.
    pub fn std_dev_scaled(&self) -> f64 {
        libm::sqrt(self.variance_scaled())
    }

    /// The stream bytes one sample takes: 2, 4 or 8.
    pub const fn bytes_per_sample(&self) -> usize {
        match self.bound_log2 + 2 {
            0..=16 => 2,
            17..=32 => 4,
            _ => 8,
        }
    }

    /// The sample of the `b + 2` random bits `r` (higher bits of `r` are ignored):
    /// `(r >> 1) + (r & 1) - 2^b`. Branch-free.
    #[inline(always)]
    pub const fn from_bits(&self, r: u64) -> i64 {
        let r = r & ((1u64 << (self.bound_log2 + 2)) - 1);
        // Wrapping (it never wraps): a checked `+`/`-` would branch on the secret in builds with overflow
        // checks, the test profile among them (the constant-time check flags it there).
        ((r >> 1).wrapping_add(r & 1) as i64).wrapping_sub(1i64 << self.bound_log2)
    }

    /// The sample of one stream word of [`Self::bytes_per_sample`] little-endian bytes: its top `b + 2`
    /// bits, as tfhe-rs does.
    #[inline(always)]
    fn sample_from_word(&self, word: &[u8]) -> i64 {
        let mut le = [0u8; 8];
        le[..word.len()].copy_from_slice(word);
        let bits = 8 * word.len() as u32;
        self.from_bits(u64::from_le_bytes(le) >> (bits - (self.bound_log2 + 2)))
    }

    /// One sample modulo `q = 2^T::BITS`.
    pub fn sample_torus<T: UnsignedTorus, R: Rng + ?Sized>(&self, rng: &mut R) -> T {
        let mut word = [0u8; 8];
        let word = &mut word[..self.bytes_per_sample()];
        rng.fill_bytes(word);
        let sample = T::from_i64_wrapping(self.sample_from_word(word));
        word.zeroize();
        sample
    }

    /// Adds one sample to every element of `out` (modulo `q`), drawing the stream in batches of 256 bytes.
    /// The batch buffer is wiped before returning.
    pub fn add_noise_torus<T: UnsignedTorus, R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [T]) {
        // One loop per word width, so that each is a fixed-size load, a shift and three additions that the
        // compiler can unroll and vectorize (the width depends on the public `b` only).
        match self.bytes_per_sample() {
            2 => self.add_noise_words::<2, T, R>(rng, out),
            4 => self.add_noise_words::<4, T, R>(rng, out),
            _ => self.add_noise_words::<8, T, R>(rng, out),
        }
    }

    #[inline(always)]
    fn add_noise_words<const W: usize, T: UnsignedTorus, R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [T]) {
        let shift = 8 * W as u32 - (self.bound_log2 + 2);
        let offset = 1i64 << self.bound_log2;
        let mut bytes = [0u8; BATCH_BYTES];
        for chunk in out.chunks_mut(BATCH_BYTES / W) {
            let bytes = &mut bytes[..W * chunk.len()];
            rng.fill_bytes(bytes);
            for (x, word) in chunk.iter_mut().zip(bytes.chunks_exact(W)) {
                let sample = if W <= 4 {
                    // The same value in 32-bit words (a 32-bit core shifted the u64 with a test of the
                    // shift and two conditional moves): `r < 2^32` and `shift < 32`, so `(r >> 1) + (r & 1)`
                    // is at most `2^31` and fits a u32.
                    let mut le = [0u8; 4];
                    le[..W].copy_from_slice(word);
                    let r = u32::from_le_bytes(le) >> shift;
                    i64::from((r >> 1).wrapping_add(r & 1)).wrapping_sub(offset)
                } else {
                    let mut le = [0u8; 8];
                    le[..W].copy_from_slice(word);
                    let r = u64::from_le_bytes(le) >> shift;
                    ((r >> 1).wrapping_add(r & 1) as i64).wrapping_sub(offset)
                };
                *x = x.wrapping_add(T::from_i64_wrapping(sample));
            }
        }
        bytes.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_validated() {
        assert_eq!(TUniform::new(0), Err(Error::InvalidTUniformBound(0)));
        assert_eq!(TUniform::new(63), Err(Error::InvalidTUniformBound(63)));
        assert!(TUniform::new(1).is_ok() && TUniform::new(62).is_ok());
    }

    #[test]
    fn word_widths() {
        let widths = [(8, 2), (14, 2), (15, 4), (30, 4), (31, 8), (62, 8)];
        for (b, w) in widths {
            assert_eq!(TUniform::new(b).map(|t| t.bytes_per_sample()), Ok(w), "b = {b}");
        }
    }

    #[test]
    fn top_bits_are_used() {
        let t = TUniform::new(8).unwrap_or_else(|_| unreachable!());
        // 16-bit word 0xffc0: top 10 bits all ones -> r = 1023 -> 511 + 1 - 256 = 256.
        assert_eq!(t.sample_from_word(&0xffc0u16.to_le_bytes()), 256);
        // Low 6 bits are ignored.
        assert_eq!(t.sample_from_word(&0x003fu16.to_le_bytes()), -256);
    }
}
