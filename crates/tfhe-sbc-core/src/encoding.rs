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

/// Unsigned integers as tfhe-rs's radix ciphertexts hold them: a `value_bits`-bit value is cut into blocks
/// of `log2(message_modulus)` bits, **little-endian** (block 0 holds the lowest bits), and each block is
/// encoded with the [`PaddedIntegerEncoding`] of `message_modulus * carry_modulus` (the carry bits empty, the
/// padding bit zero).
///
/// For tfhe-rs's default (message and carry moduli 4 and 4, 64-bit torus): 2 bits per block,
/// `delta = 2^59`; a `u8` is 4 blocks, a `u16` 8, a `u32` 16, a `u64` 32.
///
/// Packing ([`RadixEncoding::encode_values`]): value `v`'s blocks fill coefficients
/// `v * blocks .. (v + 1) * blocks` of the plaintext, in order, and the coefficients after the last value
/// encode 0. One `N = 2048` GLWE ciphertext carries 512 `u8` or 128 `u32`.
///
/// Encoding does not branch on the values (it masks and shifts); the range check ORs every value's high
/// bits together and branches once on the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RadixEncoding {
    block_bits: u32,
    padded: PaddedIntegerEncoding,
}

impl RadixEncoding {
    /// The encoding with these shortint moduli on a `torus_bits`-bit torus. Errors with
    /// [`Error::InvalidMessageModulus`] unless `message_modulus >= 2` and `carry_modulus >= 1` are powers of
    /// two whose product fits the torus with a padding bit and a bit of noise room.
    pub fn new(message_modulus: u64, carry_modulus: u64, torus_bits: u32) -> Result<Self> {
        if !message_modulus.is_power_of_two() || message_modulus < 2 {
            return Err(Error::InvalidMessageModulus(message_modulus));
        }
        if !carry_modulus.is_power_of_two() {
            return Err(Error::InvalidMessageModulus(carry_modulus));
        }
        let product = message_modulus
            .checked_mul(carry_modulus)
            .ok_or(Error::InvalidMessageModulus(carry_modulus))?;
        Ok(Self {
            block_bits: message_modulus.trailing_zeros(),
            padded: PaddedIntegerEncoding::new(product, torus_bits)?,
        })
    }

    /// For named sets, whose moduli are valid: `log2` of the message modulus and of the product of the
    /// moduli.
    pub(crate) const fn from_valid(block_bits: u32, log_modulus: u32) -> Self {
        Self {
            block_bits,
            padded: PaddedIntegerEncoding { log_modulus },
        }
    }

    /// Message bits per block (`log2(message_modulus)`).
    pub const fn block_bits(&self) -> u32 {
        self.block_bits
    }

    /// The message modulus.
    pub const fn message_modulus(&self) -> u64 {
        1 << self.block_bits
    }

    /// The encoding of one block (`message_modulus * carry_modulus` with a padding bit).
    pub const fn block_encoding(&self) -> PaddedIntegerEncoding {
        self.padded
    }

    /// `delta` on the torus `T` (`2^59` on `u64` for the default set).
    pub fn delta<T: UnsignedTorus>(&self) -> T {
        self.padded.delta()
    }

    /// The number of blocks of a `value_bits`-bit value. [`Error::InvalidValueBits`] unless `value_bits` is
    /// a positive multiple of [`RadixEncoding::block_bits`] of at most 64.
    pub fn blocks_per_value(&self, value_bits: u32) -> Result<usize> {
        if value_bits == 0 || value_bits > 64 || !value_bits.is_multiple_of(self.block_bits) {
            return Err(Error::InvalidValueBits {
                value_bits,
                block_bits: self.block_bits,
            });
        }
        Ok((value_bits / self.block_bits) as usize)
    }

