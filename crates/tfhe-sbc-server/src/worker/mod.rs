//! The worker role: reads frames from the workers' shared durable pull consumer and stores each one the
//! gateway admitted, so that every acknowledged message is announced exactly once (`docs/operations.md`).
//! The frames stream is a work queue: a frame leaves it when a worker acknowledges it, so the stream's
//! limit bounds the backlog, never the history.
//!
//! 1. authenticate it again ([`Intake::verify`]: the key store's MAC key, key id and the device's frame
//!    kinds; a frame that fails was never acknowledged "accepted" and is dead-lettered with the reason);
//! 2. read the device's ledger ([`tfhe_sbc_adapter::commit::DeviceLedger`]) and its revision;
//! 3. store the frame in the results bucket under its deterministic key (two workers holding the same
//!    frame write the same object);
//! 4. **commit**: the ledger with the chunk marked stored (and its message's announcement, step 5), written by compare-and-swap on the revision read
//!    in 2. A lost compare-and-swap is a conflict, not a failure: read again and redo from 2 at once
//!    ([`ledger_store`]). A chunk the ledger admitted is never refused here, whatever the order or delay
//!    of its delivery: every limit was enforced when the gateway admitted it. A frame the ledger never
//!    admitted (its gateway stopped between publishing and admitting it; it was never answered "accepted")
//!    is admitted here under the same rules, or dead-lettered with the reason;
//! 5. if the chunk completes its message (every chunk's bytes then stored), announce it ([`MessageCommitted`],
//!    with a message id) before the commit of 4, which records the announcement in the same
//!    compare-and-swap; a message the ledger holds as complete and unannounced is announced by the next
//!    frame of its device and by the repair pass ([`Worker::repair`]);
//! 6. acknowledge the frame to JetStream.
//!
//! A worker killed anywhere in 1-6 leaves the frame unacknowledged: JetStream redelivers it after `ack_wait`
//! and the next worker finds it stored (step 2) or not (and stores it). Transient failures (NATS
//! unreachable, a stream without a leader) leave the frame for a redelivery after [`retry_delay`], for as
//! long as it takes: an admitted frame is never dead-lettered. Nothing is held in a worker's memory between
//! frames but the process's [`LedgerWatermark`]: a ledger read behind it (deleted, purged or rolled back by
//! something other than the service) is such a transient failure, so no worker writes a ledger that forgot
//! what the device's acknowledged frames were; the frame waits until the entry is restored.

mod announcement;
mod bound_store;

use crate::jetstream::{Handles, JETSTREAM_PATIENCE, Topology, with_patience};
use crate::ledger_store::{self, CONFLICT_PATIENCE, Conflicts, Swap};
use crate::ledger_watermark::{LedgerWatermark, Reading};
use async_nats::HeaderMap;
use async_nats::jetstream::message::{AckKind, Message};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::commit::{ChunkId, DeviceLedger, Stored};
use tfhe_sbc_adapter::intake::Intake;
use tfhe_sbc_adapter::replay::FrameTag;
use tfhe_sbc_adapter::results::{MessageCommitted, dead_letter_subject, frame_key};
use tfhe_sbc_device::frame::mac::MacKey;
use tracing::{info, warn};

/// How long a frame that failed for a transient reason waits before its next delivery: 250 ms after its
/// first delivery, twice as long after each next one, at most 10 s.
pub fn retry_delay(delivered: i64) -> Duration {
    let doublings = u32::try_from(delivered.saturating_sub(1)).unwrap_or(0).min(6);
    (Duration::from_millis(250) * 2u32.pow(doublings)).min(Duration::from_secs(10))
}

/// What the workers of this process did (for the log, the metrics and the tests).
#[derive(Debug, Default)]
pub struct WorkerCounts {
    /// Frames stored (committed).
    pub committed: AtomicU64,
    /// Frames found stored already (redeliveries, resends).
    pub already_committed: AtomicU64,
    /// Messages announced.
    pub messages: AtomicU64,
    /// Frames dead-lettered (never acknowledged "accepted").
    pub dead_lettered: AtomicU64,
    /// Deliveries that were not the first.
    pub redeliveries: AtomicU64,
    /// Compare-and-swap conflicts (another gateway or worker changed the ledger first).
    pub conflicts: AtomicU64,
    /// Messages announced by the repair pass (completed, then their worker stopped before announcing).
    pub repaired: AtomicU64,
}

