//! `repair`: brings a key set directory back to a consistent state after an interrupted `issue`, without
//! issuing anything: the journal's recovery (`super::journal`), then the device files of devices the key
//! store does not hold (left by an interrupted `issue` of a tool without the journal, or copied in), which no
//! server accepts.
//!
//! Such files are moved into `<DIR>/quarantine/` (mode 0700), never deleted: a key store restored from an
//! older backup does not list the devices issued since, whose credential files are then the only copy of
//! their keys (the operator issues them again, or restores the newer store and moves the files back). Only
//! the files a journal names as its pass's own are removed (the journal's rollback).

use super::journal::{self, is_device_file};
use super::key_files::load_key_store;
use crate::error::Error;
use crate::files::check_dir;
use crate::files::{self, DEVICES_DIR, DirLock, SERVER_KEY_FILE};
use std::path::{Path, PathBuf};
use tfhe_sbc_adapter::key_set::server_key::read_server_key_envelope;

/// The directory the files of devices the key store does not hold are moved into.
pub const QUARANTINE_DIR: &str = "quarantine";

/// `repair`: finishes or rolls back the interrupted `issue` pass of `dir` (its journal), removes the atomic
/// writer's temporary files and moves every device file (`devices/<ID>.tsdc`, `.tscp`, ...) of a device the
/// key store does not hold into `quarantine/`. Prints what it did, or that the key set was consistent.
pub fn repair(dir: &Path) -> Result<(), Error> {
    check_dir(dir)?;
    let _lock = DirLock::acquire_key_set(dir)?;
    let server = read_server_key_envelope(&dir.join(SERVER_KEY_FILE))?;
    let store = load_key_store(dir, &server)?;
    let recovery = journal::recover(dir, &store)?;
    let mut did = Vec::from_iter(recovery.describe());
    let devices = dir.join(DEVICES_DIR);
    let mut orphans = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&devices) {
        for entry in entries {
            let entry = entry.map_err(|source| Error::io("list", &devices, source))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let id = name.split('.').next().and_then(|id| id.parse::<u64>().ok());
            if let Some(id) = id.filter(|&id| is_device_file(&name) && store.get(id).is_none()) {
                orphans.push((id, entry.path()));
            }
        }
    }
    orphans.sort();
    let quarantine = dir.join(QUARANTINE_DIR);
    let mut moved = Vec::new();
    for (_, path) in &orphans {
        files::create_dir(&quarantine)?;
        let to = free_name(&quarantine, path);
        std::fs::rename(path, &to).map_err(|source| Error::io("move into quarantine", path, source))?;
        moved.push(to);
    }
    if !moved.is_empty() {
        journal::sync_dir(&quarantine)?;
        journal::sync_dir(&devices)?;
        did.push(format!(
            "moved {} file{} of devices the key store does not hold into {} (a key store restored from an older \
             backup does not list devices issued since: issue them again, or restore the newer key store and move \
             their files back; delete the rest): {}",
            moved.len(),
            if moved.len() == 1 { "" } else { "s" },
            quarantine.display(),
            moved
                .iter()
                .map(|path| path.file_name().unwrap_or_default().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if did.is_empty() {
        println!(
            "key set in {} is consistent: {} devices, nothing to repair",
            dir.display(),
            store.len()
        );
    }
    for line in did {
        println!("{line}");
    }
    Ok(())
}

/// Where `path` goes in `quarantine`: its own name, or with `.1`, `.2`, ... appended if a file of that name
/// is there already (an earlier repair's).
fn free_name(quarantine: &Path, path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let mut candidate = quarantine.join(&name);
    let mut n = 0u32;
    while candidate.exists() && n < u32::MAX {
        n += 1;
        candidate = quarantine.join(format!("{name}.{n}"));
    }
    candidate
}
