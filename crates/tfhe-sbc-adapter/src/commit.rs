//! The commit state machine of one device's frames: a **ledger** of what the service promised the device.
//!
//! An acknowledgement "accepted" is a promise: the frame is durable and, once its message is complete, the
//! message is announced exactly once. The ledger is the record that keeps the promise. It is pure (a value
//! in, a frame's header in, a new value and a decision out), so that every store of it runs the same rules:
//! the JetStream service keeps one ledger per device in a KV entry changed only by compare-and-swap
//! (`tfhe-sbc-server`'s gateway and workers; `docs/operations.md`).
//!
//! A frame goes through two steps, each a transition of the ledger:
//!
//! 1. [`DeviceLedger::admit`], where the acknowledgement is decided: the replay window (RFC 4303 section
//!    3.4.3 with RFC 6479's bitmap, [`ReplayWindow`]) and **every limit** are checked here and only here.
//!    A frame that would exceed a limit is refused with a typed reason the device sees
//!    ([`IntakeError::TooManyOpenMessagesForDevice`] and [`IntakeError::TooManyOpenMessages`] are "busy":
//!    send again later); an admitted frame's chunk is marked *admitted* in its message's entry.
//! 2. [`DeviceLedger::store`], after the frame's bytes are durable where readers find them: the chunk is
//!    marked *stored*. The last chunk stored completes the message, which moves to the *unannounced* list
//!    until [`DeviceLedger::announced`] records its announcement. Storing never refuses an admitted chunk,
//!    whatever the order or delay in which chunks arrive: nothing admitted is ever dropped afterwards.
//!
//! The ledger admits a **frame**, not only a number: each admitted chunk keeps its frame's [`FrameTag`] (in
//! the replay window while the window holds its number, and in its message's entry until it is stored).
//! Another frame under an admitted number (a device whose counter went back: a counter file restored, or a
//! board cloned, possibly sending at once through two gateways) is [`IntakeError::TooOld`] at admission
//! and [`Stored::OtherFrame`] at storage, so the bytes stored under a number are those of the frame whose
//! sender heard "accepted" or "duplicate", and of no other.
//!
//! Invariant (`tests/commit_ledger.rs`, a property test over arbitrary interleavings, duplicates, delays
//! and reorderings of several devices' multi-chunk messages, with a clone of each device sending other
//! frames under the same numbers): every chunk admitted ends in exactly one completed message, once all of
//! its message's chunks are admitted and stored; no message completes twice; every frame answered
//! "accepted" or "duplicate" is the one stored under its number.
//!
//! Bounds: at most `max_incomplete` messages with chunks not yet admitted (the device's own open messages),
//! and at most `max_backlog` messages admitted and not yet stored or announced. Both are enforced by
//! `admit`, with one exception that keeps a device from locking itself out: a message older than every
//! incomplete one is admitted past them (the device sends in order and cannot finish the newer ones
//! first). Such messages lie inside the replay window, so the ledger never holds more than
//! `max_backlog + max_incomplete +` [`WINDOW`] entries, and its encoding has a fixed maximum size
//! ([`DeviceLedger::max_encoded_bytes`]).

use crate::IntakeError;
use crate::error::MessageField;
use crate::replay::{FrameTag, ReplayWindow, WINDOW};
use tfhe_sbc_device::frame::FrameHeader;

/// The ledger's encoding version (4: with its generation; 3, with the frames' tags and no generation, and
/// 2, without either, are still read).
const VERSION: u8 = 4;
/// The version before the generation: read as generation 0.
const VERSION_WITHOUT_GENERATION: u8 = 3;
/// The version before the tags: read as a ledger whose tags are unknown (every frame the admitted one).
const VERSION_WITHOUT_TAGS: u8 = 2;
/// The most chunks a message may have in a ledger (the bitmaps' width).
pub const MAX_CHUNKS: u32 = 64;
/// Bytes of one message entry in the encoding.
const ENTRY_BYTES: usize = 8 + 4 + 8 + 8;

