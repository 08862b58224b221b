//! The service's processes tell each other their ledger watermarks ([`crate::ledger_watermark`]), so that a
//! gateway or worker that never read a device's ledger - a second gateway, one added later, one restarted
//! without its `--watermark-file` - still refuses that ledger rolled back below what another process saw.
//!
//! A **mark** says "device `d`'s ledger was at least at generation `g` with highest number `h`, and its entry
//! at `g` had fingerprint `f`". Each process
//! publishes the marks that moved, every 100 ms, on `<prefix>.watermark.marks`, and all of its marks when a
//! process starting up asks on `<prefix>.watermark.sync` (at most once a second); every process merges what
//! it hears into its watermarks (the later of the two, field by field). A mark is only ever a lower bound,
//! so an old one heard again changes nothing and needs no freshness: what it needs is authenticity, since
//! NATS is a store and a bus the service does not trust (docs/security.md). Each mark carries a 16-byte tag
//! under the device's MAC key, which every gateway and worker holds (the key store's), over a domain, the
//! device id and the mark:
//!
//! ```text
//! record (49 bytes): device id u64 LE | generation u64 LE | has a number u8 (0 or 1) | highest u64 LE |
//!                    fingerprint u64 LE (0: not known) |
//!                    tag (16 bytes): MAC of "TSWM watermark1\0" | the 33 bytes before it
//! message: 1 to 1,024 records, nothing else
//! ```
//!
//! A mark under a generation the hearer knows another fingerprint of is a fork (two chains of writes from
//! an entry written back, [`crate::ledger_watermark::Mark::fingerprint`]): both processes then refuse the
//! device and raise `tsbc_ledger_fork_total`.
//!
//! A record that does not verify, of a device the key store does not list, or in a message that is not a
//! whole number of records is dropped and counted (`tsbc_watermark_refused_total`): a client of NATS can
//! delay or drop marks but not raise a watermark, which would only make the roles answer "busy".
//!
//! What it does not do: a process that starts while no process that saw a device's newer ledger runs (all
//! of them restarted without their files) has nothing to hear; and a rollback written between a process's
//! write and the next 100 ms publication reaches the others' watermarks late (docs/security.md).

use crate::ledger_watermark::{LedgerWatermark, Mark};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::intake::Intake;
use tfhe_sbc_device::frame::mac::{MacKey, TAG_BYTES};
use tracing::{debug, warn};

/// How long a process starting up listens for the others' marks before it serves devices.
pub const SYNC_WAIT: Duration = Duration::from_millis(500);

/// How often the marks that moved are published.
const PUBLISH_EVERY: Duration = Duration::from_millis(100);

/// The fewest seconds between two publications of all marks at others' request.
const FULL_AT_MOST_EVERY: Duration = Duration::from_secs(1);

/// The most records in one message (49 KiB: far below NATS's 1 MiB default payload limit).
pub const RECORDS_PER_MESSAGE: usize = 1024;

/// The domain of a mark's tag: no frame's ("TSBC"), ledger's ("TSLG"), stored frame's ("TSST") or
/// announcement's ("TSAN").
const MARK_DOMAIN: &[u8; 16] = b"TSWM watermark1\0";

/// The bytes of a record before its tag.
const BODY_BYTES: usize = 8 + 8 + 1 + 8 + 8;

/// One record: a mark and its tag.
pub const RECORD_BYTES: usize = BODY_BYTES + TAG_BYTES;

/// The subjects of one deployment (`prefix` as in [`crate::jetstream::Topology::prefix`]).
#[derive(Clone, Debug)]
pub struct Subjects {
    marks: String,
    sync: String,
}

impl Subjects {
    /// `<prefix>.watermark.marks` and `<prefix>.watermark.sync`.
    pub fn new(prefix: &str) -> Self {
        Self {
            marks: format!("{prefix}.watermark.marks"),
            sync: format!("{prefix}.watermark.sync"),
        }
    }
}

/// The 33 bytes a record's tag authenticates (after the domain).
fn body(device_id: u64, mark: Mark) -> [u8; BODY_BYTES] {
    let mut body = [0u8; BODY_BYTES];
    body[..8].copy_from_slice(&device_id.to_le_bytes());
    body[8..16].copy_from_slice(&mark.generation.to_le_bytes());
    body[16] = u8::from(mark.highest.is_some());
    body[17..25].copy_from_slice(&mark.highest.unwrap_or(0).to_le_bytes());
    body[25..].copy_from_slice(&mark.fingerprint.to_le_bytes());
    body
}

