//! Discretized torus scalars: `T/qZ` with `q = 2^BITS`, stored as wrapping unsigned integers.

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// An element of the discretized torus `Z / 2^BITS Z`: `u32` (TFHE boolean, q = 2^32) or `u64` (shortint).
///
/// All arithmetic wraps modulo `2^BITS`.
pub trait UnsignedTorus:
    Copy + Default + Eq + Ord + core::fmt::Debug + core::hash::Hash + Send + Sync + 'static + sealed::Sealed
{
    /// `log2 q`.
    const BITS: u32;
    /// The torus zero.
    const ZERO: Self;
    /// The number of bytes of one little-endian encoded element.
    const BYTES: usize;

    /// `self + rhs mod q`.
    fn wrapping_add(self, rhs: Self) -> Self;
    /// `self - rhs mod q`.
    fn wrapping_sub(self, rhs: Self) -> Self;
    /// `-self mod q`.
    fn wrapping_neg(self) -> Self;
    /// `self * rhs mod q`.
    fn wrapping_mul(self, rhs: Self) -> Self;
    /// `value mod q`, for a signed integer (e.g. a rounded Gaussian sample).
    fn from_i64_wrapping(value: i64) -> Self;
    /// `value mod q`, for an unsigned integer.
    fn from_u64_wrapping(value: u64) -> Self;
    /// The centered representative in `[-q/2, q/2)`, as `i64`.
    fn to_signed(self) -> i64;
    /// The value as `u64`.
    fn to_u64(self) -> u64;
    /// The real torus value `x mod 1` rounded to the nearest multiple of `1/q`.
    ///
    /// For `u64`, `f64` carries only 53 bits, so the low bits of the result are 0.
    fn from_torus_f64(x: f64) -> Self {
        let frac = x - libm::floor(x);
        let scaled = libm::round(frac * libm::ldexp(1.0, Self::BITS as i32));
        // `scaled` is in [0, q]; q itself wraps to 0.
        Self::from_u64_wrapping(if scaled >= libm::ldexp(1.0, 64) {
            0
        } else {
            scaled as u64
        })
    }
    /// The real representative in `[0, 1)`.
    fn to_torus_f64(self) -> f64 {
        self.to_u64() as f64 / libm::ldexp(1.0, Self::BITS as i32)
    }
    /// Reads an element from exactly `BYTES` little-endian bytes.
    fn from_le_slice(bytes: &[u8]) -> Self;
    /// Writes the element as `BYTES` little-endian bytes into `out[..BYTES]`.
    fn write_le(self, out: &mut [u8]);
}

macro_rules! impl_torus {
    ($t:ty, $signed:ty) => {
        impl UnsignedTorus for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            const BYTES: usize = core::mem::size_of::<$t>();

            #[inline(always)]
            fn wrapping_add(self, rhs: Self) -> Self {
                <$t>::wrapping_add(self, rhs)
            }
            #[inline(always)]
            fn wrapping_sub(self, rhs: Self) -> Self {
                <$t>::wrapping_sub(self, rhs)
            }
            #[inline(always)]
            fn wrapping_neg(self) -> Self {
                <$t>::wrapping_neg(self)
            }
            #[inline(always)]
            fn wrapping_mul(self, rhs: Self) -> Self {
                <$t>::wrapping_mul(self, rhs)
            }
            #[inline(always)]
            fn from_i64_wrapping(value: i64) -> Self {
                value as $t
            }
            #[inline(always)]
            fn from_u64_wrapping(value: u64) -> Self {
                value as $t
            }
            #[inline(always)]
            fn to_signed(self) -> i64 {
                i64::from(self as $signed)
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                u64::from(self)
            }
            #[inline(always)]
            fn from_le_slice(bytes: &[u8]) -> Self {
                let mut buf = [0u8; core::mem::size_of::<$t>()];
                buf.copy_from_slice(bytes);
                <$t>::from_le_bytes(buf)
            }
            #[inline(always)]
            fn write_le(self, out: &mut [u8]) {
                out[..core::mem::size_of::<$t>()].copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}

impl_torus!(u32, i32);
impl_torus!(u64, i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torus_conversions() {
        assert_eq!(u32::from_torus_f64(0.125), 1 << 29);
        assert_eq!(u32::from_torus_f64(-0.125), 7 << 29);
        assert_eq!(u32::from_torus_f64(1.0), 0);
        assert_eq!(u32::from_torus_f64(0.999_999_999_99), 0);
        assert_eq!(u64::from_torus_f64(0.25), 1 << 62);
        assert_eq!((7u32 << 29).to_torus_f64(), 0.875);
        assert_eq!(u32::MAX.to_signed(), -1);
        assert_eq!(u32::from_i64_wrapping(-1), u32::MAX);
        let mut bytes = [0u8; 4];
        0x0102_0304u32.write_le(&mut bytes);
        assert_eq!(bytes, [4, 3, 2, 1]);
        assert_eq!(u32::from_le_slice(&bytes), 0x0102_0304);
    }
}
