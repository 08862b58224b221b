//! The parameters of a tfhe-rs compact public-key encryption as the device sees them
//! ([`CompactPkeParameters`], tfhe-rs's `shortint/parameters/v1_8/compact_public_key_only/p_fail_2_minus_128/ks_pbs.rs`)
//! and the kinds of the values a list holds ([`ValueKind`]): what the packing ([`super::packing`]) and the
//! byte format ([`super::format`]) both read.

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