/// The limits `admit` enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LedgerLimits {
    /// Messages of the device with chunks not yet admitted (the device is still sending them).
    pub max_incomplete: usize,
    /// Messages admitted (some chunk) and not yet stored in full or announced: the device's backlog in the
    /// service. A device at this limit is answered "busy" until the workers catch up.
    pub max_backlog: usize,
}

impl Default for LedgerLimits {
    /// 4 incomplete messages (the intake's `max_open_messages_per_device`), a backlog of 64 messages.
    fn default() -> Self {
        Self {
            max_incomplete: 4,
            max_backlog: 64,
        }
    }
}

/// One message with some chunk admitted and not all of them stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerMessage {
    /// The sequence number of chunk 0.
    pub first_sequence: u64,
    /// The message's chunks.
    pub chunk_count: u32,
    /// Bit `i`: chunk `i` admitted (acknowledged "accepted").
    pub admitted: u64,
    /// Bit `i`: chunk `i` stored.
    pub stored: u64,
    /// The tag of each chunk admitted and not yet stored, by chunk index (ascending).
    pub pending: Vec<(u32, FrameTag)>,
}

impl LedgerMessage {
    /// A message whose chunk `chunk` is its first admitted.
    fn first(chunk: ChunkId) -> Self {
        Self {
            first_sequence: chunk.first_sequence,
            chunk_count: chunk.chunk_count,
            admitted: chunk.bit(),
            stored: 0,
            pending: vec![(chunk.chunk_index, chunk.tag)],
        }
    }

    /// The tag chunk `index` was admitted with, while it is not stored.
    fn pending_tag(&self, index: u32) -> Option<FrameTag> {
        self.pending.iter().find(|&&(i, _)| i == index).map(|&(_, tag)| tag)
    }

    fn all(&self) -> u64 {
        if self.chunk_count >= 64 {
            u64::MAX
        } else {
            (1u64 << self.chunk_count) - 1
        }
    }

    /// Whether every chunk is admitted.
    pub fn fully_admitted(&self) -> bool {
        self.admitted == self.all()
    }
}

/// Where a frame's chunk sits in its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkId {
    /// The frame's sequence number.
    pub sequence: u64,
    /// The sequence number of its message's chunk 0.
    pub first_sequence: u64,
    /// The message's chunks.
    pub chunk_count: u32,
    /// This chunk's index.
    pub chunk_index: u32,
    /// Which frame: its tag ([`FrameTag::of_frame`]).
    pub tag: FrameTag,
}

impl ChunkId {
    /// The chunk `header` names, sent as the frame of tag `tag`; `None` when the header's fields cannot
    /// describe a chunk of a ledger message (an index past the count, more than [`MAX_CHUNKS`], or a first
    /// sequence number below zero).
    pub fn of(header: &FrameHeader, tag: FrameTag) -> Option<Self> {
        let valid = header.chunk_count >= 1
            && header.chunk_count <= MAX_CHUNKS
            && header.chunk_index < header.chunk_count
            && header.sequence >= u64::from(header.chunk_index);
        valid.then(|| Self {
            sequence: header.sequence,
            first_sequence: header.sequence - u64::from(header.chunk_index),
            chunk_count: header.chunk_count,
            chunk_index: header.chunk_index,
            tag,
        })
    }

    fn bit(&self) -> u64 {
        1u64 << self.chunk_index
    }
}

/// What [`DeviceLedger::store`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// The chunk is now stored; `completed`: it was its message's last, which is now unannounced.
    Now {
        /// The message is complete.
        completed: bool,
    },
    /// The chunk was stored before (a redelivery).
    Before,
    /// The ledger never admitted this chunk: its frame was never acknowledged "accepted" (the gateway
    /// stopped between publishing it and admitting it). Admit it first, or refuse it.
    NotAdmitted,
    /// The chunk's number is below the window and its message is not in the ledger: stored before, or
    /// never admitted; only the stored bytes can tell.
    Forgotten,
    /// Another frame was admitted under this chunk's number (the device's counter went back): this frame
    /// was never acknowledged "accepted" or "duplicate", and its bytes must not be stored.
    OtherFrame,
}

