//! Wire format v2: the frames a device sends and the acknowledgements it gets back. Specified by
//! the modules below, byte by byte; the transport of the paper's §6.1 step 2 ("shares the ciphertext with the cloud
//! server"), made authenticated and replay-safe.
//!
//! ```text
//! magic "TSBC" | version 2 | header (42 bytes, fixed) | payload (fixed by the set and body_bits) | tag (16 bytes)
//! ```
//!
//! Format only: no encryptor lives here ([`crate::encrypt::FrameEncryptor`] seals frames with these
//! pieces).
//! * [`header`]: magic, version, [`FrameHeader`], [`FrameKind`] and the exact sizes ([`frame_bytes`]);
//! * [`writer`]: header, payload and tag into a caller slice, or the payload computed in place;
//! * [`counter`]: per-device sequence numbers ([`FrameCounter`]) and the message a chunk belongs to
//!   ([`OutgoingMessage`]); [`message`]: a byte string cut into chunks; [`reading_format`]: how the
//!   message's bytes read as values;
//! * [`mac`]: the frame MAC and the device's credentials; [`ack`]: the server's acknowledgement records;
//! * [`compact_list`]: frames that carry a tfhe-rs `CompactCiphertextList` (kind 3) and their sizes.

pub mod ack;
pub mod compact_list;
pub mod compact_list_payload;
pub mod counter;
pub mod header;
pub mod mac;
pub mod message;
pub mod reading_format;
pub mod writer;

pub use counter::{FrameCounter, OutgoingMessage};
pub use header::{
    FORMAT_VERSION, FULL_FRAME_BYTES_1024, FrameHeader, FrameKind, HEADER_BYTES, HEADER_FIELDS_BYTES, MAGIC,
    PREFIX_BYTES, SEEDED_FRAME_BYTES_1024, body_bytes, frame_bytes, full_frame_bytes, payload_bytes,
    seeded_frame_bytes,
};
pub use mac::TAG_BYTES;
pub use reading_format::{Reading, ReadingFormat, ReadingsDisplay};
pub use writer::{PayloadWord, write_frame_in_place, write_full_frame, write_seeded_frame};
