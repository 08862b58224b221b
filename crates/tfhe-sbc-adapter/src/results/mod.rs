//! The durable results of the cloud service (`tfhe-sbc-server` on NATS JetStream): where a committed frame
//! is stored, what announces a complete message, and the message ids that make both idempotent. Pure names
//! and records; no NATS client here (`docs/operations.md` has the deployment).
//!
//! * Every frame a worker commits is stored, exactly as the device sent it (the authenticated, seeded GLWE
//!   ciphertext: 7 to 64 bytes per value), in the results KV bucket under
//!   [`frame_key`]`(device, first sequence of its message, chunk index)`. The name is a function of
//!   the frame alone, so two workers holding the same frame write the same value.
//! * A message whose chunks are all committed is announced on [`results_subject`]`(device)` by a
//!   [`MessageCommitted`] record sealed under the device's MAC key ([`MessageCommitted::seal`]), published
//!   without a message id (an id anyone on NATS could publish first would make JetStream drop the real
//!   announcement as its duplicate). A reader returns only records that open under the key store
//!   ([`MessageCommitted::open`]), one per (device, first sequence): a repeat (a worker stopped between
//!   announcing and committing, the repair pass, or a copy anyone published) is returned once, and each
//!   stored frame must be the chunk the record names.
//! * A reader ([`reader::ResultsReader`], feature `nats`) loads the chunks, verifies their MACs and converts
//!   them (extraction, or the device's key switch) into tfhe-rs values on demand: an `FheUint8` is ~65 KB in
//!   memory, its stored frame 64 bytes.

#[cfg(feature = "nats")]
pub mod reader;
mod stored_frame;

pub use stored_frame::{open_stored_frame, seal_stored_frame};

/// The frames stream (subjects `<prefix>.frames.<device>`).
pub const FRAMES_STREAM: &str = "TSBC_FRAMES";
/// The results stream: one [`MessageCommitted`] per committed message (subjects `<prefix>.results.<device>`).
pub const RESULTS_STREAM: &str = "TSBC_RESULTS";
/// The dead-letter stream (subjects `<prefix>.dead.<device>`).
pub const DEAD_STREAM: &str = "TSBC_DEAD";
/// The results KV bucket: every committed frame under [`frame_key`], bound by the service
/// ([`seal_stored_frame`]).
pub const RESULTS_BUCKET: &str = "tsbc-results";
/// The devices KV bucket: each device's commit state (replay window, open messages).
pub const DEVICES_BUCKET: &str = "tsbc-devices";
/// The default subject prefix.
pub const DEFAULT_PREFIX: &str = "tsbc";

/// The results bucket's key of chunk `chunk_index` of the message of `device_id` whose chunk 0 has
/// sequence number `first_sequence`: named by the chunk's own sequence number alone,
/// `frames/<device>/<sequence>`, so that two frames under one number share one name whatever chunk layout
/// each claims (a clone's single frame under a number that was chunk 1 of a stored message finds that
/// chunk there, and is never stored beside it).
pub fn frame_key(device_id: u64, first_sequence: u64, chunk_index: u32) -> String {
    format!(
        "frames/{device_id}/{}",
        first_sequence.wrapping_add(u64::from(chunk_index))
    )
}

/// The subject a device's frames are published on.
pub fn frames_subject(prefix: &str, device_id: u64) -> String {
    format!("{prefix}.frames.{device_id}")
}

/// The subject a device's committed messages are announced on.
pub fn results_subject(prefix: &str, device_id: u64) -> String {
    format!("{prefix}.results.{device_id}")
}

/// The subject a device's refused (dead-letter) frames go to, with a `Tsbc-Reason` header.
pub fn dead_letter_subject(prefix: &str, device_id: u64) -> String {
    format!("{prefix}.dead.{device_id}")
}

/// The JetStream message id of a frame (publish de-duplication): one per (device, key, message, sequence).
pub fn frame_message_id(device_id: u64, key_id: u32, message_id: u32, sequence: u64) -> String {
    format!("f.{device_id}.{key_id}.{message_id}.{sequence}")
}

/// The domain of an announcement's tag: neither a frame's magic ("TSBC") nor a ledger's ("TSLG").
const ANNOUNCEMENT_DOMAIN: &[u8; 16] = b"TSAN announce v2";

/// A message whose every chunk is committed and stored ([`frame_key`] of each chunk).
///
/// ```text
/// device id u64 LE | key id u32 LE | message id u32 LE | first sequence u64 LE | chunk count u32 LE |
/// message length u32 LE | parameter set u16 LE                                           (34 bytes)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MessageCommitted {
    /// The device.
    pub device_id: u64,
    /// The key its frames are under.
    pub key_id: u32,
    /// The device's message id.
    pub message_id: u32,
    /// The sequence number of chunk 0.
    pub first_sequence: u64,
    /// The chunks.
    pub chunk_count: u32,
    /// The message length in bytes.
    pub message_length: u32,
    /// The parameter set id of its frames.
    pub parameter_set: u16,
}

