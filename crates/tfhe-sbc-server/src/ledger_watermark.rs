//! What this process has seen of each device's ledger: the highest **generation** of it read or written by
//! this process (every write of a ledger is one generation on, [`DeviceLedger::generation`]) and the highest
//! frame number it held. A ledger only moves forward (each compare-and-swap writes the generation after the
//! one it read, the window's highest number never decreases, and no role of the service deletes an entry),
//! so a read that is behind the watermark - no entry, a lower generation or a lower highest number - was
//! answered by a replica that lags, or the devices bucket was changed by something other than the service:
//! the entry deleted or purged, or an older authentic entry written back (a tag shows who wrote an entry,
//! not when; the generation shows when, even for an older entry whose window has the same highest number).
//! The gateway then trusts neither the read nor its absence (docs/security.md, "NATS is an untrusted
//! store"): it asks again for a moment, which a lagging replica answers, and then answers "busy" and raises
//! `tsbc_ledger_behind_total`, until the entry is restored or the gateway restarted; a worker leaves the
//! frame for a later delivery.
//!
//! The watermark lives in memory, and with `--watermark-file` also on the process's own disk (outside NATS:
//! the freshness anchor), written at most once a second when it moved and at shutdown, and read at
//! start-up: a role restarted with its file still refuses a ledger rolled back below what it saw before
//! (up to the last second before a crash). The processes of the service also tell each other their marks
//! ([`crate::watermark_gossip`], tagged under the devices' keys), so a process without the file, or added
//! later, knows the devices the others have served; a ledger rolled back while no process with a
//! watermark for the device runs is caught only by the results bucket's evidence
//! (`Gateway::stored_copy`). Its size is bounded by the key store: only devices whose frames authenticate
//! get an entry (24 bytes each).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use tfhe_sbc_adapter::commit::DeviceLedger;

/// Where a device's ledger stands: its generation, the highest frame number its window holds, and a
/// fingerprint of the entry at that generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    /// [`DeviceLedger::generation`]: 0 for no entry (and for an entry written before generations).
    pub generation: u64,
    /// The window's highest number (`None`: nothing admitted, or no entry).
    pub highest: Option<u64>,
    /// The first 8 bytes of BLAKE2b-64 of the ledger's bytes at `generation` (0: not known, as for
    /// generation 0 and a mark read from a watermark file). Each compare-and-swap writes the generation
    /// after the one it read, so one generation has one content: two fingerprints under one generation are
    /// a **fork**, two chains of writes from an entry written back.
    pub fingerprint: u64,
}

impl Mark {
    /// Where `ledger` stands.
    pub fn of(ledger: &DeviceLedger) -> Self {
        use blake2::digest::consts::U8;
        use blake2::{Blake2b, Digest};
        let fingerprint = match ledger.generation {
            0 => 0,
            _ => u64::from_le_bytes(Blake2b::<U8>::digest(ledger.encode()).into()).max(1),
        };
        Self {
            generation: ledger.generation,
            highest: ledger.window.highest(),
            fingerprint,
        }
    }

    /// Whether `self` is behind `seen`: an older generation, or a lower highest number.
    fn behind(self, seen: Self) -> bool {
        self.generation < seen.generation || self.highest < seen.highest
    }

    /// Whether `self` and `other` are two entries under one generation (both fingerprints known).
    fn forks(self, other: Self) -> bool {
        self.generation == other.generation
            && self.fingerprint != 0
            && other.fingerprint != 0
            && self.fingerprint != other.fingerprint
    }

    /// The later of the two: the later generation with its fingerprint (a known one under equal
    /// generations), and the higher number.
    pub fn max(self, other: Self) -> Self {
        let fingerprint = match self.generation.cmp(&other.generation) {
            std::cmp::Ordering::Less => other.fingerprint,
            std::cmp::Ordering::Greater => self.fingerprint,
            std::cmp::Ordering::Equal if self.fingerprint == 0 => other.fingerprint,
            std::cmp::Ordering::Equal => self.fingerprint,
        };
        Self {
            generation: self.generation.max(other.generation),
            highest: self.highest.max(other.highest),
            fingerprint,
        }
    }
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.highest {
            Some(highest) => write!(f, "generation {}, highest number {highest}", self.generation)?,
            None if self.generation == 0 => return f.write_str("no entry"),
            None => write!(f, "generation {}, no number", self.generation)?,
        }
        match self.fingerprint {
            0 => Ok(()),
            fingerprint => write!(f, ", entry {fingerprint:016x}"),
        }
    }
}

