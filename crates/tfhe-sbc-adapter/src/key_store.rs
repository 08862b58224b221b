//! The adapter's key store (feature `tfhe`): for every device, what the cloud holds for it. Device id ->
//! key id, key mode ([`KeyMode`], the device credential file's), MAC key, and in per-device mode the seeded
//! key-switching key from the device's key to the tfhe-rs small key. One record per device feeds both halves
//! of the server: the authenticated [`Intake`] (MAC key, key id, and the frame kinds its mode may send) and
//! the [`BooleanBridge`] (which key switch); [`KeyedIntake`] keeps the two together.
//!
//! # File format, version 1
//! ```text
//! magic "TSBCKEYS" (8) | version = 1 (1) | postcard body | BLAKE2b-256 of every byte before it (32)
//! body   = parameter_set: u16 | server_key_fingerprint: bytes (32) | devices: seq of record
//! record = device_id: u64 | key_id: u32 | mac_key: bytes (32) | mode: u8 | ksk: option of
//!          (mask_seed: bytes (16) | bodies: bytes (1024 * 8 * 4, little-endian u32))
//! ```
//! Integers are postcard varints; `bytes` are a varint length then the bytes. `mode` is [`KeyMode`]'s wire
//! id ([`KeyMode::to_u8`]: fleet 0, per-device 1, public key 2, as in the device's credential file): a
//! per-device record carries a key-switching key, and fleet and public-key records do not (both are
//! switched with the server key's); id 2 was reserved from the first version, so adding it changed no id
//! and the version stays 1. The digest detects corruption and truncation; it is not a MAC (whoever can
//! write the file can recompute it), so the file's authenticity and secrecy (it holds every device's MAC
//! key) are the file system's: mode 0600, written by the provisioning tool. The server key fingerprint
//! ([`server_key_fingerprint`]) binds the store to the key set its per-device keys switch into.
//!
//! [`KeyStore::decode`] never panics on untrusted bytes; every failure is a typed [`KeyStoreError`]. MAC keys
//! are copied from the input straight into [`MacKey`]s, and [`KeyStore::encode`] writes into a
//! [`Zeroizing`] buffer sized in advance, so no stray copy of a MAC key is left on the heap by a
//! reallocation.

use crate::IntakeError;
use crate::intake::{Intake, IntakeConfig, Received};
use crate::interop::{BooleanBridge, DeviceKsk, InteropError, device_ksk_words, server_key_fingerprint};
use crate::registry::{DeviceEncryption, DeviceRegistry, DuplicateDevice};
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;
use tfhe::boolean::server_key::ServerKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::frame_mac::{DeviceCredentials, MAC_KEY_BYTES, MacKey};
use zeroize::Zeroizing;

/// The key store file's magic.
pub const KEY_STORE_MAGIC: [u8; 8] = *b"TSBCKEYS";
/// The key store format version this code writes and reads.
pub const KEY_STORE_VERSION: u8 = 1;
const DIGEST_BYTES: usize = 32;
const PREFIX_BYTES: usize = KEY_STORE_MAGIC.len() + 1;

/// How a device encrypts, and so what the cloud holds for it: the device crate's
/// [`tfhe_sbc_device::credentials_file::KeyMode`], one enum for the device's credential file and the key
/// store, with the same wire ids (fleet 0, per-device 1, public key 2).
pub use tfhe_sbc_device::credentials_file::KeyMode;

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
}

impl DeviceKeyMaterial {
    /// The mode.
    pub fn mode(&self) -> KeyMode {
        match self {
            Self::Fleet => KeyMode::FleetSecretKey,
            Self::PerDevice(_) => KeyMode::PerDeviceSecretKey,
            Self::PublicKey => KeyMode::PublicKey,
        }
    }

    /// How the device encrypts, which decides the frame kinds the intake takes from it: public-key frames
    /// only from a public-key device, never from a secret-key one.
    pub fn encryption(&self) -> DeviceEncryption {
        match self {
            Self::Fleet | Self::PerDevice(_) => DeviceEncryption::SecretKey,
            Self::PublicKey => DeviceEncryption::PublicKey,
        }
    }
}

/// What the cloud holds for one device.
#[derive(Debug)]
pub struct DeviceRecord {
    credentials: DeviceCredentials,
    key: DeviceKeyMaterial,
}

impl DeviceRecord {
    /// A record of `credentials` (device id, key id, MAC key) and key material.
    pub fn new(credentials: DeviceCredentials, key: DeviceKeyMaterial) -> Self {
        Self { credentials, key }
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
}

impl core::fmt::Display for KeyStoreError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Truncated { found } => write!(f, "key store truncated: {found} bytes"),
            Self::BadMagic => f.write_str("not a tfhe-sbc key store (bad magic)"),
            Self::UnsupportedVersion(v) => write!(
                f,
                "key store version {v} is not supported (this build reads version {KEY_STORE_VERSION})"
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
        }
    }
}

