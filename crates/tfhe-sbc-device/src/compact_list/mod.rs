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
pub mod packing;
pub mod parameters;

pub use format::{ListLayout, list_bytes};
pub use packing::{CompactReading, packed_plaintext};
pub use parameters::{CompactPkeParameters, PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, ValueKind};