/// One device's ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLedger {
    /// How many times this ledger was written: each store writes [`DeviceLedger::next_generation`] of the
    /// ledger it read, so along the chain of compare-and-swaps the generation only grows. An older entry
    /// written back (the tag a store puts on an entry shows who wrote it, not when) has a lower generation
    /// than the one a reader saw before, even when its window is the same: readers that remember the highest
    /// generation they saw tell a rolled-back ledger from the current one (`tfhe-sbc-server`'s watermark).
    pub generation: u64,
    /// The replay window: the numbers admitted.
    pub window: ReplayWindow,
    /// Messages with chunks admitted and not all stored, oldest first.
    pub messages: Vec<LedgerMessage>,
    /// Complete messages not yet announced: `(first_sequence, chunk_count)`, oldest first.
    pub unannounced: Vec<(u64, u32)>,
}

impl Default for DeviceLedger {
    fn default() -> Self {
        Self::new()
    }
}

impl DeviceLedger {
    /// A device that has sent nothing.
    pub const fn new() -> Self {
        Self {
            generation: 0,
            window: ReplayWindow::new(0),
            messages: Vec::new(),
            unannounced: Vec::new(),
        }
    }

    /// The ledger as its store writes it: the same state, one generation on (saturating: 2^64 writes).
    pub fn next_generation(&mut self) {
        self.generation = self.generation.saturating_add(1);
    }

    /// The entry of the message whose chunk 0 is `first_sequence`.
    pub fn message(&self, first_sequence: u64) -> Option<&LedgerMessage> {
        self.messages.iter().find(|m| m.first_sequence == first_sequence)
    }

    /// Messages whose chunks the device is still sending.
    pub fn incomplete(&self) -> usize {
        self.messages.iter().filter(|m| !m.fully_admitted()).count()
    }

    /// Messages admitted and not yet stored in full or announced.
    pub fn backlog(&self) -> usize {
        self.messages.len() + self.unannounced.len()
    }

    /// Whether some message is incomplete and every incomplete message starts after `first_sequence`.
    fn older_than_every_incomplete(&self, first_sequence: u64) -> bool {
        let mut incomplete = self.messages.iter().filter(|m| !m.fully_admitted()).peekable();
        incomplete.peek().is_some() && incomplete.all(|m| first_sequence < m.first_sequence)
    }

    /// Step 1: decides the acknowledgement of chunk `chunk` of device `device_id`. `Ok` admits it (the
    /// caller acknowledges "accepted" once this ledger is durable); `Err` leaves the ledger unchanged:
    /// [`IntakeError::Replayed`] (this very frame admitted before: "duplicate"), [`IntakeError::TooOld`]
    /// (below the window, or another frame admitted under the number),
    /// [`IntakeError::MessageMismatch`] (the chunk count differs from its message's), or a limit ("busy").
    pub fn admit(&mut self, device_id: u64, chunk: ChunkId, limits: &LedgerLimits) -> Result<(), IntakeError> {
        self.window.check(device_id, chunk.sequence, chunk.tag)?;
        match self
            .messages
            .iter()
            .position(|m| m.first_sequence == chunk.first_sequence)
        {
            Some(at) => {
                if self.messages[at].chunk_count != chunk.chunk_count {
                    return Err(IntakeError::MessageMismatch {
                        device_id,
                        message_id: 0,
                        field: MessageField::ChunkCount,
                    });
                }
                let message = &mut self.messages[at];
                message.admitted |= chunk.bit();
                let at = message.pending.partition_point(|&(i, _)| i < chunk.chunk_index);
                message.pending.insert(at, (chunk.chunk_index, chunk.tag));
            }
            None if self.older_than_every_incomplete(chunk.first_sequence) => {
                // The device cannot finish its newer messages before this older one (it sends in order,
                // within a span of its oldest unanswered frame): the limits would lock it out for good.
                // Such messages lie inside the replay window, so at most `WINDOW` of them.
                self.messages.push(LedgerMessage::first(chunk));
            }
            None => {
                if self.incomplete() >= limits.max_incomplete {
                    return Err(IntakeError::TooManyOpenMessagesForDevice {
                        device_id,
                        limit: limits.max_incomplete,
                    });
                }
                if self.backlog() >= limits.max_backlog {
                    return Err(IntakeError::TooManyOpenMessages {
                        limit: limits.max_backlog,
                    });
                }
                self.messages.push(LedgerMessage::first(chunk));
            }
        }
        self.window.accept(chunk.sequence, chunk.tag);
        Ok(())
    }