/// Deliveries of a frame its ledger has not admitted before a worker admits it itself (its gateway
/// published it and stopped before admitting it, or answered "busy" when the admission failed).
const UNADMITTED_DELIVERIES: i64 = 3;
/// The wait before such a frame's next delivery.
const UNADMITTED_WAIT: Duration = Duration::from_secs(2);

/// Why a frame waits for its next delivery.
enum Retry {
    /// Not admitted yet: its gateway may be admitting it.
    Unadmitted,
    /// NATS unreachable, a stream without a leader, conflicts for too long.
    Transient(String),
}

impl From<String> for Retry {
    fn from(e: String) -> Self {
        Self::Transient(e)
    }
}

/// How a frame ended.
enum Outcome {
    Committed,
    AlreadyCommitted,
    Dead(String),
}

/// One worker: pulls frames in small batches until the connection closes.
pub struct Worker {
    handles: Handles,
    topology: Topology,
    intake: Arc<Intake>,
    counts: Arc<WorkerCounts>,
    watermark: Arc<LedgerWatermark>,
}

impl Worker {
    /// A worker over `handles`, authenticating with `intake` (the key store's devices), comparing every
    /// ledger it reads with `watermark` (the process's, shared by its workers).
    pub fn new(
        handles: Handles,
        topology: Topology,
        intake: Arc<Intake>,
        counts: Arc<WorkerCounts>,
        watermark: Arc<LedgerWatermark>,
    ) -> Self {
        Self {
            handles,
            topology,
            intake,
            counts,
            watermark,
        }
    }

    /// The MAC key of `device_id` (its ledger's key), from the key store.
    fn mac_key(&self, device_id: u64) -> Result<&MacKey, String> {
        self.intake
            .mac_key(device_id)
            .ok_or_else(|| format!("device {device_id} is not in this worker's key stores"))
    }

    /// `device_id`'s ledger and its entry's revision ([`ledger_store::read`] in this worker's bucket).
    /// A ledger behind the process's watermark is an error (the frame waits for a later delivery).
    async fn ledger(&self, device_id: u64) -> Result<(DeviceLedger, Option<u64>), String> {
        let (ledger, revision) = ledger_store::read(&self.handles.devices, self.mac_key(device_id)?, device_id).await?;
        match self.watermark.check(device_id, ledger.window.highest()) {
            Reading::Current => Ok((ledger, revision)),
            Reading::Behind { seen, read } => {
                metrics::counter!("tsbc_ledger_behind_total").increment(1);
                Err(format!(
                    "the ledger of device {device_id} is behind what this worker saw (highest {read:?}, seen {seen}): \
                     deleted, purged or rolled back by something other than the service, or a lagging replica; \
                     waiting until it is restored"
                ))
            }
        }
    }

    /// Writes `ledger` as `device_id`'s if its entry is still at `revision` ([`ledger_store::swap`]).
    async fn swap(&self, device_id: u64, ledger: &DeviceLedger, revision: Option<u64>) -> Result<Swap, String> {
        let swapped = ledger_store::swap(
            &self.handles.devices,
            self.mac_key(device_id)?,
            device_id,
            ledger,
            revision,
        )
        .await?;
        if swapped == Swap::Done {
            self.watermark.wrote(device_id, ledger.window.highest());
        }
        Ok(swapped)
    }

