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
//!
//! [`TFHE_LIB_GLWE_1024`]: tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024

pub mod big_key;
pub mod big_key_per_device;
pub mod boolean_circuits;
mod boolean_parameter_set;
pub mod boolean_set;
mod bridge;
mod converter;
mod device_glwe_key;
mod device_keys;
pub mod device_record;
mod error;
mod fingerprint;
pub mod glwe_ks_shape;
pub mod glwe_ksk;
pub mod glwe_ksk_spectra;
pub mod integer;
mod keyswitch;
pub mod ksk;
mod lru;
mod per_device;
mod rng_seeder;
mod strategy;

pub use big_key::BigKeyBridge;
pub use bridge::{BooleanBridge, DEFAULT_CACHE_CAPACITY};
pub use converter::{Converter, Devices, FrameUnit, Input, IntegerFrames, Messages};
pub use device_glwe_key::{client_key_from_device_key, tfhe_glwe_key};
pub use device_keys::CacheStats;
pub use device_record::{DeviceKeyMaterial, DeviceRecord};
pub use error::InteropError;
pub use fingerprint::server_key_fingerprint;
pub use glwe_ksk::IntegerDeviceKsk;
pub use integer::IntegerBridge;
pub use keyswitch::KEYSWITCH_BLOCK;
pub use ksk::{DeviceKsk, KeySwitchSet, SeededKsk, device_ksk_words};
pub use per_device::{
    DeviceSecrets, PublicKeyDevice, credentials_and_record, provision_fleet_device, provision_per_device,
    provision_public_key_device, public_key_from_client_key,
};
pub use strategy::KeySwitchStrategy;
