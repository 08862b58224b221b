//! The service's JetStream topology (`docs/operations.md`): the frames stream the gateways publish to and
//! the workers' durable pull consumer read, the devices KV bucket (commit state, compare-and-swap), the
//! results KV bucket (committed frames), the results stream (one announcement per committed message)
//! and the dead-letter stream. Every gateway and worker creates what is missing with the same settings, so
//! any of them may start first.

use async_nats::jetstream::{self, consumer, kv, stream};
use std::time::Duration;
use tfhe_sbc_adapter::commit::{DeviceLedger, LedgerLimits};
use tfhe_sbc_adapter::results::{
    DEAD_STREAM, DEFAULT_PREFIX, DEVICES_BUCKET, FRAMES_STREAM, RESULTS_BUCKET, RESULTS_STREAM,
};
use tfhe_sbc_device::frame::mac::TAG_BYTES;

/// How long a role waits for JetStream at start-up (its streams, buckets and the workers' consumer) before
/// it gives up with an error.
pub const JETSTREAM_PATIENCE: Duration = Duration::from_secs(60);

/// `attempt` until it succeeds or `patience` has passed, pausing 250 ms after the first failure and twice as
/// long after each next one (at most 4 s), with a warning naming `what` at each failure. A cluster that is
/// electing leaders (after a node's restart, or while every role starts at once) refuses or times out
/// requests for a few seconds: start-up waits that out instead of exiting.
pub async fn with_patience<T, F, Fut>(patience: Duration, what: &str, mut attempt: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    let mut pause = Duration::from_millis(250);
    loop {
        match attempt().await {
            Ok(value) => return Ok(value),
            Err(e) if tokio::time::Instant::now() + pause < deadline => {
                tracing::warn!("{what} not ready ({e}); trying again in {pause:?}");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(4));
            }
            Err(e) => {
                return Err(format!(
                    "{e} (for {patience:?}: is JetStream enabled on a quorum of nodes?)"
                ));
            }
        }
    }
}

/// Bounds and durability settings shared by every role.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Subject prefix (`<prefix>.frames.<device>`, `.results.`, `.dead.`).
    pub prefix: String,
    /// Replicas of every stream and bucket (1 on one node, 3 in a cluster).
    pub replicas: usize,
    /// The frames stream's size limit: the backlog of frames not yet stored by a worker. A full stream
    /// refuses new frames (the gateway then answers "busy" and the device sends them again later).
    pub frames_max_bytes: i64,
    /// How long a worker may hold a frame before JetStream redelivers it.
    pub ack_wait: Duration,
    /// Deliveries of one frame JetStream makes at most (-1: no limit, the default). A worker never
    /// dead-letters a frame its ledger admitted, so a limit only makes JetStream stop redelivering it.
    pub max_deliver: i64,
    /// Frames handed out and not yet acknowledged, over all workers.
    pub max_ack_pending: i64,
    /// Frames one worker task handles at once: a frame's work is JetStream round trips (a ledger read, a
    /// stored frame, a compare-and-swap), so frames of different devices overlap their waits.
    pub frames_in_flight: usize,
    /// The limits the gateways' admission enforces on each device's ledger.
    pub ledger_limits: LedgerLimits,
}

impl Default for Topology {
    fn default() -> Self {
        Self {
            prefix: DEFAULT_PREFIX.to_owned(),
            replicas: 1,
            frames_max_bytes: 1 << 30,
            ack_wait: Duration::from_secs(30),
            max_deliver: -1,
            max_ack_pending: 1024,
            frames_in_flight: 8,
            ledger_limits: LedgerLimits::default(),
        }
    }
}

/// The workers' shared durable consumer.
pub const WORKERS_CONSUMER: &str = "workers";

/// How many pull requests the workers' consumer holds at once: NATS's default (a consumer made without
/// one gets 512), named so that a consumer changed to hold fewer is seen and set back.
pub const WORKERS_MAX_WAITING: i64 = 512;