/// What this process knows of one device's ledger.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    /// The latest mark read, written or heard.
    mark: Mark,
    /// Another entry under a generation this process knows another entry of: the ledger forked, and every
    /// later read of it is refused until the roles are restarted.
    fork: Option<Mark>,
}

/// Where each device's ledger stood when this process last read or wrote it, per device id.
#[derive(Debug, Default)]
pub struct LedgerWatermark {
    seen: Mutex<HashMap<u64, Seen>>,
    /// Moved since the last [`LedgerWatermark::save_all`].
    moved: AtomicBool,
}

/// The first line of the watermark file; then one line `<device id> <highest frame number> <generation>` per
/// device (`-` for no number). Version 1's lines, `<device id> <highest frame number>`, are read as
/// generation 0.
pub const HEADER: &str =
    "# tfhe-sbc-server ledger watermark v2: <device id> <highest frame number seen in its ledger> <its generation>";

/// The file's permission bits (frame numbers are no secret).
const MODE: u32 = 0o644;

/// A ledger read compared with the watermark.
#[derive(Debug, PartialEq, Eq)]
pub enum Reading {
    /// At or past everything seen before (or nothing seen before).
    Current,
    /// Behind what this process saw: where it saw the ledger, where the read has it.
    Behind { seen: Mark, read: Mark },
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
        let mut seen = HashMap::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        {
            let mut fields = line.split(' ');
            let device = fields.next().and_then(|f| f.parse::<u64>().ok());
            let highest = fields.next().and_then(|f| match f {
                "-" => Some(None),
                number => number.parse::<u64>().ok().map(Some),
            });
            let generation = fields.next().map_or(Some(0), |f| f.parse::<u64>().ok());
            let (Some(device), Some(highest), Some(generation), None) = (device, highest, generation, fields.next())
            else {
                return Err(format!(
                    "{} line {}: expected `<device id> <highest frame number> <generation>`: restore the file, or \
                     give another --watermark-file (a new file trusts every device's ledger as it reads it)",
                    path.display(),
                    i + 1
                ));
            };
            let mark = Mark {
                generation,
                highest,
                fingerprint: 0,
            };
            seen.insert(device, Seen { mark, fork: None });
        }
        Ok(Self {
            seen: Mutex::new(seen),
            moved: AtomicBool::new(false),
        })
    }

    /// Writes the union of `watermarks` (per device, the latest mark any of them saw: a process's gateway and
    /// its workers keep their own, as their reads differ) to `path` (temporary file, fsync, rename) if any
    /// moved since the last write; whether it wrote. On failure they stay "moved", so the next call tries
    /// again.
    pub fn save_all(watermarks: &[&Self], path: &Path) -> Result<bool, String> {
        let moved = watermarks
            .iter()
            .fold(false, |any, w| w.moved.swap(false, Ordering::AcqRel) | any);
        if !moved {
            return Ok(false);
        }
        let mut union: BTreeMap<u64, Mark> = BTreeMap::new();
        for watermark in watermarks {
            for (&device, seen) in watermark.lock().iter() {
                let entry = union.entry(device).or_insert(seen.mark);
                *entry = entry.max(seen.mark);
            }
        }
        let mut text = format!("{HEADER}\n");
        for (device, mark) in union {
            match mark.highest {
                Some(highest) => text.push_str(&format!("{device} {highest} {}\n", mark.generation)),
                None => text.push_str(&format!("{device} - {}\n", mark.generation)),
            }
        }
        tfhe_sbc_adapter::key_set::files::write_atomic_io(path, text.as_bytes(), MODE).map_err(|e| {
            for watermark in watermarks {
                watermark.moved.store(true, Ordering::Release);
            }
            format!("cannot write the ledger watermark {}: {e}", path.display())
        })?;
        Ok(true)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Seen>> {
        self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Compares a ledger read for `device_id` standing at `read` (`Mark::default()`: no entry) with the
    /// watermark; a current read raises the watermark to it.
    /// A read of a forked ledger (see [`Seen::fork`]) is behind too.
    pub fn check(&self, device_id: u64, read: Mark) -> Reading {
        let mut seen = self.lock();
        let before = seen.get(&device_id).copied();
        match before {
            Some(Seen { mark, fork: Some(_) }) => Reading::Behind { seen: mark, read },
            Some(Seen { mark, fork: None }) if read.forks(mark) => {
                fork_found(device_id, mark, read);
                seen.insert(device_id, Seen { mark, fork: Some(read) });
                Reading::Behind { seen: mark, read }
            }
            Some(Seen { mark, fork: None }) if read.behind(mark) => Reading::Behind { seen: mark, read },
            _ => {
                let before = before.map(|s| s.mark);
                let after = before.unwrap_or_default().max(read);
                if before != Some(after) && after != Mark::default() {
                    seen.insert(
                        device_id,
                        Seen {
                            mark: after,
                            fork: None,
                        },
                    );
                    self.moved.store(true, Ordering::Release);
                }
                Reading::Current
            }
        }
    }

    /// Every device's mark (for [`crate::watermark_gossip`]).
    pub fn marks(&self) -> Vec<(u64, Mark)> {
        self.lock().iter().map(|(&device, seen)| (device, seen.mark)).collect()
    }

    /// Records that this process wrote a ledger for `device_id` standing at `written`, or heard from another
    /// process of the service that it saw it there ([`crate::watermark_gossip`]).
    /// Another entry under a generation it knows marks the device forked (every later read refused).
    pub fn wrote(&self, device_id: u64, written: Mark) {
        let mut seen = self.lock();
        let before = seen.get(&device_id).copied().unwrap_or_default();
        let mut after = Seen {
            mark: before.mark.max(written),
            fork: before.fork,
        };
        if after.fork.is_none() && written.forks(before.mark) {
            fork_found(device_id, before.mark, written);
            after.fork = Some(written);
        }
        if before.mark != after.mark || before.fork != after.fork {
            seen.insert(device_id, after);
            self.moved.store(true, Ordering::Release);
        }
    }
}

/// The alarm for a forked ledger: two entries of `device_id` under one generation.
fn fork_found(device_id: u64, known: Mark, other: Mark) {
    metrics::counter!("tsbc_ledger_fork_total").increment(1);
    tracing::error!(
        device = device_id,
        %known,
        %other,
        "the device's ledger forked: two entries under one generation (an older entry was written back into \
         the devices bucket by something other than this service, and another process of the service wrote \
         after it); every frame of the device is answered busy until the roles are restarted: write back the \
         entry that holds the frames the device was answered accepted for first"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(highest: u64, generation: u64) -> Mark {
        Mark {
            fingerprint: 0,
            generation,
            highest: Some(highest),
        }
    }

    #[test]
    fn the_file_keeps_what_was_seen_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watermark.txt");
        let watermark = LedgerWatermark::load(&path).unwrap();
        assert!(
            !LedgerWatermark::save_all(&[&watermark], &path).unwrap(),
            "nothing moved"
        );
        watermark.wrote(1, mark(9, 12));
        assert_eq!(watermark.check(2, mark(4, 5)), Reading::Current);
        assert!(LedgerWatermark::save_all(&[&watermark], &path).unwrap());
        assert!(
            !LedgerWatermark::save_all(&[&watermark], &path).unwrap(),
            "written once"
        );
        let restarted = LedgerWatermark::load(&path).unwrap();
        assert_eq!(
            restarted.check(1, mark(8, 13)),
            Reading::Behind {
                seen: mark(9, 12),
                read: mark(8, 13)
            }
        );
        assert_eq!(
            restarted.check(1, mark(9, 11)),
            Reading::Behind {
                seen: mark(9, 12),
                read: mark(9, 11)
            },
            "an older generation with the same newest number"
        );
        assert_eq!(
            restarted.check(2, Mark::default()),
            Reading::Behind {
                seen: mark(4, 5),
                read: Mark::default()
            }
        );
        assert_eq!(restarted.check(3, Mark::default()), Reading::Current);
        std::fs::write(&path, format!("{HEADER}\n1 nine 3\n")).unwrap();
        assert!(LedgerWatermark::load(&path).unwrap_err().contains("line 2"));
        // A version 1 file (numbers only) is read as generation 0.
        std::fs::write(&path, "# tfhe-sbc-server ledger watermark v1\n1 9\n").unwrap();
        let v1 = LedgerWatermark::load(&path).unwrap();
        assert_eq!(v1.check(1, mark(9, 1)), Reading::Current);
        assert!(matches!(v1.check(1, mark(8, 2)), Reading::Behind { .. }));
    }

    #[test]
    fn two_entries_under_one_generation_are_a_fork_refused_for_good() {
        let with = |highest: u64, generation: u64, fingerprint: u64| Mark {
            fingerprint,
            ..mark(highest, generation)
        };
        let watermark = LedgerWatermark::new();
        assert_eq!(watermark.check(1, with(4, 3, 0xa)), Reading::Current);
        assert_eq!(watermark.check(1, with(4, 3, 0xa)), Reading::Current, "the same entry");
        // Another entry under generation 3, even with a higher number: a fork, and every later read refused.
        assert!(matches!(watermark.check(1, with(5, 3, 0xb)), Reading::Behind { .. }));
        assert!(matches!(watermark.check(1, with(4, 3, 0xa)), Reading::Behind { .. }));
        assert!(matches!(watermark.check(1, with(9, 7, 0xc)), Reading::Behind { .. }));
        // Heard from another process (or written): the same, per device; an unknown fingerprint never forks.
        watermark.wrote(2, with(4, 3, 0xa));
        watermark.wrote(2, with(4, 3, 0));
        assert_eq!(watermark.check(2, with(4, 3, 0xa)), Reading::Current);
        watermark.wrote(2, with(4, 3, 0xb));
        assert!(matches!(watermark.check(2, with(4, 3, 0xa)), Reading::Behind { .. }));
        assert_eq!(watermark.check(3, with(4, 3, 0xb)), Reading::Current, "per device");
        // A later generation is no fork: it carries its own fingerprint.
        watermark.wrote(3, with(5, 4, 0xc));
        assert_eq!(watermark.check(3, with(5, 4, 0xc)), Reading::Current);
    }

    #[test]
    fn a_read_behind_what_was_seen_or_written_is_behind_until_it_catches_up() {
        let watermark = LedgerWatermark::new();
        assert_eq!(watermark.check(1, Mark::default()), Reading::Current, "a new device");
        assert_eq!(watermark.check(1, mark(5, 1)), Reading::Current);
        watermark.wrote(1, mark(9, 4));
        assert!(matches!(watermark.check(1, mark(8, 4)), Reading::Behind { .. }));
        assert!(
            matches!(watermark.check(1, mark(9, 3)), Reading::Behind { .. }),
            "same number, older generation: an older entry written back"
        );
        assert!(
            matches!(watermark.check(1, Mark::default()), Reading::Behind { .. }),
            "a deleted entry"
        );
        assert_eq!(watermark.check(1, mark(9, 4)), Reading::Current, "caught up");
        assert_eq!(watermark.check(2, Mark::default()), Reading::Current, "per device");
        watermark.wrote(1, mark(3, 2));
        assert!(
            matches!(watermark.check(1, mark(8, 4)), Reading::Behind { .. }),
            "never lowered"
        );
        assert_eq!(watermark.check(1, mark(12, 5)), Reading::Current);
        assert_eq!(
            watermark.check(1, mark(11, 6)),
            Reading::Behind {
                seen: mark(12, 5),
                read: mark(11, 6)
            }
        );
    }
}
