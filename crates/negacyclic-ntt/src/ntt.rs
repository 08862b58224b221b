//! The negacyclic NTT kernels of one 30-bit prime (the 64-bit torus, and the 32-bit torus of the 16x16-bit
//! multiplier build; the small primes have their own, `crate::small_ntt`): Cooley-Tukey forward and Gentleman-Sande inverse with the
//! `2N`-th roots merged into the twiddles (no pre- or post-twisting), Harvey's lazy reductions, and no bit
//! reversal (the spectrum is in bit-reversed order, which pointwise products do not mind). Two stages are
//! done per pass over the data (four values loaded, two levels of butterflies, four stored), which halves
//! the loads, stores and loop overhead; an odd number of stages starts with one single stage.
//!
//! Every loop bound and every index depends on `N` only. Arithmetic on values is `wrapping_*` (the bounds
//! below rule out any wrap): a checked `+` would branch on the data in builds with overflow checks.

use crate::arith::{Prime, Twiddle, csub, twiddle_mul};

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
