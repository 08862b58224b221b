//! Frame identity: per-device sequence numbers and the message a chunk belongs to.

use crate::error::{Error, Result};
use crate::frame::message::Chunk;
use crate::frame::reading_format::ReadingFormat;

/// The device's frame counter: hands out strictly increasing sequence numbers in `[next, end)`.
///
/// Sequence numbers must never repeat for a device, across reboots too: the server drops a repeated or
/// too-old number as a replay. Either
/// * persist a high-water mark: at boot read `h`, write `h + B` to flash, run [`FrameCounter::with_limit`]`(h,
///   h + B)`; when [`Error::SequenceExhausted`] comes, write `end + B` and call
///   [`FrameCounter::extend_limit`] (one flash write per `B` frames), or
/// * keep a persistent boot counter and use [`FrameCounter::from_boot_counter`]: the upper 32 bits are the
///   boot count, the lower 32 count frames within the boot.
///
/// Not `Clone`: two copies would hand out the same numbers.
#[derive(Debug, PartialEq, Eq)]
pub struct FrameCounter {
    next: u64,
    end: u64,
}

impl FrameCounter {
    /// A counter starting at `next`, limited only by `u64::MAX`.
    pub const fn new(next: u64) -> Self {
        Self { next, end: u64::MAX }
    }

    /// A counter handing out `[next, end)`.
    pub const fn with_limit(next: u64, end: u64) -> Self {
        Self { next, end }
    }

    /// A counter for boot number `boot`: `[boot * 2^32, (boot + 1) * 2^32)`.
    pub const fn from_boot_counter(boot: u32) -> Self {
        let start = (boot as u64) << 32;
        Self {
            next: start,
            end: start | 0xFFFF_FFFF,
        }
    }

    /// The next sequence number this counter hands out.
    pub const fn next_sequence(&self) -> u64 {
        self.next
    }

    /// How many sequence numbers are left before [`Error::SequenceExhausted`].
    pub const fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.next)
    }

    /// Raises the limit to `end` (after persisting it); a lower `end` is ignored.
    pub fn extend_limit(&mut self, end: u64) {
        self.end = self.end.max(end);
    }

    /// Reserves the sequence numbers of a message of `message_length` bytes cut into chunks of
    /// `chunk_bytes` (`N / 8`) bytes, as [`crate::frame::message::chunks`] cuts it: chunk `i` gets sequence
    /// `first + i`, and the message id is the low 32 bits of `first`.
    pub fn begin_message(&mut self, message_length: usize, chunk_bytes: usize) -> Result<OutgoingMessage> {
        if chunk_bytes == 0 {
            return Err(Error::WrongLength { expected: 1, found: 0 });
        }
        let length = u32::try_from(message_length).map_err(|_| Error::MessageTooLarge)?;
        let chunk_count =
            u32::try_from(message_length.div_ceil(chunk_bytes).max(1)).map_err(|_| Error::MessageTooLarge)?;
        if self.remaining() < u64::from(chunk_count) {
            return Err(Error::SequenceExhausted);
        }
        let first = self.next;
        self.next += u64::from(chunk_count);
        Ok(OutgoingMessage {
            message_id: first as u32,
            first_sequence: first,
            chunk_count,
            chunk_bytes,
            message_length: length,
            reading_format: ReadingFormat::Bytes,
        })
    }
}

/// The sequence numbers and message id reserved for one message ([`FrameCounter::begin_message`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutgoingMessage {
    message_id: u32,
    first_sequence: u64,
    chunk_count: u32,
    chunk_bytes: usize,
    message_length: u32,
    reading_format: ReadingFormat,
}

impl OutgoingMessage {
    /// The message id every chunk carries.
    pub const fn message_id(&self) -> u32 {
        self.message_id
    }

    /// The sequence number of chunk 0.
    pub const fn first_sequence(&self) -> u64 {
        self.first_sequence
    }

    /// The number of chunks.
    pub const fn chunk_count(&self) -> u32 {
        self.chunk_count
    }

    /// The message length in bytes.
    pub const fn message_length(&self) -> u32 {
        self.message_length
    }

    /// How the message's bytes read as values ([`ReadingFormat::Bytes`] unless
    /// [`Self::with_reading_format`] said otherwise); every chunk's header carries it.
    pub const fn reading_format(&self) -> ReadingFormat {
        self.reading_format
    }

    /// The same message, its bytes declared to be `format` readings (the server shows them so). Fails with
    /// [`Error::PartialReading`] unless the message is a whole number of readings.
    pub const fn with_reading_format(self, format: ReadingFormat) -> Result<Self> {
        if !format.whole_readings(self.message_length as usize) {
            return Err(Error::PartialReading {
                reading_bytes: format.reading_bytes(),
                found: self.message_length as usize,
            });
        }
        Ok(Self {
            reading_format: format,
            ..self
        })
    }

    /// The sequence number of chunk `index` of `count`, if that chunk is one of this message's.
    pub(crate) fn sequence_of(&self, index: u32, count: u32) -> Result<u64> {
        if count != self.chunk_count || index >= count {
            return Err(Error::ChunkNotInMessage { index, count });
        }
        Ok(self.first_sequence + u64::from(index))
    }

    /// Checks that `chunk` is chunk `chunk.index` of this message, bytes included.
    pub(crate) fn check_chunk(&self, chunk: &Chunk<'_>) -> Result<u64> {
        let sequence = self.sequence_of(chunk.index, chunk.count)?;
        let start = chunk.index as usize * self.chunk_bytes;
        let expected = (self.message_length as usize)
            .saturating_sub(start)
            .min(self.chunk_bytes);
        if chunk.bytes.len() != expected {
            return Err(Error::ChunkNotInMessage {
                index: chunk.index,
                count: chunk.count,
            });
        }
        Ok(sequence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_reserves_consecutive_numbers() {
        let mut counter = FrameCounter::with_limit(10, 14);
        let m = counter.begin_message(300, 128).unwrap();
        assert_eq!((m.first_sequence(), m.chunk_count(), m.message_id()), (10, 3, 10));
        assert_eq!(counter.next_sequence(), 13);
        assert_eq!(counter.begin_message(300, 128), Err(Error::SequenceExhausted));
        let empty = counter.begin_message(0, 128).unwrap();
        assert_eq!((empty.first_sequence(), empty.chunk_count()), (13, 1));
        assert_eq!(counter.remaining(), 0);
        counter.extend_limit(100);
        counter.extend_limit(50);
        assert_eq!(counter.remaining(), 86);
        let boot = FrameCounter::from_boot_counter(3);
        assert_eq!((boot.next_sequence(), boot.remaining()), (3 << 32, 0xFFFF_FFFF));
        let last = FrameCounter::from_boot_counter(u32::MAX);
        assert_eq!(last.remaining(), 0xFFFF_FFFF);
        assert_eq!(m.sequence_of(2, 3), Ok(12));
        assert!(m.sequence_of(3, 3).is_err() && m.sequence_of(0, 4).is_err());
        assert!(FrameCounter::new(0).begin_message(1, 0).is_err());
    }
}
