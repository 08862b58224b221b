//! The results stream's announcements (`tfhe_sbc_adapter::results::MessageCommitted`, sealed), read as
//! they are, every key set's: the reader classifies them (`super::classify`). Bounded: at most `max`
//! distinct records, and every NATS call within the patience (`--read-timeout`).

use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt;
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::results::{DEFAULT_PREFIX, RESULTS_STREAM, results_subject};

/// Up to `max` distinct announcements (of `device`, or of every device), oldest first: every one the
/// results stream held when the reading began (an empty fetch is no proof of the end); an error if the
/// stream delivers nothing for `patience`.
pub(super) async fn read(
    js: &jetstream::Context,
    device: Option<u64>,
    max: usize,
    patience: Duration,
) -> Result<Vec<Vec<u8>>, String> {
    let stream = within(patience, "open the results stream", js.get_stream(RESULTS_STREAM))
        .await?
        .map_err(|e| format!("open the results stream {RESULTS_STREAM}: {e}"))?;
    let filter_subject = match device {
        Some(device) => results_subject(DEFAULT_PREFIX, device),
        None => format!("{DEFAULT_PREFIX}.results.>"),
    };
    let config = consumer::pull::Config {
        filter_subject,
        ack_policy: consumer::AckPolicy::None,
        // Deleted below; if this reader dies first, JetStream drops it after a minute unused.
        inactive_threshold: Duration::from_secs(60),
        ..Default::default()
    };
    let mut consumer = within(patience, "create a reading consumer", stream.create_consumer(config))
        .await?
        .map_err(|e| format!("create a reading consumer: {e}"))?;
    let records = drain(&mut consumer, max, patience).await;
    if let Ok(info) = consumer.info().await {
        let _ = stream.delete_consumer(&info.name).await;
    }
    records
}

/// [`read`]'s loop on `consumer`.
async fn drain(
    consumer: &mut consumer::Consumer<consumer::pull::Config>,
    max: usize,
    patience: Duration,
) -> Result<Vec<Vec<u8>>, String> {
    let pending = within(patience, "read the reading consumer's state", consumer.info())
        .await?
        .map_err(|e| format!("read the reading consumer's state: {e}"))?
        .num_pending;
    let pending = usize::try_from(pending).unwrap_or(usize::MAX);
    let mut records = Vec::with_capacity(max.min(pending).min(1 << 16));
    let mut seen = HashSet::with_capacity(max.min(pending).min(1 << 16));
    let (mut consumed, mut last_progress) = (0usize, Instant::now());
    while consumed < pending && records.len() < max {
        let fetch = consumer
            .fetch()
            .max_messages((pending - consumed).min(1000))
            .expires(Duration::from_secs(1))
            .messages();
        let mut batch = within(patience, "fetch announcements", fetch)
            .await?
            .map_err(|e| format!("fetch announcements: {e}"))?;
        let before = consumed;
        while let Some(message) = within(patience, "read an announcement", batch.next()).await? {
            let message = message.map_err(|e| format!("read an announcement: {e}"))?;
            consumed += 1;
            // A repeat (a repair pass, a copy anyone published) is listed once.
            if records.len() < max && seen.insert(message.payload.to_vec()) {
                records.push(message.payload.to_vec());
            }
        }
        if consumed > before {
            last_progress = Instant::now();
        } else if last_progress.elapsed() >= patience {
            return Err(format!(
                "the results stream delivered {consumed} of {pending} announcements, then nothing for {} s",
                patience.as_secs()
            ));
        }
    }
    Ok(records)
}

/// `future`'s output, or an error naming `what` after `patience`.
pub(super) async fn within<T>(patience: Duration, what: &str, future: impl Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(patience, future)
        .await
        .map_err(|_| format!("{what}: no answer from NATS within {} s", patience.as_secs()))
}