/// Handles on everything the roles use.
pub struct Handles {
    /// The JetStream context.
    pub js: jetstream::Context,
    /// The frames stream.
    pub frames: stream::Stream,
    /// The devices bucket.
    pub devices: kv::Store,
    /// The results bucket (committed frames).
    pub results: kv::Store,
}

impl Topology {
    /// Sets the dead-letter stream to drop its oldest letters if something made it refuse new ones (an
    /// earlier version, or a client of NATS with the roles' update right: full, it stops every worker behind
    /// the frames it cannot dead-letter). At start-up, and by every worker every 2 s. Not fatal: a
    /// least-permission user without the update right only warns.
    pub async fn keep_dead_letters_dropping_oldest(js: &jetstream::Context) {
        let Ok(mut dead) = js.get_stream(DEAD_STREAM).await else {
            return;
        };
        let Ok(info) = dead.info().await else { return };
        let existing = info.config.clone();
        if existing.discard == stream::DiscardPolicy::Old {
            return;
        }
        metrics::counter!("tsbc_dead_letters_policy_restored_total").increment(1);
        match js
            .update_stream(stream::Config {
                discard: stream::DiscardPolicy::Old,
                ..existing
            })
            .await
        {
            Ok(_) => crate::log_rate::warn_limited!(
                "the dead-letter stream {DEAD_STREAM} refused new letters when full (made so by an earlier version \
                 or changed by a client of NATS): it drops its oldest letters again"
            ),
            Err(e) => crate::log_rate::warn_limited!(
                "the dead-letter stream {DEAD_STREAM} refuses new letters when full, which stops the workers: an \
                 administrator should set its discard policy to old ({e})"
            ),
        }
    }

    fn stream_config(&self, name: &str, subjects: &str, max_bytes: i64) -> stream::Config {
        stream::Config {
            name: name.to_owned(),
            subjects: vec![format!("{}.{subjects}.>", self.prefix)],
            storage: stream::StorageType::File,
            num_replicas: self.replicas,
            max_bytes,
            discard: stream::DiscardPolicy::New,
            max_message_size: 1 << 20,
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        }
    }

    /// The frames stream: a work queue (a frame leaves it once a worker acknowledged it, so `max_bytes`
    /// bounds the backlog, not the history). Gateways publish frames without a message id: the ledger
    /// de-duplicates, and a message id anyone on NATS can pre-empt must not decide an answer to a device.
    fn frames_config(&self) -> stream::Config {
        stream::Config {
            retention: stream::RetentionPolicy::WorkQueue,
            ..self.stream_config(FRAMES_STREAM, "frames", self.frames_max_bytes)
        }
    }

    /// The dead-letter stream: frames a worker refused, with the reason, for an operator to look at. When
    /// full (1 GiB) it drops its oldest letters: a worker never waits for room there (an independent attack
    /// filled it with junk, and with discard new every worker then stopped behind the frames it could not
    /// dead-letter). The results stream keeps discard new: an announcement is never dropped.
    fn dead_config(&self) -> stream::Config {
        stream::Config {
            discard: stream::DiscardPolicy::Old,
            ..self.stream_config(DEAD_STREAM, "dead", 1 << 30)
        }
    }

    /// [`Topology::open`], tried again while JetStream is not ready ([`with_patience`]).
    pub async fn open_when_ready(&self, client: async_nats::Client, patience: Duration) -> Result<Handles, String> {
        with_patience(patience, "JetStream", || self.open(client.clone())).await
    }

