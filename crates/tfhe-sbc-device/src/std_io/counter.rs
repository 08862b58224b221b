//! The frame counter persisted in a file, so that a restart never reuses a sequence number.

use crate::error::Error;
use crate::frame::{FrameCounter, OutgoingMessage};
use crate::std_io::files::{FileError, io_error, write_atomic};
use std::borrow::ToOwned;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A frame counter whose high-water mark lives in a file, so that a restart never reuses a sequence number
/// ([`FrameCounter`]'s first strategy).
///
/// The file holds one decimal number: the lowest sequence number no run has reserved. Opening it reserves a
/// block of `block` numbers by writing the block's end first (write to a temporary file, `fsync`, rename,
/// `fsync` the directory), then hands the block out; running out of it reserves the next block the same
/// way. A crash loses at most the rest of a block, never reuses a number.
///
/// Two processes never share one counter file: opening takes an exclusive lock (`flock`) on `<path>.lock`,
/// held until the counter is dropped (or the process dies), and a second [`PersistentCounter::open`] gets
/// [`FileError::CounterInUse`].
#[derive(Debug)]
pub struct PersistentCounter {
    /// The locked `<path>.lock`, held for the counter's life.
    _lock: fs::File,
    path: PathBuf,
    counter: FrameCounter,
    block: u64,
}

impl PersistentCounter {
    /// The default block: one file write per 65,536 frames.
    pub const DEFAULT_BLOCK: u64 = 1 << 16;

    /// Opens (or creates, starting from 0) the counter file at `path` and reserves the first block.
    pub fn open(path: &Path, block: u64) -> Result<Self, FileError> {
        let lock = lock_file(path)?;
        let start = match fs::read_to_string(path) {
            Ok(text) => text
                .trim()
                .parse::<u64>()
                .map_err(|_| FileError::BadCounter { path: path.to_owned() })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(io_error("read counter file", path)(e)),
        };
        let exhausted = || FileError::CounterExhausted { path: path.to_owned() };
        let end = start.checked_add(block).filter(|_| block > 0).ok_or_else(exhausted)?;
        persist(path, end)?;
        Ok(Self {
            _lock: lock,
            path: path.to_owned(),
            counter: FrameCounter::with_limit(start, end),
            block,
        })
    }

    /// The next sequence number this counter hands out.
    pub fn next_sequence(&self) -> u64 {
        self.counter.next_sequence()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reserves the sequence numbers of a message of `message_length` bytes in chunks of `chunk_bytes`
    /// ([`FrameCounter::begin_message`]), reserving (and persisting) the next block first if needed.
    pub fn begin_message(&mut self, message_length: usize, chunk_bytes: usize) -> Result<OutgoingMessage, FileError> {
        match self.counter.begin_message(message_length, chunk_bytes) {
            Err(Error::SequenceExhausted) => {}
            other => return other.map_err(FileError::Message),
        }
        let next = self.counter.next_sequence();
        // At least the message's own chunks, also when the block is smaller than a message.
        let chunks = u64::try_from(message_length.div_ceil(chunk_bytes.max(1)).max(1)).unwrap_or(u64::MAX);
        let end = next
            .checked_add(self.counter.remaining())
            .and_then(|end| end.checked_add(self.block.max(chunks)))
            .ok_or_else(|| FileError::CounterExhausted {
                path: self.path.clone(),
            })?;
        persist(&self.path, end)?;
        self.counter.extend_limit(end);
        self.counter
            .begin_message(message_length, chunk_bytes)
            .map_err(|_| FileError::CounterExhausted {
                path: self.path.clone(),
            })
    }
}

/// Writes `value` into `path` atomically and durably ([`write_atomic`]).
fn persist(path: &Path, value: u64) -> Result<(), FileError> {
    write_atomic(path, std::format!("{value}\n").as_bytes(), 0o600).map_err(io_error("write counter file", path))
}

/// Opens (or creates) `<path>.lock` and locks it exclusively, without waiting.
fn lock_file(path: &Path) -> Result<fs::File, FileError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io_error("create the lock file of", path))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(FileError::CounterInUse { path: path.to_owned() }),
        Err(fs::TryLockError::Error(e)) => Err(io_error("lock", &lock_path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block smaller than a message's chunks reserves what the message needs (it reported the counter
    /// exhausted and asked for a new device id).
    #[test]
    fn a_message_longer_than_a_block_reserves_its_chunks() {
        let dir = std::env::temp_dir().join(std::format!("tsbc-counter-block-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("7.counter");
        let mut counter = PersistentCounter::open(&path, 1).unwrap();
        let message = counter.begin_message(1024, 128).unwrap();
        assert_eq!(message.chunk_count(), 8);
        assert_eq!(counter.next_sequence(), 8);
        // The 1 number left of the first block and 8 more: 0..9 reserved.
        assert_eq!(fs::read_to_string(&path).unwrap().trim(), "9");
        assert_eq!(counter.begin_message(10, 128).unwrap().first_sequence(), 8);
        assert_eq!(fs::read_to_string(&path).unwrap().trim(), "9");
        assert_eq!(counter.begin_message(10, 128).unwrap().first_sequence(), 9);
        assert_eq!(fs::read_to_string(&path).unwrap().trim(), "10");
        drop(counter);
        fs::remove_dir_all(&dir).unwrap();
    }
}
