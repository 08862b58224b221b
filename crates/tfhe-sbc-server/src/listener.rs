//! The bounded listener both servers accept device connections with (the single process and the JetStream
//! gateway), after tokio's mini-redis server: a semaphore of connections, an idle timeout and a frame
//! timeout, plus two rules of its own so that idle sockets cannot lock devices out:
//!
//! * at most [`ListenerLimits::max_connections`] connections at once, and at most
//!   [`ListenerLimits::max_per_peer`] from one peer ([`PeerKey`]: an IPv4 address, or an IPv6 /64, the
//!   prefix one subscriber is given (RFC 6177), so that a host cannot multiply its cap by its interface
//!   identifiers; an IPv4-mapped IPv6 address counts as its IPv4 address). 0 means no per-peer cap (a fleet
//!   behind one NAT or load balancer address);
//! * a connection the server is waiting on (for its next frame, for the rest of a frame, or to take its
//!   answer) is *evictable*: when a new connection would exceed either cap, an evictable connection (of the
//!   same peer for the per-peer cap, of any peer for the global cap) is closed and the new one is served at
//!   once: the one idle between frames that has waited longest, and only when none is idle, the one inside
//!   a frame (or its answer) that has waited longest (the frame timeout bounds those anyway). A connection is
//!   never closed while the server works on its frame. When no connection is evictable, a new one waits for
//!   a slot (in the kernel's backlog, as in mini-redis);
//! * a connection silent for [`ListenerLimits::idle_timeout`] is closed, and so is one that takes longer
//!   than [`ListenerLimits::frame_timeout`] to deliver a frame whose length it sent, or to take its answer;
//! * a connection is closed after its first unauthenticated answer (a frame whose MAC does not verify, or
//!   refused from its header): its sender has shown no key, and it must not keep a slot by pipelining such
//!   frames (each one costs a MAC check) without reading their answers.
//!
//! Frames are the device protocol's (`docs/wire-format.md`): a little-endian `u32` length, then the frame.
//! Nothing is reserved for an announced length: the frame's fixed-size header is read first (on the stack)
//! and checked (length within bounds, a registered device), and the body is read as it arrives, so a socket
//! that announces a large frame and stalls holds only the bytes it sent.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::intake::header_of;
use tfhe_sbc_adapter::stream::DEFAULT_MAX_FRAME_BYTES;
use tfhe_sbc_device::frame::ack::{ACK_BYTES, ACK_FIELDS_BYTES, Ack, AckRecord, AckStatus};
use tfhe_sbc_device::frame::{FrameHeader, HEADER_BYTES};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tracing::debug;

/// The listener's bounds.
#[derive(Clone, Debug)]
pub struct ListenerLimits {
    /// Connections served at once.
    pub max_connections: usize,
    /// Connections served at once from one peer ([`PeerKey`]); 0: no per-peer cap.
    pub max_per_peer: usize,
    /// Silence (no frame begun) after which a connection is closed.
    pub idle_timeout: Duration,
    /// The most time a frame may take to arrive once its length is read, and an answer to be written.
    pub frame_timeout: Duration,
}

impl Default for ListenerLimits {
    /// 1024 connections, 16 per address, 120 s idle, 10 s per frame.
    fn default() -> Self {
        Self {
            max_connections: 1024,
            max_per_peer: 16,
            idle_timeout: Duration::from_secs(120),
            frame_timeout: Duration::from_secs(10),
        }
    }
}

/// Why a connection ended.
#[derive(Debug)]
pub enum Ended {
    /// The device closed it, or the socket failed.
    Closed(std::io::Error),
    /// Silent for the idle timeout.
    Idle,
    /// A frame, or the answer's write, took longer than the frame timeout.
    FrameTooSlow,
    /// Closed for a new connection while the server was waiting on it.
    Evicted,
    /// A frame refused from its length or header (answered with an unauthenticated record): the stream is
    /// out of step.
    Refused(AckStatus),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Closed(e) => write!(f, "closed: {e}"),
            Self::Idle => f.write_str("idle"),
            Self::FrameTooSlow => f.write_str("frame too slow"),
            Self::Evicted => f.write_str("closed for a new connection (the longest waiting)"),
            Self::Refused(status) => write!(f, "refused: {status:?}"),
        }
    }
}

/// Whom the per-peer cap counts a connection against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerKey {
    /// An IPv4 address (also written as an IPv4-mapped IPv6 address, `::ffff:a.b.c.d`, by a dual-stack
    /// listener).
    V4(Ipv4Addr),
    /// The /64 prefix of an IPv6 address (its upper 64 bits): one subscriber's network (RFC 6177), whose
    /// host can take any of its 2^64 interface identifiers.
    V6Prefix(u64),
}

