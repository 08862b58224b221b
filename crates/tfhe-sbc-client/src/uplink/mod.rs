//! The uplink: a queue of sealed frames and one thread that keeps a TCP connection to the server, sends
//! them in sequence order, and forgets each one only when the server acknowledges it
//! (`tfhe_sbc_device::frame::ack`).
//!
//! * At most [`UplinkConfig::max_in_flight`] frames are sent and not yet acknowledged (default 32, below
//!   the server's replay window of 128), so that after a reconnect every frame sent again is still inside
//!   the window: one the server already took comes back [`AckStatus::Duplicate`](tfhe_sbc_device::frame::ack::AckStatus::Duplicate), never "too old".
//! * When the connection breaks (an error, the server closing it, no acknowledgement for
//!   [`UplinkConfig::ack_timeout`], or the server saying [`AckStatus::Busy`](tfhe_sbc_device::frame::ack::AckStatus::Busy)), the thread reconnects with
//!   exponential backoff and jitter and sends every unacknowledged frame again, in order.
//! * The queue holds at most [`UplinkConfig::max_queued`] frames: while the server is unreachable,
//!   [`Uplink::push`] blocks rather than dropping readings.
//! * A refusal that sending again cannot fix (unknown device, wrong credentials, a counter that went back)
//!   stops the uplink with an [`UplinkError`] that says what to fix. A frame whose message the server
//!   dropped as expired is dropped with the rest of its message, with a warning.

mod connection;
mod error;
mod queue;

use connection::sender;
use queue::{Pending, Shared, State};

pub use error::UplinkError;

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use tfhe_sbc_device::std_io::SealedFrame;

/// How the uplink behaves.
#[derive(Clone, Debug)]
pub struct UplinkConfig {
    /// The server, `host:port` (resolved again on every connection attempt).
    pub address: String,
    /// This device's id: acknowledgements for another device are a protocol error.
    pub device_id: u64,
    /// Frames sent and not yet acknowledged, at most. Keep it below the server's replay window (128).
    pub max_in_flight: usize,
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
    /// Defaults for `address` and `device_id`: 32 in flight, 1024 queued, backoff from 100 ms to 30 s,
    /// 10 s per connection attempt, 30 s for acknowledgements, retry forever.
    pub fn new(address: impl Into<String>, device_id: u64) -> Self {
        Self {
            address: address.into(),
            device_id,
            max_in_flight: 32,
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
    /// Frames the server accepted when they arrived.
    pub accepted: u64,
    /// Frames the server had accepted before (resends after a lost connection).
    pub duplicates: u64,
    /// Frames dropped because the server dropped their message (expired).
    pub dropped: u64,
    /// Frame transmissions after the first (resends).
    pub resent: u64,
    /// Bytes written to sockets, length prefixes and resends included.
    pub bytes_sent: u64,
    /// Connections made.
    pub connections: u64,
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

    /// Queues the frames of one message, blocking while the queue is full. Fails if the uplink has stopped.
    pub fn push(&self, frames: Vec<SealedFrame>) -> Result<(), UplinkError> {
        let Some(first) = frames.first().map(|f| f.sequence) else {
            return Ok(());
        };
        let mut state = self.shared.lock();
        while state.fatal.is_none()
            && !state.queue.is_empty()
            && state.queue.len() + frames.len() > self.config.max_queued
        {
            state = self.shared.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        if let Some(e) = &state.fatal {
            return Err(e.clone());
        }
        if state.queue.is_empty() {
            state.waiting_since = Some(Instant::now());
        }
        state.stats.frames += frames.len() as u64;
        state.queue.extend(frames.into_iter().map(|f| Pending {
            sequence: f.sequence,
            message_first: first,
            bytes: f.bytes.into(),
            transmissions: 0,
        }));
        self.shared.changed.notify_all();
        Ok(())
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
