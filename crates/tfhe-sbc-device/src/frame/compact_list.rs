//! Compact-list frames ([`FrameKind::CompactList`], frame kind 3): a
//! device's tfhe-rs `CompactCiphertextList` ([`crate::compact_list`]) inside an authenticated v2 frame,
//! so that the cloud knows the sender, refuses replays and acknowledges it under the device's MAC key, as
//! for every other frame. Format only.
//!
//! A message of little-endian readings (`u8`, `u16` or `u32`, one width per message) is cut into chunks of
//! [`COMPACT_LIST_CHUNK_BYTES`] (1,024 bytes: 4,096 two-bit blocks, one bin of 2,048 packed LWEs); each
//! chunk travels as one list of exactly its readings, so the last, shorter chunk makes a shorter list. The
//! header's fields:
//!
//! | field | value |
//! |---|---|
//! | `kind` | 3 |
//! | `parameter_set` | the integer set the list expands into ([`ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048`]) |
//! | `xof_id` | 0 |
//! | `body_bits` | the readings' width: 8, 16 or 32 |
//! | `message_length` | the message's reading bytes, a multiple of the width's bytes |
//!
//! The payload's length follows from the header: [`compact_list_payload_bytes`] of the chunk's reading
//! bytes, `211 + 8 (2048 + 2 b) + 16 b / w` for `b >= 1` reading bytes of `w`-byte readings; 211 for
//! `b = 0` (an empty message: a list with no value and no bin, a 274-byte frame).

use crate::frame::header::{FrameHeader, FrameKind, HEADER_BYTES};
use crate::frame::mac::TAG_BYTES;
use tfhe_sbc_core::parameters::ParameterSetId;

pub use crate::frame::compact_list_payload::{COMPACT_LIST_CHUNK_BYTES, compact_list_payload_bytes, value_kind};

/// The parameter set compact-list frames name: the integer set their lists expand into.
pub const COMPACT_LIST_FRAME_SET: ParameterSetId = ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048;

/// The longest compact-list frame: a whole chunk of `u8` readings (1,024 values, 49,363 bytes of list).
pub const MAX_COMPACT_LIST_FRAME_BYTES: usize = compact_list_frame_bytes(8, COMPACT_LIST_CHUNK_BYTES);

/// The whole compact-list frame (header, list, tag) for `reading_bytes` of `value_bits`-bit readings; 0
/// where [`compact_list_payload_bytes`] is `None`.
pub const fn compact_list_frame_bytes(value_bits: u32, reading_bytes: usize) -> usize {
    match compact_list_payload_bytes(value_bits, reading_bytes) {
        Some(payload) => HEADER_BYTES + payload + TAG_BYTES,
        None => 0,
    }
}

/// The reading bytes chunk `header.chunk_index` of its message carries: [`COMPACT_LIST_CHUNK_BYTES`], the
/// last chunk what `message_length` leaves (0 for a chunk past the end).
pub const fn chunk_reading_bytes(header: &FrameHeader) -> usize {
    let start = header.chunk_index as usize * COMPACT_LIST_CHUNK_BYTES;
    let length = header.message_length as usize;
    let left = length.saturating_sub(start);
    if left < COMPACT_LIST_CHUNK_BYTES {
        left
    } else {
        COMPACT_LIST_CHUNK_BYTES
    }
}

/// Whether `header` is a compact-list frame's.
pub fn is_compact_list(header: &FrameHeader) -> bool {
    header.frame_kind() == Some(FrameKind::CompactList)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_tfhe_rs_list_sizes() {
        // 211 + 8 (2048 + lwes) + 16 values: tfhe-rs's serialized list header, the packed key-sized body, the values.
        assert_eq!(
            compact_list_payload_bytes(8, 1024),
            Some(211 + 8 * (2048 + 2048) + 16 * 1024)
        );
        assert_eq!(
            compact_list_payload_bytes(16, 1024),
            Some(211 + 8 * (2048 + 2048) + 16 * 512)
        );
        assert_eq!(compact_list_payload_bytes(32, 4), Some(211 + 8 * (2048 + 8) + 16));
        assert_eq!(compact_list_payload_bytes(8, 512), Some(32_979));
        assert_eq!(MAX_COMPACT_LIST_FRAME_BYTES, 47 + 49_363 + 16);
        for (bits, bytes) in [(8, 1025), (16, 3), (32, 6), (64, 8), (1, 1), (0, 0)] {
            assert_eq!(compact_list_payload_bytes(bits, bytes), None, "{bits} {bytes}");
            assert_eq!(compact_list_frame_bytes(bits, bytes), 0);
        }
    }

    #[test]
    fn chunks_of_a_message() {
        let mut header = FrameHeader::read(&[0u8; HEADER_BYTES]).unwrap();
        header.message_length = 2500;
        let sizes: [usize; 4] = core::array::from_fn(|i| {
            header.chunk_index = i as u32;
            chunk_reading_bytes(&header)
        });
        assert_eq!(sizes, [1024, 1024, 452, 0]);
    }
}