    /// Encodes one `value_bits`-bit value into `out`, one word per block, little-endian.
    ///
    /// Errors: [`Error::InvalidValueBits`], [`Error::WrongLength`] if `out` does not have
    /// [`RadixEncoding::blocks_per_value`] words, [`Error::ValueOutOfRange`] if `value >= 2^value_bits`.
    pub fn encode_value<T: UnsignedTorus>(&self, value: u64, value_bits: u32, out: &mut [T]) -> Result<()> {
        let blocks = self.blocks_per_value(value_bits)?;
        if out.len() != blocks {
            return Err(Error::WrongLength {
                expected: blocks,
                found: out.len(),
            });
        }
        self.encode_values(&[value], value_bits, out).map(|_| ())
    }

    /// Packs `values` (each `value_bits` bits) into `out`: value `v`'s blocks at `out[v * blocks..]`, and
    /// every word after the last value set to the encoding of 0. Returns the number of words the values
    /// fill (`values.len() * blocks`).
    ///
    /// Errors: [`Error::InvalidValueBits`], [`Error::CapacityExceeded`] if the values need more than
    /// `out.len()` words, [`Error::ValueOutOfRange`] (naming the first such value) if a value has bits at or
    /// above `value_bits`. On error `out` is left unchanged.
    pub fn encode_values<T: UnsignedTorus>(&self, values: &[u64], value_bits: u32, out: &mut [T]) -> Result<usize> {
        let blocks = self.blocks_per_value(value_bits)?;
        let needed = values.len().saturating_mul(blocks);
        if needed > out.len() {
            return Err(Error::CapacityExceeded {
                needed,
                available: out.len(),
            });
        }
        // One branch for the whole slice, not one per value.
        let high = values
            .iter()
            .fold(0u64, |acc, &v| acc | v.checked_shr(value_bits).unwrap_or(0));
        if high != 0 {
            let value = values
                .iter()
                .copied()
                .find(|v| v.checked_shr(value_bits).unwrap_or(0) != 0)
                .unwrap_or(0);
            return Err(Error::ValueOutOfRange { value, value_bits });
        }
        let mask = self.message_modulus() - 1;
        for (&value, words) in values.iter().zip(out.chunks_exact_mut(blocks)) {
            for (j, word) in words.iter_mut().enumerate() {
                *word = self.padded.encode((value >> (j as u32 * self.block_bits)) & mask);
            }
        }
        out[needed..].fill(T::ZERO);
        Ok(needed)
    }

