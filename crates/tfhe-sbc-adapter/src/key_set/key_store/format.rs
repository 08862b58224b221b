//! The key store's file format (version 2, and version 1 read): the wire records, [`KeyStore::encode`] and
//! [`KeyStore::decode`] with every field checked.

use super::store::KeyStore;
use crate::interop::big_key_per_device::{big_key_device_ksk_from_parts, big_key_device_ksk_words};
use crate::interop::device_record::{DeviceKeyMaterial, DeviceRecord};
use crate::interop::device_record::{SetFamily, set_family};
use crate::interop::glwe_ksk::IntegerDeviceKsk;
use crate::interop::ksk::{DeviceKsk, device_ksk_words};
use crate::key_set::error::KeySetError;
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use serde::{Deserialize, Serialize};
use tfhe_sbc_core::parameters::{ParameterSetId, TFHE_LIB_GLWE_1024};
use tfhe_sbc_core::torus::UnsignedTorus;
use tfhe_sbc_device::files::credentials::KeyMode;
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

// Postcard writes a nested struct as its fields in order, with no framing: `RecordWire` is device id, key
// id, parameter set, then `KeyWire`'s fields, exactly as the module documentation lays the record out.

#[derive(Serialize, Deserialize)]
struct StoreWireV1<'a> {
    parameter_set: u16,
    #[serde(borrow)]
    server_key_fingerprint: &'a [u8],
    #[serde(borrow)]
    devices: Vec<(u64, u32, KeyWire<'a>)>,
}

#[derive(Serialize, Deserialize)]
struct StoreWire<'a> {
    #[serde(borrow)]
    server_key_fingerprint: &'a [u8],
    #[serde(borrow)]
    devices: Vec<RecordWire<'a>>,
}

/// A version 2 record: device id, key id, parameter set, then its keys.
#[derive(Serialize, Deserialize)]
struct RecordWire<'a> {
    device_id: u64,
    key_id: u32,
    parameter_set: u16,
    #[serde(borrow)]
    key: KeyWire<'a>,
}

/// A record's keys, the same in both versions: MAC key, mode, and the per-device key-switching key.
#[derive(Serialize, Deserialize)]
struct KeyWire<'a> {
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

