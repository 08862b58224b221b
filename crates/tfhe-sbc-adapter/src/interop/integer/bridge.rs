//! The integer half of the server (issue \[G\] section 3, key modes): one call from an authenticated
//! [`IntegerFrame`] to `FheUint8/16/32/64` values, the key mode picked from what the key store says of the
//! sending device.
//!
//! * fleet (the device holds the client key's GLWE key): extraction and wrapping, no key switch
//!   ([`IntegerExtractor`]);
//! * per-device (the device holds its own GLWE key): extraction, a key switch with the device's seeded
//!   [`IntegerDeviceKsk`] into the server key's small key and one identity PBS back to a nominal big-key
//!   block ([`IntegerRefresher`]). The decompressed keys (57.4 MiB each) are kept in a small LRU cache.
//!
//! A device registered for a boolean set has no integer key: its frames get
//! [`IntegerError::NotAnIntegerDevice`], an unknown device [`IntegerError::UnknownDevice`].

use super::per_device::{IntegerDeviceKsk, IntegerRefresher};
use super::{IntegerError, IntegerExtractor, IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128};
use crate::intake::IntegerFrame;
use crate::interop::lru::Lru;
use crate::key_store::{DeviceKeyMaterial, KeyMode};
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use tfhe::core_crypto::prelude::LweKeyswitchKeyOwned;
use tfhe::shortint::atomic_pattern::AtomicPatternServerKey;
use tfhe::{FheUint, FheUintId};
use tfhe_sbc_core::parameters::ParameterSetId;

/// How many decompressed per-device integer keys (57.4 MiB each) an [`IntegerBridge`] keeps by default.
pub const DEFAULT_INTEGER_CACHE_CAPACITY: usize = 2;

/// A fingerprint of a high-level integer server key: BLAKE2b-256 of its key-switching key (domain
/// `"tfhe-sbc integer server key fingerprint v1"`), the key every per-device key switch must land beside.
/// A key store of integer devices is bound to it, as a boolean one is to
/// [`server_key_fingerprint`](crate::interop::server_key_fingerprint). Errors if the key is not a standard
/// classic-PBS key.
pub fn integer_server_key_fingerprint(server_key: &tfhe::ServerKey) -> Result<[u8; 32], IntegerError> {
    let integer: &tfhe::integer::ServerKey = server_key.as_ref();
    let shortint: &tfhe::shortint::ServerKey = integer.as_ref();
    let AtomicPatternServerKey::Standard(ap) = &shortint.atomic_pattern else {
        return Err(IntegerError::UnsupportedAtomicPattern);
    };
    let mut hasher = Blake2b::<U32>::new();
    hasher.update(b"tfhe-sbc integer server key fingerprint v1");
    for chunk in ap.key_switching_key.as_ref().chunks(2048) {
        let mut bytes = [0u8; 8 * 2048];
        for (out, word) in bytes.chunks_exact_mut(8).zip(chunk) {
            out.copy_from_slice(&word.to_le_bytes());
        }
        hasher.update(&bytes[..8 * chunk.len()]);
    }
    Ok(hasher.finalize().into())
}

/// How the bridge opens one device's frames.
#[derive(Debug)]
enum Route {
    /// Fleet: extraction only.
    Fleet { key_id: u32 },
    /// Per-device: key switch with the device's key, then the identity PBS.
    PerDevice { key_id: u32, ksk: Arc<IntegerDeviceKsk> },
    /// Registered for another (boolean) set: no integer key.
    OtherSet { parameter_set: u16 },
}

/// The integer conversion for every integer device of a key store: `Send + Sync`, shared by the threads that
/// compute. Holds the high-level server key (tfhe-rs shares its keys behind `Arc`s, so cloning it is cheap).
pub struct IntegerBridge {
    server_key: tfhe::ServerKey,
    fingerprint: [u8; 32],
    set: IntegerParameters,
    extractor: IntegerExtractor,
    devices: RwLock<HashMap<u64, Route>>,
    cache: Mutex<Lru<u64, Arc<LweKeyswitchKeyOwned<u64>>>>,
}

impl core::fmt::Debug for IntegerBridge {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let devices = self.devices.read().unwrap_or_else(PoisonError::into_inner).len();
        let cached = self.cache.lock().unwrap_or_else(PoisonError::into_inner).len();
        f.debug_struct("IntegerBridge")
            .field("set", &self.set.glwe().id().0)
            .field("devices", &devices)
            .field("cached_keys", &cached)
            .finish_non_exhaustive()
    }
}

impl IntegerBridge {
    /// The bridge for `server_key` (a standard classic-PBS key of [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`] in
    /// `KeyswitchBootstrap` order), no device registered, [`DEFAULT_INTEGER_CACHE_CAPACITY`] cached keys.
    pub fn new(server_key: tfhe::ServerKey) -> Result<Self, IntegerError> {
        Self::with_cache_capacity(server_key, DEFAULT_INTEGER_CACHE_CAPACITY)
    }

