//! The radix-2 and radix-4 stages over split storage, generic in the direction's [`Butterfly`]: one loop
//! shape serves the forward (DIF, [`super::dif`]) and the inverse (DIT, [`super::dit`]) transform.
//!
//! The twiddle table holds, for every radix-2 stage of half-size `h` (largest first), `exp(-i*pi*j/h)` for
//! `j < h`: `h` real parts, then `h` imaginary parts, at offset `2M - 4h`. A radix-4 stage of quarter-size
//! `q` fuses the radix-2 stages `2q` and `q` and uses both of their tables.

/// A complex number `(re, im)`.
pub(super) type Complex = (f64, f64);

/// `a + b`.
#[inline(always)]
pub(super) fn add(a: Complex, b: Complex) -> Complex {
    (a.0 + b.0, a.1 + b.1)
}

/// `a - b`.
#[inline(always)]
pub(super) fn sub(a: Complex, b: Complex) -> Complex {
    (a.0 - b.0, a.1 - b.1)
}

/// `a * b`.
#[inline(always)]
pub(super) fn mul(a: Complex, b: Complex) -> Complex {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// `a * conj(b)`.
#[inline(always)]
pub(super) fn mul_conj(a: Complex, b: Complex) -> Complex {
    (a.0 * b.0 + a.1 * b.1, a.1 * b.0 - a.0 * b.1)
}

/// The butterflies of one direction of the transform.
pub(super) trait Butterfly {
    /// Whether these are the inverse's butterflies, which run the forward stages in reverse order.
    const INVERSE: bool;
    /// The radix-2 butterfly on `(u, v)` with twiddle `w` (the stage's `exp(-i*pi*j/h)`).
    fn radix2(u: Complex, v: Complex, w: Complex) -> [Complex; 2];
    /// The radix-4 butterfly on `x` with the twiddles `w1 = W_{4q}^j` and `w2 = W_{2q}^j = W_{4q}^{2j}` (and
    /// `w3 = w1 * w2 = W_{4q}^{3j}`).
    fn radix4(x: [Complex; 4], w1: Complex, w2: Complex) -> [Complex; 4];
    /// The radix-4 butterfly with every twiddle 1 (the stage `q = 1`).
    fn radix4_unit(x: [Complex; 4]) -> [Complex; 4];
}

/// The FFT of `re + i*im` in place with the butterflies `B`: the stages of [`Stage::forward_order`] in that
/// order, or in reverse for the inverse.
#[inline(always)]
pub(super) fn transform<B: Butterfly>(re: &mut [f64], im: &mut [f64], twiddles: &[f64]) {
    let stages = Stage::forward_order(re.len());
    // Loops, not closures: a closure's body would not inherit the caller's `#[target_feature]` (`dispatch`).
    if B::INVERSE {
        for stage in stages.rev() {
            stage.run::<B>(re, im, twiddles);
        }
    } else {
        for stage in stages {
            stage.run::<B>(re, im, twiddles);
        }
    }
}

/// One stage of an `m`-point transform.
#[derive(Clone, Copy)]
enum Stage {
    /// The radix-2 stage of half-size `h = m / 2` (when `log2 m` is odd).
    Radix2 { h: usize },
    /// The radix-4 stage fusing the radix-2 stages `h` and `h / 2` (quarter-size `q = h / 2 >= 4`).
    Radix4 { h: usize },
    /// The radix-4 stage `q = 1`, every twiddle 1.
    Unit,
}

impl Stage {
    /// The stages of an `m`-point transform (`m >= 4`, a power of two) in the forward (DIF) order: the
    /// radix-2 stage when `log2 m` is odd, the radix-4 stages from the largest down, the unit stage. The
    /// inverse (DIT) runs them in reverse.
    #[inline(always)]
    fn forward_order(m: usize) -> impl DoubleEndedIterator<Item = Stage> {
        debug_assert!(m >= 4 && m.is_power_of_two());
        let log = m.trailing_zeros();
        let radix2 = (log % 2 == 1).then_some(Stage::Radix2 { h: m / 2 });
        let radix4 = (0..(log - 2) / 2).rev().map(|k| Stage::Radix4 { h: 8 << (2 * k) });
        radix2.into_iter().chain(radix4).chain(core::iter::once(Stage::Unit))
    }

    /// Runs this stage of the transform of `re + i*im` in place with the butterflies `B`.
    #[inline(always)]
    fn run<B: Butterfly>(self, re: &mut [f64], im: &mut [f64], twiddles: &[f64]) {
        let m = re.len();
        debug_assert_eq!(im.len(), m);
        match self {
            Stage::Radix2 { h } => radix2::<B>(re, im, stage(twiddles, m, h), h),
            Stage::Radix4 { h } => radix4::<B>(re, im, stage(twiddles, m, h), stage(twiddles, m, h / 2), h / 2),
            Stage::Unit => radix4_unit::<B>(re, im),
        }
    }
}

/// The `(re, im)` twiddle slices of the radix-2 stage of half-size `h` in an `m`-point transform.
#[inline(always)]
fn stage(twiddles: &[f64], m: usize, h: usize) -> (&[f64], &[f64]) {
    let offset = 2 * m - 4 * h;
    twiddles[offset..offset + 2 * h].split_at(h)
}

/// Radix-2 stage of half-size `h` with the twiddles `w`.
#[inline(always)]
fn radix2<B: Butterfly>(re: &mut [f64], im: &mut [f64], w: (&[f64], &[f64]), h: usize) {
    for (re, im) in re.chunks_exact_mut(2 * h).zip(im.chunks_exact_mut(2 * h)) {
        let (re0, re1) = re.split_at_mut(h);
        let (im0, im1) = im.split_at_mut(h);
        radix2_block::<B>(re0, re1, im0, im1, w.0, w.1);
    }
}

/// One radix-2 block; separate slices let LLVM vectorize without overlap checks.
#[inline(always)]
fn radix2_block<B: Butterfly>(
    re0: &mut [f64],
    re1: &mut [f64],
    im0: &mut [f64],
    im1: &mut [f64],
    w_re: &[f64],
    w_im: &[f64],
) {
    let h = re0.len();
    let (re1, im0, im1, w_re, w_im) = (&mut re1[..h], &mut im0[..h], &mut im1[..h], &w_re[..h], &w_im[..h]);
    for j in 0..h {
        let [u, v] = B::radix2((re0[j], im0[j]), (re1[j], im1[j]), (w_re[j], w_im[j]));
        (re0[j], im0[j]) = u;
        (re1[j], im1[j]) = v;
    }
}

/// Radix-4 stage of quarter-size `q >= 2`: the radix-2 stages `2q` (twiddles `a`) and `q` (twiddles `b`).
#[inline(always)]
fn radix4<B: Butterfly>(re: &mut [f64], im: &mut [f64], a: (&[f64], &[f64]), b: (&[f64], &[f64]), q: usize) {
    for (re, im) in re.chunks_exact_mut(4 * q).zip(im.chunks_exact_mut(4 * q)) {
        let (r01, r23) = re.split_at_mut(2 * q);
        let (r0, r1) = r01.split_at_mut(q);
        let (r2, r3) = r23.split_at_mut(q);
        let (i01, i23) = im.split_at_mut(2 * q);
        let (i0, i1) = i01.split_at_mut(q);
        let (i2, i3) = i23.split_at_mut(q);
        radix4_block::<B>(r0, r1, r2, r3, i0, i1, i2, i3, a.0, a.1, b.0, b.1);
    }
}

/// One radix-4 block. Separate slice arguments tell LLVM that the rows do not alias, so that it
/// vectorizes the loop without run-time overlap checks.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn radix4_block<B: Butterfly>(
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
        let x = [(r0[j], i0[j]), (r1[j], i1[j]), (r2[j], i2[j]), (r3[j], i3[j])];
        let (w1, w2) = ((a_re[j], a_im[j]), (b_re[j], b_im[j]));
        let [y0, y1, y2, y3] = B::radix4(x, w1, w2);
        (r0[j], i0[j]) = y0;
        (r1[j], i1[j]) = y1;
        (r2[j], i2[j]) = y2;
        (r3[j], i3[j]) = y3;
    }
}

/// The radix-4 stage `q = 1`: every twiddle is 1, blocks are 4 contiguous values. Indexed (not chunked) so
/// that LLVM vectorizes across blocks with interleaved (stride-4) accesses.
#[inline(always)]
fn radix4_unit<B: Butterfly>(re: &mut [f64], im: &mut [f64]) {
    let blocks = re.len() / 4;
    let (re, im) = (&mut re[..4 * blocks], &mut im[..4 * blocks]);
    for b in 0..blocks {
        let k = 4 * b;
        let (x0r, x1r, x2r, x3r) = (re[k], re[k + 1], re[k + 2], re[k + 3]);
        let (x0i, x1i, x2i, x3i) = (im[k], im[k + 1], im[k + 2], im[k + 3]);
        let [y0, y1, y2, y3] = B::radix4_unit([(x0r, x0i), (x1r, x1i), (x2r, x2i), (x3r, x3i)]);
        (re[k], re[k + 1], re[k + 2], re[k + 3]) = (y0.0, y1.0, y2.0, y3.0);
        (im[k], im[k + 1], im[k + 2], im[k + 3]) = (y0.1, y1.1, y2.1, y3.1);
    }
}
