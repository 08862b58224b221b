//! Keys and devices shared by several sections: tfhe-rs boolean keys (`TFHE_LIB`) with a fleet, a
//! per-device and a public-key device provisioned in one key store.

use rand_core::SeedableRng;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::server_key::ServerKey;
use tfhe_sbc_adapter::interop::boolean_set::{BooleanSet, generate_keys};
use tfhe_sbc_adapter::interop::{
    DeviceSecrets, provision_fleet_device, provision_per_device, public_key_from_client_key,
};
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, DeviceRecord, KeyStore};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::public_key::decode_public_key;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

/// The fleet device's id.
pub const FLEET: u64 = 1;
/// The per-device device's id.
pub const PER_DEVICE: u64 = 2;
/// The public-key device's id.
pub const PUBLIC_KEY: u64 = 3;

/// tfhe-rs boolean keys and three provisioned devices.
pub struct BooleanKit {
    /// The trusted party's client key (checks decryptions).
    pub client_key: ClientKey,
    /// The server key (key switching at intake).
    pub server_key: ServerKey,
    /// The encoded key store holding the three devices.
    pub store: Vec<u8>,
    /// The fleet device.
    pub fleet: DeviceSecrets,
    /// The per-device device.
    pub own: DeviceSecrets,
    /// The public key (seed, body) the public-key device holds.
    pub public_key: ([u8; 32], Vec<u32>),
    /// The public-key device's credentials.
    pub public_key_credentials: DeviceCredentials,
}

impl BooleanKit {
    /// Generates the keys (a few seconds: tfhe-rs's bootstrapping key) and provisions the devices.
    pub fn new() -> Result<Self, String> {
        let mut rng = Blake2bXof::from_seed([0x1B; 32]);
        let (client_key, server_key) = generate_keys(BooleanSet::TfheLib, &mut rng);
        let e = |e: tfhe_sbc_adapter::interop::InteropError| e.to_string();
        let (fleet, fleet_record) = provision_fleet_device(&client_key, FLEET, 1, &mut rng).map_err(e)?;
        let (own, own_record) = provision_per_device(&client_key, PER_DEVICE, 1, &mut rng).map_err(e)?;
        let file = public_key_from_client_key(BooleanSet::TfheLib, &client_key, 1, &mut rng).map_err(e)?;
        let mut body = vec![0u32; 1024];
        let header = decode_public_key(&file, &mut body).map_err(|e| format!("{e:?}"))?;
        let mac = MacKey::generate(&mut rng);
        let public_key_credentials = DeviceCredentials::new(PUBLIC_KEY, 1, MacKey::from_bytes(*mac.as_bytes()));
        let server_copy = DeviceCredentials::new(PUBLIC_KEY, 1, mac);
        let record =
            DeviceRecord::with_parameter_set(server_copy, TFHE_LIB_GLWE_1024.id(), DeviceKeyMaterial::PublicKey)
                .map_err(|e| format!("{e:?}"))?;
        let mut store = KeyStore::new(&server_key);
        for r in [fleet_record, own_record, record] {
            store.insert(r).map_err(|e| format!("{e:?}"))?;
        }
        Ok(Self {
            client_key,
            server_key,
            store: store.encode().to_vec(),
            fleet,
            own,
            public_key: (header.seed, body),
            public_key_credentials,
        })
    }
}
