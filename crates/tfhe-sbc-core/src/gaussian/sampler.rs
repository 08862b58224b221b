//! What every Gaussian sampler provides ([`NormalSampler`]) and the two helpers they share: branch-free
//! rounding to the nearest integer and a uniform draw in `(0, 1]`.

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
