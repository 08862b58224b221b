//! The uplink: a queue of sealed frames and one thread that keeps a TCP connection to the server, sends
//! them in sequence order, and forgets each one only when the server acknowledges it with a record that
//! verifies under the device's MAC key (`tfhe_sbc_device::frame::ack`).
//!
//! * Acknowledgement records are authenticated: each carries a tag under the device's MAC key over the record
//!   and the tag of the frame it answers ([`AckRecord::open`](tfhe_sbc_device::frame::ack::AckRecord::open)).
//!   Only a record that opens for a frame this uplink is waiting for changes anything. A record that does not
//!   decode, does not verify (forged, or unauthenticated because the server could not authenticate the
//!   frame), names another device or a frame not waiting is ignored, with a warning at most every few
//!   seconds: it never stops the uplink and never makes it forget a frame; the frame is sent again after the
//!   acknowledgement timeout, on a new connection.
//! * With an [`Outbox`], every frame is written to disk before it is queued and deleted only when an
//!   authenticated record says the server has it (or that its message is lost), so a crash loses nothing
//!   sealed: [`Uplink::resume`] queues what a previous run left there, ahead of new frames.
//! * At most [`UplinkConfig::max_in_flight`] frames are sent and not yet acknowledged (default 32, below
//!   the server's replay window of 128), so that after a reconnect every frame sent again is still inside
//!   the window: one the server already took comes back [`AckStatus::Duplicate`](tfhe_sbc_device::frame::ack::AckStatus::Duplicate), never "too old".
//! * A frame is sent only while its sequence number is less than [`UplinkConfig::max_sequence_span`]
//!   (default 64, half the window) above the oldest frame not yet acknowledged. The in-flight cap alone
//!   does not bound that span (frames answered leave the count, one whose answer was lost or forged stays
//!   behind): with it, a lost or forged answer costs a resend after the acknowledgement timeout, never a
//!   reading pushed out of the server's window.
//! * When the connection breaks (an error, the server closing it, no acknowledgement for
//!   [`UplinkConfig::ack_timeout`], or the server saying [`AckStatus::Busy`](tfhe_sbc_device::frame::ack::AckStatus::Busy)), the thread reconnects with
//!   exponential backoff and jitter and sends every unacknowledged frame again, in order.
//! * The queue holds at most [`UplinkConfig::max_queued`] frames: while the server is unreachable,
//!   [`Uplink::push`] blocks rather than dropping readings.
//! * A refusal that sending again cannot fix (a frame kind the server does not take, a counter that went
//!   back), when authenticated, stops the uplink with an [`UplinkError`] that says what to fix. A frame whose
//!   message the server dropped as expired is lost, with the rest of its message: counted in
//!   [`UplinkStats::expired`], and the frames of that message the server had acknowledged in this run in
//!   [`UplinkStats::expired_acknowledged`]: lost, never delivered.

mod config;
mod connection;
mod error;
mod outbox;
mod queue;
mod stats;

use connection::sender;
use queue::{Pending, Shared, State};

pub use config::UplinkConfig;
pub use error::UplinkError;
pub use outbox::{Outbox, OutboxError, Recovered};
pub use stats::UplinkStats;

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Instant;
use tfhe_sbc_device::frame::ack::frame_tag;
use tfhe_sbc_device::std_io::SealedFrame;

/// The uplink: [`Uplink::push`] queues frames, a thread sends them, [`Uplink::finish`] waits until every one
/// is acknowledged.
pub struct Uplink {
    shared: Arc<Shared>,
    config: UplinkConfig,
    thread: Option<JoinHandle<()>>,
}