    /// Decodes one value from its noisy blocks (little-endian): each block is rounded
    /// ([`PaddedIntegerEncoding::decode`]) and its message bits kept. [`Error::InvalidValueBits`] if the
    /// blocks hold more than 64 bits or none.
    pub fn decode_value<T: UnsignedTorus>(&self, blocks: &[T]) -> Result<u64> {
        let value_bits = u32::try_from(blocks.len())
            .ok()
            .and_then(|n| n.checked_mul(self.block_bits))
            .unwrap_or(u32::MAX);
        self.blocks_per_value(value_bits)?;
        let mask = self.message_modulus() - 1;
        Ok(blocks.iter().enumerate().fold(0u64, |acc, (j, &b)| {
            acc | ((self.padded.decode(b) & mask) << (j as u32 * self.block_bits))
        }))
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

    #[test]
    fn radix_blocks_are_little_endian_two_bit_blocks() {
        let enc = RadixEncoding::new(4, 4, 64).unwrap();
        assert_eq!(enc.delta::<u64>(), 1 << 59);
        assert_eq!(enc.block_bits(), 2);
        for (bits, blocks) in [(8, 4), (16, 8), (32, 16), (64, 32)] {
            assert_eq!(enc.blocks_per_value(bits), Ok(blocks));
        }
        let mut out = [0u64; 4];
        enc.encode_value(0b11_10_01_00, 8, &mut out).unwrap();
        assert_eq!(out, [0, 1 << 59, 2 << 59, 3 << 59]);
        assert_eq!(enc.decode_value(&out), Ok(0b11_10_01_00));
        // Noise below delta / 2 rounds away.
        let noisy: [u64; 4] = core::array::from_fn(|j| out[j].wrapping_add(((j as u64) << 56).wrapping_neg()));
        assert_eq!(enc.decode_value(&noisy), Ok(0b11_10_01_00));

        let values = [0xdead_beef_u64, 0, u64::from(u32::MAX), 0x0123_4567];
        let mut plain = [7u64; 2048];
        assert_eq!(enc.encode_values(&values, 32, &mut plain), Ok(64));
        for (v, blocks) in values.iter().zip(plain.chunks_exact(16)) {
            assert_eq!(enc.decode_value(blocks), Ok(*v));
        }
        assert!(plain[64..].iter().all(|&w| w == 0));
        let mut all = [0u64; 32];
        enc.encode_value(u64::MAX, 64, &mut all).unwrap();
        assert_eq!(enc.decode_value(&all), Ok(u64::MAX));
    }

    proptest::proptest! {
        /// Any width and values: packing then decoding each value gives it back, the tail is zero, and
        /// nothing panics (widths, values and lengths the encoding refuses give errors).
        #[test]
        fn radix_packing_round_trips(
            values in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..40),
            value_bits in 0u32..70,
            len in 0usize..300,
        ) {
            let enc = RadixEncoding::new(4, 4, 64).unwrap();
            let mut out = [1u64; 300];
            let out = &mut out[..len];
            // Mostly in range: keep the low `value_bits` bits of most values.
            let values: [u64; 40] = core::array::from_fn(|i| {
                let v = values.get(i).copied().unwrap_or(0);
                if i % 7 == 6 { v } else { v & u64::MAX.checked_shr(64 - value_bits.min(64)).unwrap_or(0) }
            });
            let values = &values[..values.len().min(len / 4 + 1)];
            match enc.encode_values(values, value_bits, out) {
                Ok(used) => {
                    let blocks = enc.blocks_per_value(value_bits).unwrap();
                    proptest::prop_assert_eq!(used, values.len() * blocks);
                    for (v, words) in values.iter().zip(out.chunks_exact(blocks)) {
                        proptest::prop_assert_eq!(enc.decode_value(words), Ok(*v));
                    }
                    proptest::prop_assert!(out[used..].iter().all(|&w| w == 0));
                }
                Err(_) => proptest::prop_assert!(out.iter().all(|&w| w == 1)),
            }
        }
    }

    #[test]
    fn radix_errors_name_what_was_wrong() {
        let enc = RadixEncoding::new(4, 4, 64).unwrap();
        let mut out = [1u64; 8];
        for bits in [0, 7, 66] {
            assert_eq!(
                enc.encode_values(&[1], bits, &mut out),
                Err(Error::InvalidValueBits {
                    value_bits: bits,
                    block_bits: 2
                })
            );
        }
        assert_eq!(
            enc.encode_values(&[1, 2, 3], 8, &mut out),
            Err(Error::CapacityExceeded {
                needed: 12,
                available: 8
            })
        );
        assert_eq!(
            enc.encode_values(&[1, 256], 8, &mut out),
            Err(Error::ValueOutOfRange {
                value: 256,
                value_bits: 8
            })
        );
        assert_eq!(out, [1; 8], "unchanged on error");
        assert_eq!(
            enc.encode_value(1, 8, &mut out),
            Err(Error::WrongLength { expected: 4, found: 8 })
        );
        assert!(enc.decode_value::<u64>(&[]).is_err());
        assert!(enc.decode_value(&[0u64; 33]).is_err());
        assert_eq!(RadixEncoding::new(3, 4, 64), Err(Error::InvalidMessageModulus(3)));
        assert_eq!(RadixEncoding::new(4, 3, 64), Err(Error::InvalidMessageModulus(3)));
        assert_eq!(RadixEncoding::new(4, 0, 64), Err(Error::InvalidMessageModulus(0)));
        assert_eq!(
            RadixEncoding::new(1 << 31, 1 << 32, 64),
            Err(Error::InvalidMessageModulus(1 << 63))
        );
        // On a 32-bit torus too (the device's words): delta = 2^31 / 16.
        let enc32 = RadixEncoding::new(4, 4, 32).unwrap();
        let mut w = [0u32; 4];
        enc32.encode_value(0x9c, 8, &mut w).unwrap();
        assert_eq!(w[0], 0);
        assert_eq!(w[3], 2 << 27);
        assert_eq!(enc32.decode_value(&w), Ok(0x9c));
    }
}
