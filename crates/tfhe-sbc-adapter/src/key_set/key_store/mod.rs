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
//! mode 0600, written by the provisioning tool. The server key fingerprint
//! ([`server_key_fingerprint`](crate::interop::server_key_fingerprint) of a boolean server key,
//! [`integer_server_key_fingerprint`](crate::interop::integer::integer_server_key_fingerprint) of an integer
//! one) binds the store to the key set its per-device keys switch into.
//!
//! [`KeyStore::decode`] never panics on untrusted bytes; every failure is a typed [`KeySetError`]. MAC keys
//! are copied from the input straight into [`MacKey`](tfhe_sbc_device::frame::mac::MacKey)s, and [`KeyStore::encode`] writes into a
//! [`Zeroizing`](zeroize::Zeroizing) buffer sized in advance, so no stray copy of a MAC key is left on the heap by a
//! reallocation.
//!
//! Layout: [`KeyStore`] and its file (`store.rs`), the file format's records and checks (`format.rs`); this
//! file only declares them and re-exports what users name.

mod format;
mod store;

pub use super::error::KeySetError;
pub use crate::interop::device_record::{DeviceKeyMaterial, DeviceRecord};
pub use format::{KEY_STORE_MAGIC, KEY_STORE_VERSION};
pub use store::KeyStore;

/// How a device encrypts, and so what the cloud holds for it: the device crate's
/// [`tfhe_sbc_device::files::credentials::KeyMode`], one enum for the device's credential file and the key
/// store, with the same wire ids (fleet 0, per-device 1, public key 2).
pub use tfhe_sbc_device::files::credentials::KeyMode;
