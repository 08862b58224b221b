//! The gateway role: the device protocol over TCP (length-delimited frames in, 46-byte acknowledgement
//! records out, `docs/wire-format.md`), in front of the JetStream frames stream. Everything is bounded:
//!
//! * connections are accepted by the bounded listener ([`crate::listener`], [`GatewayLimits::listener`]): a
//!   connection cap and a per-address cap, where a new connection closes the one that has waited longest on
//!   its device, an idle timeout and a frame timeout; accept errors (out of file descriptors) back off from
//!   10 ms to 1 s, and are logged at most once a second with the count of those not logged;
//! * a frame's bytes are buffered only after its fixed-size header names a registered device and its
//!   announced length is at most the largest frame, and only as they arrive; each connection holds at most
//!   one frame;
//! * a frame is acknowledged "accepted" only after it is published to the frames work queue **and**
//!   admitted by the device's ledger ([`tfhe_sbc_adapter::commit`], a compare-and-swap in the devices
//!   bucket): the window and every limit are decided there, so a worker never refuses an acknowledged
//!   frame. A full or unreachable stream or bucket gets "busy" and the device sends the frame again later.
//!
//! Before publishing, the gateway authenticates the frame (the key store's MAC key, key id, the frame kinds
//! of the device's mode) and runs the ledger's admission, so that a frame admitted before is answered
//! "duplicate", one below the window "too old" (with the lowest acceptable number), and one past a limit
//! "busy", as the single-process server answers.

use crate::jetstream::{Handles, Topology};
use crate::ledger_store::{self, Conflicts, Swap};
use crate::ledger_watermark::{LedgerWatermark, Mark, Reading};
use crate::listener::{self, Connection, Ended, ListenerLimits};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::ack::{ack_for, seal_ack};
use tfhe_sbc_adapter::commit::ChunkId;
use tfhe_sbc_adapter::intake::Intake;
use tfhe_sbc_adapter::replay::FrameTag;
use tfhe_sbc_adapter::results::frames_subject;
use tfhe_sbc_device::frame::ack::{Ack, AckStatus};
use tfhe_sbc_device::frame::mac::MacKey;
use tokio::net::TcpListener;
use tracing::debug;

mod stored_copy;

/// The gateway's bounds.
#[derive(Clone, Debug)]
pub struct GatewayLimits {
    /// The listener's bounds (connections, per address, idle and frame timeouts).
    pub listener: ListenerLimits,
    /// The most time JetStream may take to acknowledge a publish.
    pub publish_timeout: Duration,
}

impl Default for GatewayLimits {
    fn default() -> Self {
        Self {
            listener: ListenerLimits::default(),
            publish_timeout: Duration::from_secs(5),
        }
    }
}

/// What the gateways of this process did.
#[derive(Debug, Default)]
pub struct GatewayCounts {
    /// Frames published and acknowledged "accepted".
    pub accepted: AtomicU64,
    /// Frames acknowledged "duplicate" (JetStream's de-duplication, or committed already).
    pub duplicates: AtomicU64,
    /// Frames answered "busy" (the stream full or unreachable).
    pub busy: AtomicU64,
    /// Frames refused (any other answer).
    pub refused: AtomicU64,
    /// Connections closed for a timeout.
    pub timeouts: AtomicU64,
}

/// Why a frame was not published.
enum Refusal {
    /// The intake refused it (authentication, window): the matching answer.
    Intake(IntakeError),
    /// JetStream did not acknowledge it (full, unreachable, too slow): "busy", send it again later.
    Busy,
}

/// The gateway: the device protocol in front of JetStream.
pub struct Gateway {
    intake: Arc<Intake>,
    handles: Handles,
    topology: Topology,
    limits: GatewayLimits,
    counts: Arc<GatewayCounts>,
    watermark: Arc<LedgerWatermark>,
}

/// How long a ledger read behind the watermark is asked again (a lagging replica catches up in
/// milliseconds) before the gateway answers "busy" and raises the alarm.
const BEHIND_PATIENCE: Duration = Duration::from_secs(2);

impl Gateway {
    /// A gateway authenticating with `intake` (the key store's devices) and publishing through `handles`,
    /// comparing every ledger it reads with `watermark` (the process's).
    pub fn new(
        intake: Arc<Intake>,
        handles: Handles,
        topology: Topology,
        limits: GatewayLimits,
        counts: Arc<GatewayCounts>,
        watermark: Arc<LedgerWatermark>,
    ) -> Self {
        Self {
            intake,
            handles,
            topology,
            limits,
            counts,
            watermark,
        }
    }

