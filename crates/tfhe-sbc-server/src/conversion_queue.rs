//! The single-process server's conversion queue: the inputs the intake completed (messages, integer frames,
//! compact lists) waiting for the tfhe-rs thread. It is bounded, and fair between devices:
//!
//! * its inputs' bytes stay under [`QueueLimits::max_bytes`] (plus one input: the intake checks for room
//!   before it accepts a frame, and the frame may complete one input);
//! * one device has at most [`QueueLimits::per_device`] inputs waiting;
//! * the tfhe-rs thread takes the devices in turn (round robin), so one device's backlog (compact lists
//!   take minutes each to expand) delays another device's input by at most one conversion per device
//!   waiting.
//!
//! The intake answers "busy" to a frame for which there is no room ([`ConversionQueue::has_room`]), before
//! accepting it: a frame acknowledged "accepted" always has its place, and is converted.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The queue's bounds.
#[derive(Clone, Copy, Debug)]
pub struct QueueLimits {
    /// The most bytes of inputs waiting.
    pub max_bytes: usize,
    /// The most inputs of one device waiting.
    pub per_device: usize,
}

impl Default for QueueLimits {
    /// 64 MiB, 8 inputs per device.
    fn default() -> Self {
        Self {
            max_bytes: 64 << 20,
            per_device: 8,
        }
    }
}

/// Why a device's frame has no room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    /// The queue holds its bytes bound.
    Bytes,
    /// The device has its share of inputs waiting.
    DeviceShare,
}

struct State<T> {
    /// Each device's inputs waiting, oldest first, with their sizes.
    waiting: BTreeMap<u64, VecDeque<(T, usize)>>,
    /// The devices with inputs waiting, in turn.
    turns: VecDeque<u64>,
    bytes: usize,
    closed: bool,
}

/// The bounded, per-device fair queue between the intake thread and the tfhe-rs thread.
pub struct ConversionQueue<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
    limits: QueueLimits,
}

impl<T> ConversionQueue<T> {
    /// An empty queue within `limits`.
    pub fn new(limits: QueueLimits) -> Self {
        Self {
            state: Mutex::new(State {
                waiting: BTreeMap::new(),
                turns: VecDeque::new(),
                bytes: 0,
                closed: false,
            }),
            ready: Condvar::new(),
            limits,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a frame of `device` may be accepted: its share and the bytes bound not reached, counting
    /// `pending` inputs of the device and `pending_bytes` not pushed yet.
    pub fn has_room(&self, device: u64, pending: usize, pending_bytes: usize) -> Result<(), Full> {
        let state = self.lock();
        if state.waiting.get(&device).map_or(0, VecDeque::len) + pending >= self.limits.per_device.max(1) {
            return Err(Full::DeviceShare);
        }
        if state.bytes + pending_bytes >= self.limits.max_bytes {
            return Err(Full::Bytes);
        }
        Ok(())
    }

    /// Adds `input` of `device` (of `bytes` bytes); never refuses (room was checked before its frame was
    /// accepted).
    pub fn push(&self, device: u64, input: T, bytes: usize) {
        let mut state = self.lock();
        let queue = state.waiting.entry(device).or_default();
        queue.push_back((input, bytes));
        if queue.len() == 1 {
            state.turns.push_back(device);
        }
        state.bytes += bytes;
        drop(state);
        self.ready.notify_one();
    }

    /// The next input, the devices taking turns; waits for one. `None` once closed and empty.
    pub fn pop(&self) -> Option<T> {
        let mut state = self.lock();
        loop {
            if let Some(device) = state.turns.pop_front() {
                let queue = state.waiting.get_mut(&device)?;
                let (input, bytes) = queue.pop_front()?;
                if queue.is_empty() {
                    state.waiting.remove(&device);
                } else {
                    state.turns.push_back(device);
                }
                state.bytes -= bytes;
                return Some(input);
            }
            if state.closed {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// No more inputs: [`ConversionQueue::pop`] returns what is left, then `None`.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// Inputs and bytes waiting.
    #[cfg(test)]
    pub fn len_and_bytes(&self) -> (usize, usize) {
        let state = self.lock();
        (state.waiting.values().map(VecDeque::len).sum(), state.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::{ConversionQueue, Full, QueueLimits};

    /// A device's share and the bytes bound say "no room"; devices take turns; what was pushed comes out.
    #[test]
    fn shares_bytes_and_turns() {
        let queue = ConversionQueue::new(QueueLimits {
            max_bytes: 100,
            per_device: 2,
        });
        queue.push(1, "a1", 10);
        queue.push(1, "a2", 10);
        assert_eq!(queue.has_room(1, 0, 0), Err(Full::DeviceShare));
        assert_eq!(queue.has_room(2, 0, 0), Ok(()));
        assert_eq!(queue.has_room(2, 2, 0), Err(Full::DeviceShare), "pending inputs count");
        queue.push(2, "b1", 90);
        assert_eq!(queue.has_room(3, 0, 0), Err(Full::Bytes));
        assert_eq!(queue.len_and_bytes(), (3, 110));
        assert_eq!(queue.pop(), Some("a1"));
        assert_eq!(
            queue.pop(),
            Some("b1"),
            "device 2's turn before device 1's second input"
        );
        assert_eq!(queue.has_room(3, 0, 0), Ok(()));
        queue.close();
        assert_eq!(queue.pop(), Some("a2"));
        assert_eq!(queue.pop(), None);
    }
}