impl Uplink {
    /// Starts the sending thread. It connects when the first frame is queued.
    pub fn start(config: UplinkConfig) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let thread = {
            let (shared, config) = (shared.clone(), config.clone());
            thread::Builder::new()
                .name("uplink".into())
                .spawn(move || sender(&shared, &config))
                .ok()
        };
        if thread.is_none() {
            shared.lock().fatal = Some(UplinkError::Stopped);
        }
        Self { shared, config, thread }
    }

    /// Queues the frames of one message, blocking while the queue is full; with an outbox, writes them there
    /// first. Fails if the uplink has stopped or the outbox cannot be written.
    pub fn push(&self, frames: Vec<SealedFrame>) -> Result<(), UplinkError> {
        let Some(first) = frames.first().map(|f| f.sequence) else {
            return Ok(());
        };
        drop(self.wait_for_room(frames.len())?);
        if let Some(outbox) = &self.config.outbox {
            for frame in &frames {
                outbox
                    .store(frame.sequence, &frame.bytes)
                    .map_err(|e| UplinkError::Outbox(e.to_string()))?;
            }
        }
        let mut state = match self.wait_for_room(frames.len()) {
            Ok(state) => state,
            Err(e) => {
                // Stopped while the files were written: they go out at the next start, unless the server said
                // they never can (below its floor).
                if let UplinkError::CounterBehind { lowest_acceptable, .. } = &e {
                    let below: Vec<u64> = frames
                        .iter()
                        .map(|f| f.sequence)
                        .filter(|s| s < lowest_acceptable)
                        .collect();
                    connection::forget(&self.config, &below);
                }
                return Err(e);
            }
        };
        state.stats.frames += frames.len() as u64;
        enqueue(
            &mut state,
            frames.into_iter().map(|f| (f.sequence, first, f.bytes)),
            false,
        );
        self.shared.changed.notify_all();
        Ok(())
    }

    /// Queues frames a previous run left in the outbox (already on disk), ahead of any new frame: call it
    /// before the first [`Uplink::push`]. Blocks while the queue is full.
    pub fn resume(&self, frames: Vec<Recovered>) -> Result<(), UplinkError> {
        if frames.is_empty() {
            return Ok(());
        }
        let mut state = self.wait_for_room(frames.len())?;
        state.stats.recovered += frames.len() as u64;
        enqueue(
            &mut state,
            frames.into_iter().map(|f| (f.sequence, f.message_first, f.bytes)),
            true,
        );
        self.shared.changed.notify_all();
        Ok(())
    }

    /// Waits until `frames` more fit in the queue (or it is empty), or the uplink stopped.
    fn wait_for_room(&self, frames: usize) -> Result<MutexGuard<'_, State>, UplinkError> {
        let mut state = self.shared.lock();
        while state.fatal.is_none() && !state.queue.is_empty() && state.queue.len() + frames > self.config.max_queued {
            state = self.shared.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        match &state.fatal {
            Some(e) => Err(e.clone()),
            None => Ok(state),
        }
    }

    /// Frames queued and not yet acknowledged.
    pub fn pending(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Waits until every queued frame is acknowledged (or the uplink stops), then closes the connection.
    pub fn finish(mut self) -> Result<UplinkStats, UplinkError> {
        self.shared.lock().input_closed = true;
        self.shared.changed.notify_all();
        let joined = self.thread.take().map(JoinHandle::join);
        let mut state = self.shared.lock();
        if let Some(e) = state.fatal.take() {
            return Err(e);
        }
        match joined {
            Some(Ok(())) => Ok(state.stats.clone()),
            _ => Err(UplinkError::Stopped),
        }
    }
}

/// Appends `(sequence, first sequence of its message, frame)` entries to the queue.
fn enqueue(state: &mut State, frames: impl Iterator<Item = (u64, u64, Vec<u8>)>, from_outbox: bool) {
    if state.queue.is_empty() {
        state.waiting_since = Some(Instant::now());
    }
    state
        .queue
        .extend(frames.map(|(sequence, message_first, bytes)| Pending {
            sequence,
            message_first,
            tag: frame_tag(&bytes).copied().unwrap_or_default(),
            bytes: bytes.into(),
            transmissions: 0,
            from_outbox,
        }));
}

impl Drop for Uplink {
    fn drop(&mut self) {
        // Dropped without `finish` (an error elsewhere): stop the thread without waiting for the server.
        if let Some(thread) = self.thread.take() {
            let mut state = self.shared.lock();
            state.fatal.get_or_insert(UplinkError::Stopped);
            drop(state);
            self.shared.changed.notify_all();
            let _ = thread.join();
        }
    }
}
