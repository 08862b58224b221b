//! `repair`: brings a key set directory back to a consistent state after an interrupted `issue`, without
//! issuing anything: the journal's recovery (`super::journal`), then the device files of devices the key
//! store does not hold (left by an interrupted `issue` of a tool without the journal, or copied in), which no
//! server accepts.

use super::check_dir;
use super::journal::{self, is_device_file};
use super::key_files::load_key_store;
use crate::error::Error;
use crate::files::{DEVICES_DIR, DirLock, SERVER_KEY_FILE};
use std::path::Path;
use tfhe_sbc_adapter::key_set::server_key::read_server_key_envelope;

/// `repair`: finishes or rolls back the interrupted `issue` pass of `dir` (its journal), removes the atomic
/// writer's temporary files and every `devices/<ID>.tsdc` or `.tscp` of a device the key store does not
/// hold. Prints what it did, or that the key set was consistent.
pub fn repair(dir: &Path) -> Result<(), Error> {
    check_dir(dir)?;
    let _lock = DirLock::acquire(dir)?;
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
    for (_, path) in &orphans {
        journal::remove_file(path)?;
    }
    if !orphans.is_empty() {
        journal::sync_dir(&devices)?;
        did.push(format!(
            "removed {} file{} of devices the key store does not hold: {}",
            orphans.len(),
            if orphans.len() == 1 { "" } else { "s" },
            orphans
                .iter()
                .map(|(_, path)| path.file_name().unwrap_or_default().to_string_lossy().into_owned())
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
