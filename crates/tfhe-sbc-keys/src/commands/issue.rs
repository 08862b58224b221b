//! `issue`: provisions one device in one key mode, its credential file and its record in the key store.

use super::compact_list::load_compact_public_key;
use super::credentials::new_device;
use super::key_files::{load_client_key, load_integer_client_key, load_key_store, load_public_key};
use super::report::size;
use super::{check_dir, glwe_parameters, os_rng, provisioning};
use crate::KeySetParameters;
use crate::error::Error;
use crate::files::{
    self, DEVICES_DIR, DirLock, KEY_STORE_FILE, PUBLIC_KEY_FILE, PUBLIC_MODE, SECRET_MODE, SERVER_KEY_FILE,
    compact_public_key_path, credentials_path,
};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tfhe_sbc_adapter::interop::big_key::{BooleanSet, glwe_key_from_client_key};
use tfhe_sbc_adapter::interop::big_key_per_device::provision_big_key_per_device;
use tfhe_sbc_adapter::interop::integer::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_adapter::interop::integer::per_device::{provision_integer_fleet_device, provision_integer_per_device};
use tfhe_sbc_adapter::interop::integer::public_key::integer_public_key_from_client_key;
use tfhe_sbc_adapter::interop::{DeviceSecrets, PublicKeyDevice, provision_per_device};
use tfhe_sbc_adapter::key_set::envelope::KeyFileEnvelope;
use tfhe_sbc_adapter::key_set::key_store::{DeviceKeyMaterial, DeviceRecord, KeyMode, KeyStore};
use tfhe_sbc_adapter::key_set::server_key::read_server_key_envelope;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use zeroize::Zeroizing;

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
/// credential file (on failure, the credential files written are removed and the store is unchanged).
pub fn issue_devices(dir: &Path, first_id: u64, count: u64, mode: KeyMode, key_id: Option<u32>) -> Result<(), Error> {
    issue_into(dir, first_id, count, mode, false, key_id)
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
    issue_into(dir, first_id, count, KeyMode::PublicKey, true, key_id)
}

