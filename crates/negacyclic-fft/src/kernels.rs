//! The transform bodies: fold and twist, radix-4 (with one radix-2 stage when `log2 M` is odd) complex FFT kernels on split storage.
//!
//! The forward transform is decimation in frequency: natural order in, bit-reversed order out. The inverse
//! is decimation in time: bit-reversed in, natural out, unnormalized. Neither permutes, since pointwise
//! products do not care about the order of frequencies. Real and imaginary parts live in separate arrays
//! so that every butterfly loop runs over contiguous lanes and the compiler vectorizes it.
//!
//! Everything here is `#[inline(always)]` portable code; `dispatch` instantiates it once per instruction set.
//!
//! The twiddle table holds, for every radix-2 stage of half-size `h` (largest first), `exp(-i*pi*j/h)` for
//! `j < h`: `h` real parts, then `h` imaginary parts, at offset `2M - 4h`. A radix-4 stage of quarter-size
//! `q` fuses the radix-2 stages `2q` and `q` and uses both of their tables.

use crate::coefficient::{Coefficient, RoundedCoefficient, round_to_i64};

/// The `(re, im)` twiddle slices of the radix-2 stage of half-size `h` in an `m`-point transform.
#[inline(always)]
fn stage(twiddles: &[f64], m: usize, h: usize) -> (&[f64], &[f64]) {
    let offset = 2 * m - 4 * h;
    twiddles[offset..offset + 2 * h].split_at(h)
}

/// Radix-2 DIF stage of half-size `h` (the first stage when `log2 M` is odd).
#[inline(always)]
fn dif2(re: &mut [f64], im: &mut [f64], w_re: &[f64], w_im: &[f64], h: usize) {
    for (re, im) in re.chunks_exact_mut(2 * h).zip(im.chunks_exact_mut(2 * h)) {
        let (re0, re1) = re.split_at_mut(h);
        let (im0, im1) = im.split_at_mut(h);
        dif2_block(re0, re1, im0, im1, w_re, w_im);
    }
}

/// One radix-2 DIF block; separate slices let LLVM vectorize without overlap checks.
#[inline(always)]
fn dif2_block(re0: &mut [f64], re1: &mut [f64], im0: &mut [f64], im1: &mut [f64], w_re: &[f64], w_im: &[f64]) {
    let h = re0.len();
    let (re1, im0, im1, w_re, w_im) = (&mut re1[..h], &mut im0[..h], &mut im1[..h], &w_re[..h], &w_im[..h]);
    {
        for j in 0..h {
            let (ur, ui, vr, vi) = (re0[j], im0[j], re1[j], im1[j]);
            re0[j] = ur + vr;
            im0[j] = ui + vi;
            let (dr, di) = (ur - vr, ui - vi);
            re1[j] = dr * w_re[j] - di * w_im[j];
            im1[j] = dr * w_im[j] + di * w_re[j];
        }
    }
}

/// Radix-2 DIT stage of half-size `h` with conjugate twiddles (the last inverse stage when `log2 M` is odd).
#[inline(always)]
fn dit2(re: &mut [f64], im: &mut [f64], w_re: &[f64], w_im: &[f64], h: usize) {
    for (re, im) in re.chunks_exact_mut(2 * h).zip(im.chunks_exact_mut(2 * h)) {
        let (re0, re1) = re.split_at_mut(h);
        let (im0, im1) = im.split_at_mut(h);
        dit2_block(re0, re1, im0, im1, w_re, w_im);
    }
}

/// One radix-2 DIT block; separate slices let LLVM vectorize without overlap checks.
#[inline(always)]
fn dit2_block(re0: &mut [f64], re1: &mut [f64], im0: &mut [f64], im1: &mut [f64], w_re: &[f64], w_im: &[f64]) {
    let h = re0.len();
    let (re1, im0, im1, w_re, w_im) = (&mut re1[..h], &mut im0[..h], &mut im1[..h], &w_re[..h], &w_im[..h]);
    {
        for j in 0..h {
            let (xr, xi) = (re1[j], im1[j]);
            let vr = xr * w_re[j] + xi * w_im[j];
            let vi = xi * w_re[j] - xr * w_im[j];
            let (ur, ui) = (re0[j], im0[j]);
            re0[j] = ur + vr;
            im0[j] = ui + vi;
            re1[j] = ur - vr;
            im1[j] = ui - vi;
        }
    }
}

