//! The adapter's key store (feature `tfhe`): for every device, what the cloud holds for it. Device id ->
//! key id, parameter set, key mode ([`KeyMode`], the device credential file's), MAC key, and in per-device
//! mode the seeded key-switching key from the device's key to the tfhe-rs small key. One record per device
//! feeds both halves of the server: the authenticated [`Intake`](crate::intake::Intake) (MAC key, key id,
//! and the frame kinds its mode may send) and the converter into tfhe-rs: the
//! [`BooleanBridge`](crate::interop::BooleanBridge) for the boolean sets (which key switch;
//! [`KeyedIntake`](crate::keyed_intake::KeyedIntake) keeps the two together), the
//! [`IntegerBridge`](crate::interop::integer::IntegerBridge) for the integer set (extraction or key switch
//! and identity PBS; [`IntegerKeyedIntake`](crate::keyed_intake::IntegerKeyedIntake)).
//!
//! # File format, version 2
//! ```text
//! magic "TSBCKEYS" (8) | version = 2 (1) | postcard body | BLAKE2b-256 of every byte before it (32)
//! body   = server_key_fingerprint: bytes (32) | devices: seq of record
//! record = device_id: u64 | key_id: u32 | parameter_set: u16 | mac_key: bytes (32) | mode: u8
//!          | ksk: option of (mask_seed: bytes (16) | bodies: bytes)
//! ```
//! Integers are postcard varints; `bytes` are a varint length then the bytes. `parameter_set` is the
//! device's named set ([`ParameterSetId`]: 1 to 3 the boolean sets, 4 the integer set). `mode` is
//! [`KeyMode`]'s wire id ([`KeyMode::to_u8`]: fleet 0, per-device 1, public key 2, as in the device's
//! credential file). A per-device record carries a key-switching key and fleet and public-key records do
//! not: on set 1 its bodies are `1024 * 8` little-endian `u32` ([`DeviceKsk`], 32 KiB), on set 4
//! `2048 * 4` little-endian `u64` ([`IntegerDeviceKsk`], 64 KiB). Which modes a set allows: per-device on
//! sets 1 and 4, public key on the boolean sets, fleet on every set (see `docs/security.md`).
//!
//! Version 1 (read, no longer written) had one `parameter_set: u16` before the fingerprint, always 1, and no
//! per-record set: its devices are read as devices of set 1, as it recorded them.
//!
//! The digest detects corruption and truncation; it is not a MAC (whoever can write the file can recompute
//! it), so the file's authenticity and secrecy (it holds every device's MAC key) are the file system's:
//! mode 0600, written by the provisioning tool. The server key fingerprint ([`server_key_fingerprint`] of a
//! boolean server key, [`integer_server_key_fingerprint`] of an integer one) binds the store to the key set
//! its per-device keys switch into.
//!
//! [`KeyStore::decode`] never panics on untrusted bytes; every failure is a typed [`KeyStoreError`]. MAC keys
//! are copied from the input straight into [`MacKey`]s, and [`KeyStore::encode`] writes into a
//! [`Zeroizing`] buffer sized in advance, so no stray copy of a MAC key is left on the heap by a
//! reallocation.

use super::error::{KeySetError, RESTORE, bad};
use super::files::{SECRET_MODE, read, write_atomic};
use crate::interop::InteropError;
use crate::interop::big_key::BooleanSet;
use crate::interop::integer::integer_server_key_fingerprint;
use crate::interop::integer::per_device::IntegerDeviceKsk;
use crate::interop::{DeviceKsk, device_ksk_words, server_key_fingerprint};
use crate::registry::{DeviceEncryption, DuplicateDevice};
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use tfhe::boolean::server_key::ServerKey;
use tfhe_sbc_core::parameters::{IntegerParameters, ParameterSetId, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MAC_KEY_BYTES, MacKey};
use zeroize::Zeroizing;

/// The key store file's magic.
pub const KEY_STORE_MAGIC: [u8; 8] = *b"TSBCKEYS";
/// The key store format version this code writes (it reads this one and version 1).
pub const KEY_STORE_VERSION: u8 = 2;
/// The first version, still read: every device of parameter set 1.
const KEY_STORE_VERSION_1: u8 = 1;
const DIGEST_BYTES: usize = 32;
const PREFIX_BYTES: usize = KEY_STORE_MAGIC.len() + 1;

