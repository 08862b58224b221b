//! The transform bodies: fold and twist, radix-4 (with one radix-2 stage when `log2 M` is odd) complex FFT kernels on split storage.
//!
//! The forward transform is decimation in frequency: natural order in, bit-reversed order out. The inverse
//! is decimation in time: bit-reversed in, natural out, unnormalized. Neither permutes, since pointwise
//! products do not care about the order of frequencies. Real and imaginary parts live in separate arrays
//! so that every butterfly loop runs over contiguous lanes and the compiler vectorizes it.
//!
//! Everything here is `#[inline(always)]` portable code; `dispatch` instantiates it once per instruction set.
//! This module holds the entry points (fold and twist, pointwise products, untwist and round); [`stages`]
//! the radix-2 and radix-4 stages, which run with the butterflies of [`dif`] (forward) or [`dit`] (inverse).

mod dif;
mod dit;
mod stages;

use crate::coefficient::{Coefficient, RoundedCoefficient, round_to_i64};
use dif::Dif;
use dit::Dit;
use stages::transform;

/// Fold `a_j + i*a_{j+N/2}`, twist by `exp(i*pi*j/N)`, and transform.
#[inline(always)]
pub(crate) fn forward_impl<T: Coefficient>(twist: &[f64], twiddles: &[f64], input: &[T], spectrum: &mut [f64]) {
    let m = input.len() / 2;
    let (re, im) = spectrum.split_at_mut(m);
    let (lo, hi) = input.split_at(m);
    let (t_re, t_im) = twist.split_at(m);
    fold_twist(lo, hi, t_re, t_im, re, im);
    transform::<Dif>(re, im, twiddles);
}

/// Twist in place coefficients already folded into `re` (first half) and `im` (second half), and transform.
#[inline(always)]
pub(crate) fn forward_in_place_impl(twist: &[f64], twiddles: &[f64], spectrum: &mut [f64]) {
    let m = spectrum.len() / 2;
    let (re, im) = spectrum.split_at_mut(m);
    let (t_re, t_im) = twist.split_at(m);
    twist_in_place(re, im, t_re, t_im);
    transform::<Dif>(re, im, twiddles);
}

#[inline(always)]
fn twist_in_place(re: &mut [f64], im: &mut [f64], t_re: &[f64], t_im: &[f64]) {
    let m = re.len();
    let (im, t_re, t_im) = (&mut im[..m], &t_re[..m], &t_im[..m]);
    for j in 0..m {
        let (a, b) = (re[j], im[j]);
        re[j] = a * t_re[j] - b * t_im[j];
        im[j] = a * t_im[j] + b * t_re[j];
    }
}

#[inline(always)]
fn fold_twist<T: Coefficient>(lo: &[T], hi: &[T], t_re: &[f64], t_im: &[f64], re: &mut [f64], im: &mut [f64]) {
    let m = re.len();
    let (lo, hi, t_re, t_im, im) = (&lo[..m], &hi[..m], &t_re[..m], &t_im[..m], &mut im[..m]);
    for j in 0..m {
        let (a, b) = (lo[j].to_f64(), hi[j].to_f64());
        re[j] = a * t_re[j] - b * t_im[j];
        im[j] = a * t_im[j] + b * t_re[j];
    }
}

/// `acc *= rhs`, pointwise.
#[inline(always)]
pub(crate) fn mul_assign_impl(acc: &mut [f64], rhs: &[f64]) {
    let m = acc.len() / 2;
    let (a_re, a_im) = acc.split_at_mut(m);
    let (b_re, b_im) = rhs.split_at(m);
    mul_block(a_re, a_im, b_re, b_im);
}

#[inline(always)]
fn mul_block(a_re: &mut [f64], a_im: &mut [f64], b_re: &[f64], b_im: &[f64]) {
    let m = a_re.len();
    let (a_im, b_re, b_im) = (&mut a_im[..m], &b_re[..m], &b_im[..m]);
    for j in 0..m {
        let (ar, ai, br, bi) = (a_re[j], a_im[j], b_re[j], b_im[j]);
        a_re[j] = ar * br - ai * bi;
        a_im[j] = ar * bi + ai * br;
    }
}

