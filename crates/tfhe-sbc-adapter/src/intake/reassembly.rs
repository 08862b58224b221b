//! Reassembly of multi-chunk messages, by `(device_id, message_id)`.
//!
//! Rules (the wire format's reassembly rules):
//! * a one-chunk message completes at once and never touches the open-message table;
//! * every chunk of a message agrees on `chunk_count`, `message_length`, `parameter_set`,
//!   `reading_format` and its first sequence number (`sequence - chunk_index`). A chunk that disagrees is rejected and the open message is
//!   dropped ([`IntakeError::MessageMismatch`]): two messages are never merged;
//! * a chunk index that already arrived is rejected ([`IntakeError::DuplicateChunk`]; through
//!   [`Intake`](super::Intake) the replay window catches it first, since the index and the first
//!   sequence number fix the sequence number);
//! * opening a message needs room under both limits, per device and in total; chunk counts are bounded by
//!   `max_chunks_per_message` when the header is parsed;
//! * a message must be complete within `max_message_age` of its first chunk's arrival. Expired messages are
//!   dropped by [`Reassembler::evict_expired`] (one [`IntakeError::MessageExpired`] each), or when one of
//!   their chunks arrives late (that chunk gets the `MessageExpired` error);
//! * an expired message stays expired: every later chunk of it gets [`IntakeError::MessageExpired`] too
//!   (acknowledged "expired", authenticated), never opens a new entry and is never acknowledged "accepted",
//!   so a device whose link was down longer than the maximum age learns that the whole message is lost
//!   instead of having its last chunks taken into a message that can never complete. A later chunk is one
//!   with the expired message's device, message id and first sequence number (a message id that comes back
//!   with another first sequence number, after a reboot, is a new message).
//!
//! # Memory
//!
//! What expired is remembered per device, for the last [`EXPIRED_REMEMBERED_PER_DEVICE`] expired messages
//! (message id, first sequence number, chunk count, chunks received: 24 bytes each), the oldest forgotten
//! first; entries exist only for registered devices whose authenticated frames opened a message, so the
//! memory is at most `devices * 16 * 24` bytes plus the map's overhead, and nothing a frame says sizes it. A
//! chunk of a message forgotten that way (17 newer messages of the same device expired meanwhile) opens a
//! new entry again, which expires in turn.

use super::config::IntakeConfig;
use super::frame::{Frame, Message, Received};
use crate::error::{IntakeError, MessageField};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::FrameHeader;

#[derive(Debug)]
struct OpenMessage {
    first_sequence: u64,
    chunk_count: u32,
    message_length: u32,
    parameter_set: u16,
    reading_format: u8,
    key_id: u32,
    started: Instant,
    received: u32,
    chunks: Vec<Option<Frame>>,
}

impl OpenMessage {
    fn mismatch(&self, header: &FrameHeader) -> Option<MessageField> {
        if header.chunk_count != self.chunk_count {
            Some(MessageField::ChunkCount)
        } else if header.message_length != self.message_length {
            Some(MessageField::MessageLength)
        } else if header.parameter_set != self.parameter_set {
            Some(MessageField::ParameterSet)
        } else if header.reading_format != self.reading_format {
            Some(MessageField::ReadingFormat)
        } else if first_sequence(header) != self.first_sequence {
            Some(MessageField::FirstSequence)
        } else {
            None
        }
    }

    fn expired(&self, now: Instant, max_age: Duration) -> bool {
        now.saturating_duration_since(self.started) > max_age
    }
}

fn first_sequence(header: &FrameHeader) -> u64 {
    header.sequence.wrapping_sub(u64::from(header.chunk_index))
}

/// How many expired messages are remembered per device (the most recent ones).
pub const EXPIRED_REMEMBERED_PER_DEVICE: usize = 16;

/// A message that expired, remembered so that its late chunks are answered "expired" too.
#[derive(Clone, Copy, Debug)]
struct ExpiredMessage {
    message_id: u32,
    first_sequence: u64,
    chunk_count: u32,
    received: u32,
}

/// The open (incomplete) messages and the limits on them.
#[derive(Debug)]
pub struct Reassembler {
    max_per_device: usize,
    max_total: usize,
    max_age: Duration,
    open: HashMap<(u64, u32), OpenMessage>,
    per_device: HashMap<u64, usize>,
    /// The last [`EXPIRED_REMEMBERED_PER_DEVICE`] expired messages of each device, oldest first.
    expired: HashMap<u64, VecDeque<ExpiredMessage>>,
}

impl Reassembler {
    /// An empty reassembler with `config`'s limits.
    pub fn new(config: &IntakeConfig) -> Self {
        Self {
            max_per_device: config.max_open_messages_per_device,
            max_total: config.max_open_messages,
            max_age: config.max_message_age,
            open: HashMap::new(),
            per_device: HashMap::new(),
            expired: HashMap::new(),
        }
    }

    /// The number of open messages.
    pub fn open_messages(&self) -> usize {
        self.open.len()
    }

    /// Whether message `message_id` of `device_id` is open (some of its chunks held).
    pub fn is_open(&self, device_id: u64, message_id: u32) -> bool {
        self.open.contains_key(&(device_id, message_id))
    }

    fn remove(&mut self, key: (u64, u32)) -> Option<OpenMessage> {
        let message = self.open.remove(&key)?;
        if let Entry::Occupied(mut count) = self.per_device.entry(key.0) {
            *count.get_mut() -= 1;
            if *count.get() == 0 {
                count.remove();
            }
        }
        Some(message)
    }

