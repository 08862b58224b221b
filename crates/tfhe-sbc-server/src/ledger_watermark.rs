//! What this process has seen of each device's ledger: the highest frame number a ledger read or written
//! by it held. A ledger only moves forward (the window's highest number never decreases, and no role of the
//! service deletes an entry), so a read that is behind the watermark - no entry, or a lower highest number -
//! was answered by a replica that lags, or the devices bucket was changed by something other than the
//! service: the entry deleted or purged, or an older authentic entry written back (a tag shows who wrote an
//! entry, not when). The gateway then trusts neither the read nor its absence (docs/security.md, "NATS is an
//! untrusted store"): it asks again for a moment, which a lagging replica answers, and then answers "busy"
//! and raises `tsbc_ledger_behind_total`, until the entry is restored or the gateway restarted.
//!
//! The watermark lives in memory: it covers the devices this process has served since it started. A ledger
//! rolled back while every gateway was down is caught only by the results bucket's evidence
//! (`Gateway::stored_before`). Its size is bounded by the key store: only devices whose frames authenticate
//! get an entry (16 bytes each).

use std::collections::HashMap;
use std::sync::Mutex;

/// The highest frame number seen in each device's ledger, per device id.
#[derive(Debug, Default)]
pub struct LedgerWatermark {
    highest: Mutex<HashMap<u64, u64>>,
}

/// A ledger read compared with the watermark.
#[derive(Debug, PartialEq, Eq)]
pub enum Reading {
    /// At or past everything seen before (or nothing seen before).
    Current,
    /// Behind what this process saw: the number it saw, the read's (`None`: no entry).
    Behind { seen: u64, read: Option<u64> },
}

impl LedgerWatermark {
    /// An empty watermark: nothing seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Compares a ledger read for `device_id` whose highest number is `read` (`None`: no entry, or an empty
    /// window) with the watermark; a current read raises the watermark to it.
    pub fn check(&self, device_id: u64, read: Option<u64>) -> Reading {
        let mut highest = self.highest.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match (highest.get(&device_id).copied(), read) {
            (Some(seen), None) => Reading::Behind { seen, read: None },
            (Some(seen), Some(read)) if read < seen => Reading::Behind { seen, read: Some(read) },
            (Some(_) | None, Some(read)) => {
                highest.insert(device_id, read);
                Reading::Current
            }
            (None, None) => Reading::Current,
        }
    }

    /// Records that this process wrote a ledger for `device_id` whose highest number is `written`.
    pub fn wrote(&self, device_id: u64, written: Option<u64>) {
        if let Some(written) = written {
            let mut highest = self.highest.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let entry = highest.entry(device_id).or_insert(written);
            *entry = (*entry).max(written);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_behind_what_was_seen_or_written_is_behind_until_it_catches_up() {
        let watermark = LedgerWatermark::new();
        assert_eq!(watermark.check(1, None), Reading::Current, "a new device");
        assert_eq!(watermark.check(1, Some(5)), Reading::Current);
        watermark.wrote(1, Some(9));
        assert_eq!(watermark.check(1, Some(8)), Reading::Behind { seen: 9, read: Some(8) });
        assert_eq!(
            watermark.check(1, None),
            Reading::Behind { seen: 9, read: None },
            "a deleted entry"
        );
        assert_eq!(watermark.check(1, Some(9)), Reading::Current, "caught up");
        assert_eq!(watermark.check(2, None), Reading::Current, "per device");
        watermark.wrote(1, Some(3));
        assert_eq!(
            watermark.check(1, Some(8)),
            Reading::Behind { seen: 9, read: Some(8) },
            "never lowered"
        );
        assert_eq!(watermark.check(1, Some(12)), Reading::Current);
        assert_eq!(
            watermark.check(1, Some(11)),
            Reading::Behind {
                seen: 12,
                read: Some(11)
            }
        );
    }
}