/// Four rows of one radix-4 block, real and imaginary parts, each of length `q`.
type Rows<'a> = [&'a mut [f64]; 8];

/// Splits one `4q`-long block of `re` and `im` into its eight rows `[r0, r1, r2, r3, i0, i1, i2, i3]`.
#[inline(always)]
fn rows<'a>(re: &'a mut [f64], im: &'a mut [f64], q: usize) -> Rows<'a> {
    let (r01, r23) = re.split_at_mut(2 * q);
    let (r0, r1) = r01.split_at_mut(q);
    let (r2, r3) = r23.split_at_mut(q);
    let (i01, i23) = im.split_at_mut(2 * q);
    let (i0, i1) = i01.split_at_mut(q);
    let (i2, i3) = i23.split_at_mut(q);
    [r0, r1, r2, r3, i0, i1, i2, i3]
}

/// Radix-4 DIF stage of quarter-size `q >= 2`: the radix-2 stages `2q` (twiddles `a`) and `q` (twiddles `b`).
#[inline(always)]
fn dif4(re: &mut [f64], im: &mut [f64], a: (&[f64], &[f64]), b: (&[f64], &[f64]), q: usize) {
    for (re, im) in re.chunks_exact_mut(4 * q).zip(im.chunks_exact_mut(4 * q)) {
        let [r0, r1, r2, r3, i0, i1, i2, i3] = rows(re, im, q);
        dif4_block(r0, r1, r2, r3, i0, i1, i2, i3, a.0, a.1, b.0, b.1);
    }
}

/// One radix-4 DIF block. Separate slice arguments tell LLVM that the rows do not alias, so that it
/// vectorizes the loop without run-time overlap checks.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn dif4_block(
    r0: &mut [f64],
    r1: &mut [f64],
    r2: &mut [f64],
    r3: &mut [f64],
    i0: &mut [f64],
    i1: &mut [f64],
    i2: &mut [f64],
    i3: &mut [f64],
    a_re: &[f64],
    a_im: &[f64],
    b_re: &[f64],
    b_im: &[f64],
) {
    let q = r0.len();
    let (r1, r2, r3, i0, i1, i2, i3) = (
        &mut r1[..q],
        &mut r2[..q],
        &mut r3[..q],
        &mut i0[..q],
        &mut i1[..q],
        &mut i2[..q],
        &mut i3[..q],
    );
    let (a_re, a_im, b_re, b_im) = (&a_re[..q], &a_im[..q], &b_re[..q], &b_im[..q]);
    for j in 0..q {
        let (x0r, x0i, x1r, x1i) = (r0[j], i0[j], r1[j], i1[j]);
        let (x2r, x2i, x3r, x3i) = (r2[j], i2[j], r3[j], i3[j]);
        let (ar, ai) = (x0r + x2r, x0i + x2i);
        let (br, bi) = (x0r - x2r, x0i - x2i);
        let (cr, ci) = (x1r + x3r, x1i + x3i);
        // d = (x1 - x3) * (-i)
        let (dr, di) = (x1i - x3i, x3r - x1r);
        // w1 = W_{4q}^j, w2 = W_{2q}^j = W_{4q}^{2j}, w3 = w1 * w2 = W_{4q}^{3j}
        let (w1r, w1i, w2r, w2i) = (a_re[j], a_im[j], b_re[j], b_im[j]);
        let (w3r, w3i) = (w1r * w2r - w1i * w2i, w1r * w2i + w1i * w2r);
        r0[j] = ar + cr;
        i0[j] = ai + ci;
        let (er, ei) = (ar - cr, ai - ci);
        r1[j] = er * w2r - ei * w2i;
        i1[j] = er * w2i + ei * w2r;
        let (fr, fi) = (br + dr, bi + di);
        r2[j] = fr * w1r - fi * w1i;
        i2[j] = fr * w1i + fi * w1r;
        let (gr, gi) = (br - dr, bi - di);
        r3[j] = gr * w3r - gi * w3i;
        i3[j] = gr * w3i + gi * w3r;
    }
}

