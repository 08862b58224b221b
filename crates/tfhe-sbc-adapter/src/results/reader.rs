//! [`ResultsReader`]: the committed messages of the JetStream service, as tfhe-rs values, for a Rust cloud
//! service that computes on them (feature `nats`).
//!
//! It reads the announcements ([`MessageCommitted`]) of the results stream, a device's or all, loads each
//! message's stored frames from the results bucket, verifies them again with the key set
//! ([`KeyedIntake::committed`]: MAC, key id, frame kinds) and converts them with the key set's converter
//! ([`KeyedIntake::convert`], or `frame_readings` for `FheUint` readings).
//!
//! ```no_run
//! # async fn run(keyed: tfhe_sbc_adapter::key_store::IntegerKeyedIntake) -> Result<(), Box<dyn std::error::Error>> {
//! use tfhe_sbc_adapter::results::reader::ResultsReader;
//!
//! let client = async_nats::connect("nats://127.0.0.1:4222").await?;
//! let reader = ResultsReader::connect(client, keyed).await?;
//! for message in reader.messages(Some(7), 100).await? {
//!     for frame in reader.load(&message).await? {
//!         let readings = reader.keyed().frame_readings::<tfhe::FheUint16Id>(&frame)?;
//!         println!("{} readings from device 7", readings.len());
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use super::{DEFAULT_PREFIX, MessageCommitted, RESULTS_BUCKET, RESULTS_STREAM};
use crate::ResultsError;
use crate::interop::{Converter, Input};
use crate::keyed_intake::KeyedIntake;
use async_nats::jetstream::{self, consumer, kv};
use futures_util::StreamExt;
use std::time::{Duration, Instant};

fn nats(what: &'static str) -> impl FnOnce(&dyn core::fmt::Display) -> ResultsError {
    move |e| ResultsError::Store(format!("{what}: {e}"))
}

/// How long [`ResultsReader::messages`] waits for the next announcement it knows is there.
pub const READ_PATIENCE: Duration = Duration::from_secs(30);

/// Reads committed messages and converts them with one key set.
pub struct ResultsReader<C: Converter> {
    js: jetstream::Context,
    frames: kv::Store,
    keyed: KeyedIntake<C>,
    prefix: String,
}

impl<C: Converter> ResultsReader<C> {
    /// A reader over the service's streams on `client`, converting with `keyed` (the key set the workers
    /// verify with; its server key is the one computations use).
    pub async fn connect(client: async_nats::Client, keyed: KeyedIntake<C>) -> Result<Self, ResultsError> {
        let js = jetstream::new(client);
        let frames = js
            .get_key_value(RESULTS_BUCKET)
            .await
            .map_err(|e| nats("open the results bucket")(&e))?;
        Ok(Self {
            js,
            frames,
            keyed,
            prefix: DEFAULT_PREFIX.to_owned(),
        })
    }

    /// The key set's intake and converter.
    pub fn keyed(&self) -> &KeyedIntake<C> {
        &self.keyed
    }

    /// Up to `max` committed messages, oldest first: of `device_id`, or of every device; every message
    /// announced before the call (up to `max`), and none missing from the middle or the end. A results
    /// stream that stops delivering for [`READ_PATIENCE`] is an [`ResultsError::Store`].
    pub async fn messages(&self, device_id: Option<u64>, max: usize) -> Result<Vec<MessageCommitted>, ResultsError> {
        let stream = self
            .js
            .get_stream(RESULTS_STREAM)
            .await
            .map_err(|e| nats("open the results stream")(&e))?;
        let filter_subject = match device_id {
            Some(device) => super::results_subject(&self.prefix, device),
            None => format!("{}.results.>", self.prefix),
        };
        let mut consumer = stream
            .create_consumer(consumer::pull::Config {
                filter_subject,
                ack_policy: consumer::AckPolicy::None,
                // Deleted below; if this reader dies first, JetStream drops it after a minute unused.
                inactive_threshold: Duration::from_secs(60),
                ..Default::default()
            })
            .await
            .map_err(|e| nats("create a reading consumer")(&e))?;
        let records = Self::announcements(&mut consumer, max, |id| self.keyed.intake().mac_key(id)).await;
        if let Ok(info) = consumer.info().await {
            let _ = stream.delete_consumer(&info.name).await;
        }
        records
    }

