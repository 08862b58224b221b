//! The uplink: a queue of sealed frames and one thread that keeps a TCP connection to the server, sends
//! them in sequence order, and forgets each one only when the server acknowledges it
//! (`tfhe_sbc_device::frame::ack`).
//!
//! * At most [`UplinkConfig::max_in_flight`] frames are sent and not yet acknowledged (default 32, below
//!   the server's replay window of 128), so that after a reconnect every frame sent again is still inside
//!   the window: one the server already took comes back [`AckStatus::Duplicate`], never "too old".
//! * When the connection breaks (an error, the server closing it, no acknowledgement for
//!   [`UplinkConfig::ack_timeout`], or the server saying [`AckStatus::Busy`]), the thread reconnects with
//!   exponential backoff and jitter and sends every unacknowledged frame again, in order.
//! * The queue holds at most [`UplinkConfig::max_queued`] frames: while the server is unreachable,
//!   [`Uplink::push`] blocks rather than dropping readings.
//! * A refusal that sending again cannot fix (unknown device, wrong credentials, a counter that went back)
//!   stops the uplink with an [`UplinkError`] that says what to fix. A frame whose message the server
//!   dropped as expired is dropped with the rest of its message, with a warning.

use crate::{debug, info, warn};
use std::collections::VecDeque;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::ack::{Ack, AckStatus};
use tfhe_sbc_device::std_io::{SealedFrame, read_ack, write_frame};

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

/// Why the uplink stopped: something sending again cannot fix. Each message says what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UplinkError {
    /// The server refused a frame for good.
    Refused {
        /// The server.
        address: String,
        /// Its answer.
        ack: Ack,
    },
    /// The server refused a new frame as too old: the counter restarted below what it has seen.
    CounterBehind {
        /// The server.
        address: String,
        /// The device.
        device_id: u64,
        /// The refused sequence number.
        sequence: u64,
        /// The lowest sequence number the server accepts.
        lowest_acceptable: u64,
        /// The counter file, if any.
        counter_file: Option<PathBuf>,
    },
    /// No acknowledgement for too long.
    GaveUp {
        /// The server.
        address: String,
        /// How long frames waited.
        waited: Duration,
        /// Frames not acknowledged.
        pending: usize,
        /// The last connection problem.
        last_problem: String,
    },
    /// The server answered for another device.
    Protocol {
        /// The server.
        address: String,
        /// What was wrong.
        problem: String,
    },
    /// The uplink thread stopped unexpectedly.
    Stopped,
}

impl fmt::Display for UplinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused { address, ack } => {
                let (id, seq) = (ack.device_id, ack.sequence);
                match ack.status {
                    AckStatus::UnknownDevice => write!(
                        f,
                        "the server at {address} does not know device {id}: issue it with `tfhe-sbc-keys issue` and \
                         restart the server with the new key_store.bin, or give this client the device's own \
                         credential file"
                    ),
                    AckStatus::BadCredentials => write!(
                        f,
                        "the server at {address} refused device {id}'s frames (bad MAC or key id): the credential \
                         file and the server's key_store.bin come from different provisioning runs; use the pair \
                         from one key set"
                    ),
                    AckStatus::NotAllowed => write!(
                        f,
                        "the server at {address} does not take this frame kind or parameter set from device {id} \
                         (sequence {seq}): the credential file's key mode does not match the key store's record; \
                         issue the device again"
                    ),
                    _ => write!(
                        f,
                        "the server at {address} could not read device {id}'s frame {seq} ({:?}): client and server \
                         must both speak wire format v2 with the same parameter sets; update the older one",
                        ack.status
                    ),
                }
            }
            Self::CounterBehind {
                address,
                device_id,
                sequence,
                lowest_acceptable,
                counter_file,
            } => {
                write!(
                    f,
                    "the server at {address} refused sequence {sequence} of device {device_id} as too old (it accepts \
                     {lowest_acceptable} and above): the frame counter went back"
                )?;
                match counter_file {
                    Some(path) => write!(f, "; write {lowest_acceptable} into {} and start again", path.display()),
                    None => write!(f, "; start the counter at {lowest_acceptable} or above"),
                }
            }
            Self::GaveUp {
                address,
                waited,
                pending,
                last_problem,
            } => write!(
                f,
                "no acknowledgement from {address} for {:.0?} with {pending} frames waiting (last problem: \
                 {last_problem}): is tfhe-sbc-server running there and reachable? (--give-up-after sets the wait)",
                waited
            ),
            Self::Protocol { address, problem } => write!(
                f,
                "{address} broke the acknowledgement protocol ({problem}): is it a tfhe-sbc server?"
            ),
            Self::Stopped => f.write_str("the uplink thread stopped unexpectedly"),
        }
    }
}

impl std::error::Error for UplinkError {}

