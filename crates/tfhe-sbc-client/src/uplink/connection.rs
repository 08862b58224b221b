//! The sending thread: connects with backoff and jitter, sends the queue in sequence order within the
//! in-flight limit and the sequence span, reads acknowledgement records, and decides on each one that
//! verifies what the queue keeps; the others are ignored (with a warning at most every few seconds).

use super::config::UplinkConfig;
use super::error::{UplinkError, unverified_claim};
use super::queue::{IgnoredRecords, Shared, State};

use crate::{debug, info, warn};
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::thread::{self};
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::ack::{Ack, AckRecord, AckStatus};
use tfhe_sbc_device::std_io::{read_ack, scrub_stack_deep, write_frame};

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
                let last_problem = match &state.advice {
                    Some(advice) => format!("{last_problem}; the server's last answer was ignored: {advice}"),
                    None => last_problem,
                };
                state.fatal = Some(UplinkError::GaveUp {
                    address: config.address.clone(),
                    waited,
                    pending: state.queue.len(),
                    last_problem,
                    outbox: config.outbox.as_ref().map(|o| o.dir().to_owned()),
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

/// One connection: sends queued frames (at most `max_in_flight` unacknowledged, each less than
/// `max_sequence_span` above the oldest unacknowledged) while a reader thread takes the acknowledgements.
/// Returns (everything sent and acknowledged and the input closed, why it ended, whether any acknowledgement
/// arrived).
fn connection(shared: &Shared, config: &UplinkConfig, mut stream: TcpStream) -> (bool, String, bool) {
    let _ = stream.set_nodelay(true);
    let id = {
        let mut state = shared.lock();
        state.connection += 1;
        state.broken = None;
        state.sent_prefix = 0;
        state.acks_on_connection = 0;
        state.last_ack = None;
        state.skipped_at = None;
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
                if in_flight < state.queue.len() && in_flight < config.max_in_flight && within_span(&state, config) {
                    let entry = &mut state.queue[in_flight];
                    entry.transmissions += 1;
                    let (bytes, sequence, resend) = (entry.bytes.clone(), entry.sequence, entry.transmissions > 1);
                    state.sent_prefix += 1;
                    if resend {
                        state.stats.resent += 1;
                    }
                    break Next::Send(bytes, sequence);
                }
                // Nothing to send: wait for an acknowledgement, a new frame, or the ack timeout, counted from the
                // last acknowledgement or, once a frame's answer went by without opening, from then.
                let since = state
                    .skipped_at
                    .or_else(|| state.last_ack.into_iter().chain(state.connected_at).max());
                if in_flight > 0
                    && let Some(since) = since
                    && since.elapsed() >= config.ack_timeout
                {
                    break Next::Broken(format!("no acknowledgement for {:.0?}", config.ack_timeout));
                }
                if let Some(limit) = config.give_up_after
                    && state.waiting_since.is_some_and(|t| t.elapsed() >= limit)
                {
                    break Next::Broken(format!("no acknowledgement for {limit:.0?}"));
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
            other @ (Next::Done | Next::Broken(_)) => return other,
        }
    }
}

/// Whether the next frame to send (`queue[sent_prefix]`, which exists) is less than
/// [`UplinkConfig::max_sequence_span`] above the queue's front. The queue is in sequence order (the outbox's
/// frames, sorted and below the counter, then each message's as it is sealed) and frames leave it only when
/// acknowledged or lost, so its front is the oldest frame not acknowledged: every frame sent again is then
/// within the span of the highest the server may have taken, inside its replay window. The front itself is
/// always within (a span of 0 counts as 1), so the uplink never stalls on it; a frame beyond waits until an
/// acknowledgement moves the front (the reader thread notifies) or the connection breaks on the
/// acknowledgement timeout and every unacknowledged frame is sent again.
fn within_span(state: &State, config: &UplinkConfig) -> bool {
    match (state.queue.front(), state.queue.get(state.sent_prefix)) {
        (Some(oldest), Some(next)) => next.sequence.saturating_sub(oldest.sequence) < config.max_sequence_span.max(1),
        _ => false,
    }
}

/// Reads acknowledgement records until the connection ends; marks it broken then. Deletes the outbox files
/// of the frames it is done with, outside the lock.
fn read_acks(shared: &Shared, config: &UplinkConfig, mut stream: TcpStream, id: u64) {
    loop {
        let record = read_ack(&mut stream);
        let mut state = shared.lock();
        if state.connection != id {
            return;
        }
        let stop = match record {
            Ok(Some(record)) => {
                let stop = handle_record(&mut state, config, &record);
                // The MAC key's words and keyed BLAKE2b states of the record's check, left in the dead frames
                // below (unoptimized builds spill them tens of KiB deep): overwritten before anything else.
                scrub_stack_deep();
                stop
            }
            Ok(None) => Some("the server closed the connection".to_owned()),
            // 46 bytes that are not a record this client reads: the stream stays in step, the record is ignored.
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                ignore(&mut state, config, Some(e.to_string()), "it does not decode")
            }
            Err(e) => Some(format!("connection lost: {e}")),
        };
        let done = std::mem::take(&mut state.done);
        let stopped = stop.is_some();
        if let Some(why) = stop {
            state.broken.get_or_insert(why);
        }
        shared.changed.notify_all();
        drop(state);
        forget(config, &done);
        if stopped {
            return;
        }
    }
}

/// Deletes the outbox files of frames acknowledged or lost. A file left behind (a failure here, or a crash
/// before it) is sent again at the next start and answered "duplicate": nothing is taken twice.
pub(super) fn forget(config: &UplinkConfig, sequences: &[u64]) {
    let Some(outbox) = &config.outbox else {
        return;
    };
    for &sequence in sequences {
        if let Err(e) = outbox.remove(sequence) {
            warn!("{e}; the frame goes out again at the next start and is answered as a duplicate");
        }
    }
}

/// Applies one record if it verifies for a frame that is waiting; ignores it otherwise. Returns why the
/// connection must end, if it must. Never inlined: its caller scrubs the stack it used (the MAC key's
/// work).
#[inline(never)]
fn handle_record(state: &mut State, config: &UplinkConfig, record: &AckRecord) -> Option<String> {
    let claimed = &record.claimed;
    if claimed.device_id != config.device_id {
        return ignore(state, config, None, "it names another device");
    }
    let claim = || Some(unverified_claim(claimed.status, config.device_id));
    let Some(position) = state.queue.iter().position(|p| p.sequence == claimed.sequence) else {
        if already_expired(state, config, record) {
            return None;
        }
        return ignore(state, config, claim(), "it names a frame that is not waiting");
    };
    let now = Instant::now();
    let Ok(ack) = record.open(&config.mac_key, &state.queue[position].tag) else {
        if position < state.sent_prefix {
            // The server answers in order: this frame's answer went by, it gets no other on this connection.
            state.skipped_at.get_or_insert(now);
        }
        return ignore(state, config, claim(), "its tag does not verify");
    };
    if position > 0 && position < state.sent_prefix {
        // Frames sent before this one got answers that did not open: they wait for a new connection.
        state.skipped_at.get_or_insert(now);
    }
    handle_ack(state, config, position, ack, now)
}

/// Whether `record` is a verified "expired" answer for a frame of a message already dropped as expired (it
/// was in flight when the first such answer came): expected, a debug line, not an ignored record.
fn already_expired(state: &State, config: &UplinkConfig, record: &AckRecord) -> bool {
    if record.claimed.status != AckStatus::Expired {
        return false;
    }
    let opened = state
        .expired_frames
        .iter()
        .filter(|(sequence, _)| *sequence == record.claimed.sequence)
        .any(|(_, tag)| {
            record
                .open(&config.mac_key, tag)
                .is_ok_and(|ack| ack.status == AckStatus::Expired)
        });
    if opened {
        debug!(
            "frame {} answered expired too (its message was already dropped as expired)",
            record.claimed.sequence
        );
    }
    opened
}

/// Ignores a record (it did not decode or open, or named nothing waiting): counted, a warning at most every
/// [`IgnoredRecords::QUIET`] with the number not reported, and what it says (`claim`) kept as advice for the
/// operator. Never fatal.
fn ignore(state: &mut State, config: &UplinkConfig, claim: Option<String>, why: &str) -> Option<String> {
    state.stats.ignored += 1;
    if let Some(claim) = &claim {
        state.advice = Some(claim.clone());
    }
    let now = Instant::now();
    if state
        .ignored
        .last_warning
        .is_some_and(|t| now.duration_since(t) < IgnoredRecords::QUIET)
    {
        state.ignored.unreported += 1;
        return None;
    }
    let unreported = std::mem::take(&mut state.ignored.unreported);
    state.ignored.last_warning = Some(now);
    warn!(
        "{}: ignored an acknowledgement record: {why}{}; nothing is forgotten, unacknowledged frames are sent \
         again{}",
        config.address,
        claim.map(|c| format!(" ({c})")).unwrap_or_default(),
        if unreported > 0 {
            format!(" ({unreported} more ignored since the last warning)")
        } else {
            String::new()
        }
    );
    None
}

/// Drops the frame at `position` and the rest of its message from the queue (remembering their tags when
/// `expired`); returns how many, and how many frames of the message were acknowledged in this run before.
fn drop_message(state: &mut State, position: usize, expired: bool) -> (u64, u64) {
    let message = state.queue[position].message_first;
    let mut dropped = 0;
    while let Some(p) = state.queue.iter().position(|p| p.message_first == message) {
        if let Some(pending) = state.remove(p)
            && expired
        {
            state.remember_expired(&pending);
        }
        dropped += 1;
    }
    (dropped, state.acknowledged.remove(&message).unwrap_or(0))
}

/// Applies an acknowledgement that verified for the frame at `position`; returns why the connection must end,
/// if it must.
fn handle_ack(state: &mut State, config: &UplinkConfig, position: usize, ack: Ack, now: Instant) -> Option<String> {
    let address = || config.address.clone();
    match ack.status {
        AckStatus::Accepted | AckStatus::Duplicate => {
            if let Some(pending) = state.remove(position) {
                state.acknowledged(pending.message_first);
            }
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
        AckStatus::TooOld if !state.queue[position].maybe_seen() => {
            // Nothing below the server's floor can ever be accepted: those frames are dropped.
            let mut dropped = 0;
            while let Some(p) = state.queue.iter().position(|p| p.sequence < ack.detail) {
                state.remove(p);
                dropped += 1;
            }
            state.fatal = Some(UplinkError::CounterBehind {
                address: address(),
                device_id: ack.device_id,
                sequence: ack.sequence,
                lowest_acceptable: ack.detail,
                counter_file: config.counter_file.clone(),
                dropped,
            });
            Some("counter behind".into())
        }
        AckStatus::TooOld => {
            let (lost, _) = drop_message(state, position, false);
            state.stats.too_old += lost;
            state.stats.too_old_messages += 1;
            warn!(
                "the server refused frame {} as too old when it was sent again (it may have taken it before a restart, \
                 or lost it): its message ({lost} frames) counts as lost",
                ack.sequence
            );
            state.progress(now);
            None
        }
        AckStatus::Expired => {
            let (lost, acknowledged) = drop_message(state, position, true);
            state.stats.expired += lost;
            state.stats.expired_acknowledged += acknowledged;
            state.stats.expired_messages += 1;
            warn!(
                "the server dropped the message of frame {} before it was complete (expired): its {} frames are \
                 lost ({acknowledged} of them acknowledged before)",
                ack.sequence,
                lost + acknowledged
            );
            state.progress(now);
            None
        }
        AckStatus::UnknownDevice | AckStatus::BadCredentials | AckStatus::NotAllowed | AckStatus::Malformed => {
            state.fatal = Some(UplinkError::Refused {
                address: address(),
                ack,
            });
            Some("refused".into())
        }
    }
}
