//! `issue`: provisions one device in one key mode, its credential file and its record in the key store.

use super::compact_list::load_compact_public_key;
use super::dev_credential::{DEV_KEY_ID, UNSAFE_DEV, dev_credentials_path, dev_device, dev_seed_path};
use super::device_kinds::{KeySetPublicKey, boolean_device, integer_device, key_set_public_key, public_key_device};
use super::entropy::os_rng;
use super::journal::{self, FileSet, Journal, Outcome};
use super::key_files::{load_client_key, load_key_store};
use super::report::{bar, size};
use crate::KeySetParameters;
use crate::error::Error;
use crate::files::check_dir;
use crate::files::{
    self, DEVICES_DIR, DirLock, KEY_STORE_FILE, PUBLIC_KEY_FILE, PUBLIC_MODE, SECRET_MODE, SERVER_KEY_FILE,
    compact_public_key_path, credentials_path,
};
use std::path::Path;
use std::time::Instant;
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_adapter::key_set::key_store::KeyMode;
use tfhe_sbc_adapter::key_set::server_key::read_server_key_envelope;

/// `issue`: provisions device `device_id` in `mode`. Writes its credential file (`devices/<ID>.tsdc`, mode
/// 0600) and adds its record to the key store (rewritten atomically), with the key set's parameter set.
/// `key_id` defaults to the key set's; only per-device keys may take another (fleet and public-key devices
/// encrypt under the key set's key). Every set takes fleet, public-key and per-device devices (per-device keys:
/// a switch per bit into the small key on `tfhe-lib`, one switch per frame into the big key on the big-key
/// and integer sets). A public-key device gets the key set's public key (`public_key.tspk`,
/// boolean or integer alike) and needs no client key, except the first one of an integer key set whose
/// `init` wrote no public key, which makes it from the client key.
pub fn issue(dir: &Path, device_id: u64, mode: KeyMode, key_id: Option<u32>) -> Result<(), Error> {
    issue_devices(dir, device_id, 1, mode, key_id)
}

/// [`issue`] for `count` devices numbered from `first_id`, in one pass: the server key's envelope is read
/// and checked once (hundreds of MB on the integer set) and the key store written once, after every
/// credential file. A failure after the pass's journal is written leaves the journal
/// ([`Error::Interrupted`]): the next `issue` or `repair` finishes the pass if the key store was written, or
/// rolls it back.
pub fn issue_devices(dir: &Path, first_id: u64, count: u64, mode: KeyMode, key_id: Option<u32>) -> Result<(), Error> {
    issue_into(dir, first_id, count, mode, FileSet::Credentials, key_id)
}

/// `issue --mode compact-list`: `count` devices numbered from `first_id` that encrypt tfhe-rs
/// `CompactCiphertextList`s, on an integer key set made with `init --parameters integer --compact-list`
/// (refused otherwise). Each gets the key set's compact public-key file, checked to be of this key set, as
/// `devices/<ID>.tscp` (0644: it holds nothing secret) and public-key credentials (`devices/<ID>.tsdc`,
/// 0600: device id, key id, a MAC key of its own; the key store records it as a public-key device). tfhe-rs
/// needs no MAC key, but a list carries no MAC and no sequence number: with the credentials the device can
/// also send its lists (or anything else) in our authenticated frames, and the cloud knows it, can list it
/// and can revoke it, as any public-key device. Like a public-key device it holds nothing that decrypts.
pub fn issue_compact_list_devices(dir: &Path, first_id: u64, count: u64, key_id: Option<u32>) -> Result<(), Error> {
    issue_into(dir, first_id, count, KeyMode::PublicKey, FileSet::CompactList, key_id)
}

/// `issue --mode per-device --unsafe-dev-credential`: `count` firmware development devices numbered from
/// `first_id`, on a `tfhe-lib` key set, UNSAFE FOR PRODUCTION (`super::dev_credential`): each one's key, MAC
/// key and seed are derived from its id by a public XOF (`firmware/examples/test_credential.rs`'s files,
/// key id 0); the key store gets its key-switching key, so the key set accepts and decrypts its frames.
/// Writes `devices/<ID>.UNSAFE-DEV.tsdc` and `devices/<ID>.UNSAFE-DEV.seed`.
pub fn issue_dev_devices(dir: &Path, first_id: u64, count: u64, key_id: Option<u32>) -> Result<(), Error> {
    issue_into(
        dir,
        first_id,
        count,
        KeyMode::PerDeviceSecretKey,
        FileSet::UnsafeDev,
        key_id,
    )
}

