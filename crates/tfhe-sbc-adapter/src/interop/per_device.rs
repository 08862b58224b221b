//! Provisioning of `TFHE_LIB_PARAMETERS` devices in the three key modes. Per-device
//! ([`provision_per_device`]): every device gets its own binary GLWE key, and the cloud gets, for each
//! device, a seeded key-switching key from that key to the tfhe-rs small LWE key ([`DeviceKsk`], 32 KiB;
//! see [`super::ksk`]). The [`BooleanBridge`](super::BooleanBridge) decompresses it on use, behind the
//! converters' bounded cache.
//!
//! Nobody but the trusted party (which holds the tfhe-rs `ClientKey`) and the device ever holds the device
//! key; the device holds nothing else of the key set, so a stolen device exposes only its own traffic.
//!
//! The other two modes are provisioned here too: fleet ([`provision_fleet_device`]: the device gets the
//! `ClientKey`'s GLWE key) and public key ([`provision_public_key_device`]: the device gets a seeded public
//! key under the `ClientKey`'s GLWE key, [`public_key_from_client_key`], and nothing that decrypts).

use super::boolean_set::{BooleanSet, glwe_key_from_client_key};
use super::device_record::{DeviceKeyMaterial, DeviceRecord};
use super::error::InteropError;
use super::ksk::DeviceKsk;
use negacyclic_fft::Plan;
use rand_core::CryptoRng;
use tfhe::boolean::client_key::ClientKey;
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned, pack_secret_key};
use tfhe_sbc_core::parameters::{GlweParameters, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
use tfhe_sbc_device::files::credentials::KeyMode;
use tfhe_sbc_device::files::credentials::{credentials_file_bytes, encode_credentials, key_material_bytes};
use tfhe_sbc_device::files::public_key::{
    PUBLIC_KEY_MAGIC, decode_public_key_header, encode_public_key, public_key_file_bytes_for,
};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
use tfhe_sbc_device::product::NegacyclicProduct;
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;
use zeroize::Zeroizing;

/// What the trusted party hands a device at provisioning: its own GLWE key and its credentials (device
/// id, key id, MAC key). Both zeroize on drop, neither is `Clone`.
#[derive(Debug)]
pub struct DeviceSecrets {
    /// The device's GLWE key (per-device mode: its own; fleet mode: the client key's).
    pub key: GlweSecretKeyOwned,
    /// The device's credentials.
    pub credentials: DeviceCredentials,
}

impl DeviceSecrets {
    /// The device's credential file (`tfhe_sbc_device::files::credentials`) in secret-key `mode` for
    /// `params`: the header, its MAC key, its key packed eight bits to a byte and the check (196 bytes for
    /// `TFHE_LIB_PARAMETERS`, 324 for the integer set). It holds the key, so it is wiped on drop. The device
    /// reads it with `decode_credentials` (or `MessageEncryptor::new`). Fails with the device crate's
    /// `Error::BadKeyFile` for the public-key mode or a mode the set does not take, and with a length error
    /// if the key is not of `params`' shape.
    pub fn credentials_file(
        &self,
        mode: KeyMode,
        params: &GlweParameters,
    ) -> Result<Zeroizing<Vec<u8>>, tfhe_sbc_device::Error> {
        if mode == KeyMode::PublicKey {
            return Err(tfhe_sbc_device::Error::BadKeyFile);
        }
        let mut packed = Zeroizing::new(vec![0u8; key_material_bytes(mode, params)]);
        pack_secret_key(self.key.as_bytes(), &mut packed)?;
        let mut out = Zeroizing::new(vec![0u8; credentials_file_bytes(mode, params)]);
        let len = encode_credentials(mode, params, &self.credentials, &packed, &mut out)?;
        out.truncate(len);
        Ok(out)
    }
}

/// Trusted party, per-device mode: a fresh binary GLWE key for device `device_id`, a fresh MAC key, and the
/// seeded key-switching key from the device key to `client_key`'s small key. Returns what goes to the
/// device and the record that goes to the cloud's `KeyStore`.
///
/// `rng` must be a CSPRNG seeded from real entropy, e.g. `tfhe_sbc_device::csprng::seeding::from_os_entropy()`.
pub fn provision_per_device<R: CryptoRng + ?Sized>(
    client_key: &ClientKey,
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> Result<(DeviceSecrets, DeviceRecord), InteropError> {
    let key = GlweSecretKey::generate_binary(vec![0u8; 1024], TFHE_LIB_GLWE_1024.polynomial_size(), rng)
        .map_err(|_| InteropError::BadDeviceKey)?;
    let ksk = DeviceKsk::generate(&key, client_key, rng)?;
    let (credentials, record_credentials) = credential_pair(device_id, key_id, rng);
    Ok((
        DeviceSecrets { key, credentials },
        DeviceRecord::new(record_credentials, DeviceKeyMaterial::PerDevice(ksk)),
    ))
}

/// Trusted party, fleet mode (the paper's): the device gets the client key's GLWE key and a fresh MAC key;
/// the cloud key-switches its bits with the server key. One stolen device then exposes every fleet device.
pub fn provision_fleet_device<R: CryptoRng + ?Sized>(
    client_key: &ClientKey,
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> Result<(DeviceSecrets, DeviceRecord), InteropError> {
    let key = glwe_key_from_client_key(BooleanSet::TfheLib, client_key)?;
    let (credentials, record_credentials) = credential_pair(device_id, key_id, rng);
    Ok((
        DeviceSecrets { key, credentials },
        DeviceRecord::new(record_credentials, DeviceKeyMaterial::Fleet),
    ))
}

/// Trusted party: a seeded public key `pk = (a, a*s + e)` under `client_key`'s GLWE key `s` (the computation
/// key of `set`), as a public-key file (`tfhe_sbc_device::files::public_key`: 4,155 bytes at `N = 1024`, `k = 1`)
/// whose frames carry key id `key_id`. The noise `e` is the device's constant-time sampler for the set
/// (`DeviceNoise::for_parameters(.., NoiseSampling::ConstantTime)`: TUniform(8) for `TFHE_LIB_PARAMETERS`);
/// the seed and the noise come from `rng`. One public key can serve any number of devices.
///
/// `client_key` must have `set`'s tfhe-rs parameters ([`InteropError::ParameterMismatch`] otherwise). The
/// copies of `s` and its spectrum are wiped before returning.
pub fn public_key_from_client_key<R: CryptoRng + ?Sized>(
    set: BooleanSet,
    client_key: &ClientKey,
    key_id: u32,
    rng: &mut R,
) -> Result<Vec<u8>, InteropError> {
    let key = glwe_key_from_client_key(set, client_key).map_err(|e| match e {
        InteropError::BadDeviceKey => InteropError::BadDeviceKey,
        InteropError::ParameterMismatch
        | InteropError::UnexpectedPbsOrder
        | InteropError::UnsupportedAtomicPattern
        | InteropError::BadKeySwitchingKey { .. }
        | InteropError::UnknownDevice(_)
        | InteropError::DuplicateDevice(_)
        | InteropError::WrongKeyId { .. }
        | InteropError::FrameOfAnotherDevice { .. }
        | InteropError::DeviceOfAnotherSet { .. }
        | InteropError::WrongParameterSet { .. }
        | InteropError::KeyMaterialMismatch { .. }
        | InteropError::ServerKeyMismatch
        | InteropError::NoServerKey
        | InteropError::ServerKeyShape { .. }
        | InteropError::ClientKeyMismatch
        | InteropError::NotABigKeySet(_)
        | InteropError::WrongGlweShape { .. }
        | InteropError::WrongLweSize { .. }
        | InteropError::IndexOutOfRange { .. }
        | InteropError::ReadingsOutOfRange { .. }
        | InteropError::Encoding(_)
        | InteropError::ThreadPool
        | InteropError::CompactListRefused { .. } => InteropError::ParameterMismatch,
    })?;
    let params = set.glwe_parameters();
    let plan = Plan::new(params.polynomial_size().0).map_err(|_| InteropError::ParameterMismatch)?;
    let noise = DeviceNoise::for_parameters(&params, NoiseSampling::ConstantTime)
        .map_err(|_| InteropError::ParameterMismatch)?;
    seeded_public_key_file(&plan, &params, key, &noise, key_id, rng)
}

/// A seeded public key under `key` (the computation key of `params`), computed with `plan` and the set's
/// constant-time `noise`, as a public-key file for key id `key_id`. The key, its spectrum and the scratch
/// are wiped before returning. Shared by the boolean and the integer sets.
pub(crate) fn seeded_public_key_file<P: NegacyclicProduct, R: CryptoRng + ?Sized>(
    plan: &P,
    params: &GlweParameters,
    key: GlweSecretKeyOwned,
    noise: &DeviceNoise,
    key_id: u32,
    rng: &mut R,
) -> Result<Vec<u8>, InteropError> {
    let n = params.polynomial_size().0;
    let mut spectrum = Zeroizing::new(vec![P::Spectral::default(); key.as_bytes().len()]);
    compute_glwe_key_spectrum(plan, &key, &mut spectrum).map_err(|_| InteropError::BadDeviceKey)?;
    drop(key);
    let mut body = vec![P::Torus::default(); n];
    let mut scratch = Zeroizing::new(vec![P::Spectral::default(); n]);
    let seed = generate_seeded_glwe_public_key(plan, &spectrum, noise, &mut body, &mut scratch, rng)
        .map_err(|_| InteropError::ParameterMismatch)?;
    let mut file = vec![0u8; public_key_file_bytes_for(params)];
    encode_public_key(params.id(), key_id, &seed, &body, &mut file).map_err(|_| InteropError::ParameterMismatch)?;
    Ok(file)
}

/// What the trusted party hands a public-key device at provisioning: the public-key file and the device's
/// credentials (device id, key id, MAC key). Nothing in it decrypts; the MAC key is secret (it zeroizes on
/// drop and is not `Clone`).
///
/// The device reads the file with `tfhe_sbc_device::files::public_key::decode_public_key` and encrypts with
/// `tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor`, or stores both halves as one credential
/// file ([`PublicKeyDevice::credentials_file`]).
#[derive(Debug)]
pub struct PublicKeyDevice {
    /// The public-key file (`tfhe_sbc_device::files::public_key`, 4,155 bytes at `N = 1024`, 16,443 bytes on
    /// the integer set): public.
    pub public_key: Vec<u8>,
    /// The device's credentials: its key id is the public key's.
    pub credentials: DeviceCredentials,
}

impl PublicKeyDevice {
    /// The device's credential file (`tfhe_sbc_device::files::credentials`, mode [`KeyMode::PublicKey`]): the
    /// header, the MAC key, the public-key file and the check; 4211 bytes at `N = 1024`. It holds the MAC
    /// key, so it is wiped on drop. Fails with the device crate's `Error::BadKeyFile` (or a length error) if
    /// `public_key` is not a valid public-key file.
    pub fn credentials_file(&self) -> Result<Zeroizing<Vec<u8>>, tfhe_sbc_device::Error> {
        let bytes = &self.public_key;
        if bytes.len() < 7 || bytes[..4] != PUBLIC_KEY_MAGIC {
            return Err(tfhe_sbc_device::Error::BadKeyFile);
        }
        let params = decode_public_key_header(bytes)?.parameters;
        let mut out = Zeroizing::new(vec![0u8; credentials_file_bytes(KeyMode::PublicKey, &params)]);
        let len = encode_credentials(KeyMode::PublicKey, &params, &self.credentials, bytes, &mut out)?;
        out.truncate(len);
        Ok(out)
    }
}

/// Trusted party, public-key mode (`TFHE_LIB_PARAMETERS`): a fresh seeded public key under `client_key`'s
/// GLWE key ([`public_key_from_client_key`], key id `key_id`) and a fresh MAC key for device `device_id`.
/// Returns what goes to the device and the record that goes to the cloud's
/// `KeyStore`: [`DeviceKeyMaterial::PublicKey`], no key material of its own
/// (its bits are switched with the server key's key-switching key, as a fleet device's), registered in the
/// `KeyedIntake` as
/// [`DeviceEncryption::PublicKey`](crate::registry::DeviceEncryption::PublicKey): public-key frames only.
///
/// `rng` must be a CSPRNG seeded from real entropy, e.g. `tfhe_sbc_device::csprng::seeding::from_os_entropy()`.
pub fn provision_public_key_device<R: CryptoRng + ?Sized>(
    client_key: &ClientKey,
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> Result<(PublicKeyDevice, DeviceRecord), InteropError> {
    let public_key = public_key_from_client_key(BooleanSet::TfheLib, client_key, key_id, rng)?;
    let (credentials, record_credentials) = credential_pair(device_id, key_id, rng);
    Ok((
        PublicKeyDevice {
            public_key,
            credentials,
        },
        DeviceRecord::new(record_credentials, DeviceKeyMaterial::PublicKey),
    ))
}

/// Trusted party: fresh credentials for device `device_id` under `key_id` (one fresh MAC key, copied from one
/// `MacKey` into the other with no stray copy on the stack): the device's copy, and the cloud's record of
/// the other with `material` for `parameter_set` ([`InteropError::KeyMaterialMismatch`] if the set does not
/// allow that material). What every provisioning path, the keys tool's included, starts from.
pub fn credentials_and_record<R: CryptoRng + ?Sized>(
    device_id: u64,
    key_id: u32,
    parameter_set: tfhe_sbc_core::parameters::ParameterSetId,
    material: DeviceKeyMaterial,
    rng: &mut R,
) -> Result<(DeviceCredentials, DeviceRecord), InteropError> {
    let (credentials, record_credentials) = credential_pair(device_id, key_id, rng);
    let record = DeviceRecord::with_parameter_set(record_credentials, parameter_set, material)
        .map_err(|_| InteropError::KeyMaterialMismatch { device_id })?;
    Ok((credentials, record))
}

/// Two copies of fresh credentials: one for the device, one for the cloud.
pub(crate) fn credential_pair<R: CryptoRng + ?Sized>(
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> (DeviceCredentials, DeviceCredentials) {
    let mac_key = MacKey::generate(rng);
    let copy =
        MacKey::from_slice(mac_key.as_bytes()).unwrap_or_else(|_| unreachable!("a MAC key is MAC_KEY_BYTES long"));
    (
        DeviceCredentials::new(device_id, key_id, mac_key),
        DeviceCredentials::new(device_id, key_id, copy),
    )
}