impl std::error::Error for KeyStoreError {}

#[derive(Serialize, Deserialize)]
struct StoreWire<'a> {
    parameter_set: u16,
    #[serde(borrow)]
    server_key_fingerprint: &'a [u8],
    #[serde(borrow)]
    devices: Vec<RecordWire<'a>>,
}

#[derive(Serialize, Deserialize)]
struct RecordWire<'a> {
    device_id: u64,
    key_id: u32,
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

    /// An empty store for the server key with this [`server_key_fingerprint`].
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

    /// The file: see the module documentation. It holds every MAC key, so it is wiped on drop.
    pub fn encode(&self) -> Zeroizing<Vec<u8>> {
        let ksk_bytes = 4 * device_ksk_words();
        // Little-endian bodies, one buffer per per-device key (public data).
        let bodies: Vec<Option<Vec<u8>>> = self
            .devices
            .values()
            .map(|record| match &record.key {
                DeviceKeyMaterial::Fleet | DeviceKeyMaterial::PublicKey => None,
                DeviceKeyMaterial::PerDevice(ksk) => Some(ksk.bodies().iter().flat_map(|w| w.to_le_bytes()).collect()),
            })
            .collect();
        let seeds: Vec<[u8; 16]> = self
            .devices
            .values()
            .map(|record| match &record.key {
                DeviceKeyMaterial::Fleet | DeviceKeyMaterial::PublicKey => [0; 16],
                DeviceKeyMaterial::PerDevice(ksk) => ksk.mask_seed().to_le_bytes(),
            })
            .collect();
        let devices: Vec<RecordWire<'_>> = self
            .devices
            .values()
            .zip(bodies.iter().zip(&seeds))
            .map(|(record, (body, seed))| RecordWire {
                device_id: record.device_id(),
                key_id: record.key_id(),
                mac_key: record.credentials.mac_key().as_bytes(),
                mode: record.mode().to_u8(),
                ksk: body.as_ref().map(|bodies| KskWire {
                    mask_seed: seed,
                    bodies,
                }),
            })
            .collect();
        let wire = StoreWire {
            parameter_set: TFHE_LIB_GLWE_1024.id().0,
            server_key_fingerprint: &self.server_key_fingerprint,
            devices,
        };
        // An upper bound of the encoded size: varints take at most 10 bytes, lengths at most 5.
        let per_device = 10 + 5 + (5 + MAC_KEY_BYTES) + 1 + 1 + (5 + 16) + (5 + ksk_bytes);
        let bound = PREFIX_BYTES + 3 + (5 + 32) + 10 + per_device * self.devices.len() + DIGEST_BYTES;
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

    /// Reads a file written by [`KeyStore::encode`], checking everything (see [`KeyStoreError`]).
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
        if version != KEY_STORE_VERSION {
            return Err(KeyStoreError::UnsupportedVersion(version));
        }
        let (content, stored_digest) = bytes.split_at(bytes.len() - DIGEST_BYTES);
        if digest(content)[..] != *stored_digest {
            return Err(KeyStoreError::DigestMismatch);
        }
        let (wire, rest): (StoreWire<'_>, _) =
            postcard::take_from_bytes(&content[PREFIX_BYTES..]).map_err(KeyStoreError::Malformed)?;
        if !rest.is_empty() {
            return Err(KeyStoreError::TrailingBytes(rest.len()));
        }
        if wire.parameter_set != TFHE_LIB_GLWE_1024.id().0 {
            return Err(KeyStoreError::UnsupportedParameterSet(wire.parameter_set));
        }
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
            let device_id = record.device_id;
            let wrong_length = |field, expected, found| KeyStoreError::WrongLength {
                device_id: Some(device_id),
                field,
                expected,
                found,
            };
            let mac_key = MacKey::from_slice(record.mac_key)
                .map_err(|_| wrong_length("MAC key", MAC_KEY_BYTES, record.mac_key.len()))?;
            let mode = KeyMode::from_u8(record.mode).ok_or(KeyStoreError::UnknownKeyMode {
                device_id,
                mode: record.mode,
            })?;
            let key = match (mode, record.ksk) {
                (KeyMode::FleetSecretKey, None) => DeviceKeyMaterial::Fleet,
                (KeyMode::PublicKey, None) => DeviceKeyMaterial::PublicKey,
                (KeyMode::PerDeviceSecretKey, Some(ksk)) => {
                    let seed: [u8; 16] = ksk
                        .mask_seed
                        .try_into()
                        .map_err(|_| wrong_length("mask seed", 16, ksk.mask_seed.len()))?;
                    let expected = 4 * device_ksk_words();
                    if ksk.bodies.len() != expected {
                        return Err(wrong_length("key-switching key", expected, ksk.bodies.len()));
                    }
                    let words = ksk
                        .bodies
                        .chunks_exact(4)
                        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect();
                    let ksk = DeviceKsk::from_parts(u128::from_le_bytes(seed), words)
                        .map_err(|_| wrong_length("key-switching key", expected, ksk.bodies.len()))?;
                    DeviceKeyMaterial::PerDevice(ksk)
                }
                (mode, _) => return Err(KeyStoreError::KeyMaterialMismatch { device_id, mode }),
            };
            let credentials = DeviceCredentials::new(device_id, record.key_id, mac_key);
            store
                .insert(DeviceRecord::new(credentials, key))
                .map_err(|DuplicateDevice(id)| KeyStoreError::DuplicateDevice(id))?;
        }
        Ok(store)
    }
}

