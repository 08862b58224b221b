//! The intent journal that makes `issue --count N` crash-consistent.
//!
//! An `issue` pass commits in this order, every file through the adapter's atomic writer (temporary file,
//! fsync, rename, fsync of the directory):
//!
//! 1. the journal (`<DIR>/issue.journal`, 0600): the pass's mode and, for each device, its id and the files it
//!    gets (`devices/<ID>.tsdc`, and `devices/<ID>.tscp` for a compact-list device), none of which exist yet;
//! 2. each device's credential file (and compact public key);
//! 3. the key store with every new record, in one write: the pass's commit point;
//! 4. the journal is removed.
//!
//! A pass killed at any point leaves a journal, some of its files, perhaps a temporary file of the writer, and
//! either the old key store (none of the journaled devices) or the new one (all of them). [`recover`], which
//! `issue` and `repair` run under the directory lock before anything else, finishes the pass in the second
//! case (the credential files were all written before the store) and rolls it back in the first (removes the
//! journaled files, which no device has: the pass had not finished), removes the writer's temporary files,
//! then the journal. A key store holding only some of the journaled devices was not written by `issue`: it
//! is refused ([`Error::InconsistentJournal`]) and nothing is touched.
//!
//! The journal names no secret. Recovery removes only the files it derives from the journaled ids (a journal
//! cannot make it remove anything else) and temporary files named as the atomic writer names them
//! (`.<file name>.<6 letters or digits>`) after one of the key set's file names.

use super::dev_credential::{dev_credentials_path, dev_seed_path};
use crate::error::Error;
use crate::files::{
    self, DEVICES_DIR, KEY_STORE_FILE, PUBLIC_KEY_FILE, SECRET_MODE, compact_public_key_path, credentials_path,
};
use std::path::{Path, PathBuf};
use tfhe_sbc_adapter::key_set::key_store::KeyStore;

/// The journal's file name.
pub const JOURNAL_FILE: &str = "issue.journal";

/// The journal's first line.
const MAGIC: &str = "tfhe-sbc-keys issue journal 1";

/// What to do when a file cannot be trusted: the key set's backup.
const RESTORE_KEY_SET: &str = "restore the key set directory from a backup";

/// The files each device of a pass gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FileSet {
    /// `devices/<ID>.tsdc`.
    Credentials,
    /// `devices/<ID>.tsdc` and the compact public key `devices/<ID>.tscp`.
    CompactList,
    /// `devices/<ID>.UNSAFE-DEV.tsdc` and `devices/<ID>.UNSAFE-DEV.seed` (`super::dev_credential`).
    UnsafeDev,
}

impl FileSet {
    /// The files device `device_id` gets, in `dir`.
    pub fn paths(self, dir: &Path, device_id: u64) -> Vec<PathBuf> {
        match self {
            Self::Credentials => vec![credentials_path(dir, device_id)],
            Self::CompactList => vec![
                credentials_path(dir, device_id),
                compact_public_key_path(dir, device_id),
            ],
            Self::UnsafeDev => vec![dev_credentials_path(dir, device_id), dev_seed_path(dir, device_id)],
        }
    }

    /// The names of [`Self::paths`], relative to the key set directory.
    fn names(self, device_id: u64) -> Vec<String> {
        self.paths(Path::new(""), device_id)
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    }
}

/// An `issue` pass's intent: its mode and its devices, each with the files it gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Journal {
    /// The mode's name as `issue --mode` takes it.
    pub mode: String,
    /// The devices, in issue order.
    pub device_ids: Vec<u64>,
    /// The files each device gets.
    pub files: FileSet,
}

impl Journal {
    /// The files device `device_id` gets, in `dir`.
    fn files_of(&self, dir: &Path, device_id: u64) -> Vec<PathBuf> {
        self.files.paths(dir, device_id)
    }

    /// The journal's text: the magic line, `mode <MODE>`, then `device <ID> <FILE>...` per device.
    fn encode(&self) -> String {
        let mut text = format!("{MAGIC}\nmode {}\n", self.mode);
        for &id in &self.device_ids {
            text.push_str(&format!("device {id} {}\n", self.files.names(id).join(" ")));
        }
        text
    }

    /// Parses [`Self::encode`]'s text; `None` unless it is exactly such a text (every file name the one its id
    /// gives, every device with the same files).
    fn decode(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        (lines.next()? == MAGIC).then_some(())?;
        let mode = lines.next()?.strip_prefix("mode ")?.to_owned();
        let mut device_ids = Vec::new();
        let mut files = None;
        for line in lines {
            let (id_text, names) = line.strip_prefix("device ")?.split_once(' ')?;
            let id: u64 = id_text.parse().ok()?;
            (id.to_string() == id_text).then_some(())?;
            let set = [FileSet::Credentials, FileSet::CompactList, FileSet::UnsafeDev]
                .into_iter()
                .find(|set| set.names(id).join(" ") == names)?;
            (*files.get_or_insert(set) == set).then_some(())?;
            (!device_ids.contains(&id)).then_some(())?;
            device_ids.push(id);
        }
        Some(Self {
            mode,
            device_ids,
            files: files?,
        })
    }
}

