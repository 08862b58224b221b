//! The negacyclic transform plan: fold, twist, FFT, pointwise products, inverse, untwist, round.

use crate::coefficient::{Coefficient, RoundedCoefficient, round_to_i64};
use crate::kernels::{forward_dif, inverse_dit};

/// The smallest supported polynomial size `N`.
pub const MIN_POLYNOMIAL_SIZE: usize = 64;
/// The largest supported polynomial size `N`.
pub const MAX_POLYNOMIAL_SIZE: usize = 4096;

/// Why a [`Plan`] could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FftError {
    /// `N` is not a power of two in `MIN_POLYNOMIAL_SIZE..=MAX_POLYNOMIAL_SIZE`.
    UnsupportedSize(usize),
}

impl core::fmt::Display for FftError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::UnsupportedSize(n) => write!(
                f,
                "unsupported polynomial size {n}: expected a power of two from {MIN_POLYNOMIAL_SIZE} to {MAX_POLYNOMIAL_SIZE}"
            ),
        }
    }
}

impl core::error::Error for FftError {}

/// A negacyclic FFT of one polynomial size `N`: a cheap `Copy` handle on static, precomputed tables.
///
/// A *spectrum* is a `[f64]` of length `N`: the real parts of the `N/2` folded, twisted frequencies
/// (bit-reversed order), then their imaginary parts. The caller owns every spectrum; nothing allocates.
///
/// Methods panic if a slice length is not `N`: that is a programmer error, not a data error.
#[derive(Clone, Copy)]
pub struct Plan {
    n: usize,
    /// `cos(pi*j/N)` for `j < N/2`, then `sin(pi*j/N)`.
    twist: &'static [f64],
    /// Per-stage twiddles of the `N/2`-point FFT.
    twiddles: &'static [f64],
}

impl core::fmt::Debug for Plan {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Plan")
            .field("polynomial_size", &self.n)
            .finish()
    }
}

impl Plan {
    /// The plan for polynomials of `n` coefficients (a power of two from 64 to 4096).
    pub const fn new(n: usize) -> Result<Self, FftError> {
        match crate::tables::tables(n) {
            Some((twist, twiddles)) => Ok(Self { n, twist, twiddles }),
            None => Err(FftError::UnsupportedSize(n)),
        }
    }

    /// The polynomial size `N`, which is also the length of a spectrum in `f64`s.
    #[inline]
    pub const fn polynomial_size(&self) -> usize {
        self.n
    }

    /// Transforms the polynomial `input` into `spectrum` (both of length `N`).
    ///
    /// `u32` input is read as a centered torus value; see [`Coefficient`].
    pub fn forward<T: Coefficient>(&self, input: &[T], spectrum: &mut [f64]) {
        let m = self.n / 2;
        assert_eq!(input.len(), self.n, "input length must be N");
        assert_eq!(spectrum.len(), self.n, "spectrum length must be N");
        let (re, im) = spectrum.split_at_mut(m);
        let (lo, hi) = input.split_at(m);
        let (t_re, t_im) = self.twist.split_at(m);
        // Fold a_j + i*a_{j+N/2} and twist by exp(i*pi*j/N).
        for j in 0..m {
            let (a, b) = (lo[j].to_f64(), hi[j].to_f64());
            re[j] = a * t_re[j] - b * t_im[j];
            im[j] = a * t_im[j] + b * t_re[j];
        }
        forward_dif(re, im, self.twiddles);
    }

    /// Pointwise product `acc *= rhs` of two spectra.
    pub fn mul_assign(&self, acc: &mut [f64], rhs: &[f64]) {
        let m = self.n / 2;
        assert_eq!(acc.len(), self.n, "spectrum length must be N");
        assert_eq!(rhs.len(), self.n, "spectrum length must be N");
        let (a_re, a_im) = acc.split_at_mut(m);
        let (b_re, b_im) = rhs.split_at(m);
        for j in 0..m {
            let (ar, ai, br, bi) = (a_re[j], a_im[j], b_re[j], b_im[j]);
            a_re[j] = ar * br - ai * bi;
            a_im[j] = ar * bi + ai * br;
        }
    }

