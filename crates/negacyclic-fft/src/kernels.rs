//! Radix-2 complex FFT kernels on split (structure-of-arrays) storage.
//!
//! The forward transform is decimation in frequency: natural order in, bit-reversed order out. The inverse
//! is decimation in time: bit-reversed in, natural out, unnormalized. Neither permutes, since pointwise
//! products do not care about the order of frequencies. Real and imaginary parts live in separate arrays so
//! that every butterfly loop runs over contiguous lanes and the compiler vectorizes it.

/// Forward DIF FFT of `re + i*im` in place (twiddles `exp(-i*pi*j/h)` per stage, largest stage first).
#[inline(always)]
pub(crate) fn forward_dif(re: &mut [f64], im: &mut [f64], twiddles: &[f64]) {
    let m = re.len();
    debug_assert_eq!(im.len(), m);
    let mut h = m / 2;
    let mut offset = 0;
    while h >= 1 {
        let (w_re, w_im) = twiddles[offset..offset + 2 * h].split_at(h);
        for (re, im) in re.chunks_exact_mut(2 * h).zip(im.chunks_exact_mut(2 * h)) {
            let (re0, re1) = re.split_at_mut(h);
            let (im0, im1) = im.split_at_mut(h);
            for j in 0..h {
                let (ur, ui, vr, vi) = (re0[j], im0[j], re1[j], im1[j]);
                re0[j] = ur + vr;
                im0[j] = ui + vi;
                let (dr, di) = (ur - vr, ui - vi);
                re1[j] = dr * w_re[j] - di * w_im[j];
                im1[j] = dr * w_im[j] + di * w_re[j];
            }
        }
        offset += 2 * h;
        h /= 2;
    }
}

/// Inverse DIT FFT of `re + i*im` in place, unnormalized (conjugate twiddles, smallest stage first).
#[inline(always)]
pub(crate) fn inverse_dit(re: &mut [f64], im: &mut [f64], twiddles: &[f64]) {
    let m = re.len();
    debug_assert_eq!(im.len(), m);
    let mut h = 1;
    while h < m {
        let offset = 2 * m - 4 * h;
        let (w_re, w_im) = twiddles[offset..offset + 2 * h].split_at(h);
        for (re, im) in re.chunks_exact_mut(2 * h).zip(im.chunks_exact_mut(2 * h)) {
            let (re0, re1) = re.split_at_mut(h);
            let (im0, im1) = im.split_at_mut(h);
            for j in 0..h {
                // v = x[j + h] * conj(w)
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
        h *= 2;
    }
}
