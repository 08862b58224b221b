//! The payload size of a compact-list frame ([`crate::frame::compact_list`]): the chunk of readings one
//! frame carries and the bytes of the tfhe-rs list that encrypts it ([`crate::compact_list::list_bytes`]).
//! The header's size rules ([`crate::frame::header::payload_bytes`]) and the compact-list frames both read
//! it, so it lives apart from either.

use crate::compact_list::{PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, ValueKind, list_bytes};

/// The reading bytes of one compact-list frame: 1,024 (4,096 two-bit blocks, packed two per LWE: one bin
/// of `N = 2048` LWEs).
pub const COMPACT_LIST_CHUNK_BYTES: usize = 1024;

/// The list value kind of `value_bits`-bit readings (8, 16 or 32), if lists take that width.
pub const fn value_kind(value_bits: u32) -> Option<ValueKind> {
    match value_bits {
        8 | 16 | 32 => Some(ValueKind::Unsigned {
            blocks: value_bits as usize / 2,
        }),
        _ => None,
    }
}

/// The payload of a compact-list frame carrying `reading_bytes` bytes of `value_bits`-bit readings: the
/// packed list of its `8 reading_bytes / value_bits` values. `None` for a width lists do not take, a byte
/// count that is not a whole number of readings, or more than [`COMPACT_LIST_CHUNK_BYTES`].
pub const fn compact_list_payload_bytes(value_bits: u32, reading_bytes: usize) -> Option<usize> {
    let Some(kind) = value_kind(value_bits) else {
        return None;
    };
    let width = value_bits as usize / 8;
    if reading_bytes > COMPACT_LIST_CHUNK_BYTES || !reading_bytes.is_multiple_of(width) {
        return None;
    }
    Some(list_bytes(
        &PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
        kind,
        reading_bytes / width,
    ))
}
