//! The adapter's key store (feature `tfhe`): for every device, what the cloud holds for it. Device id ->
//! key id, parameter set, key mode ([`KeyMode`], the device credential file's), MAC key, and in per-device
//! mode the seeded key-switching key from the device's key to the tfhe-rs small key. One record per device
//! feeds both halves of the server: the authenticated [`Intake`](crate::intake::Intake) (MAC key, key id,
//! and the frame kinds its mode may send) and the converter into tfhe-rs: the
//! [`BooleanBridge`](crate::interop::BooleanBridge) for the boolean sets (which key switch;
//! `KeyedIntake` keeps the two together), the
//! [`IntegerBridge`](crate::interop::integer::IntegerBridge) for the integer set (extraction or key switch
//! and identity PBS; `IntegerKeyedIntake`).
//!
//! # File format, version 2
//! ```text
//! magic "TSBCKEYS" (8) | version = 2 (1) | postcard body | BLAKE2b-256 of every byte before it (32)
//! body   = server_key_fingerprint: bytes (32) | devices: seq of record
//! record = device_id: u64 | key_id: u32 | parameter_set: u16 | mac_key: bytes (32) | mode: u8
//!          | ksk: option of (mask_seed: bytes (16) | bodies: bytes)
//! ```
//! Integers are postcard varints; `bytes` are a varint length then the bytes. `parameter_set` is the
//! device's named set ([`ParameterSetId`](tfhe_sbc_core::parameters::ParameterSetId): 1 to 3 the boolean sets, 4 the integer set). `mode` is
//! [`KeyMode`]'s wire id ([`KeyMode::to_u8`]: fleet 0, per-device 1, public key 2, as in the device's
//! credential file). A per-device record carries a key-switching key and fleet and public-key records do
//! not: on set 1 its bodies are `1024 * 8` little-endian `u32` ([`DeviceKsk`](crate::interop::DeviceKsk), 32 KiB), on set 4
//! `2 * 2048` little-endian `u64` ([`IntegerDeviceKsk`](crate::interop::IntegerDeviceKsk), 32 KiB: the bodies of a
//! tfhe-rs `SeededGlweCiphertextList` of 2 GLWE ciphertexts under the client key's GLWE key, level 2 then
//! level 1, the seed being `mask_seed` read as a little-endian `u128`; stores written before hold a
//! 64 KiB LWE key there and are refused as `WrongLength`), on sets 2 and 3 `k * 2 * N` little-endian `u32`
//! ([`BigKeyDeviceKsk`](crate::interop::big_key_per_device::BigKeyDeviceKsk): the same list layout under the
//! big key, `k = 3`, `N = 512` or `k = 2`, `N = 1024`; 12 KiB or 16 KiB). Every set allows every mode.
//!
//! Version 1 (read, no longer written) had one `parameter_set: u16` before the fingerprint, always 1, and no
//! per-record set: its devices are read as devices of set 1, as it recorded them.
//!
//! The digest detects corruption and truncation; it is not a MAC (whoever can write the file can recompute
//! it), so the file's authenticity and secrecy (it holds every device's MAC key) are the file system's:
//! mode 0600, written by the provisioning tool. The server key fingerprint ([`server_key_fingerprint`] of a
//! boolean server key, [`integer_server_key_fingerprint`] of an integer one) binds the store to the key set
//! its per-device keys switch into.
//!
//! [`KeyStore::decode`] never panics on untrusted bytes; every failure is a typed [`KeySetError`]. MAC keys
//! are copied from the input straight into [`MacKey`](tfhe_sbc_device::frame::mac::MacKey)s, and [`KeyStore::encode`] writes into a
//! [`Zeroizing`](zeroize::Zeroizing) buffer sized in advance, so no stray copy of a MAC key is left on the heap by a
//! reallocation.

mod format;

pub use super::error::KeySetError;
pub use crate::interop::device_record::{DeviceKeyMaterial, DeviceRecord};
pub use format::{KEY_STORE_MAGIC, KEY_STORE_VERSION};

use super::error::{RESTORE, bad};
use super::files::{SECRET_MODE, read, write_atomic};
use crate::interop::InteropError;
use crate::interop::integer::integer_server_key_fingerprint;
use crate::interop::server_key_fingerprint;
use std::collections::BTreeMap;
use std::path::Path;
use tfhe::boolean::server_key::ServerKey;

