//! The negacyclic NTT kernels of one prime: Cooley-Tukey forward and Gentleman-Sande inverse with the
//! `2N`-th roots merged into the twiddles (no pre- or post-twisting), Harvey's lazy reductions, and no bit
//! reversal (the spectrum is in bit-reversed order, which pointwise products do not mind).
//!
//! Every loop bound and every index depends on `N` only. Arithmetic on values is `wrapping_*` (the bounds
//! above rule out any wrap): a checked `+` would branch on the data in builds with overflow checks.

use crate::arith::{Prime, csub, mont_mul};

/// Forward transform in place: coefficients in `[0, 4p)` (natural order) to a spectrum in `[0, 2p)`
/// (bit-reversed order). `tw` is the prime's table for `N = a.len()`.
///
/// Butterfly (Harvey): `u <- u mod' 2p` (now `< 2p`), `v <- mont(v, w)` (`< 2p`), `(u + v, u - v + 2p)`, both
/// in `[0, 4p)`; the last stage also brings its outputs below `2p`.
#[inline(never)]
pub(crate) fn forward(a: &mut [u32], tw: &[u32], q: Prime) {
    let n = a.len();
    debug_assert!(tw.len() == n && n >= 4);
    let mut m = 1;
    let mut t = n / 2;
    while t > 1 {
        for (chunk, &w) in a.chunks_exact_mut(2 * t).zip(&tw[m..2 * m]) {
            let (lo, hi) = chunk.split_at_mut(t);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let u = csub(*x, q.two_p);
                let v = mont_mul(*y, w, q);
                *x = u.wrapping_add(v);
                *y = u.wrapping_add(q.two_p).wrapping_sub(v);
            }
        }
        m *= 2;
        t /= 2;
    }
    // t = 1: pairs of neighbours, outputs reduced to [0, 2p).
    for (pair, &w) in a.chunks_exact_mut(2).zip(&tw[m..2 * m]) {
        let u = csub(pair[0], q.two_p);
        let v = mont_mul(pair[1], w, q);
        pair[0] = csub(u.wrapping_add(v), q.two_p);
        pair[1] = csub(u.wrapping_add(q.two_p).wrapping_sub(v), q.two_p);
    }
}

/// Inverse transform in place, without the `N^-1` factor (the CRT constants carry it): a spectrum in
/// `[0, 2p)` (bit-reversed order) to `N` times the coefficients, in `[0, 2p)`, natural order.
///
/// Butterfly (Gentleman-Sande, lazy): `(u, v) -> ((u + v) mod' 2p, mont(v - u + 2p, w'))`, where
/// `w' = -psi^-brv(k)` is read from the forward table backwards (see `primes::twiddle_table`), hence `v - u`.
#[inline(never)]
pub(crate) fn inverse(a: &mut [u32], tw: &[u32], q: Prime) {
    let n = a.len();
    debug_assert!(tw.len() == n && n >= 4);
    // t = 1 (h = N/2 groups).
    let h = n / 2;
    for (pair, &w) in a.chunks_exact_mut(2).zip(tw[h..2 * h].iter().rev()) {
        let (u, v) = (pair[0], pair[1]);
        pair[0] = csub(u.wrapping_add(v), q.two_p);
        pair[1] = mont_mul(v.wrapping_add(q.two_p).wrapping_sub(u), w, q);
    }
    let mut h = n / 4;
    let mut t = 2;
    while h >= 1 {
        for (chunk, &w) in a.chunks_exact_mut(2 * t).zip(tw[h..2 * h].iter().rev()) {
            let (lo, hi) = chunk.split_at_mut(t);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let (u, v) = (*x, *y);
                *x = csub(u.wrapping_add(v), q.two_p);
                *y = mont_mul(v.wrapping_add(q.two_p).wrapping_sub(u), w, q);
            }
        }
        h /= 2;
        t *= 2;
    }
}
