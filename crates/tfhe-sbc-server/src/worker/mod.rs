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
//! unreachable, a stream without a leader) leave the frame for a redelivery after [`retry_delay`](deliveries::retry_delay), for as
//! long as it takes: an admitted frame is never dead-lettered. Nothing is held in a worker's memory between
//! frames but the process's [`LedgerWatermark`]: a ledger read behind it (deleted, purged or rolled back by
//! something other than the service) is such a transient failure, so no worker writes a ledger that forgot
//! what the device's acknowledged frames were; the frame waits until the entry is restored.

mod announcement;
mod bound_store;
mod deliveries;

use crate::jetstream::{Handles, Topology};
use crate::ledger_store::{self, CONFLICT_PATIENCE, Conflicts, Swap};
use crate::ledger_watermark::{LedgerWatermark, Mark, Reading};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::commit::{ChunkId, DeviceLedger, Stored};
use tfhe_sbc_adapter::intake::Intake;
use tfhe_sbc_adapter::replay::FrameTag;
use tfhe_sbc_adapter::results::{MessageCommitted, frame_key};
use tfhe_sbc_device::frame::mac::MacKey;

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

/// How long a worker reads again a ledger behind its watermark before it leaves the frame for later.
const LAGGING_REPLICA_PATIENCE: Duration = Duration::from_millis(500);

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
    /// Set by a delivery that came without its frame: the consumer's configuration is checked at once.
    consumer_suspect: std::sync::atomic::AtomicBool,
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
            consumer_suspect: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The MAC key of `device_id` (its ledger's key), from the key store.
    fn mac_key(&self, device_id: u64) -> Result<&MacKey, String> {
        self.intake
            .mac_key(device_id)
            .ok_or_else(|| format!("device {device_id} is not in this worker's key stores"))
    }

    /// `device_id`'s ledger and its entry's revision ([`ledger_store::read`] in this worker's bucket).
    /// A ledger behind the process's watermark is read again, at least 3 times and for
    /// [`LAGGING_REPLICA_PATIENCE`] from the first such read: a replica that lags catches up in milliseconds,
    /// and a read answered before another task of this process wrote a newer generation (its answer late
    /// on a busy machine) is behind only until the next read. Still behind then, it is an error (the frame
    /// waits for a later delivery).
    async fn ledger(&self, device_id: u64) -> Result<(DeviceLedger, Option<u64>), String> {
        let mut behind_since: Option<Instant> = None;
        let mut rereads = 0u32;
        loop {
            let (ledger, revision) =
                ledger_store::read(&self.handles.devices, self.mac_key(device_id)?, device_id).await?;
            match self.watermark.check(device_id, Mark::of(&ledger)) {
                Reading::Current => return Ok((ledger, revision)),
                Reading::Behind { seen, read } => {
                    let since = *behind_since.get_or_insert_with(Instant::now);
                    if rereads < 3 || since.elapsed() < LAGGING_REPLICA_PATIENCE {
                        rereads += 1;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                    metrics::counter!("tsbc_ledger_behind_total").increment(1);
                    return Err(format!(
                        "the ledger of device {device_id} is behind what this worker saw (read {read}, seen {seen}): \
                         deleted, purged or rolled back by something other than the service, or a lagging replica; \
                         waiting until it is restored"
                    ));
                }
            }
        }
    }

    /// Writes `ledger` as `device_id`'s if its entry is still at `revision` ([`ledger_store::swap`]).
    async fn swap(&self, device_id: u64, ledger: &mut DeviceLedger, revision: Option<u64>) -> Result<Swap, String> {
        let swapped = ledger_store::swap(
            &self.handles.devices,
            self.mac_key(device_id)?,
            device_id,
            ledger,
            revision,
        )
        .await?;
        if swapped == Swap::Done {
            self.watermark.wrote(device_id, Mark::of(ledger));
        }
        Ok(swapped)
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
                    Err(e) if e.is_replay() => Stored::Before,
                    Err(e) => {
                        // A refusal read from a replica that lags the gateway's admission would dead-letter
                        // an acknowledged frame: the verdict stands only if the ledger it was read from is
                        // still the latest, shown by writing it back unchanged at its revision.
                        match self.swap(device_id, &mut ledger, revision).await? {
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
                other @ (Stored::Now { .. } | Stored::Before | Stored::Forgotten | Stored::OtherFrame) => other,
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
            match self.swap(device_id, &mut ledger, revision).await? {
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
}