    /// Accepts connections for ever, within the listener's bounds.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) {
        let limits = self.limits.listener.clone();
        listener::serve(listener, limits, move |connection| {
            let gateway = Arc::clone(&self);
            async move {
                let peer = connection.peer;
                let reason = gateway.connection(connection).await;
                debug!(%peer, "connection ended: {reason}");
            }
        })
        .await;
    }

    /// One connection, until it ends; why it ended.
    async fn connection(&self, mut connection: Connection) -> Ended {
        // A frame's body is read only for a registered device.
        let registered = |header: &tfhe_sbc_device::frame::FrameHeader| match self.intake.mac_key(header.device_id) {
            Some(_) => Ok(()),
            None => Err(Ack::new(AckStatus::UnknownDevice, header.device_id, header.sequence)),
        };
        loop {
            let frame = match connection.next_frame(registered).await {
                Ok(frame) => frame,
                Err(ended) => {
                    match &ended {
                        Ended::Idle => {
                            self.counts.timeouts.fetch_add(1, Ordering::Relaxed);
                            metrics::counter!("tsbc_gateway_timeouts_total", "kind" => "idle").increment(1);
                        }
                        Ended::FrameTooSlow => {
                            self.counts.timeouts.fetch_add(1, Ordering::Relaxed);
                        }
                        Ended::Refused(_) => {
                            self.counts.refused.fetch_add(1, Ordering::Relaxed);
                        }
                        Ended::Closed(_) | Ended::Evicted => {}
                    }
                    return ended;
                }
            };
            let (ack, record) = self.answer(&frame).await;
            if let Err(ended) = connection.answer(&record).await {
                return ended;
            }
            if ack.status == AckStatus::Malformed && ack.device_id == 0 {
                return Ended::Refused(ack.status);
            }
        }
    }

    /// Authenticates, checks the window, publishes; the acknowledgement and its sealed record.
    async fn answer(&self, frame: &[u8]) -> (Ack, [u8; tfhe_sbc_device::frame::ack::ACK_BYTES]) {
        let result = self.publish(frame).await;
        let ack = match &result {
            Ok(true) => Ack {
                status: AckStatus::Duplicate,
                ..ack_for(frame, &Ok(()))
            },
            Ok(false) => ack_for(frame, &Ok(())),
            Err(Refusal::Busy) => Ack {
                status: AckStatus::Busy,
                ..ack_for(frame, &Ok(()))
            },
            Err(Refusal::Intake(e)) => ack_for::<()>(frame, &Err(e.clone())),
        };
        let (counter, label) = match ack.status {
            AckStatus::Accepted => (&self.counts.accepted, "accepted"),
            AckStatus::Duplicate => (&self.counts.duplicates, "duplicate"),
            AckStatus::Busy => (&self.counts.busy, "busy"),
            AckStatus::TooOld => (&self.counts.refused, "too_old"),
            AckStatus::UnknownDevice => (&self.counts.refused, "unknown_device"),
            AckStatus::BadCredentials => (&self.counts.refused, "bad_credentials"),
            AckStatus::NotAllowed => (&self.counts.refused, "not_allowed"),
            AckStatus::Expired => (&self.counts.refused, "expired"),
            AckStatus::Malformed => (&self.counts.refused, "malformed"),
        };
        counter.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("tsbc_gateway_frames_total", "answer" => label).increment(1);
        let record = seal_ack(frame, &ack, self.intake.mac_key(ack.device_id));
        (ack, record)
    }

    /// The frame admitted (`Ok(true)`: it was admitted before, a duplicate), or why not. The ledger decides
    /// (window, limits); the frame is published to the work queue, then admitted by compare-and-swap, and
    /// only then acknowledged: an "accepted" answer is a promise the ledger keeps.
    async fn publish(&self, frame: &[u8]) -> Result<bool, Refusal> {
        let parsed = self.intake.verify(frame).map_err(Refusal::Intake)?;
        let header = parsed.header;
        let device_id = header.device_id;
        let chunk = ChunkId::of(&header, FrameTag::of_mac(parsed.tag())).ok_or(Refusal::Intake(
            IntakeError::TooManyChunks {
                count: header.chunk_count,
                limit: tfhe_sbc_adapter::commit::MAX_CHUNKS,
            },
        ))?;
        let started = Instant::now();
        let mut conflicts = Conflicts::new();
        let mut published = false;
        let mut behind_since: Option<Instant> = None;
        loop {
            let (mut ledger, revision) =
                match ledger_store::read(&self.handles.devices, self.mac_key(device_id)?, device_id).await {
                    Ok(read) => read,
                    Err(e) => {
                        crate::log_rate::warn_limited!(
                            device = device_id,
                            "cannot read the ledger, answering busy: {e}"
                        );
                        return Err(Refusal::Busy);
                    }
                };
            let highest = ledger.window.highest();
            if let Reading::Behind { seen, read } = self.watermark.check(device_id, Mark::of(&ledger)) {
                let first_time = behind_since.is_none();
                let since = *behind_since.get_or_insert_with(Instant::now);
                if first_time
                    && !published
                    && self
                        .stored_answer(frame, device_id, chunk, seen.highest, read.highest.is_none())
                        .await?
                {
                    return Ok(true);
                }
                if since.elapsed() < BEHIND_PATIENCE {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                metrics::counter!("tsbc_ledger_behind_total").increment(1);
                crate::log_rate::warn_limited!(
                    device = device_id,
                    %seen,
                    %read,
                    "the device's ledger is behind what this gateway saw (deleted, purged or an older entry \
                     written back by something other than this service?); answering busy until the latest entry \
                     is written back, or until every gateway and worker is restarted without its --watermark-file \
                     (delete those files too if the store was reset on purpose)"
                );
                return Err(Refusal::Busy);
            }
            match ledger.admit(device_id, chunk, &self.topology.ledger_limits) {
                Ok(()) => {}
                Err(e) if e.is_replay() => return Ok(true),
                Err(e) => {
                    if ledger.window.tag(chunk.sequence).is_some() {
                        // Admitted under the number: another frame (the ledger's tag check).
                        metrics::counter!("tsbc_counter_went_back_total").increment(1);
                        crate::log_rate::warn_limited!(
                            device = device_id,
                            sequence = chunk.sequence,
                            "another frame under a number already admitted (the device's counter went back: a \
                             restored or cloned counter file?): answered too old"
                        );
                    }
                    return Err(Refusal::Intake(e));
                }
            }
            if !published
                && highest.is_none_or(|h| chunk.sequence < h)
                && self
                    .stored_answer(frame, device_id, chunk, highest, highest.is_none())
                    .await?
            {
                return Ok(true);
            }
            if !published {
                self.publish_frame(frame, device_id).await?;
                published = true;
            }
            match ledger_store::swap(
                &self.handles.devices,
                self.mac_key(device_id)?,
                device_id,
                &mut ledger,
                revision,
            )
            .await
            {
                Ok(Swap::Done) => {
                    self.watermark.wrote(device_id, Mark::of(&ledger));
                    metrics::histogram!("tsbc_gateway_publish_seconds").record(started.elapsed().as_secs_f64());
                    return Ok(false);
                }
                Ok(Swap::Conflict) if conflicts.redo().await => {}
                Ok(Swap::Conflict) => return Err(Refusal::Busy),
                Err(e) => {
                    // Published, not admitted: a worker admits it (the device's resend is then a duplicate).
                    crate::log_rate::info_limited!(device = device_id, "admission failed, answering busy: {e}");
                    return Err(Refusal::Busy);
                }
            }
        }
    }

    /// The MAC key of `device_id` (its ledger's key), from the key store.
    fn mac_key(&self, device_id: u64) -> Result<&MacKey, Refusal> {
        self.intake
            .mac_key(device_id)
            .ok_or(Refusal::Intake(IntakeError::UnknownDevice(device_id)))
    }

    /// Publishes `frame` to the frames work queue and waits for JetStream's acknowledgement.
    async fn publish_frame(&self, frame: &[u8], device_id: u64) -> Result<(), Refusal> {
        let subject = frames_subject(&self.topology.prefix, device_id);
        let published = tokio::time::timeout(self.limits.publish_timeout, async {
            let ack = self
                .handles
                .js
                .publish(subject, frame.to_vec().into())
                .await
                .map_err(|e| e.to_string())?;
            ack.await.map_err(|e| e.to_string())
        })
        .await;
        match published {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                crate::log_rate::info_limited!(device = device_id, "publish failed, answering busy: {e}");
                Err(Refusal::Busy)
            }
            Err(_) => {
                crate::log_rate::info_limited!(device = device_id, "publish timed out, answering busy");
                Err(Refusal::Busy)
            }
        }
    }
}
