//! Announcing committed messages: a message is announced ([`MessageCommitted`], sealed under its device's
//! MAC key, on its results subject) once every chunk's bytes are stored, and the announcement recorded in
//! the device's ledger; the repair pass announces what a ledger holds as complete and unannounced (its
//! worker stopped between the two). Readers keep one record per message, so a repeated announcement
//! (a worker stopped after announcing, before recording it) is absorbed there.

use super::Worker;
use crate::ledger_store::{CONFLICT_PATIENCE, Conflicts, Swap};
use futures_util::StreamExt;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tfhe_sbc_adapter::results::{MessageCommitted, frame_key, open_stored_frame, results_subject};
use tracing::{debug, info, warn};

impl Worker {
    /// The repair pass, every `period` for ever: announces every message a ledger holds as complete and
    /// unannounced (its worker stopped between the commit and the announcement).
    pub async fn repair_every(&self, period: Duration) -> Result<(), String> {
        loop {
            match self.repair().await {
                Ok(0) => {}
                Ok(n) => info!("worker: repair pass announced {n} message(s)"),
                Err(e) => warn!("worker: repair pass stopped: {e}"),
            }
            tokio::time::sleep(period).await;
        }
    }

    /// One repair pass over every device's ledger; the number of messages it announced.
    pub async fn repair(&self) -> Result<u64, String> {
        let mut keys = self.handles.devices.keys().await.map_err(|e| e.to_string())?;
        let mut devices = Vec::new();
        while let Some(key) = keys.next().await {
            let key = key.map_err(|e| e.to_string())?;
            if let Some(id) = key.strip_prefix("device.").and_then(|id| id.parse::<u64>().ok())
                && self.intake.mac_key(id).is_some()
            {
                devices.push(id);
            }
        }
        let mut announced = 0;
        // One device that fails (its ledger does not authenticate, its chunk 0 is missing) is logged and
        // passed over: the pass goes on with the others.
        for device_id in devices {
            match self.announce_pending(device_id).await {
                Ok(n) => announced += n,
                // Per device, and a client of NATS can write junk under every device's key: limited.
                Err(e) => crate::log_rate::warn_limited!(
                    device = device_id,
                    "worker: repair pass passed over the device: {e}"
                ),
            }
        }
        self.counts.repaired.fetch_add(announced, Ordering::Relaxed);
        metrics::counter!("tsbc_worker_repaired_announcements_total").increment(announced);
        Ok(announced)
    }

    /// Publishes `record`, sealed under its device's MAC key, on the device's results subject, without a
    /// message id (one that anyone on NATS could publish first would make JetStream drop this record as
    /// its duplicate); readers keep one record per message.
    pub(super) async fn announce(&self, record: &MessageCommitted) -> Result<(), String> {
        let sealed = record.seal(self.mac_key(record.device_id)?);
        let ack = self
            .handles
            .js
            .publish(results_subject(&self.topology.prefix, record.device_id), sealed.into())
            .await
            .map_err(|e| format!("cannot announce a message: {e}"))?;
        ack.await.map_err(|e| format!("announcement not stored: {e}"))?;
        self.counts.messages.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("tsbc_worker_messages_total").increment(1);
        debug!(
            device = record.device_id,
            first_sequence = record.first_sequence,
            "message committed"
        );
        Ok(())
    }

    /// Removes the message at `first_sequence` from the device's unannounced list.
    async fn record_announced(&self, device_id: u64, first_sequence: u64) -> Result<(), String> {
        let mut conflicts = Conflicts::new();
        loop {
            let (mut ledger, revision) = self.ledger(device_id).await?;
            if !ledger.announced(first_sequence) {
                return Ok(());
            }
            match self.swap(device_id, &mut ledger, revision).await? {
                Swap::Done => return Ok(()),
                Swap::Conflict if conflicts.redo().await => {
                    self.counts.conflicts.fetch_add(1, Ordering::Relaxed);
                }
                Swap::Conflict => return Err(format!("device {device_id}: conflicts for {CONFLICT_PATIENCE:?}")),
            }
        }
    }

    /// Announces every message the device's ledger holds as complete and unannounced, each from its stored
    /// chunk 0 (which names the message, once it authenticates); the number announced.
    pub(super) async fn announce_pending(&self, device_id: u64) -> Result<u64, String> {
        let (ledger, _) = self.ledger(device_id).await?;
        let mut announced = 0;
        for &(first_sequence, chunk_count) in &ledger.unannounced {
            let name = frame_key(device_id, first_sequence, 0);
            let stored = self
                .handles
                .results
                .get(&name)
                .await
                .map_err(|e| format!("cannot read {name}: {e}"))?
                .ok_or_else(|| format!("{name} is missing: a complete message without its chunk 0"))?;
            // Bound and authenticated before it names what is announced: the results bucket is NATS, not the
            // service.
            let frame = open_stored_frame(self.mac_key(device_id)?, device_id, &stored)
                .ok_or_else(|| format!("{name} is not bound by this service as the frame its ledger admitted"))?;
            let record = self
                .intake
                .verify(frame)
                .ok()
                .map(|parsed| MessageCommitted::of_chunk(&parsed.header))
                .filter(|r| {
                    r.device_id == device_id && r.first_sequence == first_sequence && r.chunk_count == chunk_count
                })
                .ok_or_else(|| format!("{name} does not authenticate as chunk 0 of the message it names"))?;
            self.announce(&record).await?;
            self.record_announced(device_id, first_sequence).await?;
            announced += 1;
        }
        Ok(announced)
    }
}