fn tag(key: &MacKey, body: &[u8; BODY_BYTES]) -> [u8; TAG_BYTES] {
    let mut message = [0u8; MARK_DOMAIN.len() + BODY_BYTES];
    message[..MARK_DOMAIN.len()].copy_from_slice(MARK_DOMAIN);
    message[MARK_DOMAIN.len()..].copy_from_slice(body);
    key.tag(&message)
}

/// Appends the record of `device_id`'s `mark`, tagged under `key`, to `message`.
pub fn push_record(message: &mut Vec<u8>, key: &MacKey, device_id: u64, mark: Mark) {
    let body = body(device_id, mark);
    message.extend_from_slice(&body);
    message.extend_from_slice(&tag(key, &body));
}

/// The marks of a `message` whose tags verify under their devices' keys (`key_of`: `None` for a device
/// the key store does not list), and how many records were refused. A message that is not 1 to
/// [`RECORDS_PER_MESSAGE`] whole records is refused whole.
pub fn open_records<'k>(message: &[u8], key_of: impl Fn(u64) -> Option<&'k MacKey>) -> (Vec<(u64, Mark)>, usize) {
    let records = message.len() / RECORD_BYTES;
    if !message.len().is_multiple_of(RECORD_BYTES) || records == 0 || records > RECORDS_PER_MESSAGE {
        return (Vec::new(), records.max(1));
    }
    let mut marks = Vec::with_capacity(records);
    let mut refused = 0;
    for record in message.chunks_exact(RECORD_BYTES) {
        let (body, tag) = record.split_at(BODY_BYTES);
        let body: &[u8; BODY_BYTES] = body.try_into().unwrap_or(&[0; BODY_BYTES]);
        let device_id = u64::from_le_bytes(body[..8].try_into().unwrap_or_default());
        let generation = u64::from_le_bytes(body[8..16].try_into().unwrap_or_default());
        let highest = u64::from_le_bytes(body[17..25].try_into().unwrap_or_default());
        let fingerprint = u64::from_le_bytes(body[25..].try_into().unwrap_or_default());
        let highest = match body[16] {
            0 if highest == 0 => Some(None),
            1 => Some(Some(highest)),
            _ => None,
        };
        let verified = key_of(device_id).is_some_and(|key| {
            let mut message = [0u8; MARK_DOMAIN.len() + BODY_BYTES];
            message[..MARK_DOMAIN.len()].copy_from_slice(MARK_DOMAIN);
            message[MARK_DOMAIN.len()..].copy_from_slice(body);
            key.verify(&message, tag)
        });
        match highest {
            Some(highest) if verified => marks.push((
                device_id,
                Mark {
                    generation,
                    highest,
                    fingerprint,
                },
            )),
            _ => refused += 1,
        }
    }
    (marks, refused)
}

/// One process's side of the exchange: the watermarks it publishes from and merges into (its gateway's and
/// its workers').
pub struct Gossip {
    client: async_nats::Client,
    subjects: Subjects,
    intake: Arc<Intake>,
    watermarks: Vec<Arc<LedgerWatermark>>,
}

impl Gossip {
    /// The exchange of `watermarks` on `client`, tags under `intake`'s device keys.
    pub fn new(
        client: async_nats::Client,
        subjects: Subjects,
        intake: Arc<Intake>,
        watermarks: Vec<Arc<LedgerWatermark>>,
    ) -> Self {
        Self {
            client,
            subjects,
            intake,
            watermarks,
        }
    }

    /// Subscribes, asks the running processes for their marks, and returns the task that keeps exchanging
    /// them; the caller waits [`SYNC_WAIT`] before it serves devices.
    pub async fn start(self) -> Result<impl Future<Output = Result<(), String>>, String> {
        let failed = |what: &str, e: &dyn std::fmt::Display| format!("watermark exchange: cannot {what}: {e}");
        let marks = self
            .client
            .subscribe(self.subjects.marks.clone())
            .await
            .map_err(|e| failed("subscribe", &e))?;
        let syncs = self
            .client
            .subscribe(self.subjects.sync.clone())
            .await
            .map_err(|e| failed("subscribe", &e))?;
        self.client
            .publish(self.subjects.sync.clone(), bytes::Bytes::new())
            .await
            .map_err(|e| failed("publish", &e))?;
        Ok(self.run(marks, syncs))
    }

