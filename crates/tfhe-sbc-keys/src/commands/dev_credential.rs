//! `issue --unsafe-dev-credential`: firmware development credentials, UNSAFE FOR PRODUCTION.
//!
//! A development device's key, MAC key and seed are derived from its device id alone by the public BLAKE2b
//! XOF, exactly as `firmware/examples/test_credential.rs` derives them (the firmware guide's
//! `examples/firmware-guide/devices/<ID>.*`): per-device secret-key mode of `TFHE_LIB_GLWE_1024`, key id 0,
//! from the stream seeded with `"tfhe-sbc TEST credential"` and the id, in this order: the 1024 key bits, the
//! 32-byte MAC key, the 32-byte seed. Anyone can recompute them, so anyone can decrypt and forge the device's
//! frames. What `issue` adds is the key set's side: the device's key-switching key into the key set's client
//! key (drawn from the OS), recorded in the key store like any per-device device, so that the key set (the
//! adapter, `check-frame`) accepts and decrypts what a development firmware sends.
//!
//! The files say what they are: `devices/<ID>.UNSAFE-DEV.tsdc` (the credential file, byte for byte
//! `test_credential`'s) and `devices/<ID>.UNSAFE-DEV.seed` (the 32 bytes a board without an RNG is provisioned
//! with); `show` marks every device whose MAC key is the public derivation's, whatever its files are called.

use crate::error::Error;
use crate::error::provisioning;
use crate::files::DEVICES_DIR;
use rand_core::Rng;
use std::path::{Path, PathBuf};
use tfhe::boolean::client_key::ClientKey;
use tfhe_sbc_adapter::interop::{DeviceKsk, DeviceSecrets};
use tfhe_sbc_adapter::key_set::development::public_stream;
use tfhe_sbc_adapter::key_set::key_store::{DeviceKeyMaterial, DeviceRecord, KeyMode};
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use zeroize::Zeroizing;

pub use tfhe_sbc_adapter::key_set::development::{DEV_KEY_ID, UNSAFE_DEV};

/// Development device `device_id`'s credential file in `dir`: `devices/<ID>.UNSAFE-DEV.tsdc`.
pub fn dev_credentials_path(dir: &Path, device_id: u64) -> PathBuf {
    dir.join(DEVICES_DIR).join(format!("{device_id}.{UNSAFE_DEV}.tsdc"))
}

/// Development device `device_id`'s provisioned seed in `dir`: `devices/<ID>.UNSAFE-DEV.seed`.
pub fn dev_seed_path(dir: &Path, device_id: u64) -> PathBuf {
    dir.join(DEVICES_DIR).join(format!("{device_id}.{UNSAFE_DEV}.seed"))
}

/// Development device `device_id`'s publicly derived secrets: its key and credentials, and its seed.
fn derive(device_id: u64) -> Result<(DeviceSecrets, Zeroizing<[u8; 32]>), Error> {
    let mut xof = public_stream(device_id);
    let key = GlweSecretKey::generate_binary(vec![0u8; 1024], TFHE_LIB_GLWE_1024.polynomial_size(), &mut xof)
        .map_err(provisioning)?;
    let mut mac_key = Zeroizing::new([0u8; 32]);
    xof.fill_bytes(&mut *mac_key);
    let mut seed = Zeroizing::new([0u8; 32]);
    xof.fill_bytes(&mut *seed);
    let credentials = DeviceCredentials::new(device_id, DEV_KEY_ID, MacKey::from_bytes(*mac_key));
    Ok((DeviceSecrets { key, credentials }, seed))
}

/// What `issue` writes for a development device.
pub(super) struct DevDevice {
    /// The credential file (`test_credential`'s).
    pub file: Zeroizing<Vec<u8>>,
    /// The board's CSPRNG seed.
    pub seed: Zeroizing<[u8; 32]>,
    /// The key store record (its key-switching key into the key set's client key).
    pub record: DeviceRecord,
}

/// A development device of a `tfhe-lib` key set (its boolean `client_key`): its credential file, its seed
/// and its key store record, whose key-switching key's randomness comes from `rng`.
pub(super) fn dev_device(client_key: &ClientKey, device_id: u64, rng: &mut Blake2bXof) -> Result<DevDevice, Error> {
    let (secrets, seed) = derive(device_id)?;
    let file = secrets
        .credentials_file(KeyMode::PerDeviceSecretKey, &TFHE_LIB_GLWE_1024)
        .map_err(provisioning)?;
    let ksk = DeviceKsk::generate(&secrets.key, client_key, rng).map_err(provisioning)?;
    let record_credentials = DeviceCredentials::new(
        device_id,
        DEV_KEY_ID,
        MacKey::from_bytes(*secrets.credentials.mac_key().as_bytes()),
    );
    let record = DeviceRecord::new(record_credentials, DeviceKeyMaterial::PerDevice(ksk));
    Ok(DevDevice { file, seed, record })
}
