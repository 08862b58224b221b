//! Message encodings onto the torus.

use crate::error::{Error, Result};
use crate::torus::UnsignedTorus;

/// Encodes a boolean as tfhe-rs's boolean API does: `true` is `+1/8` (`1 << 29` on `u32`), `false` is
/// `-1/8` (`7 << 29` on `u32`).
#[inline]
pub fn encode_bool<T: UnsignedTorus>(bit: bool) -> T {
    let eighth = T::from_u64_wrapping(1u64 << (T::BITS - 3));
    // Branch-free: +1/8 or -1/8 = (1 - 2*!bit) * 1/8.
    let sign = T::from_u64_wrapping(u64::from(!bit)).wrapping_mul(T::from_u64_wrapping(2));
    eighth.wrapping_sub(sign.wrapping_mul(eighth))
}

/// Decodes a noisy boolean as tfhe-rs does: `true` when the value lies in `[0, 1/2)`.
#[inline]
pub fn decode_bool<T: UnsignedTorus>(value: T) -> bool {
    value.to_signed() >= 0
}

/// Integer messages modulo `p = 2^k` with one padding bit on top, as tfhe-rs shortint encodes them:
/// `delta = 2^(BITS-1) / p` and `m -> m * delta`.
///
/// For tfhe-rs's default `PARAM_MESSAGE_2_CARRY_2` (message and carry moduli 4 and 4), `p = 16` on a
/// 64-bit torus, so `delta = 2^59`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PaddedIntegerEncoding {
    log_modulus: u32,
}

impl PaddedIntegerEncoding {
    /// The encoding of messages modulo `modulus` (a power of two, `2 <= p`, leaving at least one bit of
    /// noise room below `delta` on a `torus_bits`-bit torus).
    pub fn new(modulus: u64, torus_bits: u32) -> Result<Self> {
        if !modulus.is_power_of_two() || modulus < 2 || modulus.trailing_zeros() + 2 > torus_bits {
            return Err(Error::InvalidMessageModulus(modulus));
        }
        Ok(Self {
            log_modulus: modulus.trailing_zeros(),
        })
    }

    /// The message modulus `p`.
    pub const fn modulus(&self) -> u64 {
        1 << self.log_modulus
    }

    /// `delta = 2^(BITS-1) / p` on the torus `T`.
    pub fn delta<T: UnsignedTorus>(&self) -> T {
        T::from_u64_wrapping(1u64 << (T::BITS - 1 - self.log_modulus))
    }

    /// Encodes `message mod p`.
    pub fn encode<T: UnsignedTorus>(&self, message: u64) -> T {
        T::from_u64_wrapping(message & (self.modulus() - 1)).wrapping_mul(self.delta())
    }

    /// Decodes a noisy value: rounds to the nearest multiple of `delta`, then reduces modulo `p` (the padding
    /// bit is dropped).
    pub fn decode<T: UnsignedTorus>(&self, value: T) -> u64 {
        let shift = T::BITS - 1 - self.log_modulus;
        let rounded = value.wrapping_add(T::from_u64_wrapping(1u64 << (shift - 1)));
        (rounded.to_u64() >> shift) & (self.modulus() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_match_tfhe_rs() {
        assert_eq!(encode_bool::<u32>(true), 1 << 29);
        assert_eq!(encode_bool::<u32>(false), 7 << 29);
        assert_eq!(encode_bool::<u64>(true), 1 << 61);
        assert_eq!(encode_bool::<u64>(false), 7 << 61);
        for noise in [-(1i64 << 28) + 1, -1000, 0, 1000, (1 << 28) - 1] {
            let e = u32::from_i64_wrapping(noise);
            assert!(decode_bool(encode_bool::<u32>(true).wrapping_add(e)));
            assert!(!decode_bool(encode_bool::<u32>(false).wrapping_add(e)));
        }
    }

    #[test]
    fn padded_integers_match_shortint() {
        let enc = PaddedIntegerEncoding::new(16, 64).unwrap();
        assert_eq!(enc.delta::<u64>(), 1 << 59);
        for m in 0..16 {
            let x: u64 = enc.encode(m);
            assert_eq!(x, m << 59);
            for noise in [-(1i64 << 57), -1, 0, 1, (1 << 57)] {
                assert_eq!(enc.decode(x.wrapping_add(noise as u64)), m);
            }
        }
        let enc8 = PaddedIntegerEncoding::new(8, 32).unwrap();
        assert_eq!(enc8.delta::<u32>(), 1 << 28);
        assert_eq!(enc8.decode(enc8.encode::<u32>(13)), 5);
        for bad in [0, 1, 3, 1 << 31] {
            assert_eq!(
                PaddedIntegerEncoding::new(bad, 32),
                Err(Error::InvalidMessageModulus(bad))
            );
        }
    }
}
