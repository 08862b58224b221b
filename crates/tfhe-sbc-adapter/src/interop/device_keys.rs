//! What a converter holds per registered device, and the one bounded cache of decompressed per-device keys.
//!
//! [`DeviceKeys`] maps a device id to its key id, its mode and its key ([`DeviceKey`]): the server key's own
//! (fleet and public-key devices), its seeded key-switching key (per-device), or none because it is
//! registered for another parameter set. Per-device keys are decompressed on use into an LRU cache of
//! `capacity` keys; a miss inserts an empty cell under the lock and decompresses outside it, and threads
//! that miss on the same key at once wait for the one decompression (`OnceLock`). Keys evicted while a
//! thread still uses them live until it is done, so memory is bounded by `capacity` plus the keys in use.

use super::device_record::DeviceKeyMaterial;
use super::device_record::check_material;
use super::error::InteropError;
use super::glwe_ksk::SeededGlweKsk;
use super::glwe_ksk_spectra::GlweKskSpectra;
use super::ksk::{SeededKsk, TfheLibKeySwitch};
use super::lru::Lru;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use tfhe::core_crypto::prelude::LweKeyswitchKeyOwned;
use tfhe_sbc_core::parameters::ParameterSetId;
use tfhe_sbc_device::files::credentials::KeyMode;

/// Counters of the per-device key cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found the decompressed key.
    pub hits: u64,
    /// Lookups that had to decompress it (one decompression each).
    pub misses: u64,
    /// Keys held now.
    pub entries: usize,
    /// The most keys held.
    pub capacity: usize,
}

/// The key a registered device's ciphertexts are converted with.
pub(crate) enum DeviceKey<K: OwnKey> {
    /// Fleet and public-key devices: the server key's (no key of their own).
    Shared,
    /// Per-device: its own seeded key-switching key.
    Own(Arc<K::Seeded>),
    /// Registered for another parameter set (its id): no key here.
    OtherSet(u16),
}

impl<K: OwnKey> Clone for DeviceKey<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Shared => Self::Shared,
            Self::Own(ksk) => Self::Own(Arc::clone(ksk)),
            Self::OtherSet(id) => Self::OtherSet(*id),
        }
    }
}

/// One registered device.
pub(crate) struct Route<K: OwnKey> {
    /// The key id its frames carry.
    pub(crate) key_id: u32,
    /// Its mode.
    pub(crate) mode: KeyMode,
    /// Its key.
    pub(crate) key: DeviceKey<K>,
}

impl<K: OwnKey> Clone for Route<K> {
    fn clone(&self) -> Self {
        Self {
            key_id: self.key_id,
            mode: self.mode,
            key: self.key.clone(),
        }
    }
}

type CacheCell<T> = Arc<OnceLock<Arc<T>>>;
/// The cache: `(device id, key id)` to the cell of its decompressed key.
type KeyCache<T> = Lru<(u64, u32), CacheCell<T>>;

/// The registered devices of one converter and its cache of decompressed keys. `Send + Sync`.
pub(crate) struct DeviceKeys<K: OwnKey> {
    routes: RwLock<HashMap<u64, Route<K>>>,
    cache: Mutex<KeyCache<K::Decompressed>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: OwnKey> core::fmt::Debug for DeviceKeys<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DeviceKeys")
            .field("devices", &self.len())
            .field("cache", &self.stats())
            .finish()
    }
}

