//! The negacyclic NTT kernels of one prime: Cooley-Tukey forward and Gentleman-Sande inverse with the
//! `2N`-th roots merged into the twiddles (no pre- or post-twisting), Harvey's lazy reductions, and no bit
//! reversal (the spectrum is in bit-reversed order, which pointwise products do not mind). Two stages are
//! done per pass over the data (four values loaded, two levels of butterflies, four stored), which halves
//! the loads, stores and loop overhead; an odd number of stages starts with one single stage.
//!
//! Every loop bound and every index depends on `N` only. Arithmetic on values is `wrapping_*` (the bounds
//! below rule out any wrap): a checked `+` would branch on the data in builds with overflow checks.

use crate::arith::{Prime, Twiddle, csub, twiddle_mul};
#[cfg(not(negacyclic_ntt_mul16))]
use crate::arith::{mont_mul_signed, reduce_i32};

/// Cooley-Tukey butterfly (Harvey): `x, y < 4p` in, `x + w y, x - w y` out, both `< 4p`.
#[inline(always)]
fn ct(x: u32, y: u32, w: Twiddle, q: Prime) -> (u32, u32) {
    let u = csub(x, q.two_p);
    let v = twiddle_mul(y, w, q);
    (u.wrapping_add(v), u.wrapping_add(q.two_p).wrapping_sub(v))
}

/// Gentleman-Sande butterfly, lazy: `x, y < 2p` in, `x + y` and `(y - x) w` out, both `< 2p`. With
/// `w = -psi^-k` this is the inverse of [`ct`] with `psi^k` (up to a factor 2).
#[inline(always)]
fn gs(x: u32, y: u32, w: Twiddle, q: Prime) -> (u32, u32) {
    (
        csub(x.wrapping_add(y), q.two_p),
        twiddle_mul(y.wrapping_add(q.two_p).wrapping_sub(x), w, q),
    )
}

/// The four quarters of `chunk` zipped: `((x0, x1), (x2, x3))` at the same offset in each quarter, the
/// operands of one radix-4 butterfly (two radix-2 stages).
#[inline(always)]
fn quads(chunk: &mut [u32]) -> impl Iterator<Item = ((&mut u32, &mut u32), (&mut u32, &mut u32))> {
    let quarter = chunk.len() / 4;
    let (lo, hi) = chunk.split_at_mut(2 * quarter);
    let (x0s, x1s) = lo.split_at_mut(quarter);
    let (x2s, x3s) = hi.split_at_mut(quarter);
    x0s.iter_mut()
        .zip(x1s.iter_mut())
        .zip(x2s.iter_mut().zip(x3s.iter_mut()))
}

/// Forward transform in place: coefficients in `[0, 4p)` (natural order) to a spectrum in `[0, 2p)`
/// (bit-reversed order). `tw` is the prime's table for `N = a.len()`: stage `m` (`m = 1, 2, 4, ... N/2`
/// groups of `2t = N/m` values) uses `tw[m + i]` for group `i`.
#[inline(never)]
pub(crate) fn forward(a: &mut [u32], tw: &[Twiddle], q: Prime) {
    let n = a.len();
    debug_assert!(tw.len() == n && n >= 8);
    let (mut m, mut t) = (1, n / 2);
    if n.trailing_zeros() % 2 == 1 {
        let (lo, hi) = a.split_at_mut(t);
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            (*x, *y) = ct(*x, *y, tw[1], q);
        }
        (m, t) = (2, t / 2);
    }
    // Two stages per pass: (m, t) then (2m, t/2).
    while t >= 2 {
        let last = t == 2;
        let groups = a
            .chunks_exact_mut(2 * t)
            .zip(&tw[m..2 * m])
            .zip(tw[2 * m..4 * m].chunks_exact(2));
        for ((chunk, &w1), w2) in groups {
            let (w2a, w2b) = (w2[0], w2[1]);
            for ((x0, x1), (x2, x3)) in quads(chunk) {
                let (y0, y2) = ct(*x0, *x2, w1, q);
                let (y1, y3) = ct(*x1, *x3, w1, q);
                let (z0, z1) = ct(y0, y1, w2a, q);
                let (z2, z3) = ct(y2, y3, w2b, q);
                if last {
                    // The final stage leaves the spectrum below 2p (`last` is public: it is `t == 2`).
                    (*x0, *x1, *x2, *x3) = (
                        csub(z0, q.two_p),
                        csub(z1, q.two_p),
                        csub(z2, q.two_p),
                        csub(z3, q.two_p),
                    );
                } else {
                    (*x0, *x1, *x2, *x3) = (z0, z1, z2, z3);
                }
            }
        }
        m *= 4;
        t /= 4;
    }
}

