//! Development devices: a device whose key, MAC key and seed are derived from its device id alone by the
//! public BLAKE2b XOF (`tfhe-sbc-keys issue --unsafe-dev-credential`, the firmware's development credential):
//! per-device secret-key mode of `TFHE_LIB_GLWE_1024`, key id 0, from the stream seeded with
//! `"tfhe-sbc TEST credential"` and the id, in this order: the 1024 key bits, the 32-byte MAC key, the
//! 32-byte seed. Anyone can recompute them, so anyone can decrypt and forge such a device's frames: a key
//! store that lists one is a development key store, and the server says so at start-up.

use super::key_store::{DeviceRecord, KeyMode, KeyStore};
use rand_core::{Rng, SeedableRng};
use std::path::Path;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use zeroize::Zeroizing;

/// The mark in a development device's file names and in every line that speaks of one.
pub const UNSAFE_DEV: &str = "UNSAFE-DEV";

/// The key id of every development credential.
pub const DEV_KEY_ID: u32 = 0;

/// The public XOF stream every value of development device `device_id` comes from.
pub fn public_stream(device_id: u64) -> Blake2bXof {
    let mut seed = *b"tfhe-sbc TEST credential\0\0\0\0\0\0\0\0";
    seed[24..].copy_from_slice(&device_id.to_le_bytes());
    Blake2bXof::from_seed(seed)
}

/// Whether `record` is a development device: its MAC key is the public derivation's for its id.
pub fn is_development_record(record: &DeviceRecord) -> bool {
    if record.mode() != KeyMode::PerDeviceSecretKey {
        return false;
    }
    let mut xof = public_stream(record.device_id());
    // Skip the key's bits as the derivation draws them, then the MAC key.
    let mut key = Zeroizing::new(vec![0u8; 1024]);
    if GlweSecretKey::generate_binary(&mut key[..], TFHE_LIB_GLWE_1024.polynomial_size(), &mut xof).is_err() {
        return false;
    }
    let mut mac_key = Zeroizing::new([0u8; 32]);
    xof.fill_bytes(&mut *mac_key);
    record.credentials().mac_key().as_bytes() == &*mac_key
}

/// The ids of the development devices `store` lists.
pub fn development_devices(store: &KeyStore) -> Vec<u64> {
    store
        .iter()
        .filter(|record| is_development_record(record))
        .map(DeviceRecord::device_id)
        .collect()
}

/// What a server says at start-up about the key store read from `path` if it lists development devices:
/// their frames can be forged and read by anyone.
pub fn development_warning(store: &KeyStore, path: &Path) -> Option<String> {
    let ids = development_devices(store);
    let (first, more) = ids.split_first()?;
    let shown = match more.len() {
        0 => format!("device {first}"),
        n => format!("devices {first} and {n} more"),
    };
    Some(format!(
        "{} lists {} development device(s) ({UNSAFE_DEV}, issue --unsafe-dev-credential): {shown}. Their keys are \
         public: anyone can forge and read their frames. Never serve this key store in a deployment.",
        path.display(),
        ids.len()
    ))
}
