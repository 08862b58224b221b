//! The coefficients a plan reads and writes: [`Input`] (a key byte or a torus word, reduced modulo each
//! prime, or for the small primes stored as a signed word that the forward transform reduces) and
//! [`Output`] (a torus word rebuilt from Garner's digits, wrapping).

use crate::arith::{Prime, csub, mont_mul, opaque};

pub(crate) mod sealed {
    use crate::arith::Prime;

    /// The reduction of an input coefficient.
    pub trait Residue {
        /// `self mod p`, as a residue in `[0, 4p)`, without branches.
        fn residue(self, q: Prime) -> u32;
        /// A signed word congruent to the centred value modulo a prime below `2^23`, without branches: the
        /// value itself for `u8` and `u32` (read as `i32`), reduced for `u64`. The small primes' forward
        /// transform reduces it in its first pass.
        #[cfg(not(negacyclic_ntt_mul16))]
        fn word_signed(self, q: Prime) -> i32;
    }
    /// The reconstruction of an output coefficient.
    pub trait Digits: Sized {
        /// `x mod 2^BITS` from Garner's digits: `sum_{i < L-1} d_i P_i + c P_{L-1}` with the last digit `c`
        /// centred.
        fn from_digits<const L: usize>(digits: &[u32; L], last: i32, radix: &[u64; L]) -> Self;
        /// `self + rhs`, wrapping.
        fn wrapping_add(self, rhs: Self) -> Self;
        /// `x mod 2^BITS`.
        fn from_i64(x: i64) -> Self;
        /// `out += X` through `crate::arm_asm`'s CRT of the small primes, if this type has one (`u32`):
        /// whether it ran.
        #[cfg(all(negacyclic_ntt_arm_asm, not(negacyclic_ntt_mul16)))]
        fn crt_add_asm(
            _first: &[u32],
            _second: &[u32],
            _out: &mut [Self],
            _constants: [u32; 3],
            _primes: [Prime; 2],
        ) -> bool {
            false
        }
    }
}
pub(crate) use sealed::Digits;
use sealed::Residue;

/// A polynomial coefficient the forward transform reads: `u8` (a binary or small key coefficient), `u32`
/// or `u64` (a torus element, read as its unsigned value; the product is the same modulo `2^32`/`2^64`),
/// or a torus element as it travels, `[u8; 4]` / `[u8; 8]` little-endian (read as the `u32` / `u64`), so
/// that a polynomial stored as bytes is transformed without a copy into words.
pub trait Input: Copy + Residue {}
impl Input for u8 {}
impl Input for u32 {}
impl Input for u64 {}
impl Input for [u8; 4] {}
impl Input for [u8; 8] {}

/// A torus the inverse transform writes: `u32` or `u64`, wrapping.
pub trait Output: Copy + Digits {}
impl Output for u32 {}
impl Output for u64 {}

impl Residue for u8 {
    #[inline(always)]
    fn residue(self, _: Prime) -> u32 {
        u32::from(self)
    }
    #[cfg(not(negacyclic_ntt_mul16))]
    #[inline(always)]
    fn word_signed(self, _: Prime) -> i32 {
        i32::from(self)
    }
}

/// A torus element is read centred, `a - 2^32 [a >= 2^31]`, as the `f64` FFT reads it: then a ternary key
/// coefficient `-1` (the word `2^32 - 1`) is `-1`, and `|a| <= 2^31` bounds the product.
impl Residue for u32 {
    #[inline(always)]
    fn residue(self, q: Prime) -> u32 {
        let negative = opaque(((self as i32) >> 31) as u32);
        below_2p(self, q).wrapping_add(q.minus_2_32 & negative)
    }
    /// The centred value is the word read as `i32`.
    #[cfg(not(negacyclic_ntt_mul16))]
    #[inline(always)]
    fn word_signed(self, _: Prime) -> i32 {
        self as i32
    }
}