    /// Step 2: records that chunk `chunk`'s frame is durable where readers find it. Never refuses an
    /// admitted frame; refuses another frame under an admitted number ([`Stored::OtherFrame`]), which the
    /// caller must not store.
    pub fn store(&mut self, chunk: ChunkId) -> Stored {
        let other =
            |admitted: Option<FrameTag>| admitted.is_some_and(|tag| tag != chunk.tag && tag != FrameTag::UNKNOWN);
        if other(self.window.tag(chunk.sequence)) {
            return Stored::OtherFrame;
        }
        if let Some(at) = self
            .messages
            .iter()
            .position(|m| m.first_sequence == chunk.first_sequence)
        {
            let message = &mut self.messages[at];
            if message.chunk_count != chunk.chunk_count || message.admitted & chunk.bit() == 0 {
                return Stored::NotAdmitted;
            }
            if message.stored & chunk.bit() != 0 {
                return Stored::Before;
            }
            if other(message.pending_tag(chunk.chunk_index)) {
                return Stored::OtherFrame;
            }
            message.stored |= chunk.bit();
            message.pending.retain(|&(i, _)| i != chunk.chunk_index);
            if message.stored != message.all() {
                return Stored::Now { completed: false };
            }
            let done = self.messages.remove(at);
            self.unannounced.push((done.first_sequence, done.chunk_count));
            return Stored::Now { completed: true };
        }
        match self.window.check(0, chunk.sequence, chunk.tag) {
            // Admitted, and its message no longer in the ledger: stored in full.
            Err(e) if e.is_replay() => Stored::Before,
            // Refused for any other reason: its message's ledger entry is gone, and the number with it.
            Err(_) => Stored::Forgotten,
            Ok(()) => Stored::NotAdmitted,
        }
    }

    /// Records that the complete message starting at `first_sequence` was announced; `false` if it was
    /// not waiting for its announcement.
    pub fn announced(&mut self, first_sequence: u64) -> bool {
        let before = self.unannounced.len();
        self.unannounced.retain(|&(first, _)| first != first_sequence);
        self.unannounced.len() != before
    }

    /// The most bytes [`DeviceLedger::encode`] writes under `limits`: every entry with every chunk
    /// admitted and not stored (a bound no device near its limits reaches: a ledger is a few hundred bytes
    /// and the window's tags).
    pub const fn max_encoded_bytes(limits: &LedgerLimits) -> usize {
        let entries = limits.max_backlog + limits.max_incomplete + WINDOW as usize;
        1 + 8
            + ReplayWindow::BYTES
            + WINDOW as usize * FrameTag::BYTES
            + 2
            + 2
            + entries * (ENTRY_BYTES + MAX_CHUNKS as usize * FrameTag::BYTES)
    }