/// How a device encrypts, and so what the cloud holds for it: the device crate's
/// [`tfhe_sbc_device::files::credentials::KeyMode`], one enum for the device's credential file and the key
/// store, with the same wire ids (fleet 0, per-device 1, public key 2).
pub use tfhe_sbc_device::files::credentials::KeyMode;

/// A device's key material in the cloud, by mode.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum DeviceKeyMaterial {
    /// Fleet mode ([`KeyMode::FleetSecretKey`]): nothing of its own; its bits are switched with the server
    /// key's key-switching key.
    Fleet,
    /// Per-device mode ([`KeyMode::PerDeviceSecretKey`]): the seeded key-switching key from the device's key
    /// to the small key.
    PerDevice(DeviceKsk),
    /// Public-key mode ([`KeyMode::PublicKey`]): nothing of its own. Its ciphertexts are under the
    /// computation key (the `ClientKey`'s GLWE key, which the public key encrypts zero under), so its bits
    /// are switched with the server key's key-switching key, as a fleet device's. The intake takes only
    /// public-key frames from it.
    PublicKey,
    /// Per-device mode ([`KeyMode::PerDeviceSecretKey`]) on the integer set (id 4): the seeded
    /// key-switching key from the device's key to the integer server key's small key; each block is
    /// key-switched and bootstrapped once (identity PBS) at intake. An integer fleet device is
    /// [`DeviceKeyMaterial::Fleet`] with parameter set 4.
    IntegerPerDevice(IntegerDeviceKsk),
}

impl DeviceKeyMaterial {
    /// The mode.
    pub fn mode(&self) -> KeyMode {
        match self {
            Self::Fleet => KeyMode::FleetSecretKey,
            Self::PerDevice(_) | Self::IntegerPerDevice(_) => KeyMode::PerDeviceSecretKey,
            Self::PublicKey => KeyMode::PublicKey,
        }
    }

    /// How the device encrypts, which decides the frame kinds the intake takes from it: public-key frames
    /// only from a public-key device, never from a secret-key one.
    pub fn encryption(&self) -> DeviceEncryption {
        match self {
            Self::Fleet | Self::PerDevice(_) | Self::IntegerPerDevice(_) => DeviceEncryption::SecretKey,
            Self::PublicKey => DeviceEncryption::PublicKey,
        }
    }

    /// Bytes of key material stored for the device: a per-device key's body words and seed, else 0.
    pub fn stored_bytes(&self) -> usize {
        match self {
            Self::PerDevice(ksk) => ksk.stored_bytes(),
            Self::IntegerPerDevice(ksk) => ksk.stored_bytes(),
            Self::Fleet | Self::PublicKey => 0,
        }
    }
}

/// The family of a named parameter set the key store knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SetFamily {
    Boolean(BooleanSet),
    Integer,
}

fn set_family(id: ParameterSetId) -> Option<SetFamily> {
    if let Some(set) = BooleanSet::from_id(id) {
        Some(SetFamily::Boolean(set))
    } else {
        IntegerParameters::from_id(id).map(|_| SetFamily::Integer)
    }
}

/// Whether parameter set `id` allows `key`: fleet on every known set, public key on the boolean sets,
/// per-device with a [`DeviceKsk`] on set 1 and with an [`IntegerDeviceKsk`] on the integer set.
fn check_material(device_id: u64, id: ParameterSetId, key: &DeviceKeyMaterial) -> Result<(), KeyStoreError> {
    let family = set_family(id).ok_or(KeyStoreError::UnknownParameterSet {
        device_id,
        parameter_set: id.0,
    })?;
    let allowed = match (family, key) {
        (_, DeviceKeyMaterial::Fleet) => true,
        (SetFamily::Boolean(_), DeviceKeyMaterial::PublicKey) => true,
        (SetFamily::Boolean(set), DeviceKeyMaterial::PerDevice(_)) => set == BooleanSet::TfheLib,
        (SetFamily::Integer, DeviceKeyMaterial::IntegerPerDevice(_)) => true,
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(KeyStoreError::ModeNotAllowed {
            device_id,
            mode: key.mode(),
            parameter_set: id.0,
        })
    }
}

/// What the cloud holds for one device.
#[derive(Debug)]
pub struct DeviceRecord {
    credentials: DeviceCredentials,
    parameter_set: ParameterSetId,
    key: DeviceKeyMaterial,
}