/// [`issue_devices`] in `mode`, each device getting `files`: also the compact public key
/// ([`issue_compact_list_devices`]), or development files ([`issue_dev_devices`]).
fn issue_into(
    dir: &Path,
    first_id: u64,
    count: u64,
    mode: KeyMode,
    files: FileSet,
    key_id: Option<u32>,
) -> Result<(), Error> {
    let compact_list = files == FileSet::CompactList;
    let dev = files == FileSet::UnsafeDev;
    check_dir(dir)?;
    let _lock = DirLock::acquire_key_set(dir)?;
    let server = read_server_key_envelope(&dir.join(SERVER_KEY_FILE))?;
    let parameters = server.parameters;
    let mode_name = if compact_list { "compact-list" } else { mode.name() };
    if dev && (parameters != KeySetParameters::Boolean(BooleanSet::TfheLib) || key_id.is_some_and(|k| k != DEV_KEY_ID))
    {
        return Err(Error::BadArgument {
            message: format!(
                "--unsafe-dev-credential makes the firmware development credential's files (TFHE_LIB_GLWE_1024, key id 0): it takes a \
                 tfhe-lib key set (this one is {}) and no --key-id but 0",
                parameters.name()
            ),
        });
    }
    let key_id = if dev { Some(DEV_KEY_ID) } else { key_id };
    // How the journal names the pass (a re-run of the same pass recognizes it).
    let pass_mode = if dev {
        format!("{mode_name} --unsafe-dev-credential")
    } else {
        mode_name.to_owned()
    };
    let compact_public_key = if compact_list {
        Some(load_compact_public_key(dir, &server)?)
    } else {
        None
    };
    let key_id = match key_id {
        None => server.key_id,
        Some(k) if k == server.key_id || mode == KeyMode::PerDeviceSecretKey => k,
        Some(k) => {
            return Err(Error::BadArgument {
                message: format!(
                    "--key-id {k:#010x} is not the key set's key id {:#010x}: {} devices encrypt under the key set's \
                     key, so their frames carry its id; omit --key-id",
                    server.key_id, mode_name
                ),
            });
        }
    };
    let ids = first_id..first_id.checked_add(count).ok_or_else(|| Error::BadArgument {
        message: format!("--count {count} from device id {first_id} passes the largest device id (u64::MAX)"),
    })?;
    let mut store = load_key_store(dir, &server)?;
    let store_path = dir.join(KEY_STORE_FILE);
    let recovery = journal::recover(dir, &store)?;
    if let Some(line) = recovery.describe() {
        println!("{line}");
    }
    // A re-run of a pass that was interrupted after its commit point: done, if it asked for those devices.
    if let Some((done, Outcome::Finished)) = &recovery.pass
        && done.mode == pass_mode
        && ids.clone().all(|id| done.device_ids.contains(&id))
    {
        println!(
            "devices {}..={} ({mode_name} mode) are issued: the interrupted run had written them",
            ids.start,
            ids.end - 1
        );
        return Ok(());
    }
    for device_id in ids.clone() {
        if store.get(device_id).is_some() {
            return Err(Error::DuplicateDevice {
                device_id,
                path: store_path,
            });
        }
        let every_file = [FileSet::CompactList, FileSet::UnsafeDev].map(|set| set.paths(dir, device_id));
        for path in every_file.into_iter().flatten() {
            if path.exists() {
                return Err(Error::OrphanCredentials { device_id, path });
            }
        }
    }

    let mut rng = os_rng()?;
    let mut new_public_key = None;
    let mut issued = Vec::new();
    let progress = (count > 1).then(|| bar(count, format!("issuing {count} {mode_name} devices")));
    for device_id in ids {
        if let Some(progress) = &progress {
            progress.inc(1);
        }
        let started = Instant::now();
        let mut seed = None;
        let (credentials_file, record) = match (parameters, mode) {
            (KeySetParameters::Boolean(BooleanSet::TfheLib), KeyMode::PerDeviceSecretKey) if dev => {
                let client_key = load_client_key(dir, &server)?;
                let made = dev_device(client_key.get(), device_id, &mut rng)?;
                seed = Some(made.seed);
                (made.file, made.record)
            }
            (KeySetParameters::Boolean(_) | KeySetParameters::Integer, KeyMode::PublicKey) => {
                // One public key for every device of the pass, also when this pass makes it.
                let public_key = match &new_public_key {
                    Some(made) => Vec::clone(made),
                    None => match key_set_public_key(dir, &server, &store, &mut rng)? {
                        KeySetPublicKey::Existing(bytes) => bytes,
                        KeySetPublicKey::New(bytes) => new_public_key.insert(bytes).clone(),
                    },
                };
                public_key_device(parameters, public_key, device_id, key_id, &mut rng)?
            }
            (KeySetParameters::Boolean(set), KeyMode::FleetSecretKey | KeyMode::PerDeviceSecretKey) => {
                boolean_device(dir, &server, set, mode, device_id, key_id, &mut rng)?
            }
            (KeySetParameters::Integer, KeyMode::FleetSecretKey | KeyMode::PerDeviceSecretKey) => {
                integer_device(dir, &server, mode, device_id, key_id, &mut rng)?
            }
        };
        issued.push((device_id, credentials_file, seed, record, started.elapsed()));
    }
    if let Some(progress) = progress {
        progress.finish_and_clear();
    }

    let public_key_path = dir.join(PUBLIC_KEY_FILE);
    if let Some(public_key) = &new_public_key {
        files::write_atomic(&public_key_path, public_key, PUBLIC_MODE)?;
    }
    files::create_dir(&dir.join(DEVICES_DIR))?;
    // From here on, any failure leaves the journal: an error of the atomic writer may come after its rename
    // (the directory's fsync), when the file is in place, so only the key store on disk tells whether the
    // pass committed, and the recovery (the next `issue`, or `repair`) reads it.
    let interrupted = |cause: Error| Error::Interrupted {
        journal: dir.join(journal::JOURNAL_FILE),
        dir: dir.to_owned(),
        cause: Box::new(cause),
    };
    // The intent, before any device file: an interrupted pass is finished or rolled back from it (a write
    // that failed after its rename leaves the journal too).
    journal::write(
        dir,
        &Journal {
            mode: pass_mode,
            device_ids: issued.iter().map(|(id, ..)| *id).collect(),
            files,
        },
    )
    .map_err(|e| {
        if dir.join(journal::JOURNAL_FILE).exists() {
            interrupted(e)
        } else {
            e
        }
    })?;
    let mut written = Vec::new();
    let mut stored = Vec::new();
    for (device_id, credentials_file, seed, record, provisioning_time) in issued {
        let path = if dev {
            dev_credentials_path(dir, device_id)
        } else {
            credentials_path(dir, device_id)
        };
        files::write_atomic(&path, &credentials_file, SECRET_MODE).map_err(interrupted)?;
        written.push(path);
        let second = match (&compact_public_key, &seed) {
            (Some(compact), _) => Some((compact_public_key_path(dir, device_id), &compact[..], PUBLIC_MODE)),
            (None, Some(seed)) => Some((dev_seed_path(dir, device_id), &seed[..], SECRET_MODE)),
            (None, None) => None,
        };
        if let Some((path, bytes, file_mode)) = second {
            files::write_atomic(&path, bytes, file_mode).map_err(interrupted)?;
            written.push(path);
        }
        stored.push((
            device_id,
            record.key().stored_bytes(),
            credentials_file.len(),
            provisioning_time,
        ));
        store.insert(record).map_err(|_| {
            interrupted(Error::DuplicateDevice {
                device_id,
                path: store_path.clone(),
            })
        })?;
    }
    let encoded = store.encode();
    files::write_atomic(&store_path, &encoded, SECRET_MODE).map_err(interrupted)?;
    // Committed: the journal has served.
    journal::remove(dir).map_err(interrupted)?;

    let dev_mark = if dev {
        format!(" {UNSAFE_DEV} (NOT FOR PRODUCTION)")
    } else {
        String::new()
    };
    for (device_id, _, _, provisioning_time) in &stored {
        println!(
            "device {device_id}: {mode_name} mode{dev_mark}, key id {key_id:#010x}, parameter set {} \
             ({provisioning_time:.2?})",
            parameters.name(),
        );
    }
    if let Some(public_key) = &new_public_key {
        println!(
            "  {}  {PUBLIC_MODE:04o}  {:>9}  made now from the client key (this key set's init wrote none): \
             every public-key device of the key set gets it",
            public_key_path.display(),
            size(public_key.len()),
        );
    }
    let per_device = if compact_list || dev { 2 } else { 1 };
    let more = |written: usize| {
        if written > per_device {
            format!(" (and {} more)", written / per_device - 1)
        } else {
            String::new()
        }
    };
    if let (Some(path), Some((device_id, stored_bytes, file_bytes, _))) = (written.first(), stored.first()) {
        if let Some(compact) = &compact_public_key {
            println!(
                "  {}{}  {PUBLIC_MODE:04o}  {:>9}  to the device: tfhe-rs's compact public key [a | b] (nothing that \
                 decrypts)",
                compact_public_key_path(dir, *device_id).display(),
                more(written.len()),
                size(compact.len()),
            );
        }
        println!(
            "  {}{}  {SECRET_MODE:04o}  {:>9}  to the device only: {} and its MAC key",
            path.display(),
            more(written.len()),
            size(*file_bytes),
            match mode {
                KeyMode::PerDeviceSecretKey => "its own secret key",
                KeyMode::FleetSecretKey => "the client key's GLWE key (shared by the fleet)",
                KeyMode::PublicKey => "the public key (nothing that decrypts)",
            }
        );
        if dev {
            println!(
                "  {}{}  {SECRET_MODE:04o}  {:>9}  to the board: its CSPRNG seed (boards without an RNG)",
                dev_seed_path(dir, *device_id).display(),
                more(written.len()),
                size(32),
            );
            println!(
                "{UNSAFE_DEV}: NOT FOR PRODUCTION: these devices' keys, MAC keys and seeds are derived from their ids \
                 by a public XOF (the firmware development credential): anyone can decrypt and forge their frames. \
                 Use them to bring a firmware up against this key set (check-frame), never in a deployment."
            );
        }
        println!(
            "  {}  {SECRET_MODE:04o}  {:>9}  to the cloud: {} device{}, {} of key material for each new one",
            store_path.display(),
            size(encoded.len()),
            store.len(),
            if store.len() == 1 { "" } else { "s" },
            size(*stored_bytes),
        );
    }
    Ok(())
}
