//! The negacyclic NTT kernels of the small primes (`p < 2^23`, the 32-bit torus plan on every build but the
//! 16x16-bit multiplier's) on signed residues: Cooley-Tukey forward and Gentleman-Sande inverse with the
//! `2N`-th roots merged into the twiddles, as in `crate::ntt`, with signed Montgomery products (`SMULL`, `MUL`,
//! `SMLAL` on a Cortex-M4) and no reduction in the forward transform. Layers are merged as in pqm4's Cortex-M4
//! NTTs (Kannwischer et al., "pqm4: Testing and Benchmarking NIST PQC on ARM Cortex-M4"; Alkim, Bilgin,
//! Cenk, Gerard, "Cortex-M4 optimizations for {R,M}LWE schemes", TCHES 2020.3): a pass loads 8 (or 4)
//! coefficients, does 3 (or 2) stages of butterflies in registers and stores them. Here a pass is two stages
//! (radix 4: four values, two levels of butterflies; an odd number of stages has one single stage first in the
//! forward transform, last in the inverse): radix 8 left LLVM without registers for the eight values, the
//! twiddles and the prime's two constants (thumbv7 has 13), and its spills made the transforms 10 % longer.
//! The forward transform reduces half of its inputs in its first pass (the other half is multiplied by a
//! twiddle, which takes any word), so that [`crate::NttPlan::load`] is a copy. On Armv7 and Armv8-M Mainline
//! the passes of quarter (or `t`) 1, 4, 16, 64 and 256 run as `crate::arm_asm`'s assembly twins, with all
//! fourteen registers: radix 4 there too, with every operand in a register and no spill (radix 8 would need
//! its seven twiddles reloaded from memory in every row).
//!
//! Every loop bound and every index depends on `N` only, and so does every reduction (bounds tracked from `N`).
//! Arithmetic on values is `wrapping_*` (the bounds below rule out any wrap).

use crate::arith::{Prime, Twiddle, mont_mul_signed, reduce_i32};

/// Cooley-Tukey butterfly: `x + w y, x - w y` with the product of [`mont_mul_signed`], of magnitude below
/// `|y| p / 2^32 + p/2`, below `p` for `|y| < 2^31`: each stage adds less than `p` to the bound.
#[inline(always)]
fn ct(x: i32, y: i32, w: u32, q: Prime) -> (i32, i32) {
    let v = mont_mul_signed(y, w as i32, q);
    (x.wrapping_add(v), x.wrapping_sub(v))
}

/// Gentleman-Sande butterfly: `x + y` and `(y - x) w` (magnitude below `p` while `|y - x| < 2^31`).
#[inline(always)]
fn gs(x: i32, y: i32, w: u32, q: Prime) -> (i32, i32) {
    (x.wrapping_add(y), mont_mul_signed(y.wrapping_sub(x), w as i32, q))
}

/// [`gs`] with the sum reduced to `[-p/2, 3p/2]` (signed Barrett) when `REDUCE`.
#[inline(always)]
fn gs_reduce<const REDUCE: bool>(x: i32, y: i32, w: u32, q: Prime) -> (i32, i32) {
    let (s, d) = gs(x, y, w, q);
    (if REDUCE { reduce_i32(s, q) } else { s }, d)
}

/// The bound on a spectrum of the small primes: below `16p`, whether it comes from [`forward`] (below
/// `27p/2`), a pointwise product (below `p`) or a product accumulated and reduced (`3p/2`).
pub(crate) const SPECTRUM_BOUND_IN_P: u64 = 16;