    /// Up to `max` announcements from `consumer`, one per message (device, first sequence): as many as it had
    /// pending when it was made (an empty fetch is no proof of the end: a loaded server may answer a fetch
    /// late). A record that does not open under the key store (not sealed by the service, or of another key
    /// set) and a repeated announcement (a repair pass, or a copy anyone on NATS published) are skipped.
    async fn announcements<'k>(
        consumer: &mut consumer::Consumer<consumer::pull::Config>,
        max: usize,
        key_of: impl Fn(u64) -> Option<&'k tfhe_sbc_device::frame::mac::MacKey>,
    ) -> Result<Vec<MessageCommitted>, ResultsError> {
        let pending = consumer
            .info()
            .await
            .map_err(|e| nats("read the reading consumer's state")(&e))?
            .num_pending;
        let pending = usize::try_from(pending).unwrap_or(usize::MAX);
        let mut records = Vec::with_capacity(max.min(pending).min(1 << 16));
        let mut seen = std::collections::HashSet::with_capacity(max.min(pending).min(1 << 16));
        let mut consumed = 0usize;
        let mut last_progress = Instant::now();
        while consumed < pending && records.len() < max {
            let mut batch = consumer
                .fetch()
                .max_messages((pending - consumed).min(1000))
                .expires(Duration::from_secs(1))
                .messages()
                .await
                .map_err(|e| nats("fetch announcements")(&e))?;
            let before = consumed;
            while let Some(message) = batch.next().await {
                let message = message.map_err(|e| nats("read an announcement")(&e))?;
                consumed += 1;
                // A record that does not open under the key store was not sealed by the service (or names a
                // device of another key set): skipped.
                let Some(record) = MessageCommitted::open(&message.payload, &key_of) else {
                    continue;
                };
                if records.len() < max && seen.insert((record.device_id, record.first_sequence)) {
                    records.push(record);
                }
            }
            if consumed > before {
                last_progress = Instant::now();
            } else if last_progress.elapsed() >= READ_PATIENCE {
                return Err(ResultsError::Store(format!(
                    "the results stream delivered {consumed} of {pending} announcements, then nothing for {} s",
                    READ_PATIENCE.as_secs()
                )));
            }
        }
        Ok(records)
    }

    /// The stored frames of `message`, in chunk order; each must be bound by the service as the frame its
    /// device's ledger admitted ([`super::open_stored_frame`]) and be the chunk `message` names.
    pub async fn frames(&self, message: &MessageCommitted) -> Result<Vec<Vec<u8>>, ResultsError> {
        let mut frames = Vec::with_capacity(message.chunk_count as usize);
        let device_key = self
            .keyed
            .intake()
            .mac_key(message.device_id)
            .ok_or(ResultsError::UnknownDevice(message.device_id))?;
        for key in message.frame_keys() {
            let value = self
                .frames
                .get(&key)
                .await
                .map_err(|e| nats("get a stored frame")(&e))?
                .ok_or_else(|| ResultsError::MissingStoredFrame(key.clone()))?;
            // Bound by a worker: the frame the ledger admitted under its number, not any authentic frame
            // someone with access to NATS put there (a clone's refused frame from the dead letters, say).
            let bytes = super::open_stored_frame(device_key, message.device_id, &value)
                .ok_or(ResultsError::UnboundStoredFrame(key))?;
            // The frame must be the chunk the announcement names (its header is under its MAC, which
            // `load` verifies): an announcement cannot borrow another message's frames.
            let names_it =
                crate::intake::header_of(bytes).is_some_and(|header| message.names(&header, frames.len() as u32));
            if !names_it {
                return Err(ResultsError::BadAnnouncement);
            }
            frames.push(bytes.to_vec());
        }
        Ok(frames)
    }

    /// The inputs of `message`, verified again, ready for [`KeyedIntake::convert`] (or `frame_readings`).
    pub async fn load(&self, message: &MessageCommitted) -> Result<Vec<Input<C>>, ResultsError> {
        let frames = self.frames(message).await?;
        self.keyed.committed(&frames).map_err(ResultsError::StoredFrameRejected)
    }
}
