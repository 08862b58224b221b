//! The devices KV bucket as the store of the commit state machine ([`tfhe_sbc_adapter::commit`]): one
//! [`DeviceLedger`] per device, changed only by compare-and-swap on the entry's revision. The gateway's
//! admission and the workers' storage are transitions of the same ledger; a lost compare-and-swap is a
//! conflict (another gateway or worker changed the device's ledger first), not a failure: the caller reads
//! the ledger again and redoes its transition at once, and after a short random pause when it conflicts
//! again ([`Conflicts`]).
//!
//! nats-server answers a lost compare-and-swap with JetStream error 10071 ("wrong last sequence: N") or,
//! in clustered streams, 10164 ("wrong last sequence", without the number); async-nats 0.51 maps only the
//! first to [`kv::UpdateErrorKind::WrongLastRevision`]. 10163 ("expected last sequence per subject
//! temporarily unavailable") is answered while a clustered stream's leader catches up: also retried at once.
//!
//! NATS is not trusted with the ledger: each entry is the ledger's bytes and a 16-byte tag under the
//! device's MAC key (the key store's, which every gateway and worker holds) over a domain prefix that no
//! frame starts with, the device id and the bytes. An entry written by anyone else (marking the device's
//! next numbers as seen, moving its window, garbage) does not authenticate: it is refused with an error
//! (`tsbc_ledger_rejected_total`), so the gateway answers "busy" and the worker retries, and it never
//! decides an authenticated answer to the device. What a tag cannot show is freshness: an older authentic
//! entry written back moves the window back (a replay of frames the device sent before, not a loss).

use async_nats::jetstream::kv;
use std::error::Error as StdError;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::commit::DeviceLedger;
use tfhe_sbc_device::frame::mac::{MacKey, TAG_BYTES};

/// The domain of a ledger entry's tag: not a frame's magic ("TSBC"), so no tag of one is the other's.
const LEDGER_DOMAIN: &[u8; 16] = b"TSLG ledger v2\0\0";

/// The tag of `ledger_bytes`, the ledger of `device_id`, under the device's MAC key.
fn ledger_tag(key: &MacKey, device_id: u64, ledger_bytes: &[u8]) -> [u8; TAG_BYTES] {
    let mut message = Vec::with_capacity(LEDGER_DOMAIN.len() + 8 + ledger_bytes.len());
    message.extend_from_slice(LEDGER_DOMAIN);
    message.extend_from_slice(&device_id.to_le_bytes());
    message.extend_from_slice(ledger_bytes);
    key.tag(&message)
}

/// The entry's value: the ledger's bytes and their tag.
pub fn seal(key: &MacKey, device_id: u64, ledger: &DeviceLedger) -> Vec<u8> {
    let mut value = ledger.encode();
    let tag = ledger_tag(key, device_id, &value);
    value.extend_from_slice(&tag);
    value
}

/// The ledger in an entry's `value`, if it authenticates under the device's key.
pub fn open(key: &MacKey, device_id: u64, value: &[u8]) -> Result<DeviceLedger, String> {
    let split = value.len().checked_sub(TAG_BYTES).ok_or_else(|| {
        format!(
            "the ledger of device {device_id} is {} bytes, shorter than its tag",
            value.len()
        )
    })?;
    let (bytes, tag) = value.split_at(split);
    let mut message = Vec::with_capacity(LEDGER_DOMAIN.len() + 8 + bytes.len());
    message.extend_from_slice(LEDGER_DOMAIN);
    message.extend_from_slice(&device_id.to_le_bytes());
    message.extend_from_slice(bytes);
    if !key.verify(&message, tag) {
        metrics::counter!("tsbc_ledger_rejected_total").increment(1);
        return Err(format!(
            "the ledger of device {device_id} does not authenticate: it was written by something other than this \
             service (NATS is reachable by others?); the device is answered busy until an operator restores it"
        ));
    }
    DeviceLedger::decode(bytes)
}

/// JetStream error codes that mean "someone else changed the entry first" (or "ask again in a moment").
const CONFLICT_CODES: [u64; 3] = [10071, 10164, 10163];

/// How long a transition retries after conflicts before the caller treats it as an outage.
pub const CONFLICT_PATIENCE: Duration = Duration::from_secs(20);

/// The KV key of a device's ledger.
pub fn device_key(device_id: u64) -> String {
    format!("device.{device_id}")
}

/// What a compare-and-swap did.
#[derive(Debug, PartialEq, Eq)]
pub enum Swap {
    /// Written.
    Done,
    /// Another writer was first: read again and redo.
    Conflict,
}