    async fn run(self, mut marks: async_nats::Subscriber, mut syncs: async_nats::Subscriber) -> Result<(), String> {
        let mut published: HashMap<u64, Mark> = HashMap::new();
        let mut every = tokio::time::interval(PUBLISH_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut full_asked = false;
        let mut last_full: Option<Instant> = None;
        loop {
            tokio::select! {
                heard = marks.next() => {
                    let Some(heard) = heard else { return Err("watermark exchange: subscription ended".into()) };
                    self.merge(&heard.payload);
                }
                asked = syncs.next() => {
                    if asked.is_none() { return Err("watermark exchange: subscription ended".into()) }
                    full_asked = true;
                }
                _ = every.tick() => {
                    let full = full_asked && last_full.is_none_or(|at| at.elapsed() >= FULL_AT_MOST_EVERY);
                    if full {
                        full_asked = false;
                        last_full = Some(Instant::now());
                        published.clear();
                    }
                    self.publish_moved(&mut published).await;
                }
            }
        }
    }

    /// Merges the verified marks of `message` into every watermark of the process.
    fn merge(&self, message: &[u8]) {
        let (marks, refused) = open_records(message, |device| self.intake.mac_key(device));
        if refused > 0 {
            metrics::counter!("tsbc_watermark_refused_total").increment(refused as u64);
            warn!(
                refused,
                "watermark exchange: marks that do not authenticate under their devices' keys were dropped (a \
                 client of NATS other than the service, or another deployment on the same subjects)"
            );
        }
        for (device_id, mark) in marks {
            for watermark in &self.watermarks {
                watermark.wrote(device_id, mark);
            }
        }
    }

    /// Publishes every mark that differs from `published` (all of them when it is empty), and records them.
    async fn publish_moved(&self, published: &mut HashMap<u64, Mark>) {
        let mut now: HashMap<u64, Mark> = HashMap::new();
        for watermark in &self.watermarks {
            for (device, mark) in watermark.marks() {
                let entry = now.entry(device).or_insert(mark);
                *entry = entry.max(mark);
            }
        }
        let moved: Vec<(u64, Mark)> = now
            .iter()
            .filter(|(device, mark)| published.get(device) != Some(mark))
            .map(|(&device, &mark)| (device, mark))
            .collect();
        for batch in moved.chunks(RECORDS_PER_MESSAGE) {
            let mut message = Vec::with_capacity(batch.len() * RECORD_BYTES);
            for &(device, mark) in batch {
                if let Some(key) = self.intake.mac_key(device) {
                    push_record(&mut message, key, device, mark);
                }
            }
            if message.is_empty() {
                continue;
            }
            match self.client.publish(self.subjects.marks.clone(), message.into()).await {
                Ok(()) => {
                    for &(device, mark) in batch {
                        published.insert(device, mark);
                    }
                }
                Err(e) => debug!("watermark exchange: publish failed, tried again in 100 ms: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(generation: u64, highest: Option<u64>) -> Mark {
        Mark {
            generation,
            highest,
            fingerprint: generation.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        }
    }

    #[test]
    fn a_mark_opens_only_under_its_devices_key_and_unchanged() {
        let (k1, k2) = (MacKey::from_bytes([1; 32]), MacKey::from_bytes([2; 32]));
        let key_of = |device: u64| match device {
            1 => Some(&k1),
            2 => Some(&k2),
            _ => None,
        };
        let mut message = Vec::new();
        push_record(&mut message, &k1, 1, mark(7, Some(u64::MAX - 1)));
        push_record(&mut message, &k2, 2, mark(3, None));
        assert_eq!(message.len(), 2 * RECORD_BYTES);
        assert_eq!(
            open_records(&message, key_of),
            (vec![(1, mark(7, Some(u64::MAX - 1))), (2, mark(3, None))], 0)
        );
        // Under another device's key, of an unlisted device, any byte changed: refused, the rest kept.
        let mut forged = Vec::new();
        push_record(&mut forged, &k2, 1, mark(9, Some(9)));
        push_record(&mut forged, &k1, 3, mark(9, Some(9)));
        assert_eq!(open_records(&forged, key_of), (vec![], 2));
        for i in 0..RECORD_BYTES {
            let mut changed = message.clone();
            changed[i] ^= 1;
            assert_eq!(
                open_records(&changed, key_of),
                (vec![(2, mark(3, None))], 1),
                "byte {i}"
            );
        }
        // Not whole records, none, too many: refused whole.
        assert_eq!(open_records(&message[..RECORD_BYTES + 1], key_of).0, vec![]);
        assert_eq!(open_records(&[], key_of), (vec![], 1));
        let many: Vec<u8> = message[..RECORD_BYTES].repeat(RECORDS_PER_MESSAGE + 1);
        assert_eq!(open_records(&many, key_of).0, vec![]);
        assert_eq!(
            open_records(&message[..RECORD_BYTES].repeat(RECORDS_PER_MESSAGE), key_of)
                .0
                .len(),
            RECORDS_PER_MESSAGE
        );
    }
}