/// Radix-4 DIT stage of quarter-size `q >= 2`, the inverse of [`dif4`] up to a factor 4.
#[inline(always)]
fn dit4(re: &mut [f64], im: &mut [f64], a: (&[f64], &[f64]), b: (&[f64], &[f64]), q: usize) {
    for (re, im) in re.chunks_exact_mut(4 * q).zip(im.chunks_exact_mut(4 * q)) {
        let [r0, r1, r2, r3, i0, i1, i2, i3] = rows(re, im, q);
        dit4_block(r0, r1, r2, r3, i0, i1, i2, i3, a.0, a.1, b.0, b.1);
    }
}

/// One radix-4 DIT block (see [`dif4_block`] for why the rows are separate arguments).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn dit4_block(
    r0: &mut [f64],
    r1: &mut [f64],
    r2: &mut [f64],
    r3: &mut [f64],
    i0: &mut [f64],
    i1: &mut [f64],
    i2: &mut [f64],
    i3: &mut [f64],
    a_re: &[f64],
    a_im: &[f64],
    b_re: &[f64],
    b_im: &[f64],
) {
    let q = r0.len();
    let (r1, r2, r3, i0, i1, i2, i3) = (
        &mut r1[..q],
        &mut r2[..q],
        &mut r3[..q],
        &mut i0[..q],
        &mut i1[..q],
        &mut i2[..q],
        &mut i3[..q],
    );
    let (a_re, a_im, b_re, b_im) = (&a_re[..q], &a_im[..q], &b_re[..q], &b_im[..q]);
    for j in 0..q {
        let (w1r, w1i, w2r, w2i) = (a_re[j], a_im[j], b_re[j], b_im[j]);
        let (w3r, w3i) = (w1r * w2r - w1i * w2i, w1r * w2i + w1i * w2r);
        // Multiply by conjugates: t1 = z1 * conj(w2), s2 = z2 * conj(w1), s3 = z3 * conj(w3).
        let (z1r, z1i, z2r, z2i, z3r, z3i) = (r1[j], i1[j], r2[j], i2[j], r3[j], i3[j]);
        let (t1r, t1i) = (z1r * w2r + z1i * w2i, z1i * w2r - z1r * w2i);
        let (s2r, s2i) = (z2r * w1r + z2i * w1i, z2i * w1r - z2r * w1i);
        let (s3r, s3i) = (z3r * w3r + z3i * w3i, z3i * w3r - z3r * w3i);
        let (z0r, z0i) = (r0[j], i0[j]);
        let (y0r, y0i) = (z0r + t1r, z0i + t1i);
        let (y1r, y1i) = (z0r - t1r, z0i - t1i);
        let (pr, pi) = (s2r + s3r, s2i + s3i);
        // m = i * (s2 - s3)
        let (mr, mi) = (s3i - s2i, s2r - s3r);
        r0[j] = y0r + pr;
        i0[j] = y0i + pi;
        r2[j] = y0r - pr;
        i2[j] = y0i - pi;
        r1[j] = y1r + mr;
        i1[j] = y1i + mi;
        r3[j] = y1r - mr;
        i3[j] = y1i - mi;
    }
}

/// The last forward radix-4 stage (`q = 1`): every twiddle is 1, blocks are 4 contiguous values.
/// Indexed (not chunked) so that LLVM vectorizes across blocks with interleaved (stride-4) accesses.
#[inline(always)]
fn dif4_last(re: &mut [f64], im: &mut [f64]) {
    let blocks = re.len() / 4;
    let (re, im) = (&mut re[..4 * blocks], &mut im[..4 * blocks]);
    for b in 0..blocks {
        let k = 4 * b;
        let (x0r, x1r, x2r, x3r) = (re[k], re[k + 1], re[k + 2], re[k + 3]);
        let (x0i, x1i, x2i, x3i) = (im[k], im[k + 1], im[k + 2], im[k + 3]);
        let (ar, ai) = (x0r + x2r, x0i + x2i);
        let (br, bi) = (x0r - x2r, x0i - x2i);
        let (cr, ci) = (x1r + x3r, x1i + x3i);
        let (dr, di) = (x1i - x3i, x3r - x1r);
        re[k] = ar + cr;
        im[k] = ai + ci;
        re[k + 1] = ar - cr;
        im[k + 1] = ai - ci;
        re[k + 2] = br + dr;
        im[k + 2] = bi + di;
        re[k + 3] = br - dr;
        im[k + 3] = bi - di;
    }
}