impl KeyStore {
    /// The file (version 2): see the module documentation. It holds every MAC key, so it is wiped on drop.
    pub fn encode(&self) -> Zeroizing<Vec<u8>> {
        // Little-endian bodies and seeds, one buffer per per-device key (public data).
        let keys: Vec<Option<([u8; 16], Vec<u8>)>> = self
            .devices
            .values()
            .map(|record| match record.key() {
                DeviceKeyMaterial::Fleet | DeviceKeyMaterial::PublicKey => None,
                DeviceKeyMaterial::PerDevice(ksk) => Some((
                    ksk.mask_seed().to_le_bytes(),
                    ksk.bodies().iter().flat_map(|w| w.to_le_bytes()).collect(),
                )),
                DeviceKeyMaterial::IntegerPerDevice(ksk) => Some((
                    ksk.mask_seed().to_le_bytes(),
                    ksk.bodies().iter().flat_map(|w| w.to_le_bytes()).collect(),
                )),
                DeviceKeyMaterial::BigKeyPerDevice(ksk) => Some((
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
                parameter_set: record.parameter_set().0,
                key: KeyWire {
                    mac_key: record.credentials().mac_key().as_bytes(),
                    mode: record.mode().to_u8(),
                    ksk: key.as_ref().map(|(seed, bodies)| KskWire {
                        mask_seed: seed,
                        bodies,
                    }),
                },
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
    /// device of set 1), checking everything (see [`KeySetError`]).
    pub fn decode(bytes: &[u8]) -> Result<Self, KeySetError> {
        if bytes.len() < PREFIX_BYTES + DIGEST_BYTES {
            if bytes.len() >= KEY_STORE_MAGIC.len() && bytes[..KEY_STORE_MAGIC.len()] != KEY_STORE_MAGIC {
                return Err(KeySetError::BadMagic);
            }
            return Err(KeySetError::Truncated { found: bytes.len() });
        }
        if bytes[..KEY_STORE_MAGIC.len()] != KEY_STORE_MAGIC {
            return Err(KeySetError::BadMagic);
        }
        let version = bytes[KEY_STORE_MAGIC.len()];
        if version != KEY_STORE_VERSION && version != KEY_STORE_VERSION_1 {
            return Err(KeySetError::UnsupportedVersion(version));
        }
        let (content, stored_digest) = bytes.split_at(bytes.len() - DIGEST_BYTES);
        if digest(content)[..] != *stored_digest {
            return Err(KeySetError::DigestMismatch);
        }
        let body = &content[PREFIX_BYTES..];
        let wire = if version == KEY_STORE_VERSION_1 {
            let (v1, rest): (StoreWireV1<'_>, _) = postcard::take_from_bytes(body).map_err(KeySetError::Malformed)?;
            if !rest.is_empty() {
                return Err(KeySetError::TrailingBytes(rest.len()));
            }
            if v1.parameter_set != TFHE_LIB_GLWE_1024.id().0 {
                return Err(KeySetError::UnsupportedParameterSet(v1.parameter_set));
            }
            StoreWire {
                server_key_fingerprint: v1.server_key_fingerprint,
                devices: v1
                    .devices
                    .into_iter()
                    .map(|(device_id, key_id, key)| RecordWire {
                        device_id,
                        key_id,
                        parameter_set: v1.parameter_set,
                        key,
                    })
                    .collect(),
            }
        } else {
            let (wire, rest): (StoreWire<'_>, _) = postcard::take_from_bytes(body).map_err(KeySetError::Malformed)?;
            if !rest.is_empty() {
                return Err(KeySetError::TrailingBytes(rest.len()));
            }
            wire
        };
        let server_key_fingerprint: [u8; 32] =
            wire.server_key_fingerprint
                .try_into()
                .map_err(|_| KeySetError::WrongLength {
                    device_id: None,
                    field: "server key fingerprint",
                    expected: 32,
                    found: wire.server_key_fingerprint.len(),
                })?;
        let mut store = Self::with_fingerprint(server_key_fingerprint);
        for record in wire.devices {
            store.insert(decode_record(record)?)?;
        }
        Ok(store)
    }
}

/// One record of the file, checked: MAC key length, mode, parameter set, key material and its lengths.
fn decode_record(record: RecordWire<'_>) -> Result<DeviceRecord, KeySetError> {
    let device_id = record.device_id;
    let key = record.key;
    let wrong_length = |field, expected, found| KeySetError::WrongLength {
        device_id: Some(device_id),
        field,
        expected,
        found,
    };
    let mac_key =
        MacKey::from_slice(key.mac_key).map_err(|_| wrong_length("MAC key", MAC_KEY_BYTES, key.mac_key.len()))?;
    let mode = KeyMode::from_u8(key.mode).ok_or(KeySetError::UnknownKeyMode {
        device_id,
        mode: key.mode,
    })?;
    let parameter_set = ParameterSetId(record.parameter_set);
    let family = set_family(parameter_set).ok_or(KeySetError::UnknownParameterSet {
        device_id,
        parameter_set: record.parameter_set,
    })?;
    let material = match (mode, key.ksk) {
        (KeyMode::FleetSecretKey, None) => DeviceKeyMaterial::Fleet,
        (KeyMode::PublicKey, None) => DeviceKeyMaterial::PublicKey,
        (KeyMode::PerDeviceSecretKey, Some(ksk)) => {
            let seed: [u8; 16] = ksk
                .mask_seed
                .try_into()
                .map_err(|_| wrong_length("mask seed", 16, ksk.mask_seed.len()))?;
            let seed = u128::from_le_bytes(seed);
            // The body words of the set's key, little-endian: `u64` on the integer set, `u32` on the others.
            let wrong_key = |expected_words: usize, word_bytes: usize| {
                wrong_length("key-switching key", expected_words * word_bytes, ksk.bodies.len())
            };
            match family {
                SetFamily::Integer => {
                    let count = IntegerDeviceKsk::body_words();
                    let words = le_words::<u64>(ksk.bodies, count).ok_or_else(|| wrong_key(count, 8))?;
                    let ksk = IntegerDeviceKsk::from_parts(seed, words).map_err(|_| wrong_key(count, 8))?;
                    DeviceKeyMaterial::IntegerPerDevice(ksk)
                }
                SetFamily::Boolean(set) if set.is_big_key() => {
                    let count = big_key_device_ksk_words(set);
                    let words = le_words::<u32>(ksk.bodies, count).ok_or_else(|| wrong_key(count, 4))?;
                    let ksk = big_key_device_ksk_from_parts(set, seed, words).map_err(|_| wrong_key(count, 4))?;
                    DeviceKeyMaterial::BigKeyPerDevice(ksk)
                }
                SetFamily::Boolean(_) => {
                    let count = device_ksk_words();
                    let words = le_words::<u32>(ksk.bodies, count).ok_or_else(|| wrong_key(count, 4))?;
                    let ksk = DeviceKsk::from_parts(seed, words).map_err(|_| wrong_key(count, 4))?;
                    DeviceKeyMaterial::PerDevice(ksk)
                }
            }
        }
        (mode, _) => return Err(KeySetError::KeyMaterialMismatch { device_id, mode }),
    };
    let credentials = DeviceCredentials::new(device_id, record.key_id, mac_key);
    DeviceRecord::with_parameter_set(credentials, parameter_set, material)
}

/// `count` little-endian torus words from exactly `count * T::BYTES` bytes, or `None`.
fn le_words<T: UnsignedTorus>(bytes: &[u8], count: usize) -> Option<Vec<T>> {
    (bytes.len() == count * T::BYTES).then(|| bytes.chunks_exact(T::BYTES).map(T::from_le_slice).collect())
}

fn digest(bytes: &[u8]) -> [u8; DIGEST_BYTES] {
    Blake2b::<U32>::digest(bytes).into()
}

#[cfg(test)]
mod tests {
    use super::{KEY_STORE_VERSION, KeySetError};

    /// The error's message (written where the error is defined) names the version this code writes.
    #[test]
    fn unsupported_version_names_the_versions_read() {
        let message = KeySetError::UnsupportedVersion(9).to_string();
        assert!(
            message.contains(&format!("versions 1 and {KEY_STORE_VERSION}")),
            "{message}"
        );
    }
}
