//! tfhe-rs's `CompactCiphertextList`, the list its `CompactPublicKey` encrypts: the parameters, the packed
//! plaintexts and the serialized bytes, as tfhe-rs 1.8.2 defines them. A format only: the encryption that
//! fills the random words is [`crate::encrypt::compact_list`].
//!
//! * [`CompactPkeParameters`] and [`PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`]: tfhe-rs's
//!   `shortint/parameters/v1_8/compact_public_key_only/p_fail_2_minus_128/ks_pbs.rs` (`N = 2048`,
//!   TUniform(17), message and carry moduli 4 and 4, native `2^64` modulus, expansion by casting).
//! * [`CompactReading`] and [`packed_plaintext`]: the radix blocks of a reading (tfhe-rs
//!   `integer/ciphertext/compact_list.rs`, `Compactable::compact_into`) and the packed form
//!   (`CompactCiphertextListBuilder::build_packed`: two 2-bit blocks per LWE, degree 15).
//! * [`format`]: the bytes `tfhe::safe_serialization::safe_serialize` writes for such a list, and their sizes.
//!
//! The lists are checked byte for byte against tfhe-rs 1.8.2 (see [`format`]).

pub mod format;

pub use format::{ListLayout, list_bytes};

/// The parameters of a tfhe-rs compact public-key encryption (`CompactPublicKeyEncryptionParameters`), as
/// far as the device and the list's bytes see them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactPkeParameters {
    /// `encryption_lwe_dimension`: the public key's polynomial size and each LWE's dimension.
    pub lwe_dimension: usize,
    /// `encryption_noise_distribution`: TUniform with this bound, `log2`.
    pub noise_bound_log2: u32,
    /// shortint's message modulus.
    pub message_modulus: u64,
    /// shortint's carry modulus.
    pub carry_modulus: u64,
}

/// tfhe-rs 1.8.2's `PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` (`V1_8_PARAM_PKE_TO_SMALL_..._ZKV2`),
/// the compact public-key set of the default compute set `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`;
/// the server casts its lists with `PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`. The same numbers
/// in every tfhe-rs from 1.0 to 1.8.
pub const PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128: CompactPkeParameters = CompactPkeParameters {
    lwe_dimension: 2048,
    noise_bound_log2: 17,
    message_modulus: 4,
    carry_modulus: 4,
};

impl CompactPkeParameters {
    /// Message bits per radix block: 2.
    pub const fn block_bits(&self) -> u32 {
        self.message_modulus.trailing_zeros()
    }

    /// The scaling of a packed plaintext: `2^63 / (message_modulus * carry_modulus) = 2^59` (one padding
    /// bit; tfhe-rs `shortint/encoding.rs::compute_delta`).
    pub const fn delta(&self) -> u64 {
        1 << (63 - (self.message_modulus * self.carry_modulus).trailing_zeros())
    }

    /// The degree of a packed LWE: `message_modulus^2 - 1` (15).
    pub const fn packed_degree(&self) -> u64 {
        self.message_modulus * self.message_modulus - 1
    }
}

/// What one value of a list is, as tfhe-rs's `DataKind` records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// An unsigned integer of this many 2-bit radix blocks (`DataKind::Unsigned`).
    Unsigned {
        /// Radix blocks per value: 4, 8 or 16 for `u8`, `u16`, `u32`.
        blocks: usize,
    },
    /// A boolean: one block holding 0 or 1 (`DataKind::Boolean`).
    Boolean,
}

impl ValueKind {
    /// Radix blocks per value.
    pub const fn blocks(self) -> usize {
        match self {
            Self::Unsigned { blocks } => blocks,
            Self::Boolean => 1,
        }
    }
}

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