/// [`issue_devices`] in `mode`, and each device also gets the compact public key if `compact_list`
/// ([`issue_compact_list_devices`]).
fn issue_into(
    dir: &Path,
    first_id: u64,
    count: u64,
    mode: KeyMode,
    compact_list: bool,
    key_id: Option<u32>,
) -> Result<(), Error> {
    check_dir(dir)?;
    let _lock = DirLock::acquire(dir)?;
    let server = read_server_key_envelope(&dir.join(SERVER_KEY_FILE))?;
    let parameters = server.parameters;
    let mode_name = if compact_list { "compact-list" } else { mode.name() };
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
    for device_id in ids.clone() {
        if store.get(device_id).is_some() {
            return Err(Error::DuplicateDevice {
                device_id,
                path: store_path,
            });
        }
        for path in [
            credentials_path(dir, device_id),
            compact_public_key_path(dir, device_id),
        ] {
            if path.exists() {
                return Err(Error::OrphanCredentials { device_id, path });
            }
        }
    }

    let mut rng = os_rng()?;
    let mut new_public_key = None;
    let mut issued = Vec::new();
    for device_id in ids {
        let started = Instant::now();
        let (credentials_file, record) = match (parameters, mode) {
            (_, KeyMode::PublicKey) => {
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
            (KeySetParameters::Boolean(set), _) => {
                boolean_device(dir, &server, set, mode, device_id, key_id, &mut rng)?
            }
            (KeySetParameters::Integer, _) => integer_device(dir, &server, mode, device_id, key_id, &mut rng)?,
        };
        issued.push((device_id, credentials_file, record, started.elapsed()));
    }

    let public_key_path = dir.join(PUBLIC_KEY_FILE);
    if let Some(public_key) = &new_public_key {
        files::write_atomic(&public_key_path, public_key, PUBLIC_MODE)?;
    }
    files::create_dir(&dir.join(DEVICES_DIR))?;
    let mut written = Vec::new();
    let remove_written = |written: &[PathBuf]| {
        for path in written {
            let _ = std::fs::remove_file(path);
        }
    };
    let mut stored = Vec::new();
    for (device_id, credentials_file, record, provisioning_time) in issued {
        let path = credentials_path(dir, device_id);
        if let Err(e) = files::write_atomic(&path, &credentials_file, SECRET_MODE) {
            remove_written(&written);
            return Err(e);
        }
        written.push(path);
        if let Some(compact) = &compact_public_key {
            let path = compact_public_key_path(dir, device_id);
            if let Err(e) = files::write_atomic(&path, compact, PUBLIC_MODE) {
                remove_written(&written);
                return Err(e);
            }
            written.push(path);
        }
        stored.push((
            device_id,
            record.key().stored_bytes(),
            credentials_file.len(),
            provisioning_time,
        ));
        store.insert(record).map_err(|_| Error::DuplicateDevice {
            device_id,
            path: store_path.clone(),
        })?;
    }
    let encoded = store.encode();
    if let Err(e) = files::write_atomic(&store_path, &encoded, SECRET_MODE) {
        remove_written(&written);
        return Err(e);
    }

    for (device_id, _, _, provisioning_time) in &stored {
        println!(
            "device {device_id}: {mode_name} mode, key id {key_id:#010x}, parameter set {} ({provisioning_time:.2?})",
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
    let per_device = if compact_list { 2 } else { 1 };
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
                _ => "its key",
            }
        );
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

/// A secret-key device (per-device or fleet) of a boolean key set (`server`'s, of parameter set `set`): its
/// credential file and its key store record.
fn boolean_device(
    dir: &Path,
    server: &KeyFileEnvelope,
    set: BooleanSet,
    mode: KeyMode,
    device_id: u64,
    key_id: u32,
    rng: &mut Blake2bXof,
) -> Result<(Zeroizing<Vec<u8>>, DeviceRecord), Error> {
    let params = set.glwe_parameters();
    Ok(match mode {
        KeyMode::PerDeviceSecretKey => {
            let client_key = load_client_key(dir, server)?;
            let (secrets, record) = if set.is_big_key() {
                provision_big_key_per_device(set, client_key.get(), device_id, key_id, rng)
            } else {
                provision_per_device(client_key.get(), device_id, key_id, rng)
            }
            .map_err(provisioning)?;
            let file = secrets
                .credentials_file(KeyMode::PerDeviceSecretKey, &params)
                .map_err(provisioning)?;
            (file, record)
        }
        KeyMode::FleetSecretKey => {
            let client_key = load_client_key(dir, server)?;
            let key = glwe_key_from_client_key(set, client_key.get()).map_err(provisioning)?;
            let (credentials, record) = new_device(device_id, key_id, &params, DeviceKeyMaterial::Fleet, rng)?;
            let secrets = DeviceSecrets { key, credentials };
            let file = secrets
                .credentials_file(KeyMode::FleetSecretKey, &params)
                .map_err(provisioning)?;
            (file, record)
        }
        other => {
            return Err(Error::BadArgument {
                message: format!("key mode {} is not one this build provisions", other.name()),
            });
        }
    })
}

/// A secret-key device (per-device or fleet) of the integer key set: its credential file (parameter set 4,
/// its key packed in 256 bytes) and its key store record.
fn integer_device(
    dir: &Path,
    server: &KeyFileEnvelope,
    mode: KeyMode,
    device_id: u64,
    key_id: u32,
    rng: &mut Blake2bXof,
) -> Result<(Zeroizing<Vec<u8>>, DeviceRecord), Error> {
    let client_key = load_integer_client_key(dir, server)?;
    let (secrets, record, key_mode) = match mode {
        KeyMode::PerDeviceSecretKey => {
            let (secrets, record) =
                provision_integer_per_device(client_key.get(), device_id, key_id, rng).map_err(provisioning)?;
            (secrets, record, KeyMode::PerDeviceSecretKey)
        }
        KeyMode::FleetSecretKey => {
            let (secrets, record) =
                provision_integer_fleet_device(client_key.get(), device_id, key_id, rng).map_err(provisioning)?;
            (secrets, record, KeyMode::FleetSecretKey)
        }
        other => {
            return Err(Error::BadArgument {
                message: format!("key mode {} is not one this build provisions", other.name()),
            });
        }
    };
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
    let file = secrets.credentials_file(key_mode, &params).map_err(provisioning)?;
    Ok((file, record))
}

/// Where a public-key device's public key comes from.
enum KeySetPublicKey {
    /// `public_key.tspk`, as `init` (or an earlier `issue`) wrote it.
    Existing(Vec<u8>),
    /// Made now, to be written as `public_key.tspk`.
    New(Vec<u8>),
}

/// The public key of `dir`'s key set (`server`'s), checked to be of its parameter set and key id. An integer
/// key set made before the integer set had public keys has no `public_key.tspk`: as long as `store` holds
/// no public-key device, the first public-key device makes it from the client key (a lost file of a key set
/// that has public-key devices is restored from a backup instead, so that they all keep one key).
fn key_set_public_key(
    dir: &Path,
    server: &KeyFileEnvelope,
    store: &KeyStore,
    rng: &mut Blake2bXof,
) -> Result<KeySetPublicKey, Error> {
    let missing = !dir.join(PUBLIC_KEY_FILE).exists();
    let has_public_key_devices = store.iter().any(|r| r.mode() == KeyMode::PublicKey);
    if server.parameters == KeySetParameters::Integer && missing && !has_public_key_devices {
        let client_key = load_integer_client_key(dir, server)?;
        let bytes = integer_public_key_from_client_key(client_key.get(), server.key_id, rng).map_err(provisioning)?;
        return Ok(KeySetPublicKey::New(bytes));
    }
    load_public_key(dir, server.parameters, server.key_id).map(KeySetPublicKey::Existing)
}

/// A public-key device of a key set with parameters `parameters`, boolean or integer alike: fresh
/// credentials (a new MAC key) beside the key set's `public_key` (already checked to be of this key set),
/// its credential file (`68 +` the public-key file's bytes: 4,223 on `tfhe-lib`, 16,511 on the integer
/// set) and its key store record (nothing of its own: its frames are under the client key's GLWE key).
fn public_key_device(
    parameters: KeySetParameters,
    public_key: Vec<u8>,
    device_id: u64,
    key_id: u32,
    rng: &mut Blake2bXof,
) -> Result<(Zeroizing<Vec<u8>>, DeviceRecord), Error> {
    let params = glwe_parameters(parameters);
    let (credentials, record) = new_device(device_id, key_id, &params, DeviceKeyMaterial::PublicKey, rng)?;
    let device = PublicKeyDevice {
        public_key,
        credentials,
    };
    let file = device.credentials_file().map_err(provisioning)?;
    Ok((file, record))
}
