//! One device's commit state, the value of its key in the devices KV bucket: the replay window
//! (`tfhe_sbc_adapter::replay`, RFC 4303 / RFC 6479) and the messages with chunks committed but not all of
//! them. Workers change it only by compare-and-swap on the entry's revision: that update is the commit point
//! of a frame, so two workers holding the same frame commit it once.
//!
//! ```text
//! version 1 | window (33 bytes, ReplayWindow::to_bytes) | open count u8 |
//!   per open message: first sequence u64 LE | chunk count u32 LE | chunks committed (bitmap u64 LE)
//! ```

use tfhe_sbc_adapter::replay::ReplayWindow;

/// The value's format version.
const VERSION: u8 = 1;
/// The most chunks a message may have (the bitmap's width).
pub const MAX_CHUNKS: u32 = 64;

/// A message with some chunks committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenMessage {
    /// The sequence number of chunk 0.
    pub first_sequence: u64,
    /// The chunks.
    pub chunk_count: u32,
    /// Bit `i`: chunk `i` committed.
    pub committed: u64,
}

/// What committing one chunk did to its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkCommit {
    /// Chunks are still missing.
    Pending,
    /// It was the last missing chunk: the message is complete (and no longer open).
    Completed,
}

/// One device's commit state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceState {
    /// The replay window.
    pub window: ReplayWindow,
    /// Messages with chunks missing, oldest first.
    pub open: Vec<OpenMessage>,
}

impl DeviceState {
    /// A device that has committed nothing.
    pub fn new() -> Self {
        Self {
            window: ReplayWindow::new(0),
            open: Vec::new(),
        }
    }

    /// Whether the message whose chunk 0 is `first_sequence` is open.
    pub fn is_open(&self, first_sequence: u64) -> bool {
        self.open.iter().any(|m| m.first_sequence == first_sequence)
    }

    /// Records chunk `chunk_index` of the `chunk_count`-chunk message starting at `first_sequence`, whose
    /// sequence number the window has just accepted. At most `max_open` messages stay open: the oldest
    /// beyond that are abandoned and returned (their device moved on without finishing them).
    pub fn commit_chunk(
        &mut self,
        first_sequence: u64,
        chunk_count: u32,
        chunk_index: u32,
        max_open: usize,
    ) -> (ChunkCommit, Vec<OpenMessage>) {
        let all = if chunk_count >= 64 {
            u64::MAX
        } else {
            (1u64 << chunk_count) - 1
        };
        let bit = 1u64 << chunk_index.min(63);
        let position = match self.open.iter().position(|m| m.first_sequence == first_sequence) {
            Some(position) => position,
            None => {
                self.open.push(OpenMessage {
                    first_sequence,
                    chunk_count,
                    committed: 0,
                });
                self.open.len() - 1
            }
        };
        self.open[position].committed |= bit;
        let commit = if self.open[position].committed & all == all {
            self.open.remove(position);
            ChunkCommit::Completed
        } else {
            ChunkCommit::Pending
        };
        let excess = self.open.len().saturating_sub(max_open);
        (commit, self.open.drain(..excess).collect())
    }

    /// The value's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(2 + ReplayWindow::BYTES + self.open.len() * 20);
        out.push(VERSION);
        out.extend_from_slice(&self.window.to_bytes());
        out.push(u8::try_from(self.open.len()).unwrap_or(u8::MAX));
        for message in self.open.iter().take(usize::from(u8::MAX)) {
            out.extend_from_slice(&message.first_sequence.to_le_bytes());
            out.extend_from_slice(&message.chunk_count.to_le_bytes());
            out.extend_from_slice(&message.committed.to_le_bytes());
        }
        out
    }

    /// The state in `bytes`, or why they are not one.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let (&version, rest) = bytes.split_first().ok_or("empty device state")?;
        if version != VERSION {
            return Err(format!("device state version {version} (this worker reads {VERSION})"));
        }
        let window_bytes: &[u8; ReplayWindow::BYTES] = rest
            .get(..ReplayWindow::BYTES)
            .and_then(|w| w.try_into().ok())
            .ok_or("truncated device state")?;
        let window = ReplayWindow::from_bytes(window_bytes).ok_or("invalid replay window in the device state")?;
        let rest = &rest[ReplayWindow::BYTES..];
        let (&count, entries) = rest.split_first().ok_or("truncated device state")?;
        if entries.len() != usize::from(count) * 20 {
            return Err(format!(
                "device state: {count} open messages in {} bytes",
                entries.len()
            ));
        }
        let open = entries
            .chunks_exact(20)
            .map(|e| OpenMessage {
                first_sequence: u64::from_le_bytes(e[..8].try_into().expect("8 bytes")),
                chunk_count: u32::from_le_bytes(e[8..12].try_into().expect("4 bytes")),
                committed: u64::from_le_bytes(e[12..].try_into().expect("8 bytes")),
            })
            .collect();
        Ok(Self { window, open })
    }
}

impl Default for DeviceState {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_complete_messages_and_the_oldest_are_abandoned() {
        let mut state = DeviceState::new();
        assert_eq!(state.commit_chunk(10, 3, 1, 2), (ChunkCommit::Pending, vec![]));
        assert_eq!(state.commit_chunk(10, 3, 0, 2), (ChunkCommit::Pending, vec![]));
        assert_eq!(state.commit_chunk(20, 1, 0, 2), (ChunkCommit::Completed, vec![]));
        assert!(state.is_open(10) && !state.is_open(20));
        assert_eq!(state.commit_chunk(30, 2, 0, 2).0, ChunkCommit::Pending);
        let (_, abandoned) = state.commit_chunk(40, 2, 1, 2);
        assert_eq!(abandoned.len(), 1);
        assert_eq!(abandoned[0].first_sequence, 10);
        assert_eq!(state.commit_chunk(30, 2, 1, 2).0, ChunkCommit::Completed);
        state.window.accept(41);
        assert_eq!(DeviceState::decode(&state.encode()), Ok(state.clone()));
        let bytes = state.encode();
        assert!(DeviceState::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(DeviceState::decode(&[2]).is_err());
        let (commit, _) = DeviceState::new().commit_chunk(0, 64, 63, 4);
        assert_eq!(commit, ChunkCommit::Pending);
    }
}