/// `x mod p` in `[0, 2p)` for any `x`: Barrett's reduction (one long product), or with the 16x16-bit
/// multiplier (30-bit primes only) two masked conditional subtractions.
#[inline(always)]
fn below_2p(x: u32, q: Prime) -> u32 {
    #[cfg(not(negacyclic_ntt_mul16))]
    return crate::arith::reduce_u32(x, q);
    #[cfg(negacyclic_ntt_mul16)]
    return csub(crate::arith::csub_any(x, q.four_p), q.two_p);
}

/// `hi 2^32 + lo`, read centred like `u32`: `mont(hi, R^2) = hi R mod p` (`< 2p`) plus `lo` brought below
/// `2p`, then below `2p` again, plus `-2^64 mod p` when the top bit is set: in `[0, 3p)`.
impl Residue for u64 {
    #[inline(always)]
    fn residue(self, q: Prime) -> u32 {
        let negative = opaque(((self as i64) >> 63) as u32);
        let high = mont_mul((self >> 32) as u32, q.r2, q);
        let low = below_2p(self as u32, q);
        csub(high.wrapping_add(low), q.two_p).wrapping_add(q.minus_2_64 & negative)
    }
    /// `hi 2^32 + lo` with `hi` signed (the centred value): `mont(hi, R^2) = hi R mod p`, of magnitude below
    /// `p`, plus `lo` brought into `[0, 2p)`: in `(-p, 3p)`.
    #[cfg(not(negacyclic_ntt_mul16))]
    #[inline(always)]
    fn word_signed(self, q: Prime) -> i32 {
        let high = crate::arith::mont_mul_signed((self >> 32) as i32, q.r2 as i32, q);
        high.wrapping_add(crate::arith::reduce_u32(self as u32, q) as i32)
    }
}

impl Residue for [u8; 4] {
    #[inline(always)]
    fn residue(self, q: Prime) -> u32 {
        u32::from_le_bytes(self).residue(q)
    }
    #[cfg(not(negacyclic_ntt_mul16))]
    #[inline(always)]
    fn word_signed(self, q: Prime) -> i32 {
        u32::from_le_bytes(self).word_signed(q)
    }
}

impl Residue for [u8; 8] {
    #[inline(always)]
    fn residue(self, q: Prime) -> u32 {
        u64::from_le_bytes(self).residue(q)
    }
    #[cfg(not(negacyclic_ntt_mul16))]
    #[inline(always)]
    fn word_signed(self, q: Prime) -> i32 {
        u64::from_le_bytes(self).word_signed(q)
    }
}

impl Digits for u32 {
    #[inline(always)]
    fn from_digits<const L: usize>(digits: &[u32; L], last: i32, radix: &[u64; L]) -> Self {
        let mut x = (last as u32).wrapping_mul(radix[L - 1] as u32);
        for i in 0..L - 1 {
            x = x.wrapping_add(digits[i].wrapping_mul(radix[i] as u32));
        }
        x
    }
    #[inline(always)]
    fn wrapping_add(self, rhs: Self) -> Self {
        u32::wrapping_add(self, rhs)
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        x as u32
    }
    #[cfg(all(negacyclic_ntt_arm_asm, not(negacyclic_ntt_mul16)))]
    fn crt_add_asm(first: &[u32], second: &[u32], out: &mut [u32], constants: [u32; 3], primes: [Prime; 2]) -> bool {
        crate::arm_asm::crt_add_u32(first, second, out, constants, primes);
        true
    }
}

impl Digits for u64 {
    #[inline(always)]
    fn from_digits<const L: usize>(digits: &[u32; L], last: i32, radix: &[u64; L]) -> Self {
        let mut x = (i64::from(last) as u64).wrapping_mul(radix[L - 1]);
        for i in 0..L - 1 {
            x = x.wrapping_add(u64::from(digits[i]).wrapping_mul(radix[i]));
        }
        x
    }
    #[inline(always)]
    fn wrapping_add(self, rhs: Self) -> Self {
        u64::wrapping_add(self, rhs)
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        x as u64
    }
}