impl<K: OwnKey> DeviceKeys<K> {
    /// No device, a cache of at most `capacity` decompressed keys.
    pub(crate) fn new(capacity: NonZeroUsize) -> Self {
        Self {
            routes: RwLock::new(HashMap::new()),
            cache: Mutex::new(Lru::new(capacity)),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Registers `device_id`; [`InteropError::DuplicateDevice`] if it is already.
    fn insert(&self, device_id: u64, route: Route<K>) -> Result<(), InteropError> {
        match self
            .routes
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(device_id)
        {
            Entry::Occupied(_) => Err(InteropError::DuplicateDevice(device_id)),
            Entry::Vacant(slot) => {
                slot.insert(route);
                Ok(())
            }
        }
    }

    /// The device's route; [`InteropError::UnknownDevice`] if it is not registered.
    pub(crate) fn route(&self, device_id: u64) -> Result<Route<K>, InteropError> {
        self.routes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&device_id)
            .cloned()
            .ok_or(InteropError::UnknownDevice(device_id))
    }

    /// The key of `device_id`'s frames under `key_id` for a converter of `converter_set`: `None` for the
    /// server key's (fleet, public key), its own seeded key (per-device); typed errors for an unknown device,
    /// a device of another set and a wrong key id.
    pub(crate) fn key_for(
        &self,
        device_id: u64,
        key_id: u32,
        converter_set: ParameterSetId,
    ) -> Result<Option<Arc<K::Seeded>>, InteropError> {
        let route = self.route(device_id)?;
        let own = match route.key {
            DeviceKey::OtherSet(device_set) => {
                return Err(InteropError::DeviceOfAnotherSet {
                    device_id,
                    device_set,
                    converter_set: converter_set.0,
                });
            }
            DeviceKey::Shared => None,
            DeviceKey::Own(ksk) => Some(ksk),
        };
        if route.key_id != key_id {
            return Err(InteropError::WrongKeyId {
                device_id,
                expected: route.key_id,
                found: key_id,
            });
        }
        Ok(own)
    }

    /// The key mode of a device registered for this converter's set.
    pub(crate) fn mode(&self, device_id: u64) -> Option<KeyMode> {
        self.route(device_id)
            .ok()
            .filter(|route| match route.key {
                DeviceKey::Shared | DeviceKey::Own(_) => true,
                DeviceKey::OtherSet(_) => false,
            })
            .map(|route| route.mode)
    }

    /// The number of registered devices.
    pub(crate) fn len(&self) -> usize {
        self.routes.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, KeyCache<K::Decompressed>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `seeded` (device `device_id`'s key under `key_id`) decompressed, from the cache or now.
    pub(crate) fn decompressed(&self, device_id: u64, key_id: u32, seeded: &K::Seeded) -> Arc<K::Decompressed> {
        let cell = {
            let mut lru = self.lock_cache();
            if let Some(cell) = lru.get(&(device_id, key_id)) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                cell.clone()
            } else {
                self.misses.fetch_add(1, Ordering::Relaxed);
                let cell = CacheCell::default();
                lru.insert((device_id, key_id), cell.clone());
                cell
            }
        };
        cell.get_or_init(|| Arc::new(K::decompress(seeded))).clone()
    }

    /// Drops every decompressed key (the counters stay).
    pub(crate) fn clear_cache(&self) {
        let mut lru = self.lock_cache();
        let capacity = lru.capacity();
        *lru = Lru::new(capacity);
    }

    /// The cache's counters.
    pub(crate) fn stats(&self) -> CacheStats {
        let lru = self.lock_cache();
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries: lru.len(),
            capacity: lru.capacity().get(),
        }
    }
}

/// The key family of a converter's per-device keys: which seeded key of a device's material it takes, and
/// what that key is once decompressed (what the cache holds).
pub(crate) trait OwnKey: Send + Sync + 'static {
    /// The seeded key, as the key store holds it.
    type Seeded: Send + Sync + 'static;
    /// The decompressed key, as the conversion uses it.
    type Decompressed: Send + Sync + 'static;
    /// The material's seeded key of this family, if it carries one (else the device uses the server key's).
    fn own_key(material: DeviceKeyMaterial) -> Option<Self::Seeded>;
    /// Regenerates the key's masks.
    fn decompress(seeded: &Self::Seeded) -> Self::Decompressed;
}