/// Forward transform in place for a prime `p < 2^23`: the words [`crate::NttPlan::load`] wrote (any `i32`
/// congruent to the centred coefficient) to signed residues of magnitude below `27p/2` (bit-reversed order).
/// The first pass brings the coefficients that are not multiplied by a twiddle to `[-p/2, 3p/2]` (signed
/// Barrett); a twiddle product takes any `i32` and is below `p`. So after the first stage the bound is `5p/2`,
/// and each further stage adds less than `p`: `N = 4096` (12 stages) ends below `27p/2`.
/// Stage `m` (`m = 1, 2, 4, ... N/2` groups of `2t = N/m` values) uses `tw[m + i]` for group `i`.
#[inline(never)]
pub(crate) fn forward(a: &mut [u32], tw: &[Twiddle], q: Prime) {
    let n = a.len();
    debug_assert!(tw.len() == n && n >= 8 && q.p < (1 << 23));
    let mut m;
    if n.trailing_zeros() % 2 == 1 {
        let (lo, hi) = a.split_at_mut(n / 2);
        let w = tw[1];
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let (u, v) = ct(reduce_i32(*x as i32, q), *y as i32, w, q);
            (*x, *y) = (u as u32, v as u32);
        }
        m = 2;
    } else {
        #[cfg(negacyclic_ntt_arm_asm)]
        if n == 1024 {
            crate::arm_asm::forward_first(a, tw, q);
        } else {
            forward_first(a, tw, q);
        }
        #[cfg(not(negacyclic_ntt_arm_asm))]
        forward_first(a, tw, q);
        m = 4;
    }
    // Two stages per pass, (m, 2Q) then (2m, Q); on Arm the quarters of N = 1024 are constants of their
    // kernels (the four operands at immediate offsets from one pointer; elsewhere the flash matters more).
    while m < n {
        match n / m / 4 {
            #[cfg(negacyclic_ntt_arm_asm)]
            1 => crate::arm_asm::forward_pass_last(a, tw, m, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            4 => crate::arm_asm::forward_pass::<4>(a, tw, m, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            16 => crate::arm_asm::forward_pass::<16>(a, tw, m, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            64 => crate::arm_asm::forward_pass::<64>(a, tw, m, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            256 => crate::arm_asm::forward_pass::<256>(a, tw, m, q),
            #[cfg(not(negacyclic_ntt_arm_asm))]
            1 => forward_pass_last(a, tw, m, q),
            #[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
            4 => forward_pass_const::<4>(a, tw, m, q),
            #[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
            16 => forward_pass_const::<16>(a, tw, m, q),
            #[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
            64 => forward_pass_const::<64>(a, tw, m, q),
            quarter => forward_pass(a, tw, m, quarter, q),
        }
        m *= 4;
    }
}

/// The first two stages (`m = 1, 2`, quarter `N/4`), the first stage's untwiddled operands reduced.
#[inline(never)]
pub(crate) fn forward_first(a: &mut [u32], tw: &[Twiddle], q: Prime) {
    let quarter = a.len() / 4;
    let (w1, w2a, w2b) = (tw[1], tw[2], tw[3]);
    let (lo, hi) = a.split_at_mut(2 * quarter);
    let (c0, c1) = lo.split_at_mut(quarter);
    let (c2, c3) = hi.split_at_mut(quarter);
    let rows = c0.iter_mut().zip(c1.iter_mut()).zip(c2.iter_mut().zip(c3.iter_mut()));
    for ((x0, x1), (x2, x3)) in rows {
        let (y0, y2) = ct(reduce_i32(*x0 as i32, q), *x2 as i32, w1, q);
        let (y1, y3) = ct(reduce_i32(*x1 as i32, q), *x3 as i32, w1, q);
        let (z0, z1) = ct(y0, y1, w2a, q);
        let (z2, z3) = ct(y2, y3, w2b, q);
        (*x0, *x1, *x2, *x3) = (z0 as u32, z1 as u32, z2 as u32, z3 as u32);
    }
}

/// One pass of two Cooley-Tukey stages ((m, 2Q) then (2m, Q), quarter `Q`).
#[inline(always)]
pub(crate) fn forward_pass_body(a: &mut [u32], tw: &[Twiddle], m: usize, quarter: usize, q: Prime) {
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
            let (y0, y2) = ct(c0[j] as i32, c2[j] as i32, w1, q);
            let (y1, y3) = ct(c1[j] as i32, c3[j] as i32, w1, q);
            let (z0, z1) = ct(y0, y1, w2a, q);
            let (z2, z3) = ct(y2, y3, w2b, q);
            (c0[j], c1[j], c2[j], c3[j]) = (z0 as u32, z1 as u32, z2 as u32, z3 as u32);
        }
    }
}

/// [`forward_pass_body`] for any quarter.
#[inline(never)]
fn forward_pass(a: &mut [u32], tw: &[Twiddle], m: usize, quarter: usize, q: Prime) {
    forward_pass_body(a, tw, m, quarter, q);
}

/// [`forward_pass_body`] with the quarter `Q` a constant (Arm without `crate::arm_asm`).
#[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
#[inline(never)]
fn forward_pass_const<const Q: usize>(a: &mut [u32], tw: &[Twiddle], m: usize, q: Prime) {
    forward_pass_body(a, tw, m, Q, q);
}

/// The last pass (quarter 1: groups of four consecutive values, which the compiler loads and stores in pairs).
#[cfg_attr(negacyclic_ntt_arm_asm, allow(dead_code))]
#[inline(never)]
pub(crate) fn forward_pass_last(a: &mut [u32], tw: &[Twiddle], m: usize, q: Prime) {
    let (groups, _) = a.as_chunks_mut::<4>();
    let (second, _) = tw[2 * m..4 * m].as_chunks::<2>();
    for ((x, &w1), &[w2a, w2b]) in groups.iter_mut().zip(&tw[m..2 * m]).zip(second) {
        let (y0, y2) = ct(x[0] as i32, x[2] as i32, w1, q);
        let (y1, y3) = ct(x[1] as i32, x[3] as i32, w1, q);
        let (z0, z1) = ct(y0, y1, w2a, q);
        let (z2, z3) = ct(y2, y3, w2b, q);
        *x = [z0 as u32, z1 as u32, z2 as u32, z3 as u32];
    }
}

/// Inverse transform in place for a prime `p < 2^23`, without the `N^-1` factor: a spectrum of signed
/// residues below [`SPECTRUM_BOUND_IN_P`] `p` (bit-reversed order) to `N` times the coefficients as signed
/// residues of magnitude below `2^30` (natural order).
///
/// Stage `h` (`h = N/2, ..., 2, 1` groups of `2t = N/h` values) needs `-psi^-brv(h + i)` for group `i`, the
/// forward table's `tw[2h - 1 - i]` (see `primes::twiddle_table`). A stage doubles the bound of the sums (the
/// products stay below `p`), so the bound is tracked (it depends on `N` only). A pass may reduce the sums of
/// its second stage to `[-p/2, 3p/2]` (signed Barrett), which leaves its outputs below `3p/2 + 1`; a pass with
/// inputs below `B` computes values below `4B`, which must stay below `2^31` whether it reduces or not. So a
/// pass reduces only when the next step could not run otherwise (the next pass would reach `2^31`, or the
/// output `2^30`). At `N = 1024` (bounds in `p`): `16, 64`, the second pass reduces, `1.5, 6, 24, 96`: one
/// pass in five reduces half of the values of one stage.
#[inline(never)]
pub(crate) fn inverse(a: &mut [u32], tw: &[Twiddle], q: Prime) {
    let n = a.len();
    debug_assert!(tw.len() == n && n >= 8 && q.p < (1 << 23));
    let p = u64::from(q.p);
    let reduced = 3 * p / 2 + 1;
    let mut bound = SPECTRUM_BOUND_IN_P * p;
    let (mut h, mut t) = (n / 2, 1);
    while h >= 2 {
        // Two stages per pass: (h, t) then (h/2, 2t). What follows: another pass (its values below 16 times
        // this pass's inputs), one single stage (8 times), or nothing (the output, 4 times, below 2^30).
        debug_assert!(bound << 2 < 1 << 31);
        let reduce = match h / 4 {
            0 => bound << 2 >= 1 << 30,
            1 => bound << 3 >= 1 << 31,
            _ => bound << 4 >= 1 << 31,
        };
        match (t, reduce) {
            #[cfg(negacyclic_ntt_arm_asm)]
            (1, false) => crate::arm_asm::inverse_pass_first(a, tw, h, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            (4, true) => crate::arm_asm::inverse_pass::<4, true>(a, tw, h, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            (4, false) => crate::arm_asm::inverse_pass::<4, false>(a, tw, h, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            (16, false) => crate::arm_asm::inverse_pass::<16, false>(a, tw, h, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            (64, false) => crate::arm_asm::inverse_pass::<64, false>(a, tw, h, q),
            #[cfg(negacyclic_ntt_arm_asm)]
            (256, false) => crate::arm_asm::inverse_pass::<256, false>(a, tw, h, q),
            #[cfg(not(negacyclic_ntt_arm_asm))]
            (1, false) => inverse_pass_first(a, tw, h, q),
            #[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
            (4, true) => inverse_pass_const::<4, true>(a, tw, h, q),
            #[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
            (16, false) => inverse_pass_const::<16, false>(a, tw, h, q),
            #[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
            (64, false) => inverse_pass_const::<64, false>(a, tw, h, q),
            #[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
            (256, false) => inverse_pass_const::<256, false>(a, tw, h, q),
            (t, true) => inverse_pass::<true>(a, tw, h, t, q),
            (t, false) => inverse_pass::<false>(a, tw, h, t, q),
        }
        bound = if reduce { reduced } else { bound << 2 };
        h /= 4;
        t *= 4;
    }
    if h == 1 {
        let (lo, hi) = a.split_at_mut(n / 2);
        let w = tw[1];
        let reduce = bound << 1 >= 1 << 30;
        debug_assert!(bound << 1 < 1 << 31);
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let (u, v) = gs(*x as i32, *y as i32, w, q);
            // `reduce` depends on N only (the same for every coefficient).
            let u = if reduce { reduce_i32(u, q) } else { u };
            (*x, *y) = (u as u32, v as u32);
        }
        bound = if reduce { reduced } else { bound << 1 };
    }
    debug_assert!(bound < 1 << 30);
}

/// One pass of two Gentleman-Sande stages ((h, t) then (h/2, 2t)), the second stage's sums reduced when
/// `REDUCE`.
#[inline(always)]
pub(crate) fn inverse_pass_body<const REDUCE: bool>(a: &mut [u32], tw: &[Twiddle], h: usize, t: usize, q: Prime) {
    let first = tw[h..2 * h].rchunks_exact(2);
    let groups = a.chunks_exact_mut(4 * t).zip(first).zip(tw[h / 2..h].iter().rev());
    for ((chunk, w1), &w2) in groups {
        let (w1a, w1b) = (w1[1], w1[0]);
        let (lo, hi) = chunk.split_at_mut(2 * t);
        let (c0, c1) = lo.split_at_mut(t);
        let (c2, c3) = hi.split_at_mut(t);
        for j in 0..t {
            let (y0, y1) = gs(c0[j] as i32, c1[j] as i32, w1a, q);
            let (y2, y3) = gs(c2[j] as i32, c3[j] as i32, w1b, q);
            let (z0, z2) = gs_reduce::<REDUCE>(y0, y2, w2, q);
            let (z1, z3) = gs_reduce::<REDUCE>(y1, y3, w2, q);
            (c0[j], c1[j], c2[j], c3[j]) = (z0 as u32, z1 as u32, z2 as u32, z3 as u32);
        }
    }
}

/// [`inverse_pass_body`] for any `t`.
#[inline(never)]
fn inverse_pass<const REDUCE: bool>(a: &mut [u32], tw: &[Twiddle], h: usize, t: usize, q: Prime) {
    inverse_pass_body::<REDUCE>(a, tw, h, t, q);
}

/// [`inverse_pass_body`] with `t = T` a constant (Arm without `crate::arm_asm`).
#[cfg(all(target_arch = "arm", not(negacyclic_ntt_arm_asm)))]
#[inline(never)]
fn inverse_pass_const<const T: usize, const REDUCE: bool>(a: &mut [u32], tw: &[Twiddle], h: usize, q: Prime) {
    inverse_pass_body::<REDUCE>(a, tw, h, T, q);
}

/// The first pass (`t = 1`: groups of four consecutive values), without reduction (its inputs are below
/// `16p`, its outputs below `64p`). Group `g` needs `tw[2h - 2 - 2g..2h - 2g]` and `tw[h - 1 - g]`: the groups
/// are taken last to first, so that the twiddles are read forwards.
#[cfg_attr(negacyclic_ntt_arm_asm, allow(dead_code))]
#[inline(never)]
pub(crate) fn inverse_pass_first(a: &mut [u32], tw: &[Twiddle], h: usize, q: Prime) {
    let (groups, _) = a.as_chunks_mut::<4>();
    let (first, _) = tw[h..2 * h].as_chunks::<2>();
    let pairs = first.iter().zip(&tw[h / 2..h]);
    for (x, (&[w1b, w1a], &w2)) in groups.iter_mut().rev().zip(pairs) {
        let (y0, y1) = gs(x[0] as i32, x[1] as i32, w1a, q);
        let (y2, y3) = gs(x[2] as i32, x[3] as i32, w1b, q);
        let (z0, z2) = gs(y0, y2, w2, q);
        let (z1, z3) = gs(y1, y3, w2, q);
        *x = [z0 as u32, z1 as u32, z2 as u32, z3 as u32];
    }
}
