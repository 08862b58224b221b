//! Constant-time arithmetic modulo a prime `p < 2^30`: Montgomery multiplication and masked conditional
//! subtractions. No function here branches on, or indexes memory with, its operands.

/// One NTT prime and the constants its arithmetic needs (all computed at compile time). Public in name
/// only, for the sealed traits: the module is private.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prime {
    /// `p`, with `p < 2^30` (so that `4p < 2^32`) and `p = 1 mod 2^14`.
    pub p: u32,
    /// `2p`.
    pub two_p: u32,
    /// `4p`.
    pub four_p: u32,
    /// `-p^-1 mod 2^32`: Montgomery's constant.
    pub neg_inv: u32,
    /// `R^2 mod p` with `R = 2^32`: `mont_mul(x, r2) = x R mod p`.
    pub r2: u32,
    /// `(p - 1) / 2`: the largest non-negative centred residue.
    pub half: u32,
    /// `-2^32 mod p`, in `[0, p)`: what a centred `u32` adds when its top bit is set.
    pub minus_2_32: u32,
    /// `-2^64 mod p`, in `[0, p)`: the same for a centred `u64`.
    pub minus_2_64: u32,
    /// `floor(2^32 / p)`: Barrett's constant ([`reduce_u32`], [`reduce_i32`]).
    pub barrett: u32,
}

impl Prime {
    /// The constants of `p`; fails (at compile time, where it is evaluated) unless `p` is odd and below 2^30.
    pub const fn new(p: u32) -> Self {
        assert!(p % 2 == 1 && p < (1 << 30), "an NTT prime must be odd and below 2^30");
        // Newton's iteration for p^-1 mod 2^32: `p` is its own inverse mod 8, and each step doubles the
        // number of correct low bits (3, 6, 12, 24, 48).
        let mut inv = p;
        let mut i = 0;
        while i < 4 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(p.wrapping_mul(inv)));
            i += 1;
        }
        assert!(p.wrapping_mul(inv) == 1);
        let r = ((1u64 << 32) % p as u64) as u32;
        Self {
            p,
            two_p: 2 * p,
            four_p: 4 * p,
            neg_inv: inv.wrapping_neg(),
            r2: mul_mod(r, r, p),
            half: (p - 1) / 2,
            minus_2_32: (p - r) % p,
            minus_2_64: (p - mul_mod(r, r, p)) % p,
            barrett: ((1u64 << 32) / p as u64) as u32,
        }
    }
}

/// `a * b mod p`, for the tables (compile time, or public constants): uses a 64-bit remainder.
pub(crate) const fn mul_mod(a: u32, b: u32, p: u32) -> u32 {
    ((a as u64 * b as u64) % p as u64) as u32
}

/// `b^e mod p`, for the tables.
pub(crate) const fn pow_mod(b: u32, mut e: u64, p: u32) -> u32 {
    let (mut acc, mut b) = (1 % p, b % p);
    while e != 0 {
        if e & 1 == 1 {
            acc = mul_mod(acc, b, p);
        }
        b = mul_mod(b, b, p);
        e >>= 1;
    }
    acc
}

/// `a^-1 mod p` for a prime `p` (Fermat), for the tables.
pub(crate) const fn inv_mod(a: u32, p: u32) -> u32 {
    pow_mod(a, p as u64 - 2, p)
}

/// `x R mod p`, `R = 2^32`: the Montgomery form of `x`, for the tables.
pub(crate) const fn to_montgomery(x: u32, p: u32) -> u32 {
    (((x as u64) << 32) % p as u64) as u32
}

/// The full 64-bit product `a * b`: one `UMULL` where that instruction takes constant time.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
pub(crate) fn mul_wide(a: u32, b: u32) -> u64 {
    // `wrapping_mul` cannot wrap here; a checked `*` would test the product in builds with overflow checks.
    u64::from(a).wrapping_mul(u64::from(b))
}