fn digest(bytes: &[u8]) -> [u8; DIGEST_BYTES] {
    Blake2b::<U32>::digest(bytes).into()
}

/// The authenticated intake and the bridge, fed from one [`KeyStore`]: a device is known to both or to
/// neither. Frames go in through [`KeyedIntake::receive`]; whole messages go to
/// [`BooleanBridge::message_to_booleans`] on whichever thread computes (the bridge is shared through an
/// `Arc`).
#[derive(Debug)]
pub struct KeyedIntake {
    intake: Intake,
    bridge: Arc<BooleanBridge>,
}

impl KeyedIntake {
    /// The intake and bridge for the devices of `store`, none of which has sent a frame yet. `bridge` must
    /// be made from the server key the store was made for, with no device registered.
    pub fn new(config: IntakeConfig, store: KeyStore, bridge: BooleanBridge) -> Result<Self, InteropError> {
        Self::with_floors(config, store, bridge, &HashMap::new())
    }

    /// As [`KeyedIntake::new`], with the persisted sequence-number floor of each device (absent: 0).
    pub fn with_floors(
        config: IntakeConfig,
        store: KeyStore,
        bridge: BooleanBridge,
        floors: &HashMap<u64, u64>,
    ) -> Result<Self, InteropError> {
        if store.server_key_fingerprint != bridge.server_key_fingerprint() {
            return Err(InteropError::ServerKeyMismatch);
        }
        let mut registry = DeviceRegistry::new();
        for record in store.into_records() {
            let (credentials, material) = record.into_parts();
            let (device_id, key_id) = (credentials.device_id(), credentials.key_id());
            let encryption = material.encryption();
            bridge.register(device_id, key_id, material)?;
            let floor = floors.get(&device_id).copied().unwrap_or(0);
            registry
                .register_device(credentials, encryption, floor)
                .map_err(|DuplicateDevice(id)| InteropError::DuplicateDevice(id))?;
        }
        Ok(Self {
            intake: Intake::new(config, registry),
            bridge: Arc::new(bridge),
        })
    }

    /// Adds a device to both the intake and the bridge (or to neither, on error), whose frames must have
    /// sequence numbers of at least `floor`. The intake takes from it the frame kinds of its mode
    /// ([`DeviceKeyMaterial::encryption`]): public-key frames only from a public-key device, seeded ones
    /// only from a secret-key device.
    pub fn register(&mut self, record: DeviceRecord, floor: u64) -> Result<(), InteropError> {
        let (credentials, material) = record.into_parts();
        let (device_id, key_id) = (credentials.device_id(), credentials.key_id());
        let encryption = material.encryption();
        self.bridge.register(device_id, key_id, material)?;
        self.intake
            .register_device(credentials, encryption, floor)
            .map_err(|DuplicateDevice(id)| {
                self.bridge.unregister(id);
                InteropError::DuplicateDevice(id)
            })
    }

    /// [`Intake::receive`]: authentication (by the store's MAC key and key id), replay window, reassembly.
    pub fn receive(&mut self, bytes: &[u8], now: Instant) -> Result<Received, IntakeError> {
        self.intake.receive(bytes, now)
    }

    /// [`Intake::evict_expired`].
    pub fn evict_expired(&mut self, now: Instant) -> Vec<IntakeError> {
        self.intake.evict_expired(now)
    }

    /// The intake (sequence-number high-water marks, open messages, configuration).
    pub fn intake(&self) -> &Intake {
        &self.intake
    }

    /// The bridge, to share with the threads that key-switch and compute.
    pub fn bridge(&self) -> &Arc<BooleanBridge> {
        &self.bridge
    }
}