/// Inverse transform in place, without the `N^-1` factor (the CRT constants carry it): a spectrum in
/// `[0, 2p)` (bit-reversed order) to `N` times the coefficients, in `[0, 2p)`, natural order.
///
/// Stage `h` (`h = N/2, ..., 2, 1` groups of `2t = N/h` values) needs `-psi^-brv(h + i)` for group `i`, which
/// is the forward table's `tw[2h - 1 - i]` (see `primes::twiddle_table`): the same table read backwards.
#[inline(never)]
pub(crate) fn inverse(a: &mut [u32], tw: &[Twiddle], q: Prime) {
    let n = a.len();
    debug_assert!(tw.len() == n && n >= 8);
    let (mut h, mut t) = (n / 2, 1);
    if n.trailing_zeros() % 2 == 1 {
        for (pair, &w) in a.chunks_exact_mut(2).zip(tw[h..2 * h].iter().rev()) {
            (pair[0], pair[1]) = gs(pair[0], pair[1], w, q);
        }
        (h, t) = (h / 2, 2);
    }
    // Two stages per pass: (h, t) then (h/2, 2t).
    while h >= 2 {
        let first = tw[h..2 * h].rchunks_exact(2);
        let groups = a.chunks_exact_mut(4 * t).zip(first).zip(tw[h / 2..h].iter().rev());
        for ((chunk, w1), &w2) in groups {
            // Groups 2i and 2i + 1 of stage h: tw[2h - 1 - 2i] and tw[2h - 2 - 2i].
            let (w1a, w1b) = (w1[1], w1[0]);
            for ((x0, x1), (x2, x3)) in quads(chunk) {
                let (y0, y1) = gs(*x0, *x1, w1a, q);
                let (y2, y3) = gs(*x2, *x3, w1b, q);
                (*x0, *x2) = gs(y0, y2, w2, q);
                (*x1, *x3) = gs(y1, y3, w2, q);
            }
        }
        h /= 4;
        t *= 4;
    }
}

/// Cooley-Tukey butterfly on signed residues (small primes): `x + w y, x - w y` with the product of
/// [`mont_mul_signed`], of magnitude below `p`, so each stage adds less than `p` to the bound; no reduction.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
fn ct_signed(x: i32, y: i32, w: u32, q: Prime) -> (i32, i32) {
    let v = mont_mul_signed(y, w as i32, q);
    (x.wrapping_add(v), x.wrapping_sub(v))
}

/// Gentleman-Sande butterfly on signed residues: `x + y` and `(y - x) w` (magnitude below `p`).
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
fn gs_signed(x: i32, y: i32, w: u32, q: Prime) -> (i32, i32) {
    (x.wrapping_add(y), mont_mul_signed(y.wrapping_sub(x), w as i32, q))
}

/// The bound on a spectrum of the small primes: below `16p`, whether it comes from [`forward_small`] (below
/// `15p`), a pointwise product (below `p`) or a product accumulated and reduced (`3p/2`).
#[cfg(not(negacyclic_ntt_mul16))]
pub(crate) const SPECTRUM_BOUND_IN_P: u64 = 16;