impl DeviceRecord {
    /// A record of `credentials` (device id, key id, MAC key) and key material, for parameter set 1
    /// (`TFHE_LIB_GLWE_1024`), or set 4 for [`DeviceKeyMaterial::IntegerPerDevice`]. A device of another
    /// set: [`DeviceRecord::with_parameter_set`].
    pub fn new(credentials: DeviceCredentials, key: DeviceKeyMaterial) -> Self {
        let parameter_set = match key {
            DeviceKeyMaterial::IntegerPerDevice(_) => ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048,
            _ => TFHE_LIB_GLWE_1024.id(),
        };
        Self {
            credentials,
            parameter_set,
            key,
        }
    }

    /// A record of a device of `parameter_set`, checked: the set must be a named set the store knows, and
    /// allow the mode of `key` ([`KeyStoreError::UnknownParameterSet`], [`KeyStoreError::ModeNotAllowed`]).
    pub fn with_parameter_set(
        credentials: DeviceCredentials,
        parameter_set: ParameterSetId,
        key: DeviceKeyMaterial,
    ) -> Result<Self, KeyStoreError> {
        check_material(credentials.device_id(), parameter_set, &key)?;
        Ok(Self {
            credentials,
            parameter_set,
            key,
        })
    }

    /// The device's parameter set.
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
    }

    /// Whether the device is of the integer set (its frames go through
    /// [`IntegerKeyedIntake`](crate::keyed_intake::IntegerKeyedIntake)).
    pub fn is_integer(&self) -> bool {
        set_family(self.parameter_set) == Some(SetFamily::Integer)
    }

    /// The device id.
    pub fn device_id(&self) -> u64 {
        self.credentials.device_id()
    }

    /// The key id its frames carry.
    pub fn key_id(&self) -> u32 {
        self.credentials.key_id()
    }

    /// The credentials.
    pub fn credentials(&self) -> &DeviceCredentials {
        &self.credentials
    }

    /// The key material.
    pub fn key(&self) -> &DeviceKeyMaterial {
        &self.key
    }

    /// The mode.
    pub fn mode(&self) -> KeyMode {
        self.key.mode()
    }

    /// The two halves: for the intake and for the bridge.
    pub fn into_parts(self) -> (DeviceCredentials, DeviceKeyMaterial) {
        (self.credentials, self.key)
    }
}

/// Why a key store file was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyStoreError {
    /// Shorter than the prefix and the digest.
    Truncated {
        /// Bytes found.
        found: usize,
    },
    /// Not a key store file.
    BadMagic,
    /// A version this code does not read.
    UnsupportedVersion(u8),
    /// The digest does not match: the file is corrupt or truncated.
    DigestMismatch,
    /// The body does not decode.
    Malformed(postcard::Error),
    /// Bytes after the body.
    TrailingBytes(usize),
    /// Made for another device parameter set.
    UnsupportedParameterSet(u16),
    /// A field has the wrong length.
    WrongLength {
        /// The device, if the field is a device's.
        device_id: Option<u64>,
        /// Which field.
        field: &'static str,
        /// Its length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// An unknown key mode id.
    UnknownKeyMode {
        /// The device.
        device_id: u64,
        /// The id.
        mode: u8,
    },
    /// A per-device record without a key-switching key, or a fleet or public-key record with one.
    KeyMaterialMismatch {
        /// The device.
        device_id: u64,
        /// Its mode.
        mode: KeyMode,
    },
    /// A device id twice.
    DuplicateDevice(u64),
    /// A device of a parameter set this build does not know.
    UnknownParameterSet {
        /// The device.
        device_id: u64,
        /// The set's id.
        parameter_set: u16,
    },
    /// A key mode the device's parameter set does not allow (per-device on a big-key boolean set, public key
    /// on the integer set, a key-switching key of the other family).
    ModeNotAllowed {
        /// The device.
        device_id: u64,
        /// The mode.
        mode: KeyMode,
        /// The device's parameter set.
        parameter_set: u16,
    },
}

