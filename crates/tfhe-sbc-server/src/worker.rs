//! The worker role: reads frames from the workers' shared durable pull consumer and commits each exactly
//! once (`docs/operations.md`):
//!
//! 1. authenticate it again ([`Intake::verify`]: the key store's MAC key, key id and the device's frame
//!    kinds; a frame that fails is dead-lettered with the reason);
//! 2. read the device's commit state ([`DeviceState`]) and its revision from the devices KV bucket; a
//!    sequence number the replay window already holds was committed before (a redelivery, or a resend
//!    outside the publish de-duplication window): acknowledged without a second commit; one below the window
//!    is dead-lettered;
//! 3. store the frame in the results bucket under its deterministic key (two workers holding the
//!    same frame write the same object);
//! 4. **commit**: the state with the sequence number and the chunk recorded, written by compare-and-swap on
//!    the revision read in 2 (a conflict means another worker committed something of this device: read
//!    again and redo from 2);
//! 5. if the chunk completed its message, announce it ([`MessageCommitted`], published with a message id so
//!    a worker that dies after the commit and before the announcement lets the next one announce it once);
//! 6. acknowledge the frame to JetStream.
//!
//! A worker killed anywhere in 1-6 leaves the frame unacknowledged: JetStream redelivers it after `ack_wait`
//! and the next worker finds it committed (step 2) or not (and commits it). Nothing is held in a worker's
//! memory between frames.

use crate::device_state::{ChunkCommit, DeviceState, MAX_CHUNKS, OpenMessage};
use crate::jetstream::{Handles, JETSTREAM_PATIENCE, Topology, device_key, with_patience};
use async_nats::HeaderMap;
use async_nats::jetstream::kv;
use async_nats::jetstream::message::{AckKind, Message};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::Intake;
use tfhe_sbc_adapter::results::{
    MessageCommitted, committed_message_id, dead_letter_subject, frame_key, results_subject,
};
use tracing::{debug, info, warn};

/// How long a frame that failed for a transient reason waits before its next delivery: 250 ms after its
/// first delivery, twice as long after each next one, at most 10 s. The 15 waits before a frame's 16th
/// delivery (the default `max_deliver`) add up to about 106 s: a node's restart or a leader election, which
/// refuse requests for seconds, never dead-letter an acknowledged frame.
pub fn retry_delay(delivered: i64) -> Duration {
    let doublings = u32::try_from(delivered.saturating_sub(1)).unwrap_or(0).min(6);
    (Duration::from_millis(250) * 2u32.pow(doublings)).min(Duration::from_secs(10))
}

/// What the workers of this process did (for the log, the metrics and the tests).
#[derive(Debug, Default)]
pub struct WorkerCounts {
    /// Frames committed.
    pub committed: AtomicU64,
    /// Frames found committed already (redeliveries, resends).
    pub already_committed: AtomicU64,
    /// Messages announced.
    pub messages: AtomicU64,
    /// Frames dead-lettered.
    pub dead_lettered: AtomicU64,
    /// Deliveries that were not the first.
    pub redeliveries: AtomicU64,
    /// Compare-and-swap conflicts (another worker committed first).
    pub conflicts: AtomicU64,
}

/// How a frame ended.
enum Outcome {
    Committed,
    AlreadyCommitted,
    Dead(String),
}

/// One worker: pulls frames in small batches until the connection closes or `stop` fires.
pub struct Worker {
    handles: Handles,
    topology: Topology,
    intake: Arc<Intake>,
    counts: Arc<WorkerCounts>,
    max_open_messages: usize,
}

impl Worker {
    /// A worker over `handles`, authenticating with `intake` (the key store's devices).
    pub fn new(handles: Handles, topology: Topology, intake: Arc<Intake>, counts: Arc<WorkerCounts>) -> Self {
        let max_open_messages = intake.config().max_open_messages_per_device;
        Self {
            handles,
            topology,
            intake,
            counts,
            max_open_messages,
        }
    }