/// How a device encrypts, and so what the cloud holds for it: the device crate's
/// [`tfhe_sbc_device::files::credentials::KeyMode`], one enum for the device's credential file and the key
/// store, with the same wire ids (fleet 0, per-device 1, public key 2).
pub use tfhe_sbc_device::files::credentials::KeyMode;

/// Every device the cloud knows, bound to one server key.
#[derive(Debug)]
pub struct KeyStore {
    server_key_fingerprint: [u8; 32],
    devices: BTreeMap<u64, DeviceRecord>,
}

impl KeyStore {
    /// An empty store for the key set of `server_key`.
    pub fn new(server_key: &ServerKey) -> Self {
        Self::with_fingerprint(server_key_fingerprint(server_key))
    }

    /// An empty store for the integer key set of `server_key` (bound to its
    /// [`integer_server_key_fingerprint`]).
    pub fn for_integers(server_key: &tfhe::ServerKey) -> Result<Self, InteropError> {
        Ok(Self::with_fingerprint(integer_server_key_fingerprint(server_key)?))
    }

    /// An empty store for the server key with this fingerprint ([`server_key_fingerprint`] or
    /// [`integer_server_key_fingerprint`]).
    pub fn with_fingerprint(server_key_fingerprint: [u8; 32]) -> Self {
        Self {
            server_key_fingerprint,
            devices: BTreeMap::new(),
        }
    }

    /// The fingerprint of the server key the store is bound to.
    pub fn server_key_fingerprint(&self) -> [u8; 32] {
        self.server_key_fingerprint
    }

    /// Adds a device; [`KeySetError::DuplicateDevice`] if the store holds its id already.
    pub fn insert(&mut self, record: DeviceRecord) -> Result<(), KeySetError> {
        let id = record.device_id();
        if self.devices.contains_key(&id) {
            return Err(KeySetError::DuplicateDevice(id));
        }
        self.devices.insert(id, record);
        Ok(())
    }

    /// Removes a device (revocation), returning its record.
    pub fn remove(&mut self, device_id: u64) -> Option<DeviceRecord> {
        self.devices.remove(&device_id)
    }

    /// The record of `device_id`.
    pub fn get(&self, device_id: u64) -> Option<&DeviceRecord> {
        self.devices.get(&device_id)
    }

    /// The records, by device id.
    pub fn iter(&self) -> impl Iterator<Item = &DeviceRecord> {
        self.devices.values()
    }

    /// The number of devices.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Whether there is no device.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// The records, by device id.
    pub fn into_records(self) -> impl Iterator<Item = DeviceRecord> {
        self.devices.into_values()
    }

    /// An intake that authenticates the store's devices (MAC key, key id, the frame kinds of each device's
    /// mode) and converts nothing: what a gateway or a results writer needs, without the server key.
    pub fn into_intake(self, config: crate::intake::IntakeConfig) -> crate::intake::Intake {
        let mut intake = crate::intake::Intake::new(config, crate::registry::DeviceRegistry::new());
        // Device ids are the store's keys: no duplicate in an empty intake.
        let _ = self.register_into(&mut intake);
        intake
    }

    /// Registers every device of the store in `intake` (MAC key, key id, the frame kinds of its mode), so
    /// that one intake authenticates the devices of several key sets; stops at the first device id `intake`
    /// already holds ([`IntakeError::DuplicateDevice`](crate::IntakeError::DuplicateDevice)).
    pub fn register_into(self, intake: &mut crate::intake::Intake) -> Result<(), crate::error::IntakeError> {
        for record in self.into_records() {
            let (credentials, material) = record.into_parts();
            intake.register_device_with_window(
                credentials,
                material.encryption(),
                crate::replay::ReplayWindow::new(0),
            )?;
        }
        Ok(())
    }
}

impl KeyStore {
    /// Reads and checks the key store file at `path` (`key_store.bin`): [`KeyStore::decode`], with a
    /// [`KeySetError`] naming the file.
    pub fn read_file(path: &Path) -> Result<Self, KeySetError> {
        let bytes = read(path, "key store")?;
        Self::decode(&bytes).map_err(|e| bad(path, e.to_string(), RESTORE))
    }

    /// Writes the store to `path` atomically and durably, mode 0600 (it holds every MAC key):
    /// [`write_atomic`] of [`KeyStore::encode`].
    pub fn write_file(&self, path: &Path) -> Result<(), KeySetError> {
        write_atomic(path, &self.encode(), SECRET_MODE)
    }
}