/// Writes `journal` into `dir` atomically (step 1).
pub(super) fn write(dir: &Path, journal: &Journal) -> Result<(), Error> {
    files::write_atomic(&dir.join(JOURNAL_FILE), journal.encode().as_bytes(), SECRET_MODE)
}

/// Removes `dir`'s journal (step 4, or the end of a recovery) and makes the removal durable.
pub(super) fn remove(dir: &Path) -> Result<(), Error> {
    let path = dir.join(JOURNAL_FILE);
    remove_file(&path)?;
    sync_dir(dir)
}

/// The journal of `dir`, if there is one.
fn read(dir: &Path) -> Result<Option<Journal>, Error> {
    let path = dir.join(JOURNAL_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let bytes = files::read(&path, "issue journal")?;
    let journal = std::str::from_utf8(&bytes)
        .ok()
        .and_then(Journal::decode)
        .ok_or_else(|| Error::InconsistentJournal {
            path: path.clone(),
            problem: "is not an issue journal this tool writes".to_owned(),
            fix: RESTORE_KEY_SET,
        })?;
    Ok(Some(journal))
}

/// What [`recover`] did.
#[derive(Debug, Default)]
pub(super) struct Recovery {
    /// The interrupted pass, if a journal was found, and whether its key store write had happened (it was
    /// finished) or not (it was rolled back).
    pub pass: Option<(Journal, Outcome)>,
    /// The journaled files removed (rolled back).
    pub files_removed: usize,
    /// The atomic writer's temporary files removed.
    pub temporary_files_removed: usize,
}

/// How an interrupted pass was recovered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The key store holds every journaled device: the pass had committed; only the journal was left.
    Finished,
    /// The key store holds none of them: their files were removed.
    RolledBack,
}

impl Recovery {
    /// One line for the operator, or `None` if there was nothing to recover.
    pub fn describe(&self) -> Option<String> {
        let temporary = match self.temporary_files_removed {
            0 => String::new(),
            n => format!(", {n} temporary file{} removed", if n == 1 { "" } else { "s" }),
        };
        match &self.pass {
            Some((journal, outcome)) => {
                let ids = &journal.device_ids;
                let devices = match (ids.first(), ids.last()) {
                    (Some(first), Some(last)) if ids.len() > 1 => format!("{} devices ({first}..={last})", ids.len()),
                    _ => format!("device {}", ids.first().copied().unwrap_or_default()),
                };
                Some(match outcome {
                    Outcome::Finished => format!(
                        "recovered an interrupted issue ({} mode): {devices} were in the key store, the pass is \
                         finished{temporary}",
                        journal.mode
                    ),
                    Outcome::RolledBack => format!(
                        "recovered an interrupted issue ({} mode): {devices} were not in the key store, rolled back \
                         ({} of their files removed{temporary})",
                        journal.mode, self.files_removed
                    ),
                })
            }
            None if self.temporary_files_removed > 0 => Some(format!(
                "removed {} temporary file{} of an interrupted write",
                self.temporary_files_removed,
                if self.temporary_files_removed == 1 { "" } else { "s" }
            )),
            None => None,
        }
    }
}

/// Finishes or rolls back the interrupted `issue` pass of `dir` (whose key store is `store`), if any, and
/// removes the atomic writer's temporary files. Run under the directory lock.
pub(super) fn recover(dir: &Path, store: &KeyStore) -> Result<Recovery, Error> {
    let mut recovery = Recovery::default();
    if let Some(journal) = read(dir)? {
        let path = dir.join(JOURNAL_FILE);
        let stored = journal.device_ids.iter().filter(|&&id| store.get(id).is_some()).count();
        let outcome = if stored == journal.device_ids.len() {
            // Committed: every file was written (and synced) before the key store.
            for &id in &journal.device_ids {
                if let Some(missing) = journal.files_of(dir, id).into_iter().find(|p| !p.exists()) {
                    return Err(Error::InconsistentJournal {
                        path,
                        problem: format!(
                            "names device {id}, which the key store holds, but {} is missing",
                            missing.display()
                        ),
                        fix: RESTORE_KEY_SET,
                    });
                }
            }
            Outcome::Finished
        } else if stored == 0 {
            for &id in &journal.device_ids {
                for file in journal.files_of(dir, id) {
                    if file.exists() {
                        remove_file(&file)?;
                        recovery.files_removed += 1;
                    }
                }
            }
            Outcome::RolledBack
        } else {
            return Err(Error::InconsistentJournal {
                path,
                problem: format!(
                    "names {} devices of which the key store holds {stored}: the key store was not written by this \
                     pass",
                    journal.device_ids.len()
                ),
                fix: RESTORE_KEY_SET,
            });
        };
        recovery.pass = Some((journal, outcome));
    }
    recovery.temporary_files_removed = remove_temporary_files(dir)?;
    if recovery.files_removed + recovery.temporary_files_removed > 0 {
        sync_dir(&dir.join(DEVICES_DIR))?;
    }
    if recovery.pass.is_some() {
        remove(dir)?;
    }
    Ok(recovery)
}