/// `OwnKey` for the family `$family`: its seeded key is the material's `$variant`, decompressed by the
/// seeded key's `$decompress` (the families differ in their key types only); `$none`, the material's other
/// variants, each named (a new one must be placed).
macro_rules! own_key {
    (
        $(#[$doc:meta])* $family:ty: $variant:ident($seeded:ty) => $decompress:ident() -> $decompressed:ty,
        none: $none:pat
    ) => {
        $(#[$doc])*
        impl OwnKey for $family {
            type Seeded = $seeded;
            type Decompressed = $decompressed;

            fn own_key(material: DeviceKeyMaterial) -> Option<Self::Seeded> {
                match material {
                    DeviceKeyMaterial::$variant(ksk) => Some(ksk),
                    $none => None,
                }
            }

            fn decompress(seeded: &Self::Seeded) -> Self::Decompressed {
                seeded.$decompress()
            }
        }
    };
}

own_key! {
    /// Per-device boolean keys of `TFHE_LIB_PARAMETERS`: an LWE key switch per bit into the small key.
    TfheLibKeySwitch: PerDevice(SeededKsk<Self>) => decompress() -> LweKeyswitchKeyOwned<u32>,
    none: DeviceKeyMaterial::Fleet
        | DeviceKeyMaterial::PublicKey
        | DeviceKeyMaterial::IntegerPerDevice(_)
        | DeviceKeyMaterial::BigKeyPerDevice(_)
}

/// Per-device integer keys: one GLWE key switch per frame into the client key's GLWE key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IntegerGlweSwitch;

own_key! {
    IntegerGlweSwitch: IntegerPerDevice(SeededGlweKsk<u64>) => spectra() -> GlweKskSpectra,
    none: DeviceKeyMaterial::Fleet
        | DeviceKeyMaterial::PublicKey
        | DeviceKeyMaterial::PerDevice(_)
        | DeviceKeyMaterial::BigKeyPerDevice(_)
}

/// Per-device keys of the big-key boolean sets: one GLWE key switch per frame into the client key's GLWE key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BigKeyGlweSwitch;

own_key! {
    BigKeyGlweSwitch: BigKeyPerDevice(SeededGlweKsk<u32>) => spectra() -> GlweKskSpectra<u32>,
    none: DeviceKeyMaterial::Fleet
        | DeviceKeyMaterial::PublicKey
        | DeviceKeyMaterial::PerDevice(_)
        | DeviceKeyMaterial::IntegerPerDevice(_)
}

/// Registration and removal in a [`DeviceKeys`], whatever its key family: what [`Converter::register`] and
/// [`Converter::unregister`](super::Converter::unregister) call.
///
/// [`Converter::register`]: super::Converter::register
pub(crate) trait DeviceTable: Send + Sync {
    /// Registers `(device id, key id)` of parameter set `sets.0` with a converter of `sets.1`: a device of
    /// another set is recorded as such; on the converter's set, the material must be one the set allows
    /// ([`InteropError::KeyMaterialMismatch`]); its own seeded key, if any, is the device's key.
    fn register(
        &self,
        device: (u64, u32),
        sets: (ParameterSetId, ParameterSetId),
        material: DeviceKeyMaterial,
    ) -> Result<(), InteropError>;

    /// Forgets `device_id` and drops its cached key; whether it was registered.
    fn remove(&self, device_id: u64) -> bool;
}

impl<K: OwnKey> DeviceTable for DeviceKeys<K> {
    fn register(
        &self,
        (device_id, key_id): (u64, u32),
        (parameter_set, converter_set): (ParameterSetId, ParameterSetId),
        material: DeviceKeyMaterial,
    ) -> Result<(), InteropError> {
        let mode = material.mode();
        let key = if parameter_set == converter_set {
            check_material(device_id, converter_set, &material)
                .map_err(|_| InteropError::KeyMaterialMismatch { device_id })?;
            K::own_key(material).map_or(DeviceKey::Shared, |ksk| DeviceKey::Own(Arc::new(ksk)))
        } else {
            DeviceKey::OtherSet(parameter_set.0)
        };
        self.insert(device_id, Route { key_id, mode, key })
    }

    fn remove(&self, device_id: u64) -> bool {
        let removed = self
            .routes
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&device_id);
        if let Some(route) = &removed {
            self.lock_cache().remove(&(device_id, route.key_id));
        }
        removed.is_some()
    }
}
