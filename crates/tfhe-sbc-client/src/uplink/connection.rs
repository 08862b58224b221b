//! The sending thread: connects with backoff and jitter, sends the queue in sequence order within the
//! in-flight limit, reads acknowledgements, and decides on each one what the queue keeps.

use super::UplinkConfig;
use super::error::UplinkError;
use super::queue::{Shared, State};

use crate::{debug, info, warn};
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::thread::{self};
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::ack::{Ack, AckStatus};
use tfhe_sbc_device::std_io::{read_ack, write_frame};

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
pub(super) fn sender(shared: &Shared, config: &UplinkConfig) {
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