/// Whether `name` is the atomic writer's temporary file for a file named by `is_target`:
/// `.<target>.<6 ASCII letters or digits>`.
fn is_temporary_for(name: &str, is_target: impl Fn(&str) -> bool) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    let Some((target, suffix)) = rest.rsplit_once('.') else {
        return false;
    };
    suffix.len() == 6 && suffix.bytes().all(|b| b.is_ascii_alphanumeric()) && is_target(target)
}

/// Whether `name` is a device file's name: `<ID>.tsdc`, `<ID>.tscp`, `<ID>.UNSAFE-DEV.tsdc` or
/// `<ID>.UNSAFE-DEV.seed`.
pub(super) fn is_device_file(name: &str) -> bool {
    [".tsdc", ".tscp", ".UNSAFE-DEV.tsdc", ".UNSAFE-DEV.seed"]
        .iter()
        .any(|suffix| {
            name.strip_suffix(suffix)
                .is_some_and(|id| id.parse::<u64>().is_ok_and(|n| n.to_string() == id))
        })
}

/// Removes the atomic writer's temporary files of the key store, the public key and the journal in `dir`, and
/// of device files in `devices/`; returns how many.
fn remove_temporary_files(dir: &Path) -> Result<usize, Error> {
    let mut removed = 0;
    let is_key_set_file: fn(&str) -> bool = |name| [KEY_STORE_FILE, PUBLIC_KEY_FILE, JOURNAL_FILE].contains(&name);
    let targets = [
        (dir.to_owned(), is_key_set_file),
        (dir.join(DEVICES_DIR), is_device_file as fn(&str) -> bool),
    ];
    for (directory, is_target) in targets {
        let entries = match std::fs::read_dir(&directory) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(Error::io("list", &directory, source)),
        };
        for entry in entries {
            let entry = entry.map_err(|source| Error::io("list", &directory, source))?;
            if is_temporary_for(&entry.file_name().to_string_lossy(), is_target) {
                remove_file(&entry.path())?;
                removed += 1;
            }
        }
    }
    if removed > 0 {
        sync_dir(dir)?;
    }
    Ok(removed)
}

/// Removes `path` (gone already is fine).
pub(super) fn remove_file(path: &Path) -> Result<(), Error> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::io("remove", path, source)),
    }
}

/// Makes the removals and renames in `dir` durable (fsync of the directory).
pub(super) fn sync_dir(dir: &Path) -> Result<(), Error> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| Error::io("sync", dir, source))
}

#[cfg(test)]
mod tests {
    use super::{FileSet, Journal, is_device_file, is_temporary_for};

    #[test]
    fn the_journal_reads_back_and_refuses_anything_else() {
        let journal = Journal {
            mode: "public-key".to_owned(),
            device_ids: vec![7, 8, 100],
            files: FileSet::CompactList,
        };
        let text = journal.encode();
        assert_eq!(Journal::decode(&text), Some(journal));
        let dev = Journal {
            mode: "per-device".to_owned(),
            device_ids: vec![1],
            files: FileSet::UnsafeDev,
        };
        assert!(
            dev.encode()
                .ends_with("device 1 devices/1.UNSAFE-DEV.tsdc devices/1.UNSAFE-DEV.seed\n")
        );
        assert_eq!(Journal::decode(&dev.encode()), Some(dev));
        for bad in [
            "",
            "tfhe-sbc-keys issue journal 1\nmode fleet\n",
            "tfhe-sbc-keys issue journal 1\nmode fleet\ndevice 7 devices/8.tsdc\n",
            "tfhe-sbc-keys issue journal 1\nmode fleet\ndevice 7 ../../etc/passwd\n",
            "tfhe-sbc-keys issue journal 1\nmode fleet\ndevice 07 devices/7.tsdc\n",
            "tfhe-sbc-keys issue journal 1\nmode fleet\ndevice 7 devices/7.tsdc\ndevice 7 devices/7.tsdc\n",
            "tfhe-sbc-keys issue journal 1\nmode fleet\ndevice 7 devices/7.tsdc devices/7.tscp\ndevice 8 devices/8.tsdc\n",
            "tfhe-sbc-keys issue journal 1\nmode fleet\ndevice 7 devices/7.UNSAFE-DEV.tsdc devices/7.tscp\n",
        ] {
            assert_eq!(Journal::decode(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn temporary_files_are_told_by_their_name() {
        assert!(is_temporary_for(".12.tsdc.aZ09xy", is_device_file));
        assert!(!is_temporary_for(".12.tsdc.aZ09x", is_device_file));
        assert!(!is_temporary_for("12.tsdc.aZ09xy", is_device_file));
        assert!(!is_temporary_for(".12.seed.aZ09xy", is_device_file));
        assert!(!is_temporary_for(".x12.tsdc.aZ09xy", is_device_file));
    }
}