/// The full 64-bit product `a * b` from four 16x16-bit partial products, each a 32-bit `MUL`/`MULS`.
///
/// For Cortex-M3, whose `UMULL`/`UMLAL` terminate early depending on the operands (3 to 5 cycles, ARM
/// Cortex-M3 TRM, "Instruction timings"), and Cortex-M0/M0+, which have no long multiply at all (a `u64`
/// product would call compiler-builtins' `__aeabi_lmul`). `MUL` on the M3 and `MULS` on the M0/M0+ take a
/// fixed number of cycles (1, or 32 with the M0's small multiplier). The additions carry with `ADDS`/`ADCS`.
#[cfg(negacyclic_ntt_mul16)]
#[inline(always)]
pub(crate) fn mul_wide(a: u32, b: u32) -> u64 {
    let (al, ah) = (a & 0xffff, a >> 16);
    let (bl, bh) = (b & 0xffff, b >> 16);
    let ll = al.wrapping_mul(bl);
    let mid = u64::from(al.wrapping_mul(bh))
        .wrapping_add(u64::from(ah.wrapping_mul(bl)))
        .wrapping_add(u64::from(ll >> 16));
    let hi = ah.wrapping_mul(bh).wrapping_add((mid >> 16) as u32);
    let lo = ((mid as u32) << 16) | (ll & 0xffff);
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Montgomery's product `a b R^-1 mod p`, in `[0, 2p)`, for any `a < 2^32` and `b < p`; or for `a, b < 2p`
/// (then `ab < 4p^2 < p 2^32`, the same bound).
///
/// `(ab + m p) / 2^32` with `m = ab (-p^-1) mod 2^32` is exact, and below `ab / 2^32 + p < 2p`; the sum stays
/// below `2^64` since `ab < p 2^32`. Three instructions on a Cortex-M4 (`UMULL`, `MUL`, `UMLAL`).
#[inline(always)]
pub(crate) fn mont_mul(a: u32, b: u32, q: Prime) -> u32 {
    let t = mul_wide(a, b);
    let m = (t as u32).wrapping_mul(q.neg_inv);
    (t.wrapping_add(mul_wide(m, q.p)) >> 32) as u32
}

/// A twiddle factor as the transforms store it: its Montgomery form `w R mod p`, multiplied with
/// [`mont_mul`] (three instructions with `UMULL`).
#[cfg(not(negacyclic_ntt_mul16))]
pub(crate) type Twiddle = u32;

/// A twiddle factor as the transforms store it where the 64-bit product is built from 16-bit parts: `w` and
/// Shoup's `w' = floor(w 2^32 / p)`, multiplied with one high product instead of Montgomery's two.
#[cfg(negacyclic_ntt_mul16)]
pub(crate) type Twiddle = [u32; 2];

/// The twiddle of `w` (`w < p`).
#[cfg(not(negacyclic_ntt_mul16))]
pub(crate) const fn twiddle(w: u32, p: u32) -> Twiddle {
    to_montgomery(w, p)
}

/// The twiddle of `w` (`w < p`).
#[cfg(negacyclic_ntt_mul16)]
pub(crate) const fn twiddle(w: u32, p: u32) -> Twiddle {
    [w, (((w as u64) << 32) / p as u64) as u32]
}

/// `y w mod p`, in `[0, 2p)`, for any `y < 2^32`.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
pub(crate) fn twiddle_mul(y: u32, w: Twiddle, q: Prime) -> u32 {
    mont_mul(y, w, q)
}

/// `y w mod p`, in `[0, 2p)`, for any `y < 2^32` (Shoup): `y w - floor(y w' / 2^32) p`, computed modulo
/// `2^32` (the exact value is below `2p < 2^32`).
#[cfg(negacyclic_ntt_mul16)]
#[inline(always)]
pub(crate) fn twiddle_mul(y: u32, w: Twiddle, q: Prime) -> u32 {
    let estimate = (mul_wide(y, w[1]) >> 32) as u32;
    y.wrapping_mul(w[0]).wrapping_sub(estimate.wrapping_mul(q.p))
}

/// `mask`, hidden from the optimizer on targets with no conditional move (Thumb-1, RISC-V): there LLVM would
/// otherwise turn `y + (c & mask)` back into a compare and a branch.
#[cfg(negacyclic_ntt_no_cmov)]
#[inline(always)]
pub(crate) fn opaque(mut mask: u32) -> u32 {
    // SAFETY: an empty assembly block that claims to modify a register: no instruction, no memory access,
    // no stack use, flags preserved.
    // (On x86_64, where the host tests force this cfg, rustc warns that `{0}` names a 64-bit register: it is
    // only in a comment.)
    #[allow(unsafe_code, asm_sub_register)]
    unsafe {
        core::arch::asm!("/* {0} */", inout(reg) mask, options(pure, nomem, nostack, preserves_flags));
    }
    mask
}

/// `mask`: elsewhere the compiler makes a select a conditional move (`CMOV`, `CSEL`, an `IT` block).
#[cfg(not(negacyclic_ntt_no_cmov))]
#[inline(always)]
pub(crate) fn opaque(mask: u32) -> u32 {
    mask
}

/// `x - c` if `x >= c`, else `x`, for `x < 2c` and `c <= 2^31` (then `x - c` fits an `i32`): masks, no branch.
#[inline(always)]
pub(crate) fn csub(x: u32, c: u32) -> u32 {
    let y = x.wrapping_sub(c);
    y.wrapping_add(c & opaque((y as i32 >> 31) as u32))
}

/// `x - c` if `x >= c`, else `x`, for any `x` and `c` (the borrow becomes the mask): for raw 32-bit inputs.
/// Where the compiler has a conditional move, the subtraction's own borrow (a `CSEL`, `CMOV`, `IT` block).
/// Only the 16x16-bit multiplier's inputs use it (elsewhere Barrett's [`reduce_u32`]).
#[cfg(not(negacyclic_ntt_no_cmov))]
#[cfg_attr(not(negacyclic_ntt_mul16), allow(dead_code))]
#[inline(always)]
pub(crate) fn csub_any(x: u32, c: u32) -> u32 {
    let (y, borrow) = x.overflowing_sub(c);
    y.wrapping_add(c & u32::from(borrow).wrapping_neg())
}

/// `x - c` if `x >= c`, else `x`, for any `x` and `c` (the borrow becomes the mask): for raw 32-bit inputs.
#[cfg(negacyclic_ntt_no_cmov)]
#[cfg_attr(not(negacyclic_ntt_mul16), allow(dead_code))]
#[inline(always)]
pub(crate) fn csub_any(x: u32, c: u32) -> u32 {
    // The borrow from the sign bits (Hacker's Delight, 2-13), not from a compare: on Thumb-1 LLVM made
    // `u32::from(x < c).wrapping_neg()` a branch (`cmp`, `bhs` over `mvns`; scripts/firmware-ct-trace.sh saw it
    // for a third set of secrets). `y` is hidden so that the formula cannot be folded back into a compare.
    let y = opaque(x.wrapping_sub(c));
    let borrow = (((!x & c) | (!(x ^ c) & y)) as i32 >> 31) as u32;
    y.wrapping_add(c & opaque(borrow))
}

/// `x mod p` in `[0, 2p)`, for any `x < 2^32` (Barrett, `q = floor(x floor(2^32/p) / 2^32)`, which is
/// `floor(x/p)` or one less): one `UMULL` and one `MLS` on a Cortex-M4.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
pub(crate) fn reduce_u32(x: u32, q: Prime) -> u32 {
    let estimate = (mul_wide(x, q.barrett) >> 32) as u32;
    x.wrapping_sub(estimate.wrapping_mul(q.p))
}

/// `x mod p` in `[-p/2, 3p/2]`, for any `i32` `x` (signed Barrett with `floor(2^32/p)`: the estimate of
/// `x/p` is low by less than 1.5 for `x >= 0` and within `(-1/2, 1]` of it below): `SMMUL` and `MLS`.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
pub(crate) fn reduce_i32(x: i32, q: Prime) -> i32 {
    let estimate = (i64::from(x).wrapping_mul(i64::from(q.barrett as i32)) >> 32) as i32;
    x.wrapping_sub(estimate.wrapping_mul(q.p as i32))
}

/// Signed Montgomery product `y w R^-1 mod p` of any `i32`s `y` and `w` (`p < 2^30`): `(y w + m p) / 2^32`
/// with `m = y w (-p^-1) mod 2^32` taken signed, exact, so its magnitude is below `|y| |w| / 2^32 + p / 2`:
/// below `p` for a twiddle (`|w| < p`). `SMULL`, `MUL`, `SMLAL` on a Cortex-M4, and no reduction after it.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
pub(crate) fn mont_mul_signed(y: i32, w: i32, q: Prime) -> i32 {
    // Both factors sign-extended (`p` too, read as `i32`), so LLVM emits `SMULL`/`SMLAL` (a zero-extended
    // operand makes a mixed-sign product: `UMULL` and a correction). `|y w| <= 2^62`, `|m p| < 2^61`.
    mont_reduce_signed(i64::from(y).wrapping_mul(i64::from(w)), q)
}

/// Montgomery's reduction `t R^-1 mod p` of a signed `t` with `|t| < 2^62`: `(t + m p) / 2^32` with
/// `m = t (-p^-1) mod 2^32` taken signed, of magnitude below `|t| / 2^32 + p/2`. `MUL`, `SMLAL`.
#[cfg(not(negacyclic_ntt_mul16))]
#[inline(always)]
pub(crate) fn mont_reduce_signed(t: i64, q: Prime) -> i32 {
    let m = (t as u32).wrapping_mul(q.neg_inv) as i32;
    (t.wrapping_add(i64::from(m).wrapping_mul(i64::from(q.p as i32))) >> 32) as i32
}

/// The centred representative of `x` in `[0, p)`: `x - p` (as `i32`) if `x > (p - 1) / 2`, else `x`.
#[inline(always)]
pub(crate) fn centre(x: u32, q: Prime) -> i32 {
    let above = opaque(((q.half.wrapping_sub(x) as i32) >> 31) as u32);
    (x as i32).wrapping_sub((q.p & above) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first NTT prime (`crate::primes::P0`), written out so that the arithmetic's tests do not import
    /// the tables built on it.
    const Q: Prime = Prime::new(0x3fff_4001);

    fn reference_mont(a: u32, b: u32) -> u32 {
        let r_inv = inv_mod(to_montgomery(1, Q.p), Q.p);
        ((u128::from(a) * u128::from(b) % u128::from(Q.p)) * u128::from(r_inv) % u128::from(Q.p)) as u32
    }

    #[test]
    fn montgomery_product_is_congruent_and_below_2p() {
        let edges = [0, 1, 2, Q.p - 1, Q.p, Q.p + 1, Q.two_p - 1, Q.four_p - 1, u32::MAX];
        for &a in &edges {
            for &b in &[0, 1, Q.p - 1, Q.p / 2] {
                let r = mont_mul(a, b, Q);
                assert!(r < Q.two_p, "{a} {b}");
                assert_eq!(r % Q.p, reference_mont(a, b), "{a} {b}");
            }
        }
        for &a in &[Q.two_p - 1, Q.p + 5] {
            let r = mont_mul(a, Q.two_p - 1, Q);
            assert!(r < Q.two_p);
            assert_eq!(r % Q.p, reference_mont(a, Q.two_p - 1));
        }
    }

    #[test]
    fn wide_product_is_exact() {
        let edges = [
            0u32,
            1,
            0xffff,
            0x1_0000,
            0xffff_ffff,
            0x8000_0000,
            0x1234_5678,
            0xdead_beef,
        ];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(mul_wide(a, b), u64::from(a) * u64::from(b));
            }
        }
    }

    #[test]
    fn conditional_subtractions_and_centring() {
        assert_eq!(csub(Q.two_p - 1, Q.two_p), Q.two_p - 1);
        assert_eq!(csub(Q.two_p, Q.two_p), 0);
        assert_eq!(csub(Q.four_p - 1, Q.two_p), Q.two_p - 1);
        assert_eq!(csub_any(u32::MAX, Q.four_p), u32::MAX - Q.four_p);
        assert_eq!(csub_any(Q.four_p - 1, Q.four_p), Q.four_p - 1);
        // The borrow from sign bits, against the compare, on the edges of both operands' ranges.
        let edges = [
            0,
            1,
            2,
            Q.p - 1,
            Q.p,
            Q.four_p - 1,
            Q.four_p,
            1 << 31,
            (1 << 31) - 1,
            u32::MAX - 1,
            u32::MAX,
        ];
        for &x in &edges {
            for &c in &edges {
                assert_eq!(csub_any(x, c), if x >= c { x - c } else { x }, "csub_any({x}, {c})");
            }
        }
        // A twiddle product is `y w mod p` in [0, 2p), whichever form the target uses.
        for &y in &[0, 1, Q.p - 1, Q.two_p + 7, u32::MAX] {
            for &w in &[0, 1, 12345, Q.p - 1] {
                let r = twiddle_mul(y, twiddle(w, Q.p), Q);
                assert!(r < Q.two_p);
                assert_eq!(
                    u64::from(r) % u64::from(Q.p),
                    u64::from(y) * u64::from(w) % u64::from(Q.p)
                );
            }
        }
        assert_eq!(centre(Q.half, Q), Q.half as i32);
        assert_eq!(centre(Q.half + 1, Q), -(Q.half as i32));
        assert_eq!(centre(Q.p - 1, Q), -1);
        assert_eq!(centre(0, Q), 0);
    }
}