/// Forward transform in place for a prime `p < 2^23`: signed residues of magnitude at most `3p`
/// (natural order) to signed residues of magnitude below `15p` (bit-reversed order), the same twiddles as
/// [`forward`]. No reduction at all: each stage adds less than `p` to the magnitude (see [`ct_signed`]), and
/// `N = 4096` has 12 stages.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(never)]
pub(crate) fn forward_small(a: &mut [u32], tw: &[Twiddle], q: Prime) {
    let n = a.len();
    debug_assert!(tw.len() == n && n >= 8 && q.p < (1 << 23));
    let (mut m, mut t) = (1, n / 2);
    if n.trailing_zeros() % 2 == 1 {
        let (lo, hi) = a.split_at_mut(t);
        let w = tw[1];
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let (u, v) = ct_signed(*x as i32, *y as i32, w, q);
            (*x, *y) = (u as u32, v as u32);
        }
        (m, t) = (2, t / 2);
    }
    // Two stages per pass: (m, t) then (2m, t/2); the quarter t/2 is a constant in each pass's kernel.
    while t >= 2 {
        match t / 2 {
            1 => forward_pass_last(a, tw, m, q),
            #[cfg(target_arch = "arm")]
            4 => forward_pass_small::<4>(a, tw, m, q),
            #[cfg(target_arch = "arm")]
            16 => forward_pass_small::<16>(a, tw, m, q),
            #[cfg(target_arch = "arm")]
            64 => forward_pass_small::<64>(a, tw, m, q),
            #[cfg(target_arch = "arm")]
            256 => forward_pass_small::<256>(a, tw, m, q),
            quarter => forward_pass_any(a, tw, m, quarter, q),
        }
        m *= 4;
        t /= 4;
    }
}

/// One pass of two Cooley-Tukey stages on signed residues ((m, t) then (2m, t/2), quarter `t/2`).
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
fn forward_pass(a: &mut [u32], tw: &[Twiddle], m: usize, quarter: usize, q: Prime) {
    let groups = a
        .chunks_exact_mut(4 * quarter)
        .zip(&tw[m..2 * m])
        .zip(tw[2 * m..4 * m].chunks_exact(2));
    for ((chunk, &w1), w2) in groups {
        let (w2a, w2b) = (w2[0], w2[1]);
        let (lo, hi) = chunk.split_at_mut(2 * quarter);
        let (c0, c1) = lo.split_at_mut(quarter);
        let (c2, c3) = hi.split_at_mut(quarter);
        for j in 0..quarter {
            let (y0, y2) = ct_signed(c0[j] as i32, c2[j] as i32, w1, q);
            let (y1, y3) = ct_signed(c1[j] as i32, c3[j] as i32, w1, q);
            let (z0, z1) = ct_signed(y0, y1, w2a, q);
            let (z2, z3) = ct_signed(y2, y3, w2b, q);
            (c0[j], c1[j], c2[j], c3[j]) = (z0 as u32, z1 as u32, z2 as u32, z3 as u32);
        }
    }
}

/// [`forward_pass`] with the quarter `Q` a constant: the four operands at constant offsets from one pointer.
/// On Arm only (Thumb-2 addresses them with immediate offsets; 15.6 k fewer instructions per M4 encryption for
/// 3.4 KiB of flash); elsewhere the flash matters more (RISC-V: 4.6 KiB).
#[cfg(all(not(negacyclic_ntt_mul16), target_arch = "arm"))]
#[inline(never)]
fn forward_pass_small<const Q: usize>(a: &mut [u32], tw: &[Twiddle], m: usize, q: Prime) {
    forward_pass(a, tw, m, Q, q);
}