impl PeerKey {
    /// The key of a connection from `ip`.
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Self::V4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Self::V4(v4),
                None => Self::V6Prefix((v6.to_bits() >> 64) as u64),
            },
        }
    }
}

/// What the server waits on an evictable connection for; evicted in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wait {
    /// Its next frame (idle between frames): evicted first.
    Idle,
    /// The rest of a frame whose length it sent, or that it takes its answer: bounded by the frame timeout,
    /// evicted only when no connection is idle.
    InFrame,
}

/// One open connection in the registry.
struct Slot {
    peer: PeerKey,
    /// What and since when the server has been waiting on the device for (`None`: working on its frame).
    waiting: Option<(Wait, Instant)>,
    close: Arc<Notify>,
}

/// The open connections.
#[derive(Default)]
struct Registry {
    next: u64,
    open: HashMap<u64, Slot>,
}

impl Registry {
    /// Closes an evictable connection of `peer` (any peer: `None`): the idle one that has waited longest,
    /// else the one in a frame that has waited longest; whether there was one.
    fn evict_oldest(&mut self, peer: Option<PeerKey>) -> bool {
        let oldest = self
            .open
            .iter_mut()
            .filter(|(_, s)| peer.is_none_or(|p| s.peer == p))
            .filter_map(|(id, s)| {
                let (wait, since) = s.waiting?;
                Some(((wait, since, *id), s))
            })
            .min_by_key(|(order, _)| *order);
        match oldest {
            Some((_, slot)) => {
                // Evicted once: it is no longer a candidate while it closes.
                slot.waiting = None;
                slot.close.notify_one();
                true
            }
            None => false,
        }
    }

    fn count_of_peer(&self, peer: PeerKey) -> usize {
        self.open.values().filter(|s| s.peer == peer).count()
    }
}

type Shared = Arc<Mutex<Registry>>;

fn lock(registry: &Shared) -> std::sync::MutexGuard<'_, Registry> {
    registry.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A device connection the listener admitted: reads frames and writes answers within the limits.
