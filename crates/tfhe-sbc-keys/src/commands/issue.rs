//! `issue`: provisions one device in one key mode, its credential file and its record in the key store.

use super::credentials::{new_device, secret_key_credentials};
use super::key_files::{load_client_key, load_integer_client_key, load_key_store, load_public_key};
use super::report::size;
use super::{check_dir, os_rng, provisioning};
use crate::KeySetParameters;
use crate::error::Error;
use crate::files::{self, DEVICES_DIR, DirLock, KEY_STORE_FILE, SECRET_MODE, SERVER_KEY_FILE, credentials_path};
use std::path::Path;
use std::time::Instant;
use tfhe_sbc_adapter::interop::big_key::{BooleanSet, glwe_key_from_client_key};
use tfhe_sbc_adapter::interop::integer::per_device::{
    integer_credentials_file, provision_integer_fleet_device, provision_integer_per_device,
};
use tfhe_sbc_adapter::interop::{PublicKeyDevice, provision_per_device};
use tfhe_sbc_adapter::key_set::envelope::KeyFileEnvelope;
use tfhe_sbc_adapter::key_set::key_store::{DeviceKeyMaterial, DeviceRecord, KeyMode};
use tfhe_sbc_adapter::key_set::server_key::read_server_key_envelope;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use zeroize::Zeroizing;

/// `issue`: provisions device `device_id` in `mode`. Writes its credential file (`devices/<ID>.tsdc`, mode
/// 0600) and adds its record to the key store (rewritten atomically), with the key set's parameter set.
/// `key_id` defaults to the key set's; only per-device keys may take another (fleet and public-key devices
/// encrypt under the key set's key). An integer key set takes per-device and fleet devices.
pub fn issue(dir: &Path, device_id: u64, mode: KeyMode, key_id: Option<u32>) -> Result<(), Error> {
    check_dir(dir)?;
    let _lock = DirLock::acquire(dir)?;
    let server = read_server_key_envelope(&dir.join(SERVER_KEY_FILE))?;
    let parameters = server.parameters;
    let allowed = match (parameters, mode) {
        (KeySetParameters::Boolean(set), KeyMode::PerDeviceSecretKey) => set == BooleanSet::TfheLib,
        (KeySetParameters::Integer, KeyMode::PublicKey) => false,
        _ => true,
    };
    if !allowed {
        return Err(Error::ModeNotAllowed {
            mode: mode.name(),
            parameters: parameters.name(),
        });
    }
    let key_id = match key_id {
        None => server.key_id,
        Some(k) if k == server.key_id || mode == KeyMode::PerDeviceSecretKey => k,
        Some(k) => {
            return Err(Error::BadArgument {
                message: format!(
                    "--key-id {k:#010x} is not the key set's key id {:#010x}: {} devices encrypt under the key set's \
                     key, so their frames carry its id; omit --key-id",
                    server.key_id,
                    mode.name()
                ),
            });
        }
    };
    let mut store = load_key_store(dir, &server)?;
    let store_path = dir.join(KEY_STORE_FILE);
    if store.get(device_id).is_some() {
        return Err(Error::DuplicateDevice {
            device_id,
            path: store_path,
        });
    }
    let credentials_file_path = credentials_path(dir, device_id);
    if credentials_file_path.exists() {
        return Err(Error::OrphanCredentials {
            device_id,
            path: credentials_file_path,
        });
    }

    let mut rng = os_rng()?;
    let started = Instant::now();
    let (credentials_file, record) = match parameters {
        KeySetParameters::Boolean(set) => boolean_device(dir, &server, set, mode, device_id, key_id, &mut rng)?,
        KeySetParameters::Integer => integer_device(dir, &server, mode, device_id, key_id, &mut rng)?,
    };
    let stored = record.key().stored_bytes();
    let provisioning_time = started.elapsed();

    files::create_dir(&dir.join(DEVICES_DIR))?;
    files::write_atomic(&credentials_file_path, &credentials_file, SECRET_MODE)?;
    store.insert(record).map_err(|_| Error::DuplicateDevice {
        device_id,
        path: store_path.clone(),
    })?;
    let encoded = store.encode();
    if let Err(e) = files::write_atomic(&store_path, &encoded, SECRET_MODE) {
        let _ = std::fs::remove_file(&credentials_file_path);
        return Err(e);
    }

    println!(
        "device {device_id}: {} mode, key id {key_id:#010x}, parameter set {} ({:.2?})",
        mode.name(),
        parameters.name(),
        provisioning_time
    );
    println!(
        "  {}  {SECRET_MODE:04o}  {:>9}  to the device only: {} and its MAC key",
        credentials_file_path.display(),
        size(credentials_file.len()),
        match mode {
            KeyMode::PerDeviceSecretKey => "its own secret key",
            KeyMode::FleetSecretKey => "the client key's GLWE key (shared by the fleet)",
            KeyMode::PublicKey => "the public key (nothing that decrypts)",
            _ => "its key",
        }
    );
    println!(
        "  {}  {SECRET_MODE:04o}  {:>9}  to the cloud: {} device{}, {} of key material for this one",
        store_path.display(),
        size(encoded.len()),
        store.len(),
        if store.len() == 1 { "" } else { "s" },
        size(stored),
    );
    Ok(())
}

/// A device of a boolean key set (`server`'s, of parameter set `set`): its credential file and its key
/// store record.
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
            let (secrets, record) =
                provision_per_device(client_key.get(), device_id, key_id, rng).map_err(provisioning)?;
            let file =
                secret_key_credentials(KeyMode::PerDeviceSecretKey, &params, &secrets.credentials, &secrets.key)?;
            (file, record)
        }
        KeyMode::FleetSecretKey => {
            let client_key = load_client_key(dir, server)?;
            let key = glwe_key_from_client_key(set, client_key.get()).map_err(provisioning)?;
            let (device, record) = new_device(device_id, key_id, &params, DeviceKeyMaterial::Fleet, rng)?;
            let file = secret_key_credentials(KeyMode::FleetSecretKey, &params, &device, &key)?;
            (file, record)
        }
        KeyMode::PublicKey => {
            let public_key = load_public_key(dir, set, server.key_id)?;
            let (credentials, record) = new_device(device_id, key_id, &params, DeviceKeyMaterial::PublicKey, rng)?;
            let device = PublicKeyDevice {
                public_key,
                credentials,
            };
            let file = device.credentials_file().map_err(provisioning)?;
            (file, record)
        }
        other => {
            return Err(Error::BadArgument {
                message: format!("key mode {} is not one this build provisions", other.name()),
            });
        }
    })
}

/// A device of the integer key set (per-device or fleet): its credential file (parameter set 4, its key
/// packed in 256 bytes) and its key store record.
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
        // Public key (no tfhe-sbc public key for the 64-bit set), or a mode this build does not know.
        _ => {
            return Err(Error::ModeNotAllowed {
                mode: mode.name(),
                parameters: KeySetParameters::Integer.name(),
            });
        }
    };
    let file = integer_credentials_file(key_mode, &secrets).map_err(provisioning)?;
    Ok((file, record))
}