    /// Runs until the consumer's stream of messages ends (the NATS connection closed).
    pub async fn run(&self) -> Result<(), String> {
        let mut consumer = with_patience(JETSTREAM_PATIENCE, "the workers' consumer", || {
            self.topology.workers_consumer(&self.handles.frames)
        })
        .await?;
        info!("worker: reading the {} consumer", crate::jetstream::WORKERS_CONSUMER);
        loop {
            // A continuous pull of small batches (the next requested when half of one is done): every frame
            // of a batch is finished well within `ack_wait`, and an idle worker waits in the server, not in
            // a loop of requests. A missed heartbeat (a stalled connection) ends the pull and starts another.
            let mut frames = match consumer
                .stream()
                .max_messages_per_batch(16)
                .heartbeat(Duration::from_secs(5))
                .messages()
                .await
            {
                Ok(frames) => frames,
                Err(e) => {
                    warn!("worker: cannot pull frames: {e}");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            };
            let mut lag_measured = Instant::now();
            // Up to `frames_in_flight` frames at once: each one's work is JetStream round trips, so frames of
            // different devices overlap their waits (two of one device conflict and redo, as two workers'
            // would). The pull asks for more only while fewer are in hand.
            let mut in_flight = FuturesUnordered::new();
            loop {
                tokio::select! {
                    biased;
                    Some(()) = in_flight.next(), if !in_flight.is_empty() => {}
                    next = frames.next(), if in_flight.len() < self.topology.frames_in_flight.max(1) => match next {
                        Some(Ok(message)) => in_flight.push(self.handle(message)),
                        Some(Err(e)) => {
                            warn!("worker: pull ended: {e}");
                            break;
                        }
                        None => break,
                    },
                }
                // Consumer lag (frames not yet delivered, and delivered but unacknowledged), every 2 s.
                if lag_measured.elapsed() >= Duration::from_secs(2) {
                    lag_measured = Instant::now();
                    if let Ok(info) = consumer.info().await {
                        metrics::gauge!("tsbc_consumer_pending_frames").set(info.num_pending as f64);
                        metrics::gauge!("tsbc_consumer_unacknowledged_frames").set(info.num_ack_pending as f64);
                    }
                }
            }
            // The frames in hand are finished before the next pull (each ends acknowledged or left for
            // redelivery).
            while in_flight.next().await.is_some() {}
        }
    }

    /// One delivery: store (or find stored, or dead-letter), then acknowledge; a transient failure
    /// leaves the frame to be redelivered after [`retry_delay`], however many deliveries it takes.
    async fn handle(&self, message: Message) {
        let delivered = message.info().map(|i| i.delivered).unwrap_or(1);
        if delivered > 1 {
            self.counts.redeliveries.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("tsbc_worker_redeliveries_total").increment(1);
        }
        let outcome = match self.commit(&message.payload, delivered).await {
            Ok(outcome) => outcome,
            Err(Retry::Unadmitted) => {
                // Its gateway is admitting it right now, most likely: come back when it has.
                let _ = message.ack_with(AckKind::Nak(Some(UNADMITTED_WAIT))).await;
                return;
            }
            Err(Retry::Transient(e)) => {
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
        // A plain acknowledgement, not JetStream's confirmed one: nothing waits on its confirmation, since
        // the frame is committed (or dead-lettered) already, and a lost one only brings a redelivery that
        // finds the frame stored. Waiting for it cost a round trip and the work queue's delete per frame.
        if let Err(e) = message.ack().await {
            warn!("worker: acknowledgement to JetStream failed: {e}");
        }
    }

    /// Steps 1-5 for one frame at its `delivered`-th delivery. `Err`: try again later.
    async fn commit(&self, frame: &[u8], delivered: i64) -> Result<Outcome, Retry> {
        let parsed = match self.intake.verify(frame) {
            Ok(parsed) => parsed,
            Err(e) => return Ok(Outcome::Dead(format!("never acknowledged: {e}"))),
        };
        let header = parsed.header;
        let Some(chunk) = ChunkId::of(&header, FrameTag::of_mac(parsed.tag())) else {
            return Ok(Outcome::Dead(format!(
                "never acknowledged: chunk {} of {} is not a chunk the ledger holds",
                header.chunk_index, header.chunk_count
            )));
        };
        let device_id = header.device_id;
        let name = frame_key(device_id, chunk.first_sequence, chunk.chunk_index);
        let mut frame_stored = false;
        // Announced by an earlier pass of the loop below (a conflict redoes the commit, not the announcement).
        let mut announced = false;
        let mut conflicts = Conflicts::new();
        let mut unadmitted_reads = 0u32;
        loop {
            let (mut ledger, revision) = self.ledger(device_id).await?;
            let stored = match ledger.store(chunk) {
                // A gateway publishes a frame, then admits it: a worker keeping up reads the ledger about a
                // round trip before the admission lands, so it reads again after 5, 10, 20 and 40 ms; the
                // first deliveries then leave the gateway the time to.
                Stored::NotAdmitted if delivered < UNADMITTED_DELIVERIES => {
                    if unadmitted_reads < 4 {
                        tokio::time::sleep(Duration::from_millis(5 << unadmitted_reads)).await;
                        unadmitted_reads += 1;
                        continue;
                    }
                    return Err(Retry::Unadmitted);
                }
                Stored::NotAdmitted => match ledger.admit(device_id, chunk, &self.topology.ledger_limits) {
                    Ok(()) => ledger.store(chunk),
                    Err(IntakeError::Replayed { .. }) => Stored::Before,
                    Err(e) => {
                        // A refusal read from a replica that lags the gateway's admission would dead-letter
                        // an acknowledged frame: the verdict stands only if the ledger it was read from is
                        // still the latest, shown by writing it back unchanged at its revision.
                        match self.swap(device_id, &ledger, revision).await? {
                            Swap::Done => return Ok(Outcome::Dead(format!("never acknowledged: {e}"))),
                            Swap::Conflict if conflicts.redo().await => {
                                self.counts.conflicts.fetch_add(1, Ordering::Relaxed);
                                continue;
                            }
                            Swap::Conflict => {
                                return Err(format!("device {device_id}: conflicts for {CONFLICT_PATIENCE:?}").into());
                            }
                        }
                    }
                },
                other => other,
            };
            let completed = match stored {
                Stored::Now { completed } => completed,
                Stored::Before => {
                    self.announce_pending(device_id).await?;
                    return Ok(Outcome::AlreadyCommitted);
                }
                Stored::Forgotten => {
                    // Below the window and not in the ledger: stored before, or never admitted.
                    return if self.is_stored(&name, device_id, frame).await? {
                        Ok(Outcome::AlreadyCommitted)
                    } else {
                        Ok(Outcome::Dead(format!(
                            "never acknowledged: sequence {} is below device {device_id}'s window",
                            chunk.sequence
                        )))
                    };
                }
                Stored::OtherFrame => {
                    metrics::counter!("tsbc_counter_went_back_total").increment(1);
                    return Ok(Outcome::Dead(format!(
                        "never acknowledged: another frame was admitted under sequence {} of device {device_id} \
                         (its counter went back: a restored or cloned counter file?)",
                        chunk.sequence
                    )));
                }
                Stored::NotAdmitted => unreachable!("admitted just above"),
            };
            if !frame_stored {
                // Bound as the frame the ledger admitted: a reader takes no other frame under this name.
                if let Some(reason) = self.store_bound(&name, device_id, frame).await? {
                    return Ok(Outcome::Dead(reason));
                }
                frame_stored = true;
            }
            if completed && !announced {
                // Every chunk's bytes are stored (this one just now, the others before the ledger said so):
                // the message is durable, so it is announced before the commit, which then records the
                // announcement too (one compare-and-swap). A worker stopping in between makes the next one
                // announce it again: the message id and the readers' one record per message absorb it.
                self.announce(&MessageCommitted::of_chunk(&header)).await?;
                announced = true;
            }
            if completed {
                ledger.announced(chunk.first_sequence);
            }
            match self.swap(device_id, &ledger, revision).await? {
                Swap::Done => {}
                Swap::Conflict if conflicts.redo().await => {
                    self.counts.conflicts.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                Swap::Conflict => {
                    return Err(format!("device {device_id}: conflicts for {CONFLICT_PATIENCE:?}").into());
                }
            }
            return Ok(Outcome::Committed);
        }
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