pub struct Connection {
    socket: TcpStream,
    /// The device's address.
    pub peer: SocketAddr,
    id: u64,
    close: Arc<Notify>,
    registry: Shared,
    limits: ListenerLimits,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Connection {
    /// Marks the connection evictable (waiting on the device for `wait`, from now) or not (`None`).
    fn set_waiting(&self, wait: Option<Wait>) {
        if let Some(slot) = lock(&self.registry).open.get_mut(&self.id) {
            slot.waiting = wait.map(|wait| (wait, Instant::now()));
        }
    }

    /// The next frame, whose header `check` accepts (`Err`: the answer for a frame refused from its header,
    /// e.g. an unknown device); or why the connection ended (a refusal is answered before).
    pub async fn next_frame(&mut self, check: impl Fn(&FrameHeader) -> Result<(), Ack>) -> Result<Vec<u8>, Ended> {
        self.set_waiting(Some(Wait::Idle));
        let close = Arc::clone(&self.close);
        let mut length = [0u8; 4];
        tokio::select! {
            biased;
            () = close.notified() => return Err(Ended::Evicted),
            read = tokio::time::timeout(self.limits.idle_timeout, self.socket.read_exact(&mut length)) => match read {
                Err(_) => return Err(Ended::Idle),
                Ok(Err(e)) => return Err(Ended::Closed(e)),
                Ok(Ok(_)) => {}
            },
        }
        // Progress: the wait for the body starts now.
        self.set_waiting(Some(Wait::InFrame));
        let length = u32::from_le_bytes(length) as usize;
        let frame = tokio::select! {
            biased;
            () = close.notified() => return Err(Ended::Evicted),
            read = tokio::time::timeout(self.limits.frame_timeout, read_frame(&mut self.socket, length, &check)) => {
                match read {
                    Err(_) => return Err(Ended::FrameTooSlow),
                    Ok(frame) => frame,
                }
            }
        };
        self.set_waiting(None);
        match frame {
            Ok(frame) => Ok(frame),
            Err(FrameError::Closed(e)) => Err(Ended::Closed(e)),
            Err(FrameError::Refused(ack)) => {
                let _ = self.answer(&ack.unauthenticated()).await;
                Err(Ended::Refused(ack.status))
            }
        }
    }

    /// Writes `record` (an acknowledgement), within the frame timeout; evictable while the device does not
    /// take it. An unauthenticated record (all-zero tag: the frame's MAC did not verify, or it was refused
    /// from its header) ends the connection once written (`Err(Ended::Refused)`).
    pub async fn answer(&mut self, record: &[u8; ACK_BYTES]) -> Result<(), Ended> {
        self.set_waiting(Some(Wait::InFrame));
        let close = Arc::clone(&self.close);
        let written = tokio::select! {
            biased;
            () = close.notified() => Err(Ended::Evicted),
            write = tokio::time::timeout(self.limits.frame_timeout, self.socket.write_all(record)) => match write {
                Err(_) => Err(Ended::FrameTooSlow),
                Ok(Err(e)) => Err(Ended::Closed(e)),
                Ok(Ok(())) => Ok(()),
            },
        };
        self.set_waiting(None);
        written?;
        if record[ACK_FIELDS_BYTES..].iter().all(|&b| b == 0) {
            let status = AckRecord::decode(record).map_or(AckStatus::Malformed, |r| r.claimed.status);
            return Err(Ended::Refused(status));
        }
        Ok(())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        lock(&self.registry).open.remove(&self.id);
    }
}

/// Why a frame was not read.
enum FrameError {
    Closed(std::io::Error),
    Refused(Ack),
}

/// Reads a frame of `length` bytes: its header first (on the stack), refused unless `check` accepts it and
/// the length is that of a possible frame; then the rest, as it arrives.
async fn read_frame(
    socket: &mut TcpStream,
    length: usize,
    check: &impl Fn(&FrameHeader) -> Result<(), Ack>,
) -> Result<Vec<u8>, FrameError> {
    let malformed = Ack::new(AckStatus::Malformed, 0, 0);
    if !(HEADER_BYTES..=DEFAULT_MAX_FRAME_BYTES).contains(&length) {
        return Err(FrameError::Refused(malformed));
    }
    let mut head = [0u8; HEADER_BYTES];
    socket.read_exact(&mut head).await.map_err(FrameError::Closed)?;
    let header = header_of(&head).ok_or(FrameError::Refused(malformed))?;
    check(&header).map_err(FrameError::Refused)?;
    // Grown as bytes arrive (at most one read's worth beyond them), never reserved from the announcement.
    let mut frame = Vec::with_capacity(HEADER_BYTES.max(length.min(4096)));
    frame.extend_from_slice(&head);
    let rest = (length - HEADER_BYTES) as u64;
    let read = socket
        .take(rest)
        .read_to_end(&mut frame)
        .await
        .map_err(FrameError::Closed)?;
    if read as u64 != rest {
        return Err(FrameError::Closed(std::io::ErrorKind::UnexpectedEof.into()));
    }
    Ok(frame)
}

/// Accepts connections on `listener` for ever within `limits`, each served by `handle` in its own task.
/// Accept errors (out of file descriptors) back off from 10 ms to 1 s and are logged at most once a second.
pub async fn serve<H, F>(listener: TcpListener, limits: ListenerLimits, handle: H)
where
    H: Fn(Connection) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let registry: Shared = Arc::default();
    let mut log = crate::accept::RateLimitedLog::default();
    loop {
        let (socket, peer) = crate::accept::accept_with_backoff(&listener, &mut log).await;
        // The per-peer cap (unless 0): a waiting connection of that peer makes room, or the new one is
        // refused (its peer's connections are all being served).
        let key = PeerKey::of(peer.ip());
        let full = limits.max_per_peer > 0 && lock(&registry).count_of_peer(key) >= limits.max_per_peer;
        if full && !lock(&registry).evict_oldest(Some(key)) {
            debug!(%peer, "refused: {} connections from this peer are being served", limits.max_per_peer);
            continue;
        }
        let permit = match Arc::clone(&permits).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                // The global cap: the longest-waiting connection of any address makes room, unless the
                // address's own connection was just closed for it (its slot is about to be freed: another
                // address's connection must not pay for it); if none is waiting, the new one waits.
                if !full {
                    lock(&registry).evict_oldest(None);
                }
                let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
                    return;
                };
                permit
            }
        };
        let _ = socket.set_nodelay(true);
        let close = Arc::new(Notify::new());
        let id = {
            let mut open = lock(&registry);
            let id = open.next;
            open.next += 1;
            open.open.insert(
                id,
                Slot {
                    peer: key,
                    waiting: None,
                    close: Arc::clone(&close),
                },
            );
            id
        };
        let connection = Connection {
            socket,
            peer,
            id,
            close,
            registry: Arc::clone(&registry),
            limits: limits.clone(),
            _permit: permit,
        };
        tokio::spawn(handle(connection));
    }
}
