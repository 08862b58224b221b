//! tfhe-rs interop (feature `tfhe`, tfhe 1.8.x boolean API): keys for the trusted party, per-device keys,
//! and the conversion of extracted TLWE ciphertexts into `tfhe::boolean` ciphertexts.
//!
//! The device's parameter set [`TFHE_LIB_GLWE_1024`] is the GLWE side of tfhe-rs's stock
//! `TFHE_LIB_PARAMETERS` (k = 1, N = 1024, GLWE noise 2^-25), used as it is. Its encryption-key choice is
//! "small" (`BootstrapKeyswitch` order): gates expect ciphertexts under the 630-dimensional LWE key. An
//! extracted ciphertext is under the 1024-dimensional "big" key (the GLWE key read flat), so each one goes
//! through a key-switching key first. That costs about 1 ms per bit, so it is a separate, visible step.
//!
//! Three key modes ([`crate::key_store::KeyMode`]):
//! * **fleet**: every device holds the client key's GLWE key, and the server key's key-switching key
//!   switches its bits ([`provision_fleet_device`]);
//! * **per-device** (the default for new devices): every device holds its own GLWE key, and the cloud holds
//!   a seeded key-switching key from that key to the small key ([`DeviceKsk`], [`provision_per_device`]);
//! * **public key**: the device holds a seeded public key under the client key's GLWE key and nothing that
//!   decrypts; its bits are switched as a fleet device's ([`public_key_from_client_key`],
//!   [`provision_public_key_device`]).
//!
//! [`BooleanBridge`] holds both kinds and picks the sending device's; it is `Send + Sync` and key-switches
//! slices of ciphertexts with rayon ([`KeySwitchStrategy`]).

pub mod big_key;
mod bridge;
pub mod integer;
mod keyswitch;
mod lru;
mod per_device;

pub use bridge::{BooleanBridge, CacheStats, DEFAULT_CACHE_CAPACITY, KeySwitchStrategy, server_key_fingerprint};
pub use keyswitch::KEYSWITCH_BLOCK;
pub use per_device::{
    DEVICE_KSK_INPUT_DIMENSION, DeviceKsk, DeviceSecrets, PublicKeyDevice, device_ksk_words, provision_fleet_device,
    provision_per_device, provision_public_key_device, public_key_from_client_key,
};

use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::parameters::TFHE_LIB_PARAMETERS;
use tfhe::boolean::server_key::ServerKey;
use tfhe::core_crypto::prelude::{
    GlweSecretKey as TfheGlweSecretKey, GlweSecretKeyOwned as TfheGlweSecretKeyOwned,
    PolynomialSize as TfhePolynomialSize,
};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use zeroize::Zeroize;

/// Why a key or a ciphertext could not be converted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InteropError {
    /// The tfhe-rs parameters are not `TFHE_LIB_PARAMETERS`' shape (k = 1, N = 1024).
    ParameterMismatch,
    /// The server key does not key-switch before bootstrapping (its order is not `BootstrapKeyswitch`).
    UnexpectedPbsOrder,
    /// The device key is not a k = 1, N = 1024 binary key.
    BadDeviceKey,
    /// A per-device key-switching key does not have `TFHE_LIB_PARAMETERS`' shape (1024 x 8 body words).
    BadKeySwitchingKey,
    /// The device is not registered with the bridge.
    UnknownDevice(u64),
    /// The device is registered already.
    DuplicateDevice(u64),
    /// The ciphertexts name another key id than the device's.
    WrongKeyId {
        /// The device.
        device_id: u64,
        /// Its registered key id.
        expected: u32,
        /// The key id given.
        found: u32,
    },
    /// The key store was made for another server key (its fingerprint differs).
    ServerKeyMismatch,
    /// The bridge's thread pool could not be built.
    ThreadPool,
    /// Frames given for one device and key id whose headers name another device or key id.
    FrameOfAnotherDevice {
        /// The device the frames were given for.
        device_id: u64,
        /// The device a frame's header names.
        found_device_id: u64,
        /// The key id it names.
        found_key_id: u32,
    },
}

