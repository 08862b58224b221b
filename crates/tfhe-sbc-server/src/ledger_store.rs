//! The devices KV bucket as the store of the commit state machine ([`tfhe_sbc_adapter::commit`]): one
//! [`DeviceLedger`] per device, changed only by compare-and-swap on the entry's revision. The gateway's
//! admission and the workers' storage are transitions of the same ledger; a lost compare-and-swap is a
//! conflict (another gateway or worker changed the device's ledger first), not a failure: the caller reads
//! the ledger again and redoes its transition at once, after a short random pause.
//!
//! nats-server answers a lost compare-and-swap with JetStream error 10071 ("wrong last sequence: N") or,
//! in clustered streams, 10164 ("wrong last sequence", without the number); async-nats 0.51 maps only the
//! first to [`kv::UpdateErrorKind::WrongLastRevision`]. 10163 ("expected last sequence per subject
//! temporarily unavailable") is answered while a clustered stream's leader catches up: also retried at once.

use async_nats::jetstream::kv;
use std::error::Error as StdError;
use std::time::Duration;
use tfhe_sbc_adapter::commit::DeviceLedger;

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

/// A random pause of 0-15 ms before a transition is redone, so that two writers in step part.
pub async fn conflict_pause() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // The low bits of the clock are jitter enough to break lock-step between processes.
    tokio::time::sleep(Duration::from_micros(u64::from(nanos % 15_000))).await;
}

/// The device's ledger and its entry's revision (`None`: no entry yet).
pub async fn read(devices: &kv::Store, device_id: u64) -> Result<(DeviceLedger, Option<u64>), String> {
    let key = device_key(device_id);
    match devices.entry(&key).await {
        Ok(Some(entry)) if entry.operation == kv::Operation::Put => {
            let ledger = DeviceLedger::decode(&entry.value).map_err(|e| format!("{key}: {e}"))?;
            Ok((ledger, Some(entry.revision)))
        }
        Ok(Some(entry)) => Ok((DeviceLedger::new(), Some(entry.revision))),
        Ok(None) => Ok((DeviceLedger::new(), None)),
        Err(e) => Err(format!("cannot read {key}: {e}")),
    }
}

/// Writes `ledger` if the entry is still at `revision`.
pub async fn swap(
    devices: &kv::Store,
    device_id: u64,
    ledger: &DeviceLedger,
    revision: Option<u64>,
) -> Result<Swap, String> {
    let key = device_key(device_id);
    let value = ledger.encode().into();
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