/// [`forward_pass`] for the last pass (quarter 1: groups of four values), over fixed-size chunks so that a
/// group costs its loads, stores and butterflies and little else.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(never)]
fn forward_pass_last(a: &mut [u32], tw: &[Twiddle], m: usize, q: Prime) {
    let (groups, _) = a.as_chunks_mut::<4>();
    let (second, _) = tw[2 * m..4 * m].as_chunks::<2>();
    for ((x, &w1), &[w2a, w2b]) in groups.iter_mut().zip(&tw[m..2 * m]).zip(second) {
        let (y0, y2) = ct_signed(x[0] as i32, x[2] as i32, w1, q);
        let (y1, y3) = ct_signed(x[1] as i32, x[3] as i32, w1, q);
        let (z0, z1) = ct_signed(y0, y1, w2a, q);
        let (z2, z3) = ct_signed(y2, y3, w2b, q);
        *x = [z0 as u32, z1 as u32, z2 as u32, z3 as u32];
    }
}

/// [`forward_pass`] for the quarters of odd `log2 N` (2, 8, 32, ...).
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(never)]
fn forward_pass_any(a: &mut [u32], tw: &[Twiddle], m: usize, quarter: usize, q: Prime) {
    forward_pass(a, tw, m, quarter, q);
}

/// One pass of two Gentleman-Sande stages on signed residues ((h, t) then (h/2, 2t)), with the outputs
/// reduced to `[-p/2, 3p/2]` when `REDUCE`.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
fn inverse_pass<const REDUCE: bool>(a: &mut [u32], tw: &[Twiddle], h: usize, t: usize, q: Prime) {
    let first = tw[h..2 * h].rchunks_exact(2);
    let groups = a.chunks_exact_mut(4 * t).zip(first).zip(tw[h / 2..h].iter().rev());
    let out = |x: i32| if REDUCE { reduce_i32(x, q) as u32 } else { x as u32 };
    for ((chunk, w1), &w2) in groups {
        let (w1a, w1b) = (w1[1], w1[0]);
        let (lo, hi) = chunk.split_at_mut(2 * t);
        let (c0, c1) = lo.split_at_mut(t);
        let (c2, c3) = hi.split_at_mut(t);
        for j in 0..t {
            let (y0, y1) = gs_signed(c0[j] as i32, c1[j] as i32, w1a, q);
            let (y2, y3) = gs_signed(c2[j] as i32, c3[j] as i32, w1b, q);
            let (z0, z2) = gs_signed(y0, y2, w2, q);
            let (z1, z3) = gs_signed(y1, y3, w2, q);
            (c0[j], c1[j], c2[j], c3[j]) = (out(z0), out(z1), out(z2), out(z3));
        }
    }
}

/// [`inverse_pass`] without reduction, `t = T` a constant (the operands at constant offsets); on Arm only, as
/// [`forward_pass_small`].
#[cfg(all(not(negacyclic_ntt_mul16), target_arch = "arm"))]
#[inline(never)]
fn inverse_pass_small<const T: usize>(a: &mut [u32], tw: &[Twiddle], h: usize, q: Prime) {
    inverse_pass::<false>(a, tw, h, T, q);
}

/// [`inverse_pass`] for the first pass (`t = 1`: groups of four values) without reduction, over fixed-size
/// chunks.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(never)]
fn inverse_pass_first(a: &mut [u32], tw: &[Twiddle], h: usize, q: Prime) {
    let (groups, _) = a.as_chunks_mut::<4>();
    let (first, _) = tw[h..2 * h].as_chunks::<2>();
    let pairs = first.iter().rev().zip(tw[h / 2..h].iter().rev());
    for (x, (&[w1b, w1a], &w2)) in groups.iter_mut().zip(pairs) {
        let (y0, y1) = gs_signed(x[0] as i32, x[1] as i32, w1a, q);
        let (y2, y3) = gs_signed(x[2] as i32, x[3] as i32, w1b, q);
        let (z0, z2) = gs_signed(y0, y2, w2, q);
        let (z1, z3) = gs_signed(y1, y3, w2, q);
        *x = [z0 as u32, z1 as u32, z2 as u32, z3 as u32];
    }
}