    /// Connects the JetStream context and creates what is missing.
    pub async fn open(&self, client: async_nats::Client) -> Result<Handles, String> {
        let js = jetstream::new(client);
        let mut frames = js
            .get_or_create_stream(self.frames_config())
            .await
            .map_err(|e| format!("cannot create the frames stream {FRAMES_STREAM}: {e}"))?;
        // A stream made before (by an earlier run or another role) keeps its configuration: the bound this
        // role was given (--stream-max-bytes) is applied to it, never silently ignored.
        let existing = frames.cached_info().config.clone();
        if existing.max_bytes != self.frames_max_bytes {
            let from = existing.max_bytes;
            js.update_stream(stream::Config {
                max_bytes: self.frames_max_bytes,
                ..existing
            })
            .await
            .map_err(|e| format!("cannot set the frames stream {FRAMES_STREAM}'s max_bytes: {e}"))?;
            frames = js
                .get_stream(FRAMES_STREAM)
                .await
                .map_err(|e| format!("cannot read the frames stream {FRAMES_STREAM}: {e}"))?;
            tracing::info!(
                from,
                to = self.frames_max_bytes,
                "the frames stream's max_bytes set to --stream-max-bytes (give every role the same value)"
            );
        }
        js.get_or_create_stream(self.stream_config(RESULTS_STREAM, "results", 1 << 30))
            .await
            .map_err(|e| format!("cannot create the stream {RESULTS_STREAM}: {e}"))?;
        js.get_or_create_stream(self.dead_config())
            .await
            .map_err(|e| format!("cannot create the stream {DEAD_STREAM}: {e}"))?;
        Self::keep_dead_letters_dropping_oldest(&js).await;
        // The devices' commit states (compare-and-swap) and the committed frames: KV buckets of one value
        // per key. Frames are small (up to 33 KB) and read one by one, which a KV direct get does in one
        // round trip; an object store would make and drop a consumer per read.
        // A ledger entry is at most its encoding's bound and its tag (well under 1 MiB for any limits the
        // command line takes; clamped to what the bucket's i32 can say).
        let ledger_bytes = DeviceLedger::max_encoded_bytes(&self.ledger_limits) + TAG_BYTES;
        let devices = self
            .bucket(&js, DEVICES_BUCKET, i32::try_from(ledger_bytes).unwrap_or(i32::MAX))
            .await?;
        let results = self.bucket(&js, RESULTS_BUCKET, 1 << 20).await?;
        Ok(Handles {
            js,
            frames,
            devices,
            results,
        })
    }

    /// The KV bucket `name` (created if missing), values of at most `max_value_size` bytes.
    async fn bucket(&self, js: &jetstream::Context, name: &str, max_value_size: i32) -> Result<kv::Store, String> {
        match js.get_key_value(name).await {
            Ok(store) => Ok(store),
            Err(_) => js
                .create_key_value(kv::Config {
                    bucket: name.to_owned(),
                    history: 1,
                    num_replicas: self.replicas,
                    storage: stream::StorageType::File,
                    max_value_size,
                    ..Default::default()
                })
                .await
                .map_err(|e| format!("cannot create the KV bucket {name}: {e}")),
        }
    }

    /// The workers' durable pull consumer as every worker sets it.
    fn workers_config(&self) -> consumer::pull::Config {
        consumer::pull::Config {
            durable_name: Some(WORKERS_CONSUMER.to_owned()),
            ack_policy: consumer::AckPolicy::Explicit,
            ack_wait: self.ack_wait,
            max_deliver: self.max_deliver,
            max_ack_pending: self.max_ack_pending,
            max_waiting: WORKERS_MAX_WAITING,
            ..Default::default()
        }
    }

