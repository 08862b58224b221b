//! The radix blocks of a reading and their packing into LWE plaintexts (tfhe-rs
//! `integer/ciphertext/compact_list.rs`, `Compactable::compact_into`, and
//! `CompactCiphertextListBuilder::build_packed`: two 2-bit blocks per LWE, degree 15).

use crate::compact_list::parameters::{CompactPkeParameters, ValueKind};

/// A reading a device can put in a list: `u8`, `u16`, `u32` (tfhe-rs `FheUint8/16/32`) or `bool`
/// (`FheBool`).
pub trait CompactReading: Copy {
    /// Its kind in the list's metadata.
    const KIND: ValueKind;
    /// The value as an unsigned integer (`bool` as 0 or 1). Branch-free.
    fn to_u64(self) -> u64;
}

macro_rules! unsigned_reading {
    ($($t:ty),*) => {
        $(impl CompactReading for $t {
            const KIND: ValueKind = ValueKind::Unsigned { blocks: <$t>::BITS as usize / 2 };
            #[inline(always)]
            fn to_u64(self) -> u64 {
                u64::from(self)
            }
        })*
    };
}
unsigned_reading!(u8, u16, u32);

impl CompactReading for bool {
    const KIND: ValueKind = ValueKind::Boolean;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
}

/// The message of packed LWE `lwe` of a list of `readings`: radix block `2 lwe` plus `4` times block
/// `2 lwe + 1` of the readings' blocks laid end to end, least-significant block of each reading first (a
/// block past the last one is 0), as `build_packed` pairs them. In `0..16`.
///
/// Constant-time in the readings: which reading and which bits it reads depend on `lwe` only.
#[inline]
pub fn packed_plaintext<T: CompactReading>(params: &CompactPkeParameters, readings: &[T], lwe: usize) -> u64 {
    let blocks = T::KIND.blocks();
    let block_bits = params.block_bits() as usize;
    let block_mask = params.message_modulus - 1;
    let block = |g: usize| match readings.get(g / blocks) {
        Some(reading) => (reading.to_u64() >> (block_bits * (g % blocks))) & block_mask,
        None => 0,
    };
    block(2 * lwe) | (block(2 * lwe + 1) << block_bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact_list::parameters::PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;

    const P: CompactPkeParameters = PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;

    #[test]
    fn parameters() {
        assert_eq!((P.delta(), P.packed_degree(), P.block_bits()), (1 << 59, 15, 2));
        assert_eq!(<u32 as CompactReading>::KIND.blocks(), 16);
    }

    #[test]
    fn packed_plaintexts_are_nibbles_and_pairs_of_booleans() {
        let words = [0xBEEF_u16, 0x1234];
        let nibbles: [u64; 8] = core::array::from_fn(|t| packed_plaintext(&P, &words, t));
        assert_eq!(nibbles, [0xF, 0xE, 0xE, 0xB, 0x4, 0x3, 0x2, 0x1]);
        let bits = [true, false, true, true, false];
        let packed: [u64; 3] = core::array::from_fn(|t| packed_plaintext(&P, &bits, t));
        assert_eq!(packed, [1, 5, 0]);
    }
}
