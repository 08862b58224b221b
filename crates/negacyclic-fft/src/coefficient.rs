//! Exact conversions between integer coefficients and `f64`.

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for i16 {}
    impl Sealed for i8 {}
    impl Sealed for u8 {}
    impl Sealed for i64 {}
    impl Sealed for [u8; 4] {}
}

/// An integer coefficient that converts exactly to `f64` as the input of a forward transform.
///
/// `u32` is a 32-bit torus element and is read as the *centered* signed value in `[-2^31, 2^31)`, which keeps
/// the product magnitudes (and so the rounding error) small. Signed types convert as they are; `u8` is read
/// as an unsigned small integer (a binary key stored in bytes).
pub trait Coefficient: Copy + sealed::Sealed {
    /// The exact `f64` value this coefficient stands for.
    fn to_f64(self) -> f64;
}

impl Coefficient for u32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self as i32)
    }
}
/// A 32-bit torus element as it travels (little-endian bytes), read as its `u32`: a polynomial stored as
/// bytes is transformed without a copy into words.
impl Coefficient for [u8; 4] {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        u32::from_le_bytes(self).to_f64()
    }
}

macro_rules! impl_lossless_coefficient {
    ($($t:ty),*) => {$(
        impl Coefficient for $t {
            #[inline(always)]
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
        }
    )*};
}
impl_lossless_coefficient!(i32, i16, i8, u8);

/// An integer type the inverse transform rounds into.
///
/// `u32` wraps modulo `2^32` (the torus); `i64` keeps the exact rounded integer, for callers that recombine
/// limbs of a wider torus.
pub trait RoundedCoefficient: Copy + sealed::Sealed {
    /// Converts the rounded integer `value` (exact, `|value| < 2^51`).
    fn from_rounded_i64(value: i64) -> Self;
    /// Wrapping addition, for the accumulating inverse.
    fn wrapping_add(self, rhs: Self) -> Self;
}

impl RoundedCoefficient for u32 {
    #[inline(always)]
    fn from_rounded_i64(value: i64) -> Self {
        value as u32
    }
    #[inline(always)]
    fn wrapping_add(self, rhs: Self) -> Self {
        u32::wrapping_add(self, rhs)
    }
}
impl RoundedCoefficient for i64 {
    #[inline(always)]
    fn from_rounded_i64(value: i64) -> Self {
        value
    }
    #[inline(always)]
    fn wrapping_add(self, rhs: Self) -> Self {
        i64::wrapping_add(self, rhs)
    }
}

/// 2^52 + 2^51: adding it to an `f64` of magnitude below 2^51 rounds to the nearest integer (ties to even)
/// and leaves that integer in the low mantissa bits. Branch-free and vectorizable.
const ROUNDING_MAGIC: f64 = 6_755_399_441_055_744.0;

/// Rounds `x` (with `|x| < 2^51`) to the nearest integer, ties to even.
#[inline(always)]
pub(crate) fn round_to_i64(x: f64) -> i64 {
    ((x + ROUNDING_MAGIC).to_bits() as i64).wrapping_sub(ROUNDING_MAGIC.to_bits() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_to_nearest() {
        for (x, r) in [
            (0.0, 0),
            (0.49, 0),
            (0.51, 1),
            (-0.51, -1),
            (-0.49, 0),
            (1e12 + 0.3, 1_000_000_000_000),
            (-1e12 - 0.7, -1_000_000_000_001),
            ((1u64 << 50) as f64, 1 << 50),
            (-((1u64 << 50) as f64) + 0.25, -(1 << 50)),
        ] {
            assert_eq!(round_to_i64(x), r, "round({x})");
        }
    }

    #[test]
    fn torus_is_read_centered() {
        assert_eq!(u32::MAX.to_f64(), -1.0);
        assert_eq!(0x8000_0000u32.to_f64(), -2_147_483_648.0);
        assert_eq!(0x7fff_ffffu32.to_f64(), 2_147_483_647.0);
        assert_eq!(u32::from_rounded_i64(-1), u32::MAX);
        assert_eq!(u32::from_rounded_i64(1 << 32), 0);
    }
}
