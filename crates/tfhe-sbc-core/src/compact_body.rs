//! Compact bodies: only the top `body_bits` bits of each GLWE body coefficient travel.
//!
//! A seeded ciphertext's mask is exact (the receiver regenerates it from the seed), so the only rounding is
//! the body's: `b_i -> round(b_i / 2^s) * 2^s` with `s = torus_bits - body_bits`. That adds a uniform error in
//! `[-2^(s-1), 2^(s-1))` (variance `2^(2s) / 12` in units of `1/q`), independent of the message and the key,
//! and it is public post-processing of a ciphertext, so it costs no security. The widths each named set uses
//! ([`GlweParameters::compact_body_bits`]) come from the noise budget: the rounding adds at most 1% of the
//! variance the set budgets at the PBS input.
//!
//! Packing: coefficient 0's bits first, each coefficient's least-significant bit first, in
//! [`packed_body_bytes`]`(n, body_bits)` bytes; the unused bits of the last byte are 0. At `body_bits =
//! torus_bits` this is the plain little-endian word layout.
//!
//! Everything here is branch-free on the data (shifts by public amounts), so the device can round secret-
//! dependent bodies in constant time.
//!
//! ```
//! use tfhe_sbc_core::compact_body::{pack_body, packed_body_bytes, unpack_body};
//! let body = [0x1234_5678_u32, 0xFFF8_0000, 7 << 29];
//! let mut wire = [0u8; packed_body_bytes(3, 12)];
//! pack_body(&body, 12, &mut wire)?;
//! let mut back = [0u32; 3];
//! unpack_body(&wire, 12, &mut back)?;
//! assert_eq!(back, [0x1230_0000, 0x0000_0000, 7 << 29]); // rounded to 2^-12; the second wrapped to 0
//! # Ok::<(), tfhe_sbc_core::Error>(())
//! ```

#[cfg(doc)]
use crate::parameters::GlweParameters;
use crate::torus::UnsignedTorus;
use crate::{Error, Result};

/// The bytes of `n` coefficients of `body_bits` bits each, bit-packed: `ceil(n * body_bits / 8)`.
pub const fn packed_body_bytes(n: usize, body_bits: u32) -> usize {
    (n * body_bits as usize).div_ceil(8)
}

/// Checks `1 <= body_bits <= T::BITS`.
pub fn check_body_bits<T: UnsignedTorus>(body_bits: u32) -> Result<()> {
    if body_bits == 0 || body_bits > T::BITS {
        return Err(Error::UnsupportedBodyBits {
            body_bits,
            torus_bits: T::BITS,
        });
    }
    Ok(())
}

/// The top `body_bits` bits of `word`, rounded to the nearest (ties up) and wrapping on the torus (a word
/// that rounds up past the top becomes 0): a value below `2^body_bits`. `1 <= body_bits <= T::BITS`.
#[inline]
pub fn round_to_top_bits<T: UnsignedTorus>(word: T, body_bits: u32) -> u64 {
    let shift = T::BITS - body_bits;
    // Half a step, 0 when nothing is dropped (computed without a branch on the public shift either).
    let half = (1u64 << shift) >> 1;
    let rounded = T::from_u64_wrapping(half).wrapping_add(word).to_u64();
    (rounded >> shift) & low_mask(body_bits)
}

/// The torus word whose top `body_bits` bits are `top` and whose other bits are 0 (the receiver's view of a
/// compact coefficient).
#[inline]
pub fn expand_top_bits<T: UnsignedTorus>(top: u64, body_bits: u32) -> T {
    let shift = T::BITS - body_bits;
    T::from_u64_wrapping((top & low_mask(body_bits)) << shift)
}

fn low_mask(bits: u32) -> u64 {
    u64::MAX >> (64 - bits)
}

/// Appends bit fields to a byte buffer, least-significant bit first.
struct BitWriter {
    acc: u64,
    filled: u32,
    position: usize,
}

impl BitWriter {
    const fn new() -> Self {
        Self {
            acc: 0,
            filled: 0,
            position: 0,
        }
    }

    /// Appends the low `bits` bits of `value` (`bits <= 64`), writing each completed byte at once.
    #[inline]
    fn push(&mut self, out: &mut [u8], value: u64, bits: u32) {
        // At most 32 bits at a time, so that `filled` (< 8) plus them fits the 64-bit accumulator.
        let low = bits.min(32);
        self.push_at_most_32(out, value & low_mask_or_zero(low), low);
        self.push_at_most_32(out, (value >> low) & low_mask_or_zero(bits - low), bits - low);
    }

