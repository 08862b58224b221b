//! Each key mode's devices as `issue` makes them: a device's credential file and its key store record, on
//! every parameter set (boolean `tfhe-lib`, the big-key boolean sets, the integer set), and the key set's
//! public key for public-key devices.

use super::credentials::new_device;
use super::device_parameters::glwe_parameters;
use super::key_files::{load_client_key, load_integer_client_key, load_public_key};
use crate::KeySetParameters;
use crate::error::Error;
use crate::error::provisioning;
use crate::files::PUBLIC_KEY_FILE;
use std::path::Path;
use tfhe_sbc_adapter::interop::big_key::{BooleanSet, glwe_key_from_client_key};
use tfhe_sbc_adapter::interop::big_key_per_device::provision_big_key_per_device;
use tfhe_sbc_adapter::interop::integer::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_adapter::interop::integer::per_device::{provision_integer_fleet_device, provision_integer_per_device};
use tfhe_sbc_adapter::interop::integer::public_key::integer_public_key_from_client_key;
use tfhe_sbc_adapter::interop::{DeviceSecrets, PublicKeyDevice, provision_per_device};
use tfhe_sbc_adapter::key_set::envelope::KeyFileEnvelope;
use tfhe_sbc_adapter::key_set::key_store::{DeviceKeyMaterial, DeviceRecord, KeyMode, KeyStore};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use zeroize::Zeroizing;

/// A secret-key device (per-device or fleet) of a boolean key set (`server`'s, of parameter set `set`): its
/// credential file and its key store record.
pub(super) fn boolean_device(
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
        other @ KeyMode::PublicKey => {
            return Err(Error::BadArgument {
                message: format!("key mode {} is not one this build provisions", other.name()),
            });
        }
    })
}

/// A secret-key device (per-device or fleet) of the integer key set: its credential file (parameter set 4,
/// its key packed in 256 bytes) and its key store record.
pub(super) fn integer_device(
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
        other @ KeyMode::PublicKey => {
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
pub(super) enum KeySetPublicKey {
    /// `public_key.tspk`, as `init` (or an earlier `issue`) wrote it.
    Existing(Vec<u8>),
    /// Made now, to be written as `public_key.tspk`.
    New(Vec<u8>),
}

/// The public key of `dir`'s key set (`server`'s), checked to be of its parameter set and key id. An integer
/// key set made before the integer set had public keys has no `public_key.tspk`: as long as `store` holds
/// no public-key device, the first public-key device makes it from the client key (a lost file of a key set
/// that has public-key devices is restored from a backup instead, so that they all keep one key).
pub(super) fn key_set_public_key(
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
pub(super) fn public_key_device(
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