struct Pending {
    sequence: u64,
    message_first: u64,
    bytes: Arc<[u8]>,
    transmissions: u32,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Pending>,
    input_closed: bool,
    fatal: Option<UplinkError>,
    stats: UplinkStats,
    /// The current connection's id, its broken flag and why, and how many queue-front entries it sent.
    connection: u64,
    broken: Option<String>,
    sent_prefix: usize,
    acks_on_connection: u64,
    connected_at: Option<Instant>,
    last_ack: Option<Instant>,
    /// Since when the queue's front has waited for an acknowledgement.
    waiting_since: Option<Instant>,
}

impl State {
    fn remove(&mut self, position: usize) -> Option<Pending> {
        if position < self.sent_prefix {
            self.sent_prefix -= 1;
        }
        self.queue.remove(position)
    }

    fn progress(&mut self, now: Instant) {
        self.acks_on_connection += 1;
        self.last_ack = Some(now);
        self.waiting_since = (!self.queue.is_empty()).then_some(now);
    }
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock is a bug; keep going with the data as it is.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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

/// A random factor in [0.75, 1.25) for the backoff, from the standard library's per-process random keys.
fn jitter() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    0.75 + (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64 / 2.0
}

fn connect(config: &UplinkConfig) -> io::Result<TcpStream> {
    let addresses: Vec<SocketAddr> = config.address.to_socket_addrs()?.collect();
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the address resolves to nothing");
    for address in addresses {
        match TcpStream::connect_timeout(&address, config.connect_timeout) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The sending thread: connect, run a connection until it breaks, back off, again; until the input is
/// closed and the queue is empty, or a fatal error.
fn sender(shared: &Shared, config: &UplinkConfig) {
    let mut backoff = config.initial_backoff;
    loop {
        {
            let mut state = shared.lock();
            while state.queue.is_empty() && !state.input_closed && state.fatal.is_none() {
                state = shared.changed.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            if state.fatal.is_some() || state.queue.is_empty() {
                return;
            }
        }
        let last_problem = match connect(config) {
            Ok(stream) => {
                let (done, problem, acked) = connection(shared, config, stream);
                if done {
                    return;
                }
                if acked {
                    backoff = config.initial_backoff;
                }
                problem
            }
            Err(e) => format!("cannot connect: {e}"),
        };
        let wait = backoff.mul_f64(jitter());
        {
            let mut state = shared.lock();
            if state.fatal.is_some() {
                return;
            }
            let waited = state.waiting_since.map(|t| t.elapsed()).unwrap_or_default();
            if let Some(limit) = config.give_up_after
                && !state.queue.is_empty()
                && waited >= limit
            {
                state.fatal = Some(UplinkError::GaveUp {
                    address: config.address.clone(),
                    waited,
                    pending: state.queue.len(),
                    last_problem,
                });
                shared.changed.notify_all();
                return;
            }
            info!(
                "{}: {last_problem}; {} frames waiting, reconnecting in {wait:.1?}",
                config.address,
                state.queue.len()
            );
            // Sleep, but wake up at once if the uplink is stopped.
            let _ = shared
                .changed
                .wait_timeout_while(state, wait, |s| s.fatal.is_none())
                .map_err(|p| p.into_inner());
        }
        backoff = (backoff * 2).min(config.max_backoff);
    }
}

enum Next {
    Send(Arc<[u8]>, u64),
    Done,
    Broken(String),
}

/// One connection: sends queued frames (at most `max_in_flight` unacknowledged) while a reader thread takes
/// the acknowledgements. Returns (everything sent and acknowledged and the input closed, why it ended, whether
/// any acknowledgement arrived).
fn connection(shared: &Shared, config: &UplinkConfig, mut stream: TcpStream) -> (bool, String, bool) {
    let _ = stream.set_nodelay(true);
    let id = {
        let mut state = shared.lock();
        state.connection += 1;
        state.broken = None;
        state.sent_prefix = 0;
        state.acks_on_connection = 0;
        state.last_ack = None;
        state.connected_at = Some(Instant::now());
        state.stats.connections += 1;
        state.connection
    };
    info!("connected to {} (connection {id})", config.address);
    let reader = match stream.try_clone() {
        Ok(read_half) => thread::scope(|scope| {
            let reader = scope.spawn(|| read_acks(shared, config, read_half, id));
            let outcome = send_loop(shared, config, &mut stream);
            // Unblocks the reader, whatever state the peer is in.
            let _ = stream.shutdown(Shutdown::Both);
            let _ = reader.join();
            outcome
        }),
        Err(e) => Next::Broken(format!("cannot use the connection: {e}")),
    };
    let acked = shared.lock().acks_on_connection > 0;
    match reader {
        Next::Done => (true, String::new(), acked),
        Next::Broken(why) => (false, why, acked),
        Next::Send(..) => (false, String::new(), acked),
    }
}

fn send_loop(shared: &Shared, config: &UplinkConfig, stream: &mut TcpStream) -> Next {
    loop {
        let next = {
            let mut state = shared.lock();
            loop {
                if state.fatal.is_some() {
                    break Next::Broken("stopped".into());
                }
                if let Some(why) = state.broken.take() {
                    break Next::Broken(why);
                }
                if state.input_closed && state.queue.is_empty() {
                    break Next::Done;
                }
                let in_flight = state.sent_prefix;
                if in_flight < state.queue.len() && in_flight < config.max_in_flight {
                    let entry = &mut state.queue[in_flight];
                    entry.transmissions += 1;
                    let (bytes, sequence, resend) = (entry.bytes.clone(), entry.sequence, entry.transmissions > 1);
                    state.sent_prefix += 1;
                    if resend {
                        state.stats.resent += 1;
                    }
                    break Next::Send(bytes, sequence);
                }
                // Nothing to send: wait for an acknowledgement, a new frame, or the ack timeout.
                let since = state.last_ack.into_iter().chain(state.connected_at).max();
                if in_flight > 0
                    && let Some(since) = since
                    && since.elapsed() >= config.ack_timeout
                {
                    break Next::Broken(format!("no acknowledgement for {:.0?}", config.ack_timeout));
                }
                let timeout = if in_flight > 0 {
                    config.ack_timeout.min(Duration::from_millis(500))
                } else {
                    Duration::from_secs(3600)
                };
                state = shared
                    .changed
                    .wait_timeout(state, timeout)
                    .map(|(s, _)| s)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
        };
        match next {
            Next::Send(bytes, sequence) => {
                if let Err(e) = write_frame(stream, &bytes) {
                    return Next::Broken(format!("sending failed: {e}"));
                }
                debug!("sent frame {sequence} ({} bytes)", bytes.len());
                shared.lock().stats.bytes_sent += 4 + bytes.len() as u64;
            }
            other => return other,
        }
    }
}

/// Reads acknowledgements until the connection ends; marks it broken then.
fn read_acks(shared: &Shared, config: &UplinkConfig, mut stream: TcpStream, id: u64) {
    loop {
        let ack = read_ack(&mut stream);
        let mut state = shared.lock();
        if state.connection != id {
            return;
        }
        let stop = match ack {
            Ok(Some(ack)) => handle_ack(&mut state, config, ack),
            Ok(None) => Some("the server closed the connection".to_owned()),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                state.fatal = Some(UplinkError::Protocol {
                    address: config.address.clone(),
                    problem: e.to_string(),
                });
                Some(e.to_string())
            }
            Err(e) => Some(format!("connection lost: {e}")),
        };
        if let Some(why) = stop {
            state.broken.get_or_insert(why);
            shared.changed.notify_all();
            return;
        }
        shared.changed.notify_all();
    }
}

/// Applies one acknowledgement; returns why the connection must end, if it must.
fn handle_ack(state: &mut State, config: &UplinkConfig, ack: Ack) -> Option<String> {
    let address = || config.address.clone();
    if ack.device_id != config.device_id {
        state.fatal = Some(UplinkError::Protocol {
            address: address(),
            problem: format!(
                "an acknowledgement for device {}, this is device {}",
                ack.device_id, config.device_id
            ),
        });
        return Some("protocol error".into());
    }
    let Some(position) = state.queue.iter().position(|p| p.sequence == ack.sequence) else {
        debug!("acknowledgement for sequence {} that is not waiting", ack.sequence);
        return None;
    };
    let now = Instant::now();
    match ack.status {
        AckStatus::Accepted | AckStatus::Duplicate => {
            state.remove(position);
            if ack.status == AckStatus::Accepted {
                state.stats.accepted += 1;
            } else {
                state.stats.duplicates += 1;
            }
            debug!("frame {} acknowledged ({:?})", ack.sequence, ack.status);
            state.progress(now);
            None
        }
        AckStatus::Busy => Some("the server is busy".into()),
        AckStatus::TooOld if state.queue[position].transmissions <= 1 => {
            state.fatal = Some(UplinkError::CounterBehind {
                address: address(),
                device_id: ack.device_id,
                sequence: ack.sequence,
                lowest_acceptable: ack.detail,
                counter_file: config.counter_file.clone(),
            });
            Some("counter behind".into())
        }
        AckStatus::TooOld | AckStatus::Expired => {
            let message = state.queue[position].message_first;
            let mut dropped = 0;
            while let Some(p) = state.queue.iter().position(|p| p.message_first == message) {
                state.remove(p);
                dropped += 1;
            }
            state.stats.dropped += dropped;
            warn!(
                "the server dropped the message of frame {} ({:?}): {dropped} frames of it dropped here too",
                ack.sequence, ack.status
            );
            state.progress(now);
            None
        }
        _ => {
            state.fatal = Some(UplinkError::Refused {
                address: address(),
                ack,
            });
            Some("refused".into())
        }
    }
}