impl core::fmt::Display for KeyStoreError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Truncated { found } => write!(f, "key store truncated: {found} bytes"),
            Self::BadMagic => f.write_str("not a tfhe-sbc key store (bad magic)"),
            Self::UnsupportedVersion(v) => write!(
                f,
                "key store version {v} is not supported (this build reads versions 1 and {KEY_STORE_VERSION})"
            ),
            Self::DigestMismatch => f.write_str("key store digest mismatch: the file is corrupt"),
            Self::Malformed(e) => write!(f, "key store body does not decode: {e}"),
            Self::TrailingBytes(n) => write!(f, "{n} bytes after the key store body"),
            Self::UnsupportedParameterSet(id) => write!(f, "key store is for parameter set {id}, not supported"),
            Self::WrongLength {
                device_id,
                field,
                expected,
                found,
            } => match device_id {
                Some(id) => write!(f, "device {id}: {field} is {found} bytes, expected {expected}"),
                None => write!(f, "{field} is {found} bytes, expected {expected}"),
            },
            Self::UnknownKeyMode { device_id, mode } => write!(f, "device {device_id}: unknown key mode {mode}"),
            Self::KeyMaterialMismatch { device_id, mode } => match mode {
                KeyMode::PerDeviceSecretKey => {
                    write!(f, "device {device_id}: per-device record without a key-switching key")
                }
                KeyMode::FleetSecretKey => write!(f, "device {device_id}: fleet record with a key-switching key"),
                KeyMode::PublicKey => write!(f, "device {device_id}: public-key record with a key-switching key"),
                _ => write!(f, "device {device_id}: {mode:?} record with the wrong key material"),
            },
            Self::DuplicateDevice(id) => write!(f, "device {id} appears twice in the key store"),
            Self::UnknownParameterSet {
                device_id,
                parameter_set,
            } => write!(
                f,
                "device {device_id}: parameter set {parameter_set} is not one this build knows"
            ),
            Self::ModeNotAllowed {
                device_id,
                mode,
                parameter_set,
            } => write!(
                f,
                "device {device_id}: key mode {mode:?} with this key material is not allowed on parameter set \
                 {parameter_set}"
            ),
        }
    }
}

impl std::error::Error for KeyStoreError {}

#[derive(Serialize, Deserialize)]
struct StoreWireV1<'a> {
    parameter_set: u16,
    #[serde(borrow)]
    server_key_fingerprint: &'a [u8],
    #[serde(borrow)]
    devices: Vec<RecordWireV1<'a>>,
}

#[derive(Serialize, Deserialize)]
struct RecordWireV1<'a> {
    device_id: u64,
    key_id: u32,
    #[serde(borrow)]
    mac_key: &'a [u8],
    mode: u8,
    #[serde(borrow)]
    ksk: Option<KskWire<'a>>,
}

#[derive(Serialize, Deserialize)]
struct StoreWire<'a> {
    #[serde(borrow)]
    server_key_fingerprint: &'a [u8],
    #[serde(borrow)]
    devices: Vec<RecordWire<'a>>,
}

#[derive(Serialize, Deserialize)]
struct RecordWire<'a> {
    device_id: u64,
    key_id: u32,
    parameter_set: u16,
    #[serde(borrow)]
    mac_key: &'a [u8],
    mode: u8,
    #[serde(borrow)]
    ksk: Option<KskWire<'a>>,
}

#[derive(Serialize, Deserialize)]
struct KskWire<'a> {
    #[serde(borrow)]
    mask_seed: &'a [u8],
    #[serde(borrow)]
    bodies: &'a [u8],
}

/// Every device the cloud knows, bound to one server key.
#[derive(Debug)]
pub struct KeyStore {
    server_key_fingerprint: [u8; 32],
    devices: BTreeMap<u64, DeviceRecord>,
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