    /// As [`IntegerBridge::new`], keeping at most `capacity` (at least 1) decompressed per-device keys.
    pub fn with_cache_capacity(server_key: tfhe::ServerKey, capacity: usize) -> Result<Self, IntegerError> {
        // Checks the server key's shape once: every later refresher on it succeeds.
        IntegerRefresher::new(&server_key)?;
        let fingerprint = integer_server_key_fingerprint(&server_key)?;
        Ok(Self {
            server_key,
            fingerprint,
            set: MESSAGE_2_CARRY_2_TUNIFORM_2M128,
            extractor: IntegerExtractor::new(),
            devices: RwLock::new(HashMap::new()),
            cache: Mutex::new(Lru::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN))),
        })
    }

    /// The server key (for `tfhe::set_server_key` on the computing threads).
    pub fn server_key(&self) -> &tfhe::ServerKey {
        &self.server_key
    }

    /// [`integer_server_key_fingerprint`] of the server key.
    pub fn server_key_fingerprint(&self) -> [u8; 32] {
        self.fingerprint
    }

    /// Registers device `device_id` (key id `key_id`) for `parameter_set` with its key material. On the
    /// integer set it must be [`DeviceKeyMaterial::Fleet`] or [`DeviceKeyMaterial::IntegerPerDevice`]
    /// ([`IntegerError::KeyMaterialMismatch`] otherwise); a device of another set is recorded so that its
    /// frames get [`IntegerError::NotAnIntegerDevice`].
    pub fn register(
        &self,
        device_id: u64,
        key_id: u32,
        parameter_set: ParameterSetId,
        material: DeviceKeyMaterial,
    ) -> Result<(), IntegerError> {
        let route = if parameter_set == self.set.glwe().id() {
            match material {
                DeviceKeyMaterial::Fleet => Route::Fleet { key_id },
                DeviceKeyMaterial::IntegerPerDevice(ksk) => Route::PerDevice {
                    key_id,
                    ksk: Arc::new(ksk),
                },
                _ => return Err(IntegerError::KeyMaterialMismatch { device_id }),
            }
        } else {
            Route::OtherSet {
                parameter_set: parameter_set.0,
            }
        };
        match self
            .devices
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(device_id)
        {
            Entry::Occupied(_) => Err(IntegerError::DuplicateDevice(device_id)),
            Entry::Vacant(slot) => {
                slot.insert(route);
                Ok(())
            }
        }
    }

    /// Removes a device (revocation) and its cached key; whether it was registered.
    pub fn unregister(&self, device_id: u64) -> bool {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&device_id);
        self.devices
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&device_id)
            .is_some()
    }

    /// The key mode of a registered integer device (`None`: unknown, or registered for another set).
    pub fn mode(&self, device_id: u64) -> Option<KeyMode> {
        match self
            .devices
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&device_id)?
        {
            Route::Fleet { .. } => Some(KeyMode::FleetSecretKey),
            Route::PerDevice { .. } => Some(KeyMode::PerDeviceSecretKey),
            Route::OtherSet { .. } => None,
        }
    }

    /// The decompressed key of a per-device device, from the cache or decompressed now (outside the lock).
    fn decompressed(&self, device_id: u64, ksk: &IntegerDeviceKsk) -> Arc<LweKeyswitchKeyOwned<u64>> {
        if let Some(key) = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&device_id)
        {
            return Arc::clone(key);
        }
        let key = Arc::new(ksk.decompress());
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(device_id, Arc::clone(&key));
        key
    }

    /// Readings `first..first + count` of an authenticated integer frame as `FheUint<Id>`, in the sending
    /// device's key mode (the frame's header names the device): extraction in fleet mode, key switch and
    /// identity PBS per block in per-device mode, on rayon's pool. Typed errors for an unknown device, a
    /// device of another set, a key id that is not the device's, and readings out of range.
    pub fn readings<Id: FheUintId + Send>(
        &self,
        frame: &IntegerFrame,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, IntegerError> {
        let header = &frame.header;
        let device_id = header.device_id;
        let expected = self.set.glwe().id().0;
        let route = {
            let devices = self.devices.read().unwrap_or_else(PoisonError::into_inner);
            match devices.get(&device_id) {
                None => return Err(IntegerError::UnknownDevice(device_id)),
                Some(Route::OtherSet { parameter_set }) => {
                    return Err(IntegerError::NotAnIntegerDevice {
                        device_id,
                        parameter_set: *parameter_set,
                    });
                }
                Some(Route::Fleet { key_id }) => (*key_id, None),
                Some(Route::PerDevice { key_id, ksk }) => (*key_id, Some(Arc::clone(ksk))),
            }
        };
        if header.key_id != route.0 {
            return Err(IntegerError::WrongKeyId {
                device_id,
                expected: route.0,
                found: header.key_id,
            });
        }
        if header.parameter_set != expected || frame.parameters != self.set {
            return Err(IntegerError::WrongParameterSet {
                device_id,
                expected,
                found: header.parameter_set,
            });
        }
        match route.1 {
            None => self
                .extractor
                .extract_readings_par::<Id, _>(&frame.ciphertext, first, count),
            Some(ksk) => {
                // Range and shape first: a bad request decompresses nothing.
                self.extractor
                    .reading_range(&frame.ciphertext, FheUint::<Id>::num_bits() as u32, first, count)?;
                let key = self.decompressed(device_id, &ksk);
                IntegerRefresher::new(&self.server_key)?.extract_readings_par::<Id, _>(
                    &key,
                    &frame.ciphertext,
                    first,
                    count,
                )
            }
        }
    }

    /// Every whole reading of `Id`'s width the frame carries ([`IntegerFrame::readings`]), as
    /// [`IntegerBridge::readings`].
    pub fn frame_readings<Id: FheUintId + Send>(&self, frame: &IntegerFrame) -> Result<Vec<FheUint<Id>>, IntegerError> {
        let count = frame.readings(FheUint::<Id>::num_bits() as u32);
        self.readings(frame, 0, count)
    }
}