/// The first inverse radix-4 stage (`q = 1`), the inverse of [`dif4_last`] up to a factor 4.
#[inline(always)]
fn dit4_first(re: &mut [f64], im: &mut [f64]) {
    let blocks = re.len() / 4;
    let (re, im) = (&mut re[..4 * blocks], &mut im[..4 * blocks]);
    for b in 0..blocks {
        let k = 4 * b;
        let (z0r, z1r, z2r, z3r) = (re[k], re[k + 1], re[k + 2], re[k + 3]);
        let (z0i, z1i, z2i, z3i) = (im[k], im[k + 1], im[k + 2], im[k + 3]);
        let (y0r, y0i) = (z0r + z1r, z0i + z1i);
        let (y1r, y1i) = (z0r - z1r, z0i - z1i);
        let (pr, pi) = (z2r + z3r, z2i + z3i);
        let (mr, mi) = (z3i - z2i, z2r - z3r);
        re[k] = y0r + pr;
        im[k] = y0i + pi;
        re[k + 2] = y0r - pr;
        im[k + 2] = y0i - pi;
        re[k + 1] = y1r + mr;
        im[k + 1] = y1i + mi;
        re[k + 3] = y1r - mr;
        im[k + 3] = y1i - mi;
    }
}

/// Forward DIF FFT of `re + i*im` in place, natural order in, bit-reversed order out.
#[inline(always)]
fn forward_dif(re: &mut [f64], im: &mut [f64], twiddles: &[f64]) {
    let m = re.len();
    debug_assert!(m >= 4 && m.is_power_of_two() && im.len() == m);
    let mut h = m / 2;
    if m.trailing_zeros() % 2 == 1 {
        let (w_re, w_im) = stage(twiddles, m, h);
        dif2(re, im, w_re, w_im, h);
        h /= 2;
    }
    // Now h = 2q for each radix-4 stage.
    while h >= 4 {
        let q = h / 2;
        dif4(re, im, stage(twiddles, m, h), stage(twiddles, m, q), q);
        h /= 4;
    }
    debug_assert_eq!(h, 2);
    dif4_last(re, im);
}

/// Inverse DIT FFT of `re + i*im` in place, bit-reversed in, natural out, scaled by `M`.
#[inline(always)]
fn inverse_dit(re: &mut [f64], im: &mut [f64], twiddles: &[f64]) {
    let m = re.len();
    debug_assert!(m >= 4 && m.is_power_of_two() && im.len() == m);
    dit4_first(re, im);
    let mut h = 8;
    while h <= m / 2 {
        let q = h / 2;
        dit4(re, im, stage(twiddles, m, h), stage(twiddles, m, q), q);
        h *= 4;
    }
    if m.trailing_zeros() % 2 == 1 {
        let h = m / 2;
        let (w_re, w_im) = stage(twiddles, m, h);
        dit2(re, im, w_re, w_im, h);
    }
}

/// Fold `a_j + i*a_{j+N/2}`, twist by `exp(i*pi*j/N)`, and transform.
#[inline(always)]
pub(crate) fn forward_impl<T: Coefficient>(twist: &[f64], twiddles: &[f64], input: &[T], spectrum: &mut [f64]) {
    let m = input.len() / 2;
    let (re, im) = spectrum.split_at_mut(m);
    let (lo, hi) = input.split_at(m);
    let (t_re, t_im) = twist.split_at(m);
    fold_twist(lo, hi, t_re, t_im, re, im);
    forward_dif(re, im, twiddles);
}

/// Twist in place coefficients already folded into `re` (first half) and `im` (second half), and transform.
#[inline(always)]
pub(crate) fn forward_in_place_impl(twist: &[f64], twiddles: &[f64], spectrum: &mut [f64]) {
    let m = spectrum.len() / 2;
    let (re, im) = spectrum.split_at_mut(m);
    let (t_re, t_im) = twist.split_at(m);
    twist_in_place(re, im, t_re, t_im);
    forward_dif(re, im, twiddles);
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
    inverse_dit(re, im, twiddles);
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
    inverse_dit(re, im, twiddles);
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