    /// The ledger's bytes:
    ///
    /// ```text
    /// version 4 | generation u64 LE | window (ReplayWindow::to_bytes) | the window's tags, 8 bytes per number it holds,
    ///   highest first (ReplayWindow::held_tags) | message count u16 LE | unannounced count u16 LE |
    ///   per message: first sequence u64 | chunk count u32 | admitted u64 | stored u64 (LE) |
    ///     the tag of each chunk admitted and not stored, by chunk index (8 bytes each)
    ///   per unannounced message: first sequence u64 | chunk count u32 | 0 u64 | 0 u64
    /// ```
    ///
    /// Version 3 (no generation) is still read as generation 0, and version 2 (no generation, no tags at all)
    /// too: its tags are unknown, every frame the admitted one.
    pub fn encode(&self) -> Vec<u8> {
        let entries = self.messages.len() + self.unannounced.len();
        let mut out =
            Vec::with_capacity(13 + ReplayWindow::BYTES + self.window.held() * FrameTag::BYTES + entries * ENTRY_BYTES);
        out.push(VERSION);
        out.extend_from_slice(&self.generation.to_le_bytes());
        out.extend_from_slice(&self.window.to_bytes());
        for tag in self.window.held_tags() {
            out.extend_from_slice(&tag.0);
        }
        out.extend_from_slice(&(self.messages.len() as u16).to_le_bytes());
        out.extend_from_slice(&(self.unannounced.len() as u16).to_le_bytes());
        let entry = |out: &mut Vec<u8>, first_sequence: u64, chunk_count: u32, admitted: u64, stored: u64| {
            out.extend_from_slice(&first_sequence.to_le_bytes());
            out.extend_from_slice(&chunk_count.to_le_bytes());
            out.extend_from_slice(&admitted.to_le_bytes());
            out.extend_from_slice(&stored.to_le_bytes());
        };
        for m in &self.messages {
            entry(&mut out, m.first_sequence, m.chunk_count, m.admitted, m.stored);
            for (_, tag) in &m.pending {
                out.extend_from_slice(&tag.0);
            }
        }
        for &(first_sequence, chunk_count) in &self.unannounced {
            entry(&mut out, first_sequence, chunk_count, 0, 0);
        }
        out
    }

    /// The ledger in `bytes`, or why they are not one. Never allocates past the input's size.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut input = Reader(bytes);
        let version = input.take::<1>()?[0];
        if ![VERSION, VERSION_WITHOUT_GENERATION, VERSION_WITHOUT_TAGS].contains(&version) {
            return Err(format!(
                "ledger version {version} (this build reads {VERSION_WITHOUT_TAGS} to {VERSION})"
            ));
        }
        let generation = if version == VERSION {
            u64::from_le_bytes(input.take::<8>()?)
        } else {
            0
        };
        let tagged = version != VERSION_WITHOUT_TAGS;
        let window = ReplayWindow::from_bytes(&input.take::<{ ReplayWindow::BYTES }>()?)
            .ok_or("invalid replay window in the ledger")?;
        let window = if tagged {
            let tags = input.tags(window.held())?;
            window.with_tags(&tags).ok_or("ledger: the window's tags")?
        } else {
            window
        };
        let open = usize::from(u16::from_le_bytes(input.take::<2>()?));
        let unannounced = usize::from(u16::from_le_bytes(input.take::<2>()?));
        // Each entry takes ENTRY_BYTES at least: counts past the input are refused before any allocation.
        if (open + unannounced) * ENTRY_BYTES > input.0.len() {
            return Err(format!(
                "ledger: {open} + {unannounced} entries in {} bytes",
                input.0.len()
            ));
        }
        let mut messages = Vec::with_capacity(open);
        let mut done = Vec::with_capacity(unannounced);
        for i in 0..open + unannounced {
            let first_sequence = u64::from_le_bytes(input.take::<8>()?);
            let chunk_count = u32::from_le_bytes(input.take::<4>()?);
            let admitted = u64::from_le_bytes(input.take::<8>()?);
            let stored = u64::from_le_bytes(input.take::<8>()?);
            if chunk_count == 0 || chunk_count > MAX_CHUNKS {
                return Err(format!("ledger: a message of {chunk_count} chunks"));
            }
            if i < open {
                let mut entry = LedgerMessage {
                    first_sequence,
                    chunk_count,
                    admitted,
                    stored,
                    pending: Vec::new(),
                };
                let all = entry.all();
                if admitted & !all != 0 || stored & !admitted != 0 || stored == all {
                    return Err("ledger: inconsistent chunk bitmaps".into());
                }
                let waiting = admitted & !stored;
                let tags = if tagged {
                    input.tags(waiting.count_ones() as usize)?
                } else {
                    vec![FrameTag::UNKNOWN; waiting.count_ones() as usize]
                };
                let indices = (0..chunk_count).filter(|&i| waiting >> i & 1 == 1);
                entry.pending = indices.zip(tags).collect();
                messages.push(entry);
            } else {
                if admitted != 0 || stored != 0 {
                    return Err("ledger: an unannounced message with chunk bitmaps".into());
                }
                done.push((first_sequence, chunk_count));
            }
        }
        if !input.0.is_empty() {
            return Err(format!("ledger: {} bytes after its last entry", input.0.len()));
        }
        Ok(Self {
            generation,
            window,
            messages,
            unannounced: done,
        })
    }
}

