//! Key stores in tests: the integer set's devices provisioned into a store bound to a tfhe-rs server key, as
//! the trusted party hands them out (each device's credential file and the store's file, and the server side
//! read back from that file); key material of the right shape, for the store's own checks; and the digest
//! that guards a store file, recomputed after an edit so that the checks behind it are reached.

use super::IntegerKeys;
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::integer::IntegerBridge;
use tfhe_sbc_adapter::interop::integer::per_device::IntegerDeviceKsk;
use tfhe_sbc_adapter::interop::{DeviceKsk, DeviceSecrets, InteropError, device_ksk_words};
use tfhe_sbc_adapter::key_store::{DeviceRecord, IntegerKeyedIntake, KeyStore};

/// What provisioning hands out.
pub struct ProvisionedStore {
    /// Each device's credential file.
    files: Vec<(u64, Vec<u8>)>,
    /// The key store's file.
    store: Vec<u8>,
    /// The secrets of the devices that hold a secret key.
    secrets: Vec<(u64, DeviceSecrets)>,
}

impl ProvisionedStore {
    /// Starts provisioning devices into an empty store bound to `keys`' server key.
    pub fn for_integers(keys: &IntegerKeys) -> Provisioning {
        Provisioning {
            store: KeyStore::for_integers(&keys.server_key).unwrap(),
            files: Vec::new(),
            secrets: Vec::new(),
        }
    }

    /// Device `id`'s credential file.
    pub fn credential_file(&self, id: u64) -> &[u8] {
        &self.files.iter().find(|(d, _)| *d == id).unwrap().1
    }

    /// Device `id`'s secrets.
    pub fn secrets(&self, id: u64) -> &DeviceSecrets {
        &self.secrets.iter().find(|(d, _)| *d == id).unwrap().1
    }

    /// The key store, read back from its file.
    pub fn key_store(&self) -> KeyStore {
        KeyStore::decode(&self.store).unwrap()
    }

    /// The server side, from the store's file and `keys`' server key.
    pub fn keyed_intake(&self, keys: &IntegerKeys) -> IntegerKeyedIntake {
        integer_keyed_intake(keys, self.key_store()).unwrap()
    }
}

/// Devices being provisioned: the store so far, and what each device is handed.
pub struct Provisioning {
    store: KeyStore,
    files: Vec<(u64, Vec<u8>)>,
    secrets: Vec<(u64, DeviceSecrets)>,
}

impl Provisioning {
    /// Adds device `id`: its record to the store, its credential file, and its secrets if it holds a secret
    /// key.
    pub fn add(&mut self, id: u64, record: DeviceRecord, file: &[u8], secrets: Option<DeviceSecrets>) {
        self.store.insert(record).unwrap();
        self.files.push((id, file.to_vec()));
        self.secrets.extend(secrets.map(|s| (id, s)));
    }

    /// The store as its file, and what each device was handed.
    pub fn finish(self) -> ProvisionedStore {
        ProvisionedStore {
            files: self.files,
            store: self.store.encode().to_vec(),
            secrets: self.secrets,
        }
    }
}

/// The server side of `store` with `keys`' server key.
pub fn integer_keyed_intake(keys: &IntegerKeys, store: KeyStore) -> Result<IntegerKeyedIntake, InteropError> {
    IntegerKeyedIntake::new(
        IntakeConfig::default(),
        store,
        IntegerBridge::new(keys.server_key.clone()).unwrap(),
    )
}

/// A fake per-device integer key of the right shape (the store checks shapes, not contents): no key
/// generation needed.
pub fn fake_integer_ksk(seed: u64) -> IntegerDeviceKsk {
    let words = (0..IntegerDeviceKsk::body_words() as u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed)
        .collect();
    IntegerDeviceKsk::from_parts(u128::from(seed), words).unwrap()
}

/// A `TFHE_LIB_PARAMETERS` per-device key (its shape only matters here).
pub fn fake_boolean_ksk() -> DeviceKsk {
    DeviceKsk::from_parts(5, vec![0; device_ksk_words()]).unwrap()
}

/// The digest of a key store file's body (BLAKE2b-256), which the file ends with.
pub fn store_digest(bytes: &[u8]) -> [u8; 32] {
    use blake2::Digest;
    blake2::Blake2b::<blake2::digest::consts::U32>::digest(bytes).into()
}

/// `file` with its digest recomputed, so that the checks behind the digest are reached.
pub fn redigest(mut file: Vec<u8>) -> Vec<u8> {
    let end = file.len() - 32;
    let d = store_digest(&file[..end]);
    file[end..].copy_from_slice(&d);
    file
}