impl MessageCommitted {
    /// The record's length.
    pub const BYTES: usize = 8 + 4 + 4 + 8 + 4 + 4 + 2;

    /// The announcement of the message a chunk with `header` belongs to (every chunk of a message agrees
    /// on these fields, so any of them names it).
    pub fn of_chunk(header: &tfhe_sbc_device::frame::FrameHeader) -> Self {
        Self {
            device_id: header.device_id,
            key_id: header.key_id,
            message_id: header.message_id,
            first_sequence: header.sequence.wrapping_sub(u64::from(header.chunk_index)),
            chunk_count: header.chunk_count,
            message_length: header.message_length,
            parameter_set: header.parameter_set,
        }
    }

    /// The bytes published for this record: the record and a 16-byte tag under the device's MAC key over a
    /// domain prefix and the record (`BYTES + 16` bytes).
    pub fn seal(&self, key: &tfhe_sbc_device::frame::mac::MacKey) -> Vec<u8> {
        let mut sealed = self.encode().to_vec();
        let tag = key.tag(&Self::tagged(&self.encode()));
        sealed.extend_from_slice(&tag);
        sealed
    }

    /// The record in `bytes` ([`MessageCommitted::seal`]'s) if its tag verifies under the key `key_of`
    /// gives for the device it names; `None` for anything else (a record no service key sealed).
    pub fn open<'k>(
        bytes: &[u8],
        key_of: impl FnOnce(u64) -> Option<&'k tfhe_sbc_device::frame::mac::MacKey>,
    ) -> Option<Self> {
        let record_bytes = bytes.get(..Self::BYTES)?;
        let tag = bytes.get(Self::BYTES..)?;
        let record = Self::decode(record_bytes)?;
        key_of(record.device_id)?
            .verify(&Self::tagged(record_bytes), tag)
            .then_some(record)
    }

    fn tagged(record: &[u8]) -> Vec<u8> {
        let mut message = Vec::with_capacity(ANNOUNCEMENT_DOMAIN.len() + record.len());
        message.extend_from_slice(ANNOUNCEMENT_DOMAIN);
        message.extend_from_slice(record);
        message
    }

    /// Whether a stored frame with `header` is chunk `chunk_index` of this message.
    pub fn names(&self, header: &tfhe_sbc_device::frame::FrameHeader, chunk_index: u32) -> bool {
        header.chunk_index == chunk_index && Self::of_chunk(header) == *self
    }

    /// The record's bytes.
    pub fn encode(&self) -> [u8; Self::BYTES] {
        let mut out = [0u8; Self::BYTES];
        out[..8].copy_from_slice(&self.device_id.to_le_bytes());
        out[8..12].copy_from_slice(&self.key_id.to_le_bytes());
        out[12..16].copy_from_slice(&self.message_id.to_le_bytes());
        out[16..24].copy_from_slice(&self.first_sequence.to_le_bytes());
        out[24..28].copy_from_slice(&self.chunk_count.to_le_bytes());
        out[28..32].copy_from_slice(&self.message_length.to_le_bytes());
        out[32..34].copy_from_slice(&self.parameter_set.to_le_bytes());
        out
    }

    /// The record in `bytes`; `None` unless exactly [`MessageCommitted::BYTES`] long with a chunk count of at
    /// least 1.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; Self::BYTES] = bytes.try_into().ok()?;
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let record = Self {
            device_id: u64_at(0),
            key_id: u32_at(8),
            message_id: u32_at(12),
            first_sequence: u64_at(16),
            chunk_count: u32_at(24),
            message_length: u32_at(28),
            parameter_set: u16::from_le_bytes([bytes[32], bytes[33]]),
        };
        (record.chunk_count >= 1).then_some(record)
    }

    /// The results bucket keys of its chunks, in chunk order.
    pub fn frame_keys(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.chunk_count).map(|chunk| frame_key(self.device_id, self.first_sequence, chunk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_names_are_per_frame() {
        let record = MessageCommitted {
            device_id: u64::MAX,
            key_id: 7,
            message_id: 9,
            first_sequence: 1 << 40,
            chunk_count: 3,
            message_length: 300,
            parameter_set: 4,
        };
        assert_eq!(MessageCommitted::decode(&record.encode()), Some(record));
        assert_eq!(MessageCommitted::decode(&record.encode()[1..]), None);
        let mut zero_chunks = record;
        zero_chunks.chunk_count = 0;
        assert_eq!(MessageCommitted::decode(&zero_chunks.encode()), None);
        let names: Vec<_> = record.frame_keys().collect();
        assert_eq!(names[2], format!("frames/{}/{}", u64::MAX, (1u64 << 40) + 2));
        // One name per number, whatever the chunk layout.
        assert_eq!(frame_key(7, 1000, 1), frame_key(7, 1001, 0));
        assert_ne!(frame_message_id(1, 2, 3, 4), frame_message_id(1, 2, 3, 5));
    }
}