    /// Drops the open message `key`, which expired, and remembers it; its [`IntakeError::MessageExpired`].
    fn expire(&mut self, key: (u64, u32)) -> Option<IntakeError> {
        let message = self.remove(key)?;
        let remembered = self
            .expired
            .entry(key.0)
            .or_insert_with(|| VecDeque::with_capacity(EXPIRED_REMEMBERED_PER_DEVICE));
        if remembered.len() >= EXPIRED_REMEMBERED_PER_DEVICE {
            remembered.pop_front();
        }
        remembered.push_back(ExpiredMessage {
            message_id: key.1,
            first_sequence: message.first_sequence,
            chunk_count: message.chunk_count,
            received: message.received,
        });
        Some(IntakeError::MessageExpired {
            device_id: key.0,
            message_id: key.1,
            received: message.received,
            chunk_count: message.chunk_count,
        })
    }

    /// The error for a chunk of a message that already expired, if `header` names one.
    fn already_expired(&self, header: &FrameHeader) -> Option<IntakeError> {
        let first = first_sequence(header);
        let expired = self
            .expired
            .get(&header.device_id)?
            .iter()
            .find(|m| m.message_id == header.message_id && m.first_sequence == first)?;
        Some(IntakeError::MessageExpired {
            device_id: header.device_id,
            message_id: expired.message_id,
            received: expired.received,
            chunk_count: expired.chunk_count,
        })
    }

    /// The number of expired messages remembered (at most [`EXPIRED_REMEMBERED_PER_DEVICE`] per device).
    pub fn expired_remembered(&self) -> usize {
        self.expired.values().map(VecDeque::len).sum()
    }

    /// Whether a chunk with `header` can be inserted at `now`. Allocates nothing but the memory of an
    /// expired message; may drop the chunk's open message (expired, or mismatched). A chunk of a message
    /// that expired earlier gets [`IntakeError::MessageExpired`] again.
    pub fn admit(&mut self, header: &FrameHeader, now: Instant) -> Result<(), IntakeError> {
        if header.chunk_count == 1 {
            return Ok(());
        }
        if let Some(error) = self.already_expired(header) {
            return Err(error);
        }
        let key = (header.device_id, header.message_id);
        if let Some(open) = self.open.get(&key) {
            if open.expired(now, self.max_age) {
                return Err(self.expire(key).unwrap_or_else(|| unreachable!("the message is open")));
            }
            if let Some(field) = open.mismatch(header) {
                self.remove(key);
                return Err(IntakeError::MessageMismatch {
                    device_id: key.0,
                    message_id: key.1,
                    field,
                });
            }
            let slot = open.chunks.get(header.chunk_index as usize);
            if slot.is_none_or(Option::is_some) {
                return Err(IntakeError::DuplicateChunk {
                    device_id: key.0,
                    message_id: key.1,
                    chunk_index: header.chunk_index,
                });
            }
            return Ok(());
        }
        if self.per_device.get(&key.0).copied().unwrap_or(0) >= self.max_per_device {
            return Err(IntakeError::TooManyOpenMessagesForDevice {
                device_id: key.0,
                limit: self.max_per_device,
            });
        }
        if self.open.len() >= self.max_total {
            return Err(IntakeError::TooManyOpenMessages { limit: self.max_total });
        }
        Ok(())
    }

    /// Adds an authenticated frame to its message ([`Reassembler::admit`] first); returns the message when
    /// this frame completes it.
    pub fn insert(&mut self, frame: Frame, now: Instant) -> Result<Received, IntakeError> {
        self.admit(&frame.header, now)?;
        let header = frame.header;
        if header.chunk_count == 1 {
            return Ok(Received::Complete(Message {
                device_id: header.device_id,
                key_id: header.key_id,
                message_id: header.message_id,
                first_sequence: first_sequence(&header),
                message_length: header.message_length,
                frames: vec![frame],
            }));
        }
        let key = (header.device_id, header.message_id);
        let open = match self.open.entry(key) {
            Entry::Occupied(open) => open.into_mut(),
            Entry::Vacant(slot) => {
                *self.per_device.entry(key.0).or_insert(0) += 1;
                slot.insert(OpenMessage {
                    first_sequence: first_sequence(&header),
                    chunk_count: header.chunk_count,
                    message_length: header.message_length,
                    parameter_set: header.parameter_set,
                    reading_format: header.reading_format,
                    key_id: header.key_id,
                    started: now,
                    received: 0,
                    // Bounded by max_chunks_per_message, checked when the header was parsed.
                    chunks: (0..header.chunk_count).map(|_| None).collect(),
                })
            }
        };
        open.chunks[header.chunk_index as usize] = Some(frame);
        open.received += 1;
        if open.received < open.chunk_count {
            return Ok(Received::Pending {
                device_id: key.0,
                message_id: key.1,
                chunk_index: header.chunk_index,
                sequence: header.sequence,
                received: open.received,
                chunk_count: open.chunk_count,
            });
        }
        let open = self
            .remove(key)
            .unwrap_or_else(|| unreachable!("the message was just updated"));
        Ok(Received::Complete(Message {
            device_id: key.0,
            key_id: open.key_id,
            message_id: key.1,
            first_sequence: open.first_sequence,
            message_length: open.message_length,
            frames: open.chunks.into_iter().flatten().collect(),
        }))
    }

    /// Drops every message older than the maximum age at `now` (and remembers it, so that its late chunks
    /// are refused): one [`IntakeError::MessageExpired`] each, ordered by device and message id.
    pub fn evict_expired(&mut self, now: Instant) -> Vec<IntakeError> {
        let mut expired: Vec<(u64, u32)> = self
            .open
            .iter()
            .filter(|(_, m)| m.expired(now, self.max_age))
            .map(|(k, _)| *k)
            .collect();
        expired.sort_unstable();
        expired.into_iter().filter_map(|key| self.expire(key)).collect()
    }
}
