//! The queue the application and the sending thread share: the frames not yet acknowledged, in sequence
//! order, and the state of the current connection.

use super::UplinkStats;
use super::error::UplinkError;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

pub(super) struct Pending {
    pub(super) sequence: u64,
    pub(super) message_first: u64,
    pub(super) bytes: Arc<[u8]>,
    pub(super) transmissions: u32,
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
    /// Since when the queue's front has waited for an acknowledgement.
    pub(super) waiting_since: Option<Instant>,
}

impl State {
    pub(super) fn remove(&mut self, position: usize) -> Option<Pending> {
        if position < self.sent_prefix {
            self.sent_prefix -= 1;
        }
        self.queue.remove(position)
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