/// The unread rest of an encoded ledger.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    /// The next `N` bytes.
    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let (head, rest) = self.0.split_first_chunk::<N>().ok_or("truncated ledger")?;
        self.0 = rest;
        Ok(*head)
    }

    /// The next `count` tags (checked against the input's length before allocating).
    fn tags(&mut self, count: usize) -> Result<Vec<FrameTag>, String> {
        if count * FrameTag::BYTES > self.0.len() {
            return Err("truncated ledger".into());
        }
        (0..count).map(|_| self.take().map(FrameTag)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(first: u64, count: u32, index: u32) -> ChunkId {
        ChunkId {
            sequence: first + u64::from(index),
            first_sequence: first,
            chunk_count: count,
            chunk_index: index,
            tag: FrameTag::of_mac(&(first + u64::from(index) + 1).to_le_bytes()),
        }
    }

    #[test]
    fn a_delayed_chunk_is_stored_after_many_newer_messages() {
        let limits = LedgerLimits {
            max_incomplete: 4,
            max_backlog: 1000,
        };
        let mut ledger = DeviceLedger::new();
        ledger.admit(1, chunk(0, 2, 0), &limits).unwrap();
        ledger.admit(1, chunk(0, 2, 1), &limits).unwrap();
        for first in 2..300 {
            ledger.admit(1, chunk(first, 1, 0), &limits).unwrap();
            assert_eq!(ledger.store(chunk(first, 1, 0)), Stored::Now { completed: true });
        }
        // Chunk 1 of the first message, 298 numbers later: still stored, and completes its message.
        assert_eq!(ledger.store(chunk(0, 2, 1)), Stored::Now { completed: false });
        assert_eq!(ledger.store(chunk(0, 2, 0)), Stored::Now { completed: true });
        assert_eq!(ledger.store(chunk(0, 2, 0)), Stored::Forgotten);
        assert_eq!(ledger.store(chunk(299, 1, 0)), Stored::Before);
        assert!(ledger.announced(0));
        assert!(!ledger.announced(0));
    }

    #[test]
    fn limits_refuse_at_admission_and_leave_the_ledger_unchanged() {
        let limits = LedgerLimits {
            max_incomplete: 1,
            max_backlog: 2,
        };
        let mut ledger = DeviceLedger::new();
        ledger.admit(1, chunk(0, 3, 0), &limits).unwrap();
        let before = ledger.clone();
        assert!(matches!(
            ledger.admit(1, chunk(3, 2, 0), &limits),
            Err(IntakeError::TooManyOpenMessagesForDevice { .. })
        ));
        assert_eq!(ledger, before);
        ledger.admit(1, chunk(0, 3, 1), &limits).unwrap();
        ledger.admit(1, chunk(0, 3, 2), &limits).unwrap();
        ledger.admit(1, chunk(3, 1, 0), &limits).unwrap();
        assert!(matches!(
            ledger.admit(1, chunk(4, 1, 0), &limits),
            Err(IntakeError::TooManyOpenMessages { .. })
        ));
        assert!(matches!(
            ledger.admit(1, chunk(0, 3, 1), &limits),
            Err(IntakeError::Replayed { .. })
        ));
        assert!(matches!(
            ledger.admit(1, chunk(2, 2, 1), &limits),
            Err(IntakeError::MessageMismatch { .. }) | Err(IntakeError::Replayed { .. })
        ));
    }

    #[test]
    fn the_encoding_round_trips_and_refuses_what_no_ledger_writes() {
        let limits = LedgerLimits::default();
        let mut ledger = DeviceLedger::new();
        ledger.admit(9, chunk(5, 3, 2), &limits).unwrap();
        ledger.admit(9, chunk(8, 1, 0), &limits).unwrap();
        ledger.store(chunk(5, 3, 2));
        ledger.store(chunk(8, 1, 0));
        ledger.next_generation();
        ledger.next_generation();
        let bytes = ledger.encode();
        assert!(bytes.len() <= DeviceLedger::max_encoded_bytes(&limits));
        assert_eq!(DeviceLedger::decode(&bytes), Ok(ledger.clone()));
        assert_eq!(DeviceLedger::decode(&bytes).unwrap().generation, 2);
        assert!(DeviceLedger::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(DeviceLedger::decode(&[1]).is_err());
        assert!(DeviceLedger::decode(&[]).is_err());
        let mut bad = bytes.clone();
        // The first entry's stored bitmap names a chunk that was never admitted.
        let window_at = 1 + 8;
        let stored_at = window_at + ReplayWindow::BYTES + ledger.window.held() * FrameTag::BYTES + 4 + 20;
        bad[stored_at] |= 1;
        assert!(DeviceLedger::decode(&bad).is_err());
        // Version 3 (no generation) is read as generation 0, the rest unchanged.
        let mut ungenerated = vec![3];
        ungenerated.extend_from_slice(&bytes[window_at..]);
        let read = DeviceLedger::decode(&ungenerated).unwrap();
        assert_eq!(read.generation, 0);
        assert_eq!(DeviceLedger { generation: 2, ..read }, ledger);
        // Version 2 (no tags) is read with unknown tags: every frame is then the admitted one.
        let mut untagged = vec![2];
        untagged.extend_from_slice(&ledger.window.to_bytes());
        untagged.extend_from_slice(&bytes[window_at + ReplayWindow::BYTES + ledger.window.held() * FrameTag::BYTES..]);
        let read = DeviceLedger::decode(&untagged).unwrap();
        assert_eq!(read.generation, 0);
        let mut other = chunk(8, 1, 0);
        other.tag = FrameTag::of_mac(b"another");
        assert!(matches!(
            read.clone().admit(9, other, &limits),
            Err(IntakeError::Replayed { .. })
        ));
    }

    /// Another frame under an admitted number: too old at admission (with the number after the highest),
    /// refused at storage, whether its number is still in the window or only in its message's entry.
    #[test]
    fn another_frame_under_an_admitted_number_is_neither_admitted_nor_stored() {
        let limits = LedgerLimits {
            max_incomplete: 4,
            max_backlog: 1000,
        };
        let other = |mut c: ChunkId| {
            c.tag = FrameTag::of_mac(b"a clone's frame");
            c
        };
        let mut ledger = DeviceLedger::new();
        ledger.admit(1, chunk(0, 2, 0), &limits).unwrap();
        ledger.admit(1, chunk(2, 1, 0), &limits).unwrap();
        assert_eq!(
            ledger.clone().admit(1, other(chunk(0, 2, 0)), &limits),
            Err(IntakeError::TooOld {
                device_id: 1,
                sequence: 0,
                lowest_acceptable: 3
            })
        );
        assert!(matches!(
            ledger.clone().admit(1, chunk(0, 2, 0), &limits),
            Err(IntakeError::Replayed { .. })
        ));
        let before = ledger.clone();
        assert_eq!(ledger.store(other(chunk(0, 2, 0))), Stored::OtherFrame);
        assert_eq!(ledger.store(other(chunk(2, 1, 0))), Stored::OtherFrame);
        assert_eq!(ledger, before);
        // 300 numbers later the window no longer holds 0; its message's entry still knows the frame.
        for first in 3..300 {
            ledger.admit(1, chunk(first, 1, 0), &limits).unwrap();
            ledger.store(chunk(first, 1, 0));
        }
        assert_eq!(ledger.window.tag(0), None);
        assert_eq!(ledger.store(other(chunk(0, 2, 0))), Stored::OtherFrame);
        assert_eq!(ledger.store(chunk(0, 2, 0)), Stored::Now { completed: false });
        assert_eq!(DeviceLedger::decode(&ledger.encode()), Ok(ledger.clone()));
        // Stored: a resend of the stored frame is "before", another frame still "other".
        assert_eq!(ledger.store(chunk(0, 2, 0)), Stored::Before);
        assert_eq!(ledger.store(other(chunk(299, 1, 0))), Stored::OtherFrame);
        assert_eq!(ledger.store(chunk(299, 1, 0)), Stored::Before);
    }
}
