//! tfhe-rs interop (feature `tfhe`, tfhe 1.8.x boolean API): keys for the trusted party, per-device keys,
//! and the conversion of extracted TLWE ciphertexts into `tfhe::boolean` ciphertexts.
//!
//! The device's parameter set [`TFHE_LIB_GLWE_1024`] is the GLWE side of tfhe-rs's stock
//! `TFHE_LIB_PARAMETERS` (k = 1, N = 1024, GLWE noise 2^-25), used as it is. Its encryption-key choice is
//! "small" (`BootstrapKeyswitch` order): gates expect ciphertexts under the 630-dimensional LWE key. An
//! extracted ciphertext is under the 1024-dimensional "big" key (the GLWE key read flat), so each one goes
//! through a key-switching key first. That costs about 1 ms per bit, so it is a separate, visible step.
//!
//! Three key modes (`KeyMode`, recorded per device in a [`DeviceRecord`]):
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
pub mod big_key_per_device;
pub mod boolean_circuits;
pub mod boolean_set;
mod bridge;
mod converter;
mod device_keys;
pub mod device_record;
mod error;
mod fingerprint;
pub mod glwe_ksk;
pub mod glwe_ksk_spectra;
pub mod integer;
mod keyswitch;
pub mod ksk;
mod lru;
mod per_device;
mod strategy;

pub use big_key::BigKeyBridge;
pub use bridge::{BooleanBridge, DEFAULT_CACHE_CAPACITY};
pub use converter::{Converter, Devices, FrameUnit, Input, IntegerFrames, Messages};
pub use device_keys::CacheStats;
pub use device_record::{DeviceKeyMaterial, DeviceRecord};
pub use error::InteropError;
pub use fingerprint::server_key_fingerprint;
pub use glwe_ksk::IntegerDeviceKsk;
pub use integer::IntegerBridge;
pub use keyswitch::KEYSWITCH_BLOCK;
pub use ksk::{DeviceKsk, KeySwitchSet, SeededKsk};
pub use per_device::{
    DeviceSecrets, PublicKeyDevice, credentials_and_record, provision_fleet_device, provision_per_device,
    provision_public_key_device, public_key_from_client_key,
};
pub use strategy::KeySwitchStrategy;

/// The number of body words of a seeded `TFHE_LIB_PARAMETERS` per-device key (`1024 * 8`).
pub fn device_ksk_words() -> usize {
    DeviceKsk::body_words()
}

use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::parameters::TFHE_LIB_PARAMETERS;
use tfhe::core_crypto::prelude::{
    GlweSecretKey as TfheGlweSecretKey, GlweSecretKeyOwned as TfheGlweSecretKeyOwned,
    PolynomialSize as TfhePolynomialSize,
};
use tfhe_sbc_core::entities::GlweSecretKeyOwned;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use zeroize::Zeroize;

/// Trusted party: a tfhe-rs client key whose GLWE key is `device_key` (its LWE key is freshly generated), so
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