/// Whether `error` (or an error it wraps) is a lost compare-and-swap.
pub fn is_conflict(error: &(dyn StdError + 'static)) -> bool {
    let mut next: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(js) = e.downcast_ref::<async_nats::jetstream::Error>()
            && CONFLICT_CODES.contains(&js.error_code().0)
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// The conflicts of one transition: the first is redone at once (the usual case: the other writer is done,
/// and a read is all it takes), each next one after a random pause of up to 1, 2, 4, 8, then 16 ms, so that
/// writers in lock-step part; past [`CONFLICT_PATIENCE`] the caller treats it as an outage.
#[derive(Debug)]
pub struct Conflicts {
    deadline: Instant,
    count: u32,
}

impl Default for Conflicts {
    fn default() -> Self {
        Self::new()
    }
}

impl Conflicts {
    /// No conflict yet; the patience starts now.
    pub fn new() -> Self {
        Self {
            deadline: Instant::now() + CONFLICT_PATIENCE,
            count: 0,
        }
    }

    /// After a lost compare-and-swap: pauses as above and returns `true` (redo), or `false` when the
    /// patience is over.
    pub async fn redo(&mut self) -> bool {
        if Instant::now() >= self.deadline {
            return false;
        }
        self.count += 1;
        if self.count > 1 {
            let ceiling_us = 1_000u64 << (self.count - 2).min(4);
            tokio::time::sleep(Duration::from_micros(jitter() % ceiling_us)).await;
        }
        true
    }
}

/// A few random bits: the clock's low bits, jitter enough to break lock-step between processes.
fn jitter() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::from(d.subsec_micros()))
        .unwrap_or(0)
}

/// The device's ledger and its entry's revision (`None`: no entry yet), authenticated under `mac_key`.
pub async fn read(
    devices: &kv::Store,
    mac_key: &MacKey,
    device_id: u64,
) -> Result<(DeviceLedger, Option<u64>), String> {
    let key = device_key(device_id);
    match devices.entry(&key).await {
        Ok(Some(entry)) if entry.operation == kv::Operation::Put => {
            let ledger = open(mac_key, device_id, &entry.value).map_err(|e| format!("{key}: {e}"))?;
            Ok((ledger, Some(entry.revision)))
        }
        Ok(Some(entry)) => Ok((DeviceLedger::new(), Some(entry.revision))),
        Ok(None) => Ok((DeviceLedger::new(), None)),
        Err(e) => Err(format!("cannot read {key}: {e}")),
    }
}

/// Writes `ledger` (the one read at `revision`, changed by a transition), one generation on
/// ([`DeviceLedger::next_generation`]: `ledger` is left at the generation written) and tagged under `mac_key`,
/// if the entry is still at `revision`.
pub async fn swap(
    devices: &kv::Store,
    mac_key: &MacKey,
    device_id: u64,
    ledger: &mut DeviceLedger,
    revision: Option<u64>,
) -> Result<Swap, String> {
    let key = device_key(device_id);
    ledger.next_generation();
    let value = seal(mac_key, device_id, ledger).into();
    let written = match revision {
        Some(revision) => devices.update(&key, value, revision).await.map(drop).map_err(|e| {
            if e.kind() == kv::UpdateErrorKind::WrongLastRevision || is_conflict(&e) {
                None
            } else {
                Some(e.to_string())
            }
        }),
        None => devices.create(&key, value).await.map(drop).map_err(|e| {
            if e.kind() == kv::CreateErrorKind::AlreadyExists || is_conflict(&e) {
                None
            } else {
                Some(e.to_string())
            }
        }),
    };
    match written {
        Ok(()) => Ok(Swap::Done),
        Err(None) => {
            metrics::counter!("tsbc_ledger_conflicts_total").increment(1);
            Ok(Swap::Conflict)
        }
        Err(Some(e)) => Err(format!("cannot write {key}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfhe_sbc_adapter::commit::{ChunkId, LedgerLimits};

    #[test]
    fn an_entry_opens_only_under_its_device_key_and_id_and_unchanged() {
        let key = MacKey::from_bytes([7; 32]);
        let mut ledger = DeviceLedger::new();
        let chunk = ChunkId {
            sequence: 5,
            first_sequence: 5,
            chunk_count: 1,
            chunk_index: 0,
            tag: tfhe_sbc_adapter::replay::FrameTag::of_mac(b"frame 5"),
        };
        ledger.admit(3, chunk, &LedgerLimits::default()).unwrap();
        let value = seal(&key, 3, &ledger);
        assert_eq!(open(&key, 3, &value), Ok(ledger.clone()));
        assert!(open(&key, 4, &value).is_err(), "another device's entry");
        assert!(open(&MacKey::from_bytes([8; 32]), 3, &value).is_err(), "another key");
        let mut changed = value.clone();
        changed[20] ^= 1;
        assert!(open(&key, 3, &changed).is_err(), "a changed window");
        // An unauthenticated ledger, as a raw NATS client would write it.
        assert!(open(&key, 3, &ledger.encode()).is_err());
        assert!(open(&key, 3, &[]).is_err());
    }
}