    #[inline]
    fn push_at_most_32(&mut self, out: &mut [u8], value: u64, bits: u32) {
        self.acc |= value << self.filled;
        self.filled += bits;
        while self.filled >= 8 {
            out[self.position] = self.acc as u8;
            self.position += 1;
            self.acc >>= 8;
            self.filled -= 8;
        }
    }

    /// Writes the last partial byte (its unused bits 0); returns the bytes written.
    fn finish(self, out: &mut [u8]) -> usize {
        if self.filled > 0 {
            out[self.position] = self.acc as u8;
            self.position + 1
        } else {
            self.position
        }
    }
}

fn low_mask_or_zero(bits: u32) -> u64 {
    if bits == 0 { 0 } else { low_mask(bits) }
}

/// Rounds each of `words` to its top `body_bits` bits ([`round_to_top_bits`]) and bit-packs them into
/// `out[..packed_body_bytes(words.len(), body_bits)]`; returns that length.
pub fn pack_body<T: UnsignedTorus>(words: &[T], body_bits: u32, out: &mut [u8]) -> Result<usize> {
    check_body_bits::<T>(body_bits)?;
    let len = packed_body_bytes(words.len(), body_bits);
    let found = out.len();
    let out = out.get_mut(..len).ok_or(Error::WrongLength { expected: len, found })?;
    let mut writer = BitWriter::new();
    for &word in words {
        writer.push(out, round_to_top_bits(word, body_bits), body_bits);
    }
    Ok(writer.finish(out))
}

/// [`pack_body`] in place: `buffer` starts with `n` little-endian torus words (`n * T::BYTES` bytes), which
/// are replaced by their packed form at the start of the buffer; returns its length. Each word is read
/// before any byte of it is overwritten (the packed form of the first `i` words ends before word `i`), so no
/// second buffer is needed: a device computes the body in its frame buffer and compacts it there.
pub fn pack_body_in_place<T: UnsignedTorus>(buffer: &mut [u8], n: usize, body_bits: u32) -> Result<usize> {
    check_body_bits::<T>(body_bits)?;
    let found = buffer.len();
    let words = buffer.get_mut(..n * T::BYTES).ok_or(Error::WrongLength {
        expected: n * T::BYTES,
        found,
    })?;
    let mut writer = BitWriter::new();
    for i in 0..n {
        let word = T::from_le_slice(&words[i * T::BYTES..(i + 1) * T::BYTES]);
        writer.push(words, round_to_top_bits(word, body_bits), body_bits);
    }
    Ok(writer.finish(words))
}

