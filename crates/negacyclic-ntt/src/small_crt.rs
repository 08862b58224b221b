//! The pointwise products and Garner's CRT of the small primes (`p < 2^23`, signed residues; see
//! `crate::small_ntt`): signed Montgomery products (`SMULL`, `MUL`, `SMLAL` on a Cortex-M4); the pointwise
//! product two values per step, which the compiler loads and stores in pairs.

use crate::arith::{Prime, mont_mul_signed, mont_reduce_signed, reduce_i32};
use crate::coefficients::Output;

/// `a *= b` pointwise on signed residues below `16p` (`p < 2^23`): each product is below
/// `256 p^2 / 2^32 + p/2 < p`. Not inlined, so that `p` stays a register operand and LLVM emits `SMLAL` (a
/// constant `p` becomes a mixed-sign product).
///
/// With `crate::arm_asm`, its assembly twin (four values per step) runs instead.
pub(crate) fn pointwise(a: &mut [u32], b: &[u32], q: Prime) {
    #[cfg(negacyclic_ntt_arm_asm)]
    if a.len().is_multiple_of(4) {
        crate::arm_asm::pointwise(a, b, q);
        return;
    }
    pointwise_portable(a, b, q);
}

/// [`pointwise`] in Rust (everywhere but with `crate::arm_asm`, and its twin there).
#[inline(never)]
pub(crate) fn pointwise_portable(a: &mut [u32], b: &[u32], q: Prime) {
    let (a2, _) = a.as_chunks_mut::<2>();
    let (b2, _) = b.as_chunks::<2>();
    for (x, y) in a2.iter_mut().zip(b2) {
        *x = [
            mont_mul_signed(x[0] as i32, y[0] as i32, q) as u32,
            mont_mul_signed(x[1] as i32, y[1] as i32, q) as u32,
        ];
    }
}

/// `a += l * r` pointwise on signed residues below `16p`, the sum reduced to `[-p/2, 3p/2]`.
#[inline(never)]
pub(crate) fn pointwise_add(a: &mut [u32], l: &[u32], r: &[u32], q: Prime) {
    for ((x, &y), &z) in a.iter_mut().zip(l).zip(r) {
        let product = mont_mul_signed(y as i32, z as i32, q);
        *x = reduce_i32((*x as i32).wrapping_add(product), q) as u32;
    }
}

/// Garner's reconstruction for the two small primes from the signed residues the inverse leaves (magnitude
/// below `2^30`, scaled by `N R^-1`), combined into `out`.
///
/// `d_0 = mont(x_0, own_0)` is `X mod p_0`, of magnitude below `2^30 p_0 / 2^32 + p_0/2 < 3p_0/4`. The second
/// digit is one Montgomery reduction of `x_1 own_1 + d_0 (p_1 - cross)` (`= (X - d_0) / p_0 mod p_1`): of magnitude
/// below `2^30 p_1 / 2^32 + p_1 p_0 / 2^32 + p_1/2 < 0.76 p_1`. The true digit `(X - d_0) / p_0` has magnitude
/// below `(2^43 + p_0) / p_0 < 0.13 p_1` (`N <= 4096`), and the two are congruent modulo `p_1`: they are equal,
/// with no centring step. Then `X = d_0 + d_1 p_0` exactly.
#[inline(never)]
pub(crate) fn crt<T: Output>(
    first: &[u32],
    second: &[u32],
    out: &mut [T],
    [own0, own1, cross]: [u32; 3],
    [q0, q1]: [Prime; 2],
    combine: impl Fn(T, T) -> T,
) {
    // `-cross mod p_1`, so that the sum is one `SMLAL` after the `SMULL`.
    let minus_cross = q1.p - cross;
    for ((o, &x0), &x1) in out.iter_mut().zip(first).zip(second) {
        let d0 = mont_mul_signed(x0 as i32, own0 as i32, q0);
        let t = i64::from(x1 as i32)
            .wrapping_mul(i64::from(own1 as i32))
            .wrapping_add(i64::from(d0).wrapping_mul(i64::from(minus_cross as i32)));
        let d1 = mont_reduce_signed(t, q1);
        let x = i64::from(d0).wrapping_add(i64::from(d1).wrapping_mul(i64::from(q0.p as i32)));
        *o = combine(*o, T::from_i64(x));
    }
}