    /// Runs until the consumer's stream of messages ends (the NATS connection closed).
    pub async fn run(&self) -> Result<(), String> {
        let mut consumer = with_patience(JETSTREAM_PATIENCE, "the workers' consumer", || {
            self.topology.workers_consumer(&self.handles.frames)
        })
        .await?;
        // The consumer's own limit: it was created by whichever role came first, maybe with other settings.
        let max_deliver = consumer.cached_info().config.max_deliver;
        info!("worker: reading the {} consumer", crate::jetstream::WORKERS_CONSUMER);
        let mut lag_measured = std::time::Instant::now();
        loop {
            // Consumer lag (frames not yet delivered, and delivered but unacknowledged), every 2 s.
            if lag_measured.elapsed() >= Duration::from_secs(2) {
                lag_measured = std::time::Instant::now();
                if let Ok(info) = consumer.info().await {
                    metrics::gauge!("tsbc_consumer_pending_frames").set(info.num_pending as f64);
                    metrics::gauge!("tsbc_consumer_unacknowledged_frames").set(info.num_ack_pending as f64);
                }
            }
            // Small batches: every frame of a batch is finished well within `ack_wait`.
            let mut batch = match consumer
                .fetch()
                .max_messages(16)
                .expires(Duration::from_secs(1))
                .messages()
                .await
            {
                Ok(batch) => batch,
                Err(e) => {
                    warn!("worker: cannot fetch frames: {e}");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            };
            while let Some(message) = batch.next().await {
                match message {
                    Ok(message) => self.handle(message, max_deliver).await,
                    Err(e) => {
                        debug!("worker: fetch ended: {e}");
                        break;
                    }
                }
            }
        }
    }

    /// One delivery: commit (or find committed, or dead-letter), then acknowledge; a transient failure
    /// (NATS unreachable, a stream without a leader) leaves the frame to be redelivered after
    /// [`retry_delay`]; at its `max_deliver`-th delivery (if the consumer has a limit) it is dead-lettered.
    async fn handle(&self, message: Message, max_deliver: i64) {
        let delivered = message.info().map(|i| i.delivered).unwrap_or(1);
        if delivered > 1 {
            self.counts.redeliveries.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("tsbc_worker_redeliveries_total").increment(1);
        }
        let outcome = match self.commit(&message.payload).await {
            Ok(outcome) => outcome,
            Err(e) if max_deliver > 0 && delivered >= max_deliver => {
                Outcome::Dead(format!("gave up after {delivered} deliveries: {e}"))
            }
            Err(e) => {
                let delay = retry_delay(delivered);
                warn!("worker: frame left for redelivery in {delay:?} (delivery {delivered}): {e}");
                let _ = message.ack_with(AckKind::Nak(Some(delay))).await;
                return;
            }
        };
        match outcome {
            Outcome::Committed => {
                self.counts.committed.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("tsbc_worker_frames_total", "outcome" => "committed").increment(1);
            }
            Outcome::AlreadyCommitted => {
                self.counts.already_committed.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("tsbc_worker_frames_total", "outcome" => "already_committed").increment(1);
            }
            Outcome::Dead(reason) => {
                let device = message
                    .subject
                    .rsplit('.')
                    .next()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(0);
                if let Err(e) = self.dead_letter(device, &message.payload, &reason).await {
                    warn!("worker: cannot dead-letter a frame ({reason}): {e}");
                    let _ = message.ack_with(AckKind::Nak(Some(Duration::from_secs(1)))).await;
                    return;
                }
                self.counts.dead_lettered.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("tsbc_worker_frames_total", "outcome" => "dead_lettered").increment(1);
                warn!(device, "worker: frame dead-lettered: {reason}");
            }
        }
        if let Err(e) = message.double_ack().await {
            // Committed but not acknowledged: the redelivery finds it committed.
            warn!("worker: acknowledgement to JetStream failed: {e}");
        }
    }

    /// Steps 1-5 for one frame. `Err` is transient (try again later).
    async fn commit(&self, frame: &[u8]) -> Result<Outcome, String> {
        let parsed = match self.intake.verify(frame) {
            Ok(parsed) => parsed,
            Err(e) => return Ok(Outcome::Dead(e.to_string())),
        };
        let header = parsed.header;
        if header.chunk_count > MAX_CHUNKS {
            return Ok(Outcome::Dead(format!(
                "{} chunks (at most {MAX_CHUNKS})",
                header.chunk_count
            )));
        }
        let first_sequence = parsed.first_sequence();
        let key = device_key(header.device_id);
        for _attempt in 0..32 {
            let (mut state, revision) = self.device_state(&key).await?;
            match state.window.check(header.device_id, header.sequence) {
                Ok(()) => {}
                Err(IntakeError::Replayed { .. }) => {
                    if !state.is_open(first_sequence) {
                        self.announce_if_stored(&header, first_sequence).await?;
                    }
                    return Ok(Outcome::AlreadyCommitted);
                }
                Err(too_old) => return Ok(Outcome::Dead(too_old.to_string())),
            }
            let name = frame_key(header.device_id, first_sequence, header.chunk_index);
            self.handles
                .results
                .put(name.as_str(), bytes::Bytes::copy_from_slice(frame))
                .await
                .map_err(|e| format!("cannot store {name}: {e}"))?;
            state.window.accept(header.sequence);
            let (commit, abandoned) = state.commit_chunk(
                first_sequence,
                header.chunk_count,
                header.chunk_index,
                self.max_open_messages,
            );
            let value = state.encode().into();
            let swapped = match revision {
                Some(revision) => self.handles.devices.update(&key, value, revision).await.map_err(|e| {
                    (e.kind() == kv::UpdateErrorKind::WrongLastRevision)
                        .then_some(())
                        .ok_or(e.to_string())
                }),
                None => self.handles.devices.create(&key, value).await.map_err(|e| {
                    (e.kind() == kv::CreateErrorKind::AlreadyExists)
                        .then_some(())
                        .ok_or(e.to_string())
                }),
            };
            match swapped {
                Ok(_) => {}
                Err(Ok(())) => {
                    self.counts.conflicts.fetch_add(1, Ordering::Relaxed);
                    metrics::counter!("tsbc_worker_commit_conflicts_total").increment(1);
                    continue;
                }
                Err(Err(e)) => return Err(format!("cannot commit device {}: {e}", header.device_id)),
            }
            for message in abandoned {
                self.abandon(header.device_id, message).await;
            }
            if commit == ChunkCommit::Completed {
                self.announce(&header, first_sequence).await?;
            }
            return Ok(Outcome::Committed);
        }
        Err(format!("device {}: too many concurrent commits", header.device_id))
    }

    /// The device's commit state and its revision (`None`: no entry yet).
    async fn device_state(&self, key: &str) -> Result<(DeviceState, Option<u64>), String> {
        match self.handles.devices.entry(key).await {
            Ok(Some(entry)) if entry.operation == kv::Operation::Put => {
                let state = DeviceState::decode(&entry.value).map_err(|e| format!("{key}: {e}"))?;
                Ok((state, Some(entry.revision)))
            }
            Ok(Some(entry)) => Ok((DeviceState::new(), Some(entry.revision))),
            Ok(None) => Ok((DeviceState::new(), None)),
            Err(e) => Err(format!("cannot read {key}: {e}")),
        }
    }

    /// Announces the message of `header` (committed, every chunk stored).
    async fn announce(&self, header: &tfhe_sbc_device::frame::FrameHeader, first_sequence: u64) -> Result<(), String> {
        let record = MessageCommitted {
            device_id: header.device_id,
            key_id: header.key_id,
            message_id: header.message_id,
            first_sequence,
            chunk_count: header.chunk_count,
            message_length: header.message_length,
            parameter_set: header.parameter_set,
        };
        let publish = async_nats::jetstream::message::PublishMessage::build()
            .payload(record.encode().to_vec().into())
            .message_id(committed_message_id(header.device_id, first_sequence));
        let ack = self
            .handles
            .js
            .send_publish(results_subject(&self.topology.prefix, header.device_id), publish)
            .await
            .map_err(|e| format!("cannot announce a message: {e}"))?;
        let ack = ack.await.map_err(|e| format!("announcement not stored: {e}"))?;
        if !ack.duplicate {
            self.counts.messages.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("tsbc_worker_messages_total").increment(1);
            debug!(device = header.device_id, first_sequence, "message committed");
        }
        Ok(())
    }

    /// After a worker died between a commit and its announcement: announces the message if every chunk is
    /// stored (the announcement's message id keeps it single within the de-duplication window).
    async fn announce_if_stored(
        &self,
        header: &tfhe_sbc_device::frame::FrameHeader,
        first_sequence: u64,
    ) -> Result<(), String> {
        for chunk in 0..header.chunk_count {
            let name = frame_key(header.device_id, first_sequence, chunk);
            if !matches!(self.handles.results.get(&name).await, Ok(Some(_))) {
                return Ok(());
            }
        }
        self.announce(header, first_sequence).await
    }

    /// Dead-letters a message its device abandoned (more newer messages opened than allowed).
    async fn abandon(&self, device_id: u64, message: OpenMessage) {
        let reason = format!(
            "message at sequence {} abandoned with chunks missing (committed bitmap {:#x} of {})",
            message.first_sequence, message.committed, message.chunk_count
        );
        if self.dead_letter(device_id, &[], &reason).await.is_ok() {
            self.counts.dead_lettered.fetch_add(1, Ordering::Relaxed);
        }
        warn!(device_id, "{reason}");
    }

    /// Publishes `frame` with its reason on the dead-letter subject.
    async fn dead_letter(&self, device_id: u64, frame: &[u8], reason: &str) -> Result<(), String> {
        let mut headers = HeaderMap::new();
        headers.insert("Tsbc-Reason", reason);
        self.handles
            .js
            .publish_with_headers(
                dead_letter_subject(&self.topology.prefix, device_id),
                headers,
                frame.to_vec().into(),
            )
            .await
            .map_err(|e| e.to_string())?
            .await
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::retry_delay;
    use std::time::Duration;

    /// The waits double from 250 ms to the 10 s cap, and the 15 before a 16th delivery outlast a leader
    /// election by far.
    #[test]
    fn retry_delays_back_off_to_ten_seconds() {
        let ms = |d: i64| retry_delay(d).as_millis();
        assert_eq!(
            [ms(1), ms(2), ms(3), ms(6), ms(7), ms(100)],
            [250, 500, 1000, 8000, 10_000, 10_000]
        );
        assert_eq!(ms(0), 250, "a missing delivery count is the first");
        let total: Duration = (1..16).map(retry_delay).sum();
        assert_eq!(total, Duration::from_millis(105_750));
    }
}
