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

mod connection;
mod error;
mod outbox;
mod queue;

use connection::sender;
use queue::{Pending, Shared, State};

pub use error::UplinkError;
pub use outbox::{Outbox, OutboxError, Recovered};

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::ack::frame_tag;
use tfhe_sbc_device::frame::mac::MacKey;
use tfhe_sbc_device::std_io::SealedFrame;

/// How the uplink behaves.
#[derive(Clone, Debug)]
pub struct UplinkConfig {
    /// The server, `host:port` (resolved again on every connection attempt).
    pub address: String,
    /// This device's id: acknowledgement records naming another device are ignored.
    pub device_id: u64,
    /// The device's MAC key, which acknowledgement records must verify under (wiped when the last copy of
    /// the `Arc` drops; its `Debug` is redacted).
    pub mac_key: Arc<MacKey>,
    /// Where unacknowledged frames are kept across crashes; `None`: in memory only.
    pub outbox: Option<Arc<Outbox>>,
    /// Frames sent and not yet acknowledged, at most. Keep it below the server's replay window (128).
    pub max_in_flight: usize,
    /// The most a frame's sequence number may be above the oldest unacknowledged frame's when it is sent.
    /// Keep it below the server's replay window (128), so that the oldest is still inside it when resent; 0
    /// counts as 1 (the oldest alone).
    pub max_sequence_span: u64,
    /// Frames queued (sent or not), at most, before [`Uplink::push`] blocks.
    pub max_queued: usize,
    /// The first wait before reconnecting.
    pub initial_backoff: Duration,
    /// The longest wait before reconnecting.
    pub max_backoff: Duration,
    /// How long to wait for one connection attempt.
    pub connect_timeout: Duration,
    /// How long frames may wait for an acknowledgement on a connection before it counts as broken.
    pub ack_timeout: Duration,
    /// Stop with [`UplinkError::GaveUp`] when frames have waited this long with no acknowledgement at all
    /// (across reconnects); `None`: retry forever.
    pub give_up_after: Option<Duration>,
    /// The persisted counter file, named in [`UplinkError::CounterBehind`].
    pub counter_file: Option<PathBuf>,
}

impl UplinkConfig {
    /// Defaults for `address`, `device_id` and its `mac_key`: no outbox, 32 in flight within a span of 64
    /// sequence numbers, 1024 queued, backoff from 100 ms to 30 s, 10 s per connection attempt, 30 s for
    /// acknowledgements, retry forever.
    pub fn new(address: impl Into<String>, device_id: u64, mac_key: Arc<MacKey>) -> Self {
        Self {
            address: address.into(),
            device_id,
            mac_key,
            outbox: None,
            max_in_flight: 32,
            max_sequence_span: 64,
            max_queued: 1024,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            ack_timeout: Duration::from_secs(30),
            give_up_after: None,
            counter_file: None,
        }
    }
}

/// What the uplink did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UplinkStats {
    /// Frames queued by [`Uplink::push`].
    pub frames: u64,
    /// Frames a previous run left in the outbox, queued by [`Uplink::resume`].
    pub recovered: u64,
    /// Frames the server accepted when they arrived.
    pub accepted: u64,
    /// Frames the server had accepted before (resends after a lost connection).
    pub duplicates: u64,
    /// Frames lost because the server dropped their message before it was complete (expired): those still
    /// queued when the server said so.
    pub expired: u64,
    /// Messages the server dropped as expired before they were complete.
    pub expired_messages: u64,
    /// Frames acknowledged in this run (counted in [`UplinkStats::accepted`] or
    /// [`UplinkStats::duplicates`]) whose message later expired at the server: lost with it.
    pub expired_acknowledged: u64,
    /// Messages lost because one of their frames was refused as too old when sent again.
    pub too_old_messages: u64,
    /// Frames lost because the server refused them as too old when they were sent again (it may have taken
    /// them before a restart of its own, or lost them: it cannot say which).
    pub too_old: u64,
    /// Acknowledgement records ignored: they did not decode or verify, or named nothing waiting.
    pub ignored: u64,
    /// Frame transmissions after the first (resends).
    pub resent: u64,
    /// Bytes written to sockets, length prefixes and resends included.
    pub bytes_sent: u64,
    /// Connections made.
    pub connections: u64,
}

impl UplinkStats {
    /// Frames the server acknowledged (accepted now or before) whose message did not expire afterwards.
    pub fn delivered(&self) -> u64 {
        (self.accepted + self.duplicates).saturating_sub(self.expired_acknowledged)
    }

    /// Frames lost: their messages expired at the server (those acknowledged before included), or they were
    /// too old when sent again.
    pub fn lost(&self) -> u64 {
        self.expired + self.expired_acknowledged + self.too_old
    }

    /// Messages lost: expired at the server, or with a frame too old when sent again.
    pub fn lost_messages(&self) -> u64 {
        self.expired_messages + self.too_old_messages
    }
}

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