impl core::fmt::Display for InteropError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::ParameterMismatch => f.write_str("tfhe-rs parameters do not match the device parameter set"),
            Self::UnexpectedPbsOrder => f.write_str("server key does not use the BootstrapKeyswitch order"),
            Self::BadDeviceKey => f.write_str("device key is not a k = 1, N = 1024 binary key"),
            Self::BadKeySwitchingKey => {
                f.write_str("per-device key-switching key does not have the shape of TFHE_LIB_PARAMETERS' key switch")
            }
            Self::UnknownDevice(id) => write!(f, "device {id} is not registered with the bridge"),
            Self::DuplicateDevice(id) => write!(f, "device {id} is already registered"),
            Self::WrongKeyId {
                device_id,
                expected,
                found,
            } => write!(f, "device {device_id} has key id {expected}, not {found}"),
            Self::ThreadPool => f.write_str("the bridge's thread pool could not be built"),
            Self::FrameOfAnotherDevice {
                device_id,
                found_device_id,
                found_key_id,
            } => write!(
                f,
                "frames given for device {device_id} include one of device {found_device_id}, key id {found_key_id}"
            ),
            Self::ServerKeyMismatch => f.write_str(
                "the key store was made for another server key (fingerprints differ): its per-device keys would \
                 switch into a small key this server key cannot bootstrap",
            ),
        }
    }
}

impl std::error::Error for InteropError {}

/// Trusted party: a fresh tfhe-rs boolean `ClientKey` and `ServerKey` with the stock `TFHE_LIB_PARAMETERS`.
/// Generating the server key takes seconds.
pub fn generate_boolean_keys() -> (ClientKey, ServerKey) {
    let client_key = ClientKey::new(&TFHE_LIB_PARAMETERS);
    let server_key = ServerKey::new(&client_key);
    (client_key, server_key)
}

/// Trusted party: the device key, i.e. the client key's GLWE secret key (cloned: `into_raw_parts`
/// consumes the key). Intermediate copies are zeroized.
pub fn device_key_from_client_key(client_key: &ClientKey) -> Result<GlweSecretKeyOwned, InteropError> {
    let (lwe, glwe, parameters) = client_key.clone().into_raw_parts();
    lwe.into_container().zeroize();
    if parameters.glwe_dimension.0 != 1 || parameters.polynomial_size.0 != TFHE_LIB_GLWE_1024.polynomial_size().0 {
        return Err(InteropError::ParameterMismatch);
    }
    let mut words = glwe.into_container();
    let bytes: Vec<u8> = words.iter().map(|&w| w as u8).collect();
    words.zeroize();
    GlweSecretKey::from_container(bytes, PolynomialSize(parameters.polynomial_size.0))
        .map_err(|_| InteropError::BadDeviceKey)
}

/// The reverse: a tfhe-rs client key whose GLWE key is `device_key` (its LWE key is freshly generated), so
/// that a device provisioned first can join a tfhe-rs deployment. The server key must then be generated
/// from the returned client key.
pub fn client_key_from_device_key(device_key: &GlweSecretKeyOwned) -> Result<ClientKey, InteropError> {
    if device_key.glwe_dimension().0 != 1 || device_key.polynomial_size() != TFHE_LIB_GLWE_1024.polynomial_size() {
        return Err(InteropError::BadDeviceKey);
    }
    let (lwe, fresh_glwe, parameters) = ClientKey::new(&TFHE_LIB_PARAMETERS).into_raw_parts();
    fresh_glwe.into_container().zeroize();
    let glwe = tfhe_glwe_key(device_key);
    Ok(ClientKey::new_from_raw_parts(lwe, glwe, parameters))
}

/// The device key as a tfhe-rs `GlweSecretKey<Vec<u32>>`.
pub fn tfhe_glwe_key(device_key: &GlweSecretKeyOwned) -> TfheGlweSecretKeyOwned<u32> {
    let words: Vec<u32> = device_key.as_bytes().iter().map(|&b| u32::from(b)).collect();
    TfheGlweSecretKey::from_container(words, TfhePolynomialSize(device_key.polynomial_size().0))
}

/// A tfhe-rs `Seeder` that draws its 128-bit seeds from a caller's CSPRNG, so that key generation takes its
/// randomness from the same place as the rest of provisioning (the OS in production, fixed seeds in tests).
pub(crate) struct RngSeeder<'a, R: ?Sized>(pub(crate) &'a mut R);

impl<R: rand_core::CryptoRng + ?Sized> tfhe::core_crypto::commons::math::random::Seeder for RngSeeder<'_, R> {
    fn seed(&mut self) -> tfhe::core_crypto::commons::math::random::Seed {
        let mut bytes = [0u8; 16];
        self.0.fill_bytes(&mut bytes);
        let seed = tfhe::core_crypto::commons::math::random::Seed(u128::from_le_bytes(bytes));
        bytes.zeroize();
        seed
    }

    fn is_available() -> bool {
        true
    }
}
