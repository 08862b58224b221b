//! A worker's deliveries: the continuous pull from the workers' durable consumer, up to
//! [`Topology::frames_in_flight`](crate::jetstream::Topology) frames at once, and what ends each delivery
//! (JetStream's acknowledgement once the frame is committed or dead-lettered, or a negative acknowledgement
//! with a delay that leaves it for redelivery).

use super::{Outcome, Retry, UNADMITTED_WAIT, Worker};
use crate::jetstream::{JETSTREAM_PATIENCE, with_patience};
use async_nats::HeaderMap;
use async_nats::jetstream::message::{AckKind, Message};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::results::dead_letter_subject;
use tracing::{info, warn};

/// How long a frame that failed for a transient reason waits before its next delivery: 250 ms after its
/// first delivery, twice as long after each next one, at most 10 s.
pub fn retry_delay(delivered: i64) -> Duration {
    let doublings = u32::try_from(delivered.saturating_sub(1)).unwrap_or(0).min(6);
    (Duration::from_millis(250) * 2u32.pow(doublings)).min(Duration::from_secs(10))
}

impl Worker {
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
            let mut pull_failed = false;
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
                            // A consumer changed to refuse the workers' pulls ends every pull at once: the
                            // line is limited, and the configuration checked before the next pull.
                            crate::log_rate::warn_limited!("worker: pull ended: {e}");
                            lag_measured = Instant::now() - Duration::from_secs(2);
                            pull_failed = true;
                        }
                        None => break,
                    },
                    // Idle too: a consumer changed to deliver nothing must still be seen.
                    () = tokio::time::sleep_until((lag_measured + Duration::from_secs(2)).into()) => {}
                }
                // Consumer lag (frames not yet delivered, and delivered but unacknowledged) and the consumer's
                // configuration (set back if something changed it), every 2 s, and at once after a failed
                // pull or a delivery without its frame.
                if self.consumer_suspect.swap(false, Ordering::Relaxed) {
                    lag_measured = Instant::now() - Duration::from_secs(2);
                }
                if lag_measured.elapsed() >= Duration::from_secs(2) {
                    lag_measured = Instant::now();
                    crate::jetstream::Topology::keep_dead_letters_dropping_oldest(&self.handles.js).await;
                    match consumer.info().await {
                        Ok(info) => {
                            metrics::gauge!("tsbc_consumer_pending_frames").set(info.num_pending as f64);
                            metrics::gauge!("tsbc_consumer_unacknowledged_frames").set(info.num_ack_pending as f64);
                            if !self.topology.is_workers_config(&info.config) {
                                let found = info.config.clone();
                                if let Err(e) = self
                                    .topology
                                    .restore_workers_consumer(&self.handles.frames, &found)
                                    .await
                                {
                                    crate::log_rate::warn_limited!("worker: {e}");
                                }
                            }
                        }
                        // Gone (deleted, or made to expire by an inactive threshold a client of NATS set: an
                        // independent attack had acknowledged messages never announced that way): made again
                        // (every frame still in the work queue is delivered), then pulled from anew.
                        Err(e) => {
                            crate::log_rate::warn_limited!(
                                "worker: the consumer {} cannot be read ({e}): made again",
                                crate::jetstream::WORKERS_CONSUMER
                            );
                            metrics::counter!("tsbc_consumer_restored_total").increment(1);
                            match self.topology.workers_consumer(&self.handles.frames).await {
                                Ok(again) => {
                                    consumer = again;
                                    pull_failed = true;
                                }
                                Err(e) => crate::log_rate::warn_limited!("worker: {e}"),
                            }
                        }
                    }
                }
                if pull_failed {
                    break;
                }
            }
            // The frames in hand are finished before the next pull (each ends acknowledged or left for
            // redelivery).
            while in_flight.next().await.is_some() {}
            if pull_failed {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
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
        // A delivery without its frame: the consumer was set to deliver headers only (JetStream then says
        // the body's size in `Nats-Msg-Size`). The frame is in the stream; left for redelivery once the
        // consumer is set back, never dead-lettered as bytes that are not a frame (an acknowledged message
        // would be lost: an independent attack).
        if message
            .headers
            .as_ref()
            .is_some_and(|headers| headers.get("Nats-Msg-Size").is_some())
        {
            metrics::counter!("tsbc_worker_headers_only_total").increment(1);
            crate::log_rate::warn_limited!(
                "worker: a delivery without its frame (the workers' consumer set to headers only?): left for \
                 redelivery, the consumer checked"
            );
            self.consumer_suspect.store(true, Ordering::Relaxed);
            let _ = message.ack_with(AckKind::Nak(Some(Duration::from_secs(1)))).await;
            return;
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
                crate::log_rate::warn_limited!(
                    "worker: frame left for redelivery in {delay:?} (delivery {delivered}): {e}"
                );
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
                    crate::log_rate::warn_limited!("worker: cannot dead-letter a frame ({reason}): {e}");
                    let _ = message.ack_with(AckKind::Nak(Some(Duration::from_secs(1)))).await;
                    return;
                }
                self.counts.dead_lettered.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("tsbc_worker_frames_total", "outcome" => "dead_lettered").increment(1);
                crate::log_rate::warn_limited!(device, "worker: frame dead-lettered: {reason}");
            }
        }
        // A plain acknowledgement, not JetStream's confirmed one: nothing waits on its confirmation, since
        // the frame is committed (or dead-lettered) already, and a lost one only brings a redelivery that
        // finds the frame stored. Waiting for it cost a round trip and the work queue's delete per frame.
        if let Err(e) = message.ack().await {
            warn!("worker: acknowledgement to JetStream failed: {e}");
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