/// [`inverse_pass`] for any `t`, reducing or not.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(never)]
fn inverse_pass_any<const REDUCE: bool>(a: &mut [u32], tw: &[Twiddle], h: usize, t: usize, q: Prime) {
    inverse_pass::<REDUCE>(a, tw, h, t, q);
}

/// Inverse transform in place for a prime `p < 2^23`, without the `N^-1` factor: a spectrum of signed
/// residues below [`SPECTRUM_BOUND_IN_P`] `p` (bit-reversed order) to `N` times the coefficients as signed
/// residues of magnitude below `2^30` (natural order). A stage doubles the bound of the sums (the products
/// stay below `p`), so the bound is tracked (it depends on `N` only) and a pass reduces its outputs to
/// `[-p/2, 3p/2]` when the next pass could reach `2^31`, or the last pass `2^30`.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(never)]
pub(crate) fn inverse_small(a: &mut [u32], tw: &[Twiddle], q: Prime) {
    let n = a.len();
    debug_assert!(tw.len() == n && n >= 8 && q.p < (1 << 23));
    let p = u64::from(q.p);
    let mut bound = SPECTRUM_BOUND_IN_P * p;
    let (mut h, mut t) = (n / 2, 1);
    if n.trailing_zeros() % 2 == 1 {
        for (pair, &w) in a.chunks_exact_mut(2).zip(tw[h..2 * h].iter().rev()) {
            let (u, v) = gs_signed(pair[0] as i32, pair[1] as i32, w, q);
            (pair[0], pair[1]) = (u as u32, v as u32);
        }
        bound = (2 * bound).max(p);
        (h, t) = (h / 2, 2);
    }
    while h >= 2 {
        // Inside the pass every value (sums, differences) is below `after` (checked by the previous pass).
        let after = (4 * bound).max(p);
        debug_assert!(after < 1 << 31);
        let last = h < 8;
        if (!last && 4 * after >= 1 << 31) || (last && after >= 1 << 30) {
            inverse_pass_any::<true>(a, tw, h, t, q);
            bound = 3 * p / 2 + 1;
        } else {
            match t {
                1 => inverse_pass_first(a, tw, h, q),
                #[cfg(target_arch = "arm")]
                4 => inverse_pass_small::<4>(a, tw, h, q),
                #[cfg(target_arch = "arm")]
                16 => inverse_pass_small::<16>(a, tw, h, q),
                #[cfg(target_arch = "arm")]
                64 => inverse_pass_small::<64>(a, tw, h, q),
                #[cfg(target_arch = "arm")]
                256 => inverse_pass_small::<256>(a, tw, h, q),
                _ => inverse_pass_any::<false>(a, tw, h, t, q),
            }
            bound = after;
        }
        h /= 4;
        t *= 4;
    }
}

/// `a *= b` pointwise on signed residues below `16p` (`p < 2^23`): each product is below
/// `256 p^2 / 2^32 + p/2 < p`. Not inlined, so that `p` stays a register operand and LLVM emits `SMLAL` (a
/// constant `p` becomes a mixed-sign product).
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(never)]
pub(crate) fn pointwise_small(a: &mut [u32], b: &[u32], q: Prime) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = mont_mul_signed(*x as i32, y as i32, q) as u32;
    }
}

/// `a += l * r` pointwise on signed residues below `16p`, the sum reduced to `[-p/2, 3p/2]`.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(never)]
pub(crate) fn pointwise_add_small(a: &mut [u32], l: &[u32], r: &[u32], q: Prime) {
    for ((x, &y), &z) in a.iter_mut().zip(l).zip(r) {
        let product = mont_mul_signed(y as i32, z as i32, q);
        *x = reduce_i32((*x as i32).wrapping_add(product), q) as u32;
    }
}
