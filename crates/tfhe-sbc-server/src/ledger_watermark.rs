//! What this process has seen of each device's ledger: the highest frame number a ledger read or written
//! by it held. A ledger only moves forward (the window's highest number never decreases, and no role of the
//! service deletes an entry), so a read that is behind the watermark - no entry, or a lower highest number -
//! was answered by a replica that lags, or the devices bucket was changed by something other than the
//! service: the entry deleted or purged, or an older authentic entry written back (a tag shows who wrote an
//! entry, not when). The gateway then trusts neither the read nor its absence (docs/security.md, "NATS is an
//! untrusted store"): it asks again for a moment, which a lagging replica answers, and then answers "busy"
//! and raises `tsbc_ledger_behind_total`, until the entry is restored or the gateway restarted.
//!
//! The watermark lives in memory, and with `--watermark-file` also on the process's own disk (outside NATS:
//! the freshness anchor), written at most once a second when it moved and at shutdown, and read at
//! start-up: a role restarted with its file still refuses a ledger rolled back below what it saw before
//! (up to the last second before a crash). Without the file, or in a process added later, it covers only
//! the devices this process has served since it started; a ledger rolled back while no process with a
//! watermark for the device runs is caught only by the results bucket's evidence
//! (`Gateway::stored_before`). Its size is bounded by the key store: only devices whose frames authenticate
//! get an entry (16 bytes each).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The highest frame number seen in each device's ledger, per device id.
#[derive(Debug, Default)]
pub struct LedgerWatermark {
    highest: Mutex<HashMap<u64, u64>>,
    /// Moved since the last [`LedgerWatermark::save_all`].
    moved: AtomicBool,
}

/// The first line of the watermark file; then one line `<device id> <highest frame number>` per device.
pub const HEADER: &str = "# tfhe-sbc-server ledger watermark v1: <device id> <highest frame number seen in its ledger>";

/// The file's permission bits (frame numbers are no secret).
const MODE: u32 = 0o644;

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

    /// The watermark [`LedgerWatermark::save_all`] wrote to `path` (absent: nothing seen yet). A file that does
    /// not read is an error: starting without it would forget what the process saw.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::new()),
            Err(e) => return Err(format!("cannot read the ledger watermark {}: {e}", path.display())),
        };
        let mut highest = HashMap::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        {
            let mut fields = line.split(' ').map(str::parse::<u64>);
            let (Some(Ok(device)), Some(Ok(number)), None) = (fields.next(), fields.next(), fields.next()) else {
                return Err(format!(
                    "{} line {}: expected `<device id> <highest frame number>`: restore the file, or give \
                     another --watermark-file (a new file trusts every device's ledger as it reads it)",
                    path.display(),
                    i + 1
                ));
            };
            highest.insert(device, number);
        }
        Ok(Self {
            highest: Mutex::new(highest),
            moved: AtomicBool::new(false),
        })
    }

    /// Writes the union of `watermarks` (per device, the highest number any of them saw: a process's
    /// gateway and its workers keep their own, as their reads differ) to `path` (temporary file, fsync,
    /// rename) if any moved since the last write; whether it wrote. On failure they stay "moved", so the
    /// next call tries again.
    pub fn save_all(watermarks: &[&Self], path: &Path) -> Result<bool, String> {
        let moved = watermarks
            .iter()
            .fold(false, |any, w| w.moved.swap(false, Ordering::AcqRel) | any);
        if !moved {
            return Ok(false);
        }
        let mut union: BTreeMap<u64, u64> = BTreeMap::new();
        for watermark in watermarks {
            for (&device, &number) in watermark.lock().iter() {
                let entry = union.entry(device).or_insert(number);
                *entry = (*entry).max(number);
            }
        }
        let mut text = format!("{HEADER}\n");
        for (device, number) in union {
            text.push_str(&format!("{device} {number}\n"));
        }
        tfhe_sbc_adapter::key_set::files::write_atomic_io(path, text.as_bytes(), MODE).map_err(|e| {
            for watermark in watermarks {
                watermark.moved.store(true, Ordering::Release);
            }
            format!("cannot write the ledger watermark {}: {e}", path.display())
        })?;
        Ok(true)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, u64>> {
        self.highest.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Compares a ledger read for `device_id` whose highest number is `read` (`None`: no entry, or an empty
    /// window) with the watermark; a current read raises the watermark to it.
    pub fn check(&self, device_id: u64, read: Option<u64>) -> Reading {
        let mut highest = self.lock();
        match (highest.get(&device_id).copied(), read) {
            (Some(seen), None) => Reading::Behind { seen, read: None },
            (Some(seen), Some(read)) if read < seen => Reading::Behind { seen, read: Some(read) },
            (seen, Some(read)) => {
                if seen != Some(read) {
                    highest.insert(device_id, read);
                    self.moved.store(true, Ordering::Release);
                }
                Reading::Current
            }
            (None, None) => Reading::Current,
        }
    }

    /// Records that this process wrote a ledger for `device_id` whose highest number is `written`.
    pub fn wrote(&self, device_id: u64, written: Option<u64>) {
        if let Some(written) = written {
            let mut highest = self.lock();
            match highest.get(&device_id) {
                Some(&seen) if seen >= written => {}
                _ => {
                    highest.insert(device_id, written);
                    self.moved.store(true, Ordering::Release);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_keeps_what_was_seen_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watermark.txt");
        let watermark = LedgerWatermark::load(&path).unwrap();
        assert!(
            !LedgerWatermark::save_all(&[&watermark], &path).unwrap(),
            "nothing moved"
        );
        watermark.wrote(1, Some(9));
        assert_eq!(watermark.check(2, Some(4)), Reading::Current);
        assert!(LedgerWatermark::save_all(&[&watermark], &path).unwrap());
        assert!(
            !LedgerWatermark::save_all(&[&watermark], &path).unwrap(),
            "written once"
        );
        let restarted = LedgerWatermark::load(&path).unwrap();
        assert_eq!(restarted.check(1, Some(8)), Reading::Behind { seen: 9, read: Some(8) });
        assert_eq!(restarted.check(2, None), Reading::Behind { seen: 4, read: None });
        assert_eq!(restarted.check(3, None), Reading::Current);
        std::fs::write(&path, format!("{HEADER}\n1 nine\n")).unwrap();
        assert!(LedgerWatermark::load(&path).unwrap_err().contains("line 2"));
    }

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