    /// Whether `config`, the consumer as JetStream holds it, is the workers' ([`Self::workers_config`]):
    /// every frame of the stream, whole, explicit acknowledgements, this role's limits, nothing that limits
    /// or pauses a pull. A NATS user with the workers' rights can change it: an independent attack had
    /// acknowledged messages never announced with a filter that matches nothing or one delivery, and (on
    /// the check that compared only those) with `headers_only` (the workers got empty bodies),
    /// `max_batch: 1` or `max_expires: 1ms` (pulls refused). Every field is named, so that a field a new
    /// async-nats adds must be judged here: those that cannot lose or delay a frame are ignored, each
    /// with its reason.
    pub fn is_workers_config(&self, config: &consumer::Config) -> bool {
        let consumer::Config {
            // Names and labels: how the consumer is called, not what it delivers.
            deliver_subject,
            durable_name: _,
            name: _,
            description: _,
            metadata: _,
            deliver_group,
            deliver_policy,
            ack_policy,
            ack_wait,
            max_deliver,
            filter_subject,
            filter_subjects,
            replay_policy,
            rate_limit,
            // Push consumers' sampling of acknowledgement times for advisories: delivers the same.
            sample_frequency: _,
            max_waiting,
            max_ack_pending,
            headers_only,
            flow_control,
            idle_heartbeat,
            max_batch,
            max_bytes,
            max_expires,
            inactive_threshold,
            // The consumer's replicas: 0 (the stream's) is what the workers create; a user that lowers it
            // weakens the consumer's durability, which NATS's own view of the cluster shows.
            num_replicas: _,
            memory_storage,
            backoff,
            priority_policy,
            priority_groups,
            // Only with a priority policy, which must be none.
            priority_timeout: _,
            pause_until,
        } = config;
        deliver_subject.is_none()
            && deliver_group.is_none()
            && filter_subject.is_empty()
            && filter_subjects.is_empty()
            && *deliver_policy == consumer::DeliverPolicy::All
            && *ack_policy == consumer::AckPolicy::Explicit
            && *ack_wait == self.ack_wait
            && *max_deliver == self.max_deliver
            && *replay_policy == consumer::ReplayPolicy::Instant
            && *rate_limit == 0
            && *max_waiting == WORKERS_MAX_WAITING
            && *max_ack_pending == self.max_ack_pending
            && !headers_only
            && !flow_control
            && idle_heartbeat.is_zero()
            && *max_batch == 0
            && *max_bytes == 0
            && max_expires.is_zero()
            && inactive_threshold.is_zero()
            && !memory_storage
            && backoff.is_empty()
            && *priority_policy == consumer::PriorityPolicy::None
            && priority_groups.is_empty()
            && pause_until.is_none()
    }

    /// The workers' durable pull consumer (created if missing, set back to [`Self::workers_config`] if
    /// JetStream holds another configuration).
    pub async fn workers_consumer(&self, frames: &stream::Stream) -> Result<consumer::PullConsumer, String> {
        let mut consumer = frames
            .get_or_create_consumer(WORKERS_CONSUMER, self.workers_config())
            .await
            .map_err(|e| format!("cannot create the consumer {WORKERS_CONSUMER}: {e}"))?;
        let config = consumer
            .info()
            .await
            .map_err(|e| format!("cannot read the consumer {WORKERS_CONSUMER}: {e}"))?
            .config
            .clone();
        if !self.is_workers_config(&config) {
            self.restore_workers_consumer(frames, &config).await?;
            consumer = frames
                .get_consumer(WORKERS_CONSUMER)
                .await
                .map_err(|e| format!("cannot read the consumer {WORKERS_CONSUMER}: {e}"))?;
        }
        Ok(consumer)
    }

    /// Sets the workers' consumer back to [`Self::workers_config`] (found as `found`), with an alarm.
    pub async fn restore_workers_consumer(
        &self,
        frames: &stream::Stream,
        found: &consumer::Config,
    ) -> Result<(), String> {
        metrics::counter!("tsbc_consumer_restored_total").increment(1);
        crate::log_rate::warn_limited!(
            filter = %found.filter_subject,
            filters = ?found.filter_subjects,
            max_deliver = found.max_deliver,
            "the workers' consumer {WORKERS_CONSUMER} was changed by something other than a worker (or a \
             worker with other limits: give every worker the same); set back"
        );
        frames
            .update_consumer(self.workers_config())
            .await
            .map(|_| ())
            .map_err(|e| format!("cannot set the consumer {WORKERS_CONSUMER} back: {e}"))
    }
}
