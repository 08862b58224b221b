//! The queue the application and the sending thread share: the frames not yet acknowledged, in sequence
//! order, and the state of the current connection.

use super::error::UplinkError;
use super::stats::UplinkStats;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::TAG_BYTES;

pub(super) struct Pending {
    pub(super) sequence: u64,
    pub(super) message_first: u64,
    pub(super) bytes: Arc<[u8]>,
    /// The frame's own tag: an acknowledgement's tag covers it, so a record opens for this frame only.
    pub(super) tag: [u8; TAG_BYTES],
    pub(super) transmissions: u32,
    /// Read back from the outbox: an earlier run may have sent it already.
    pub(super) from_outbox: bool,
}

impl Pending {
    /// Whether the server may have seen this frame before (sent by this run or, from the outbox, an earlier
    /// one): a "too old" answer then means "taken or lost before", not a counter that went back.
    pub(super) fn maybe_seen(&self) -> bool {
        self.from_outbox || self.transmissions > 1
    }
}

/// Acknowledgement records ignored (they did not decode or open, or named nothing waiting), and when the
/// last warning about them was printed: at most one line per [`IgnoredRecords::QUIET`].
#[derive(Default)]
pub(super) struct IgnoredRecords {
    pub(super) last_warning: Option<Instant>,
    /// Ignored since the last warning line.
    pub(super) unreported: u64,
}

impl IgnoredRecords {
    pub(super) const QUIET: Duration = Duration::from_secs(5);
}

#[derive(Default)]
pub(super) struct State {
    pub(super) queue: VecDeque<Pending>,
    pub(super) input_closed: bool,
    pub(super) fatal: Option<UplinkError>,
    pub(super) stats: UplinkStats,
    /// The current connection's id, its broken flag and why, and how many queue-front entries it sent.
    pub(super) connection: u64,
    pub(super) broken: Option<String>,
    pub(super) sent_prefix: usize,
    pub(super) acks_on_connection: u64,
    pub(super) connected_at: Option<Instant>,
    pub(super) last_ack: Option<Instant>,
    /// Since when a frame sent on this connection has had its answer go by without opening (or an earlier
    /// frame's): the server answers in order, so it will not answer that frame again on this connection.
    pub(super) skipped_at: Option<Instant>,
    /// Since when the queue's front has waited for an acknowledgement.
    pub(super) waiting_since: Option<Instant>,
    pub(super) ignored: IgnoredRecords,
    /// What the last record that did not open claimed, as advice for the operator (never acted on).
    pub(super) advice: Option<String>,
    /// Frames the sending thread is done with (acknowledged or lost) whose outbox files are still to delete.
    pub(super) done: Vec<u64>,
    /// Per message (its first sequence number) with frames still queued: how many of its frames the server
    /// acknowledged in this run, lost with it if it expires. Bounded by the queue: an entry goes when its
    /// message has no queued frame left.
    pub(super) acknowledged: HashMap<u64, u64>,
    /// The frames (sequence number, tag) of the last messages dropped as expired: an "expired" answer to
    /// one of them (already in flight when the first came) is expected, not an ignored record. At most
    /// [`State::EXPIRED_FRAMES`].
    pub(super) expired_frames: VecDeque<(u64, [u8; TAG_BYTES])>,
}

impl State {
    /// How many frames of expired messages are remembered (the most recent).
    pub(super) const EXPIRED_FRAMES: usize = 1024;

    /// Counts an acknowledgement for `message`, and forgets the message's count when none of its frames is
    /// queued any more (fully acknowledged).
    pub(super) fn acknowledged(&mut self, message: u64) {
        if self.queue.iter().any(|p| p.message_first == message) {
            *self.acknowledged.entry(message).or_insert(0) += 1;
        } else {
            self.acknowledged.remove(&message);
        }
    }

    /// Remembers a frame of a message dropped as expired.
    pub(super) fn remember_expired(&mut self, pending: &Pending) {
        if self.expired_frames.len() >= Self::EXPIRED_FRAMES {
            self.expired_frames.pop_front();
        }
        self.expired_frames.push_back((pending.sequence, pending.tag));
    }

    pub(super) fn remove(&mut self, position: usize) -> Option<Pending> {
        if position < self.sent_prefix {
            self.sent_prefix -= 1;
        }
        let pending = self.queue.remove(position)?;
        self.done.push(pending.sequence);
        Some(pending)
    }

    pub(super) fn progress(&mut self, now: Instant) {
        self.acks_on_connection += 1;
        self.last_ack = Some(now);
        self.waiting_since = (!self.queue.is_empty()).then_some(now);
    }
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) changed: Condvar,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock is a bug; keep going with the data as it is.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