/// `acc += lhs * rhs`, pointwise.
#[inline(always)]
pub(crate) fn mul_add_assign_impl(acc: &mut [f64], lhs: &[f64], rhs: &[f64]) {
    let m = acc.len() / 2;
    let (c_re, c_im) = acc.split_at_mut(m);
    let (a_re, a_im) = lhs.split_at(m);
    let (b_re, b_im) = rhs.split_at(m);
    mul_add_block(c_re, c_im, a_re, a_im, b_re, b_im);
}

#[inline(always)]
fn mul_add_block(c_re: &mut [f64], c_im: &mut [f64], a_re: &[f64], a_im: &[f64], b_re: &[f64], b_im: &[f64]) {
    let m = c_re.len();
    let (c_im, a_re, a_im, b_re, b_im) = (&mut c_im[..m], &a_re[..m], &a_im[..m], &b_re[..m], &b_im[..m]);
    for j in 0..m {
        let (ar, ai, br, bi) = (a_re[j], a_im[j], b_re[j], b_im[j]);
        c_re[j] += ar * br - ai * bi;
        c_im[j] += ar * bi + ai * br;
    }
}

/// Inverse transform, then untwist by `exp(-i*pi*j/N)` and normalize by `1/M`: `re` holds `c_j` and `im`
/// holds `c_{j+N/2}`, so the spectrum buffer ends up holding the product in natural order.
#[inline(always)]
pub(crate) fn inverse_raw_impl(twist: &[f64], twiddles: &[f64], spectrum: &mut [f64]) {
    let m = spectrum.len() / 2;
    let (re, im) = spectrum.split_at_mut(m);
    transform::<Dit>(re, im, twiddles);
    let (t_re, t_im) = twist.split_at(m);
    untwist_in_place(re, im, t_re, t_im);
}

#[inline(always)]
fn untwist_in_place(re: &mut [f64], im: &mut [f64], t_re: &[f64], t_im: &[f64]) {
    let m = re.len();
    let scale = 1.0 / m as f64;
    let (im, t_re, t_im) = (&mut im[..m], &t_re[..m], &t_im[..m]);
    for j in 0..m {
        let (zr, zi) = (re[j] * scale, im[j] * scale);
        re[j] = zr * t_re[j] + zi * t_im[j];
        im[j] = zi * t_re[j] - zr * t_im[j];
    }
}

/// Inverse transform, untwist, round, and write (`ADD = false`) or add (`ADD = true`) into `out`.
#[inline(always)]
pub(crate) fn inverse_impl<T: RoundedCoefficient, const ADD: bool>(
    twist: &[f64],
    twiddles: &[f64],
    spectrum: &mut [f64],
    out: &mut [T],
) {
    let m = spectrum.len() / 2;
    let (re, im) = spectrum.split_at_mut(m);
    transform::<Dit>(re, im, twiddles);
    let (t_re, t_im) = twist.split_at(m);
    let (lo, hi) = out.split_at_mut(m);
    untwist_round::<T, ADD>(re, im, t_re, t_im, lo, hi);
}

#[inline(always)]
fn untwist_round<T: RoundedCoefficient, const ADD: bool>(
    re: &[f64],
    im: &[f64],
    t_re: &[f64],
    t_im: &[f64],
    lo: &mut [T],
    hi: &mut [T],
) {
    let m = re.len();
    let scale = 1.0 / m as f64;
    let (im, t_re, t_im, lo, hi) = (&im[..m], &t_re[..m], &t_im[..m], &mut lo[..m], &mut hi[..m]);
    for j in 0..m {
        let (zr, zi) = (re[j] * scale, im[j] * scale);
        let c_lo = T::from_rounded_i64(round_to_i64(zr * t_re[j] + zi * t_im[j]));
        let c_hi = T::from_rounded_i64(round_to_i64(zi * t_re[j] - zr * t_im[j]));
        if ADD {
            lo[j] = lo[j].wrapping_add(c_lo);
            hi[j] = hi[j].wrapping_add(c_hi);
        } else {
            lo[j] = c_lo;
            hi[j] = c_hi;
        }
    }
}
