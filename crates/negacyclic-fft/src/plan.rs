//! The negacyclic transform plan: fold, twist, FFT, pointwise products, inverse, untwist, round.

use crate::coefficient::{Coefficient, RoundedCoefficient};

/// The kernels, each in the instance the CPU supports (see `dispatch`).
mod dispatched {
    use crate::coefficient::{Coefficient, RoundedCoefficient};
    use crate::dispatch::dispatch;
    use crate::kernels::{
        forward_impl, forward_in_place_impl, inverse_impl, inverse_raw_impl, mul_add_assign_impl, mul_assign_impl,
    };

    dispatch! {
        pub(super) fn forward<T: Coefficient>(twist: &[f64], twiddles: &[f64], input: &[T], spectrum: &mut [f64])
            => forward_impl;
    }
    dispatch! {
        pub(super) fn forward_in_place(twist: &[f64], twiddles: &[f64], spectrum: &mut [f64]) => forward_in_place_impl;
    }
    dispatch! {
        pub(super) fn mul_assign(acc: &mut [f64], rhs: &[f64]) => mul_assign_impl;
    }
    dispatch! {
        pub(super) fn mul_add_assign(acc: &mut [f64], lhs: &[f64], rhs: &[f64]) => mul_add_assign_impl;
    }
    dispatch! {
        pub(super) fn inverse_raw(twist: &[f64], twiddles: &[f64], spectrum: &mut [f64]) => inverse_raw_impl;
    }
    dispatch! {
        pub(super) fn inverse<T: RoundedCoefficient>(twist: &[f64], twiddles: &[f64], spectrum: &mut [f64], out: &mut [T])
            => inverse_impl::<T, false>;
    }
    dispatch! {
        pub(super) fn inverse_add<T: RoundedCoefficient>(
            twist: &[f64],
            twiddles: &[f64],
            spectrum: &mut [f64],
            out: &mut [T],
        ) => inverse_impl::<T, true>;
    }
}

/// The smallest supported polynomial size `N`.
pub const MIN_POLYNOMIAL_SIZE: usize = 64;
/// The largest supported polynomial size `N`.
pub const MAX_POLYNOMIAL_SIZE: usize = 4096;

/// Why a [`Plan`] could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
        f.debug_struct("Plan").field("polynomial_size", &self.n).finish()
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
        assert_eq!(input.len(), self.n, "input length must be N");
        assert_eq!(spectrum.len(), self.n, "spectrum length must be N");
        dispatched::forward(self.twist, self.twiddles, input, spectrum)
    }

    /// Transforms in place a polynomial whose `N` coefficients the caller has already written into
    /// `spectrum` as `f64` (natural order, exact integers, e.g. `f64::from(a as i32)` for a torus element).
    ///
    /// This lets a caller generate a polynomial straight into the transform buffer, with no integer copy
    /// (the device expands a seeded mask this way).
    pub fn forward_in_place(&self, spectrum: &mut [f64]) {
        assert_eq!(spectrum.len(), self.n, "spectrum length must be N");
        dispatched::forward_in_place(self.twist, self.twiddles, spectrum)
    }

    /// Pointwise product `acc *= rhs` of two spectra.
    pub fn mul_assign(&self, acc: &mut [f64], rhs: &[f64]) {
        assert_eq!(acc.len(), self.n, "spectrum length must be N");
        assert_eq!(rhs.len(), self.n, "spectrum length must be N");
        dispatched::mul_assign(acc, rhs)
    }

    /// Pointwise multiply-accumulate `acc += lhs * rhs` of spectra.
    pub fn mul_add_assign(&self, acc: &mut [f64], lhs: &[f64], rhs: &[f64]) {
        assert_eq!(acc.len(), self.n, "spectrum length must be N");
        assert_eq!(lhs.len(), self.n, "spectrum length must be N");
        assert_eq!(rhs.len(), self.n, "spectrum length must be N");
        dispatched::mul_add_assign(acc, lhs, rhs)
    }

    /// Inverse transform in place, leaving the `N` real coefficients of the product, in natural order and
    /// *before rounding*, in `spectrum`. For callers that need the raw values (error analysis, limb
    /// recombination); [`Plan::inverse_wrapping`] is the usual entry point.
    pub fn inverse_raw(&self, spectrum: &mut [f64]) {
        assert_eq!(spectrum.len(), self.n, "spectrum length must be N");
        dispatched::inverse_raw(self.twist, self.twiddles, spectrum)
    }

    /// Inverse transform of `spectrum` (destroyed: it is the scratch), rounded into `out`.
    ///
    /// For `u32` the result wraps modulo 2^32. Exact whenever the true product coefficients are integers
    /// that the FFT error does not push half-way (checked by the tests for 32-bit torus times
    /// binary/ternary polynomials up to `N = 4096`).
    pub fn inverse_wrapping<T: RoundedCoefficient>(&self, spectrum: &mut [f64], out: &mut [T]) {
        assert_eq!(out.len(), self.n, "output length must be N");
        assert_eq!(spectrum.len(), self.n, "spectrum length must be N");
        dispatched::inverse(self.twist, self.twiddles, spectrum, out)
    }

    /// Like [`Plan::inverse_wrapping`], but adds the rounded product to `out` (wrapping).
    pub fn inverse_add_wrapping<T: RoundedCoefficient>(&self, spectrum: &mut [f64], out: &mut [T]) {
        assert_eq!(out.len(), self.n, "output length must be N");
        assert_eq!(spectrum.len(), self.n, "spectrum length must be N");
        dispatched::inverse_add(self.twist, self.twiddles, spectrum, out)
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