    /// Pointwise multiply-accumulate `acc += lhs * rhs` of spectra.
    pub fn mul_add_assign(&self, acc: &mut [f64], lhs: &[f64], rhs: &[f64]) {
        let m = self.n / 2;
        assert_eq!(acc.len(), self.n, "spectrum length must be N");
        assert_eq!(lhs.len(), self.n, "spectrum length must be N");
        assert_eq!(rhs.len(), self.n, "spectrum length must be N");
        let (c_re, c_im) = acc.split_at_mut(m);
        let (a_re, a_im) = lhs.split_at(m);
        let (b_re, b_im) = rhs.split_at(m);
        for j in 0..m {
            let (ar, ai, br, bi) = (a_re[j], a_im[j], b_re[j], b_im[j]);
            c_re[j] += ar * br - ai * bi;
            c_im[j] += ar * bi + ai * br;
        }
    }

    /// Inverse transform in place, leaving the `N` real coefficients of the product, in natural order and
    /// *before rounding*, in `spectrum`. For callers that need the raw values (error analysis, limb
    /// recombination); [`Plan::inverse_wrapping`] is the usual entry point.
    pub fn inverse_raw(&self, spectrum: &mut [f64]) {
        let m = self.n / 2;
        assert_eq!(spectrum.len(), self.n, "spectrum length must be N");
        let (re, im) = spectrum.split_at_mut(m);
        inverse_dit(re, im, self.twiddles);
        // Untwist by exp(-i*pi*j/N) and normalize by 1/M: re holds c_j, im holds c_{j+N/2}.
        let scale = 1.0 / m as f64;
        let (t_re, t_im) = self.twist.split_at(m);
        for j in 0..m {
            let (zr, zi) = (re[j] * scale, im[j] * scale);
            re[j] = zr * t_re[j] + zi * t_im[j];
            im[j] = zi * t_re[j] - zr * t_im[j];
        }
    }

    /// Inverse transform of `spectrum` (destroyed: it is the scratch), rounded into `out`.
    ///
    /// For `u32` the result wraps modulo 2^32. Exact whenever the true product coefficients are integers
    /// that the FFT error does not push half-way (checked by the tests for 32-bit torus times
    /// binary/ternary polynomials up to `N = 4096`).
    pub fn inverse_wrapping<T: RoundedCoefficient>(&self, spectrum: &mut [f64], out: &mut [T]) {
        assert_eq!(out.len(), self.n, "output length must be N");
        self.inverse_raw(spectrum);
        for (o, &x) in out.iter_mut().zip(spectrum.iter()) {
            *o = T::from_rounded_i64(round_to_i64(x));
        }
    }

    /// Like [`Plan::inverse_wrapping`], but adds the rounded product to `out` (wrapping).
    pub fn inverse_add_wrapping<T: RoundedCoefficient>(&self, spectrum: &mut [f64], out: &mut [T]) {
        assert_eq!(out.len(), self.n, "output length must be N");
        self.inverse_raw(spectrum);
        for (o, &x) in out.iter_mut().zip(spectrum.iter()) {
            *o = o.wrapping_add(T::from_rounded_i64(round_to_i64(x)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a over the bits of every table. The same digest must come out on every target (the CI runs this
    /// test natively and under qemu for aarch64): the tables are bit-identical by construction.
    #[test]
    fn tables_are_bit_identical_across_targets() {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut n = MIN_POLYNOMIAL_SIZE;
        while n <= MAX_POLYNOMIAL_SIZE {
            let plan = Plan::new(n).unwrap();
            for x in plan.twist.iter().chain(plan.twiddles) {
                for byte in x.to_bits().to_le_bytes() {
                    hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
                }
            }
            n *= 2;
        }
        assert_eq!(hash, 0xfb38_cbfb_cbc4_2b29, "table digest {hash:#018x}");
    }
}