    /// Adds a device.
    pub fn insert(&mut self, record: DeviceRecord) -> Result<(), DuplicateDevice> {
        let id = record.device_id();
        if self.devices.contains_key(&id) {
            return Err(DuplicateDevice(id));
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

    /// The file (version 2): see the module documentation. It holds every MAC key, so it is wiped on drop.
    pub fn encode(&self) -> Zeroizing<Vec<u8>> {
        // Little-endian bodies and seeds, one buffer per per-device key (public data).
        let keys: Vec<Option<([u8; 16], Vec<u8>)>> = self
            .devices
            .values()
            .map(|record| match &record.key {
                DeviceKeyMaterial::Fleet | DeviceKeyMaterial::PublicKey => None,
                DeviceKeyMaterial::PerDevice(ksk) => Some((
                    ksk.mask_seed().to_le_bytes(),
                    ksk.bodies().iter().flat_map(|w| w.to_le_bytes()).collect(),
                )),
                DeviceKeyMaterial::IntegerPerDevice(ksk) => Some((
                    ksk.mask_seed().to_le_bytes(),
                    ksk.bodies().iter().flat_map(|w| w.to_le_bytes()).collect(),
                )),
            })
            .collect();
        let devices: Vec<RecordWire<'_>> = self
            .devices
            .values()
            .zip(&keys)
            .map(|(record, key)| RecordWire {
                device_id: record.device_id(),
                key_id: record.key_id(),
                parameter_set: record.parameter_set.0,
                mac_key: record.credentials.mac_key().as_bytes(),
                mode: record.mode().to_u8(),
                ksk: key.as_ref().map(|(seed, bodies)| KskWire {
                    mask_seed: seed,
                    bodies,
                }),
            })
            .collect();
        let wire = StoreWire {
            server_key_fingerprint: &self.server_key_fingerprint,
            devices,
        };
        // An upper bound of the encoded size: varints take at most 10 bytes, lengths at most 5.
        let per_device = 10 + 5 + 3 + (5 + MAC_KEY_BYTES) + 1 + 1 + (5 + 16) + 5;
        let key_bytes: usize = keys.iter().flatten().map(|(_, bodies)| bodies.len()).sum();
        let bound = PREFIX_BYTES + (5 + 32) + 10 + per_device * self.devices.len() + key_bytes + DIGEST_BYTES;
        let mut out = Zeroizing::new(vec![0u8; bound]);
        out[..KEY_STORE_MAGIC.len()].copy_from_slice(&KEY_STORE_MAGIC);
        out[KEY_STORE_MAGIC.len()] = KEY_STORE_VERSION;
        let body_len = postcard::to_slice(&wire, &mut out[PREFIX_BYTES..bound - DIGEST_BYTES])
            .map(|body| body.len())
            .unwrap_or_else(|_| unreachable!("the buffer is sized for the largest encoding"));
        let end = PREFIX_BYTES + body_len;
        let digest = digest(&out[..end]);
        out[end..end + DIGEST_BYTES].copy_from_slice(&digest);
        out.truncate(end + DIGEST_BYTES);
        out
    }

    /// Reads a file written by [`KeyStore::encode`] (version 2) or by an earlier build (version 1, every
    /// device of set 1), checking everything (see [`KeyStoreError`]).
    pub fn decode(bytes: &[u8]) -> Result<Self, KeyStoreError> {
        if bytes.len() < PREFIX_BYTES + DIGEST_BYTES {
            if bytes.len() >= KEY_STORE_MAGIC.len() && bytes[..KEY_STORE_MAGIC.len()] != KEY_STORE_MAGIC {
                return Err(KeyStoreError::BadMagic);
            }
            return Err(KeyStoreError::Truncated { found: bytes.len() });
        }
        if bytes[..KEY_STORE_MAGIC.len()] != KEY_STORE_MAGIC {
            return Err(KeyStoreError::BadMagic);
        }
        let version = bytes[KEY_STORE_MAGIC.len()];
        if version != KEY_STORE_VERSION && version != KEY_STORE_VERSION_1 {
            return Err(KeyStoreError::UnsupportedVersion(version));
        }
        let (content, stored_digest) = bytes.split_at(bytes.len() - DIGEST_BYTES);
        if digest(content)[..] != *stored_digest {
            return Err(KeyStoreError::DigestMismatch);
        }
        let body = &content[PREFIX_BYTES..];
        let wire = if version == KEY_STORE_VERSION_1 {
            let (v1, rest): (StoreWireV1<'_>, _) = postcard::take_from_bytes(body).map_err(KeyStoreError::Malformed)?;
            if !rest.is_empty() {
                return Err(KeyStoreError::TrailingBytes(rest.len()));
            }
            if v1.parameter_set != TFHE_LIB_GLWE_1024.id().0 {
                return Err(KeyStoreError::UnsupportedParameterSet(v1.parameter_set));
            }
            StoreWire {
                server_key_fingerprint: v1.server_key_fingerprint,
                devices: v1
                    .devices
                    .into_iter()
                    .map(|r| RecordWire {
                        device_id: r.device_id,
                        key_id: r.key_id,
                        parameter_set: v1.parameter_set,
                        mac_key: r.mac_key,
                        mode: r.mode,
                        ksk: r.ksk,
                    })
                    .collect(),
            }
        } else {
            let (wire, rest): (StoreWire<'_>, _) = postcard::take_from_bytes(body).map_err(KeyStoreError::Malformed)?;
            if !rest.is_empty() {
                return Err(KeyStoreError::TrailingBytes(rest.len()));
            }
            wire
        };
        let server_key_fingerprint: [u8; 32] =
            wire.server_key_fingerprint
                .try_into()
                .map_err(|_| KeyStoreError::WrongLength {
                    device_id: None,
                    field: "server key fingerprint",
                    expected: 32,
                    found: wire.server_key_fingerprint.len(),
                })?;
        let mut store = Self::with_fingerprint(server_key_fingerprint);
        for record in wire.devices {
            store.insert_checked(decode_record(record)?)?;
        }
        Ok(store)
    }

    fn insert_checked(&mut self, record: DeviceRecord) -> Result<(), KeyStoreError> {
        self.insert(record)
            .map_err(|DuplicateDevice(id)| KeyStoreError::DuplicateDevice(id))
    }
}

/// One record of the file, checked: MAC key length, mode, parameter set, key material and its lengths.
fn decode_record(record: RecordWire<'_>) -> Result<DeviceRecord, KeyStoreError> {
    let device_id = record.device_id;
    let wrong_length = |field, expected, found| KeyStoreError::WrongLength {
        device_id: Some(device_id),
        field,
        expected,
        found,
    };
    let mac_key =
        MacKey::from_slice(record.mac_key).map_err(|_| wrong_length("MAC key", MAC_KEY_BYTES, record.mac_key.len()))?;
    let mode = KeyMode::from_u8(record.mode).ok_or(KeyStoreError::UnknownKeyMode {
        device_id,
        mode: record.mode,
    })?;
    let parameter_set = ParameterSetId(record.parameter_set);
    let family = set_family(parameter_set).ok_or(KeyStoreError::UnknownParameterSet {
        device_id,
        parameter_set: record.parameter_set,
    })?;
    let key = match (mode, record.ksk) {
        (KeyMode::FleetSecretKey, None) => DeviceKeyMaterial::Fleet,
        (KeyMode::PublicKey, None) => DeviceKeyMaterial::PublicKey,
        (KeyMode::PerDeviceSecretKey, Some(ksk)) => {
            let seed: [u8; 16] = ksk
                .mask_seed
                .try_into()
                .map_err(|_| wrong_length("mask seed", 16, ksk.mask_seed.len()))?;
            let seed = u128::from_le_bytes(seed);
            match family {
                SetFamily::Integer => {
                    let expected = 8 * IntegerDeviceKsk::body_words();
                    if ksk.bodies.len() != expected {
                        return Err(wrong_length("key-switching key", expected, ksk.bodies.len()));
                    }
                    let words = ksk
                        .bodies
                        .chunks_exact(8)
                        .map(|b| {
                            let mut w = [0u8; 8];
                            w.copy_from_slice(b);
                            u64::from_le_bytes(w)
                        })
                        .collect();
                    let ksk = IntegerDeviceKsk::from_parts(seed, words)
                        .map_err(|_| wrong_length("key-switching key", expected, ksk.bodies.len()))?;
                    DeviceKeyMaterial::IntegerPerDevice(ksk)
                }
                SetFamily::Boolean(_) => {
                    let expected = 4 * device_ksk_words();
                    if ksk.bodies.len() != expected {
                        return Err(wrong_length("key-switching key", expected, ksk.bodies.len()));
                    }
                    let words = ksk
                        .bodies
                        .chunks_exact(4)
                        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect();
                    let ksk = DeviceKsk::from_parts(seed, words)
                        .map_err(|_| wrong_length("key-switching key", expected, ksk.bodies.len()))?;
                    DeviceKeyMaterial::PerDevice(ksk)
                }
            }
        }
        (mode, _) => return Err(KeyStoreError::KeyMaterialMismatch { device_id, mode }),
    };
    let credentials = DeviceCredentials::new(device_id, record.key_id, mac_key);
    DeviceRecord::with_parameter_set(credentials, parameter_set, key)
}

fn digest(bytes: &[u8]) -> [u8; DIGEST_BYTES] {
    Blake2b::<U32>::digest(bytes).into()
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
