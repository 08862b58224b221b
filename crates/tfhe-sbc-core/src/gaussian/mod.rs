//! Gaussian sampling: the Ziggurat (the TFHE-SBC paper's sampler, an opt-in on the device) and the polar
//! method (the tfhe-rs/TFHEpp baseline). The device's default noise is [`crate::tuniform`], which is
//! constant-time; these samplers are not.
//!
//! Both draw from any rand_core 0.10 [`Rng`]. [`NormalSampler`] gives standard normal `f64`s;
//! [`NormalSampler::sample_torus`] scales by a standard deviation in units of `1/q` and rounds to the
//! nearest integer modulo `q`, which is the noise a fresh TFHE ciphertext carries.
//!
//! # Timing
//! Neither sampler runs in constant time, on any target, and the noise is as secret as the key: the
//! boolean encoding vanishes modulo `2^29`, so `b - e = a * s (mod 2^29)` with `a` public, and the noise of
//! a couple of ciphertexts gives the key by linear algebra over GF(2).
//! * The Ziggurat loads its tables `W`, `K`, `F` at an index made of random bits (the layer), compares the
//!   magnitude against `K[layer]` with a branch, and sends 1.5% of draws into a slower path with `exp`/`log`
//!   (wedges) or a loop (the tail beyond `r = 3.65`). A co-resident process sees the table lines it touches
//!   (cache timing; the "Flush, Gauss, and Reload" attack on BLISS, CHES 2016), a power or EM probe sees the
//!   branches: both classify samples by layer, i.e. learn their magnitudes.
//! * The polar method rejects about 21.5% of pairs, with the same kind of leak, and calls `log`/`sqrt`.
//!
//! The workspace's constant-time check runs the Ziggurat under valgrind memcheck with its random bits
//! marked secret and shows that the check reports it.

mod polar;
mod ziggurat;

pub use polar::Polar;
pub use ziggurat::Ziggurat;

use crate::torus::UnsignedTorus;
use rand_core::Rng;

/// A source of standard normal samples.
pub trait NormalSampler {
    /// One sample of `N(0, 1)`.
    fn sample<R: Rng + ?Sized>(&mut self, rng: &mut R) -> f64;

    /// One sample of `N(0, std_dev_scaled^2)` rounded to the nearest integer, modulo `q = 2^T::BITS`.
    ///
    /// `std_dev_scaled` is the standard deviation in units of `1/q` (128 for `sigma = 2^-25`, `q = 2^32`).
    #[inline]
    fn sample_torus<T: UnsignedTorus, R: Rng + ?Sized>(&mut self, rng: &mut R, std_dev_scaled: f64) -> T {
        T::from_i64_wrapping(round_to_i64(self.sample(rng) * std_dev_scaled))
    }

    /// Adds rounded Gaussian noise of standard deviation `std_dev_scaled` (units of `1/q`) to every element.
    fn add_noise_torus<T: UnsignedTorus, R: Rng + ?Sized>(&mut self, rng: &mut R, std_dev_scaled: f64, out: &mut [T]) {
        for x in out {
            *x = x.wrapping_add(self.sample_torus(rng, std_dev_scaled));
        }
    }
}

/// 2^52 + 2^51: adding it to an `f64` below 2^51 in magnitude leaves the nearest integer (ties to even) in
/// the low mantissa bits.
const ROUNDING_MAGIC: f64 = 6_755_399_441_055_744.0;

/// Rounds `x` (`|x| < 2^51`, always true for noise) to the nearest integer, ties to even: two
/// instructions, no branch, vectorizable.
#[inline(always)]
pub(crate) fn round_to_i64(x: f64) -> i64 {
    ((x + ROUNDING_MAGIC).to_bits() as i64).wrapping_sub(ROUNDING_MAGIC.to_bits() as i64)
}

/// A uniform `f64` in `(0, 1]` from 53 random bits: never 0, so its logarithm is finite.
#[inline(always)]
pub(crate) fn uniform_open_closed<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 * libm::ldexp(1.0, -53)
}