/// Reads `out.len()` coefficients of `body_bits` bits from `bytes` (exactly
/// [`packed_body_bytes`]`(out.len(), body_bits)` bytes) into torus words ([`expand_top_bits`]). The unused
/// bits of the last byte must be 0 (one encoding per body). Allocates nothing; never panics.
pub fn unpack_body<T: UnsignedTorus>(bytes: &[u8], body_bits: u32, out: &mut [T]) -> Result<()> {
    check_body_bits::<T>(body_bits)?;
    let expected = packed_body_bytes(out.len(), body_bits);
    if bytes.len() != expected {
        return Err(Error::WrongLength {
            expected,
            found: bytes.len(),
        });
    }
    let mut acc: u128 = 0;
    let mut filled: u32 = 0;
    let mut next = bytes.iter();
    for word in out.iter_mut() {
        while filled < body_bits {
            // `next` cannot run out: `bytes` holds exactly enough bits for every coefficient.
            acc |= u128::from(next.next().copied().unwrap_or(0)) << filled;
            filled += 8;
        }
        *word = expand_top_bits(acc as u64 & low_mask(body_bits), body_bits);
        acc >>= body_bits;
        filled -= body_bits;
    }
    if acc != 0 {
        return Err(Error::NonZeroPadding);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bit-by-bit reference packer, written independently of [`BitWriter`].
    fn reference_pack<T: UnsignedTorus>(words: &[T], bits: u32) -> [u8; 1024] {
        let mut out = [0u8; 1024];
        for (i, &w) in words.iter().enumerate() {
            let shift = T::BITS - bits;
            let exact = w.to_u64() as u128;
            let top = ((exact + ((1u128 << shift) >> 1)) >> shift) % (1u128 << bits);
            for b in 0..bits as usize {
                let bit = (top >> b) & 1;
                let at = i * bits as usize + b;
                out[at / 8] |= (bit as u8) << (at % 8);
            }
        }
        out
    }

    fn words<T: UnsignedTorus>(seed: u64, n: usize) -> [T; 64] {
        let mut state = seed;
        let mut out = [T::ZERO; 64];
        for w in out.iter_mut().take(n) {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *w = T::from_u64_wrapping(state ^ (state >> 29));
        }
        // Edge words: 0, the top, half steps.
        out[0] = T::ZERO;
        out[1] = T::from_i64_wrapping(-1);
        out[2] = T::from_u64_wrapping(1 << (T::BITS - 2));
        out
    }

    fn round_trip<T: UnsignedTorus + core::fmt::Debug>() {
        for bits in 1..=T::BITS {
            for n in [1usize, 3, 7, 8, 33, 64] {
                let w = words::<T>(u64::from(bits) * 1000 + n as u64, n);
                let w = &w[..n];
                let mut packed = [0u8; 1024];
                let len = pack_body(w, bits, &mut packed).unwrap();
                assert_eq!(len, packed_body_bytes(n, bits));
                assert_eq!(packed[..len], reference_pack(w, bits)[..len], "bits {bits} n {n}");
                // In place, from little-endian words.
                let mut buffer = [0u8; 64 * 8];
                for (i, &x) in w.iter().enumerate() {
                    x.write_le(&mut buffer[i * T::BYTES..]);
                }
                assert_eq!(pack_body_in_place::<T>(&mut buffer, n, bits).unwrap(), len);
                assert_eq!(buffer[..len], packed[..len]);
                let mut back = [T::ZERO; 64];
                unpack_body(&packed[..len], bits, &mut back[..n]).unwrap();
                let step = 1u128 << (T::BITS - bits);
                let modulus = 1u128 << T::BITS;
                for (&x, &y) in w.iter().zip(&back[..n]) {
                    // |y - x| <= step / 2 on the torus, and y has zero low bits.
                    let d = (y.to_u64() as u128 + modulus - x.to_u64() as u128) % modulus;
                    let distance = d.min(modulus - d);
                    assert!(distance <= step / 2, "bits {bits}: {x:?} -> {y:?}");
                    assert_eq!(y.to_u64() as u128 % step, 0);
                }
            }
        }
    }

    #[test]
    fn round_trips_u32_and_u64_at_every_width() {
        round_trip::<u32>();
        round_trip::<u64>();
    }

    #[test]
    fn full_width_is_the_little_endian_layout() {
        let w = [0x0102_0304_u32, 0xA0B0_C0D0];
        let mut out = [0u8; 8];
        pack_body(&w, 32, &mut out).unwrap();
        assert_eq!(out, [4, 3, 2, 1, 0xD0, 0xC0, 0xB0, 0xA0]);
    }

    #[test]
    fn rounding_is_to_nearest_and_wraps() {
        assert_eq!(round_to_top_bits(0x0008_0000_u32, 12), 1); // exactly half a step: up
        assert_eq!(round_to_top_bits(0x0007_FFFF_u32, 12), 0);
        assert_eq!(round_to_top_bits(0xFFF8_0000_u32, 12), 0); // wraps to 0
        assert_eq!(round_to_top_bits(u64::MAX, 14), 0);
        assert_eq!(round_to_top_bits(u64::MAX, 64), u64::MAX);
    }

    #[test]
    fn refuses_bad_input() {
        let mut out = [0u32; 4];
        assert_eq!(
            unpack_body(&[0u8; 5], 12, &mut out),
            Err(Error::WrongLength { expected: 6, found: 5 })
        );
        let mut nonzero_padding = [0u8; 6];
        nonzero_padding[5] = 0x0; // 48 bits exactly: no padding at 4 x 12
        assert!(unpack_body(&nonzero_padding, 12, &mut out).is_ok());
        let mut three = [0u32; 3]; // 36 bits in 5 bytes: 4 padding bits
        let mut bytes = [0u8; 5];
        bytes[4] = 0x10;
        assert_eq!(unpack_body(&bytes, 12, &mut three), Err(Error::NonZeroPadding));
        assert!(matches!(
            unpack_body(&bytes, 33, &mut three),
            Err(Error::UnsupportedBodyBits {
                body_bits: 33,
                torus_bits: 32
            })
        ));
        assert!(pack_body(&[0u32; 3], 0, &mut bytes).is_err());
        assert!(pack_body(&[0u32; 4], 12, &mut bytes).is_err());
    }
}
