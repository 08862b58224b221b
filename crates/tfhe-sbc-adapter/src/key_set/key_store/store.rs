//! The key store in memory ([`KeyStore`]: every device's record by id, bound to one server key), how it
//! feeds an intake, and its file `key_store.bin` (read and written through the key set's files,
//! `key_set/files.rs`). The bytes of that file are `format.rs`'s.

use crate::interop::InteropError;
use crate::interop::device_record::DeviceRecord;
use crate::interop::integer::integer_server_key_fingerprint;
use crate::interop::server_key_fingerprint;
use crate::key_set::error::{KeySetError, RESTORE, bad};
use crate::key_set::files::{SECRET_MODE, read, write_atomic};
use std::collections::BTreeMap;
use std::path::Path;
use tfhe::boolean::server_key::ServerKey;

/// Every device the cloud knows, bound to one server key.
#[derive(Debug)]
pub struct KeyStore {
    pub(super) server_key_fingerprint: [u8; 32],
    pub(super) devices: BTreeMap<u64, DeviceRecord>,
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

#[cfg(test)]
mod tests {
    use super::KeyStore;
    use crate::key_set::files::scratch::{TempDir, mode, names};
    use crate::key_set::files::{KEY_STORE_FILE, SECRET_MODE};

    /// The key store file (every MAC key) is written 0600 and reads back as written.
    #[test]
    fn key_store_file_is_secret_and_round_trips() {
        let dir = TempDir::new("store");
        let path = dir.0.join(KEY_STORE_FILE);
        let store = KeyStore::with_fingerprint([7; 32]);
        store.write_file(&path).expect("written");
        assert_eq!(mode(&path), SECRET_MODE);
        assert_eq!(names(&dir.0), [KEY_STORE_FILE]);
        let read = KeyStore::read_file(&path).expect("read");
        assert_eq!(read.server_key_fingerprint(), [7; 32]);
        assert!(read.is_empty());
        std::fs::write(&path, b"TSBCKEYS garbage").expect("overwritten");
        let err = KeyStore::read_file(&path).expect_err("corrupt");
        assert!(err.to_string().contains("restore it from a backup"), "{err}");
    }
}
