//! [`BooleanBridge`]: extracted TLWE ciphertexts in, `tfhe::boolean` ciphertexts out, by key switching
//! into the tfhe-rs small key with the right key for the sending device: the server key's for fleet-mode
//! and public-key devices (both encrypt under the `ClientKey`'s GLWE key), the device's own (decompressed on
//! use, behind an LRU cache) for per-device ones.
//!
//! The bridge is `Send + Sync` and meant to be shared through an `Arc` by the threads that compute; it
//! key-switches slices of ciphertexts with rayon ([`KeySwitchStrategy`]).

use super::converter::{Converter, Devices, Messages};
use super::device_keys::{CacheStats, DeviceKeys};
use super::error::InteropError;
use super::fingerprint::fingerprint;
use super::ksk::TfheLibKeySwitch;
use super::strategy::{KeySwitchStrategy, switch_all};
use crate::extraction::extract_lwe_sample;
use crate::intake::{Frame, Message};
use std::num::NonZeroUsize;
use std::ops::Deref;
use std::sync::Arc;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::parameters::TFHE_LIB_PARAMETERS;
use tfhe::boolean::server_key::ServerKey;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, LweCiphertext, LweCiphertextOwned, LweKeyswitchKeyOwned, PBSOrder, keyswitch_lwe_ciphertext,
};
use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::files::credentials::KeyMode;

/// The key a batch is switched with: the fleet key (borrowed) or a device key (held while in use).
enum KeyHandle<'a> {
    Fleet(&'a LweKeyswitchKeyOwned<u32>),
    Device(Arc<LweKeyswitchKeyOwned<u32>>),
}

impl Deref for KeyHandle<'_> {
    type Target = LweKeyswitchKeyOwned<u32>;

    fn deref(&self) -> &Self::Target {
        match self {
            Self::Fleet(key) => key,
            Self::Device(key) => key,
        }
    }
}

/// The default number of decompressed per-device keys held (8 x 19.7 MiB).
pub const DEFAULT_CACHE_CAPACITY: NonZeroUsize = match NonZeroUsize::new(8) {
    Some(capacity) => capacity,
    None => unreachable!(),
};

/// Converts extracted TLWE ciphertexts into tfhe-rs boolean ciphertexts (`TFHE_LIB_PARAMETERS`' small
/// key, the key a gate takes), with the sending device's key switch. `Send + Sync`: share it through an
/// `Arc`.
pub struct BooleanBridge {
    fleet: LweKeyswitchKeyOwned<u32>,
    fleet_fingerprint: [u8; 32],
    devices: DeviceKeys<TfheLibKeySwitch>,
    strategy: KeySwitchStrategy,
    pool: Option<rayon::ThreadPool>,
}

impl core::fmt::Debug for BooleanBridge {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BooleanBridge")
            .field("devices", &self.devices)
            .field("strategy", &self.strategy)
            .field("threads", &self.threads())
            .finish_non_exhaustive()
    }
}

impl BooleanBridge {
    /// Keeps a copy of `server_key`'s key-switching key (big key 1024 -> small key 630), with no device
    /// registered and a cache of [`DEFAULT_CACHE_CAPACITY`] per-device keys.
    pub fn new(server_key: &ServerKey) -> Result<Self, InteropError> {
        Self::with_cache_capacity(server_key, DEFAULT_CACHE_CAPACITY)
    }

    /// As [`BooleanBridge::new`], holding at most `capacity` decompressed per-device keys.
    pub fn with_cache_capacity(server_key: &ServerKey, capacity: NonZeroUsize) -> Result<Self, InteropError> {
        let (_bootstrapping_key, key_switching_key, order) = server_key.clone().into_raw_parts();
        if order != PBSOrder::BootstrapKeyswitch {
            return Err(InteropError::UnexpectedPbsOrder);
        }
        if key_switching_key.input_key_lwe_dimension().0 != TFHE_LIB_GLWE_1024.polynomial_size().0
            || key_switching_key.output_key_lwe_dimension() != TFHE_LIB_PARAMETERS.lwe_dimension
            || key_switching_key.decomposition_base_log() != TFHE_LIB_PARAMETERS.ks_base_log
            || key_switching_key.decomposition_level_count() != TFHE_LIB_PARAMETERS.ks_level
        {
            return Err(InteropError::ParameterMismatch);
        }
        Ok(Self {
            fleet_fingerprint: fingerprint(&key_switching_key),
            fleet: key_switching_key,
            devices: DeviceKeys::new(capacity),
            strategy: KeySwitchStrategy::default(),
            pool: None,
        })
    }

    /// The same bridge, running its key switches and decompressions on a pool of its own of `threads`
    /// threads instead of rayon's global pool (e.g. to leave cores to the intake, or to measure scaling).
    pub fn with_thread_count(mut self, threads: NonZeroUsize) -> Result<Self, InteropError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.get())
            .thread_name(|i| format!("tfhe-sbc-bridge-{i}"))
            .build()
            .map_err(|_| InteropError::ThreadPool)?;
        self.pool = Some(pool);
        Ok(self)
    }

    /// The number of threads batches are spread over.
    pub fn threads(&self) -> usize {
        self.pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, rayon::ThreadPool::current_num_threads)
    }

    /// Runs `work` on the bridge's pool (or the caller's, if it has none).
    fn install<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(work),
            None => work(),
        }
    }

    /// The same bridge, spreading batches with `strategy`.
    #[must_use]
    pub fn with_strategy(mut self, strategy: KeySwitchStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The strategy batches use.
    pub fn strategy(&self) -> KeySwitchStrategy {
        self.strategy
    }

    /// The fingerprint of the server key this bridge was made from
    /// ([`server_key_fingerprint`](super::server_key_fingerprint)).
    pub fn server_key_fingerprint(&self) -> [u8; 32] {
        self.fleet_fingerprint
    }

    /// Whether `device_id` is registered.
    pub fn contains(&self, device_id: u64) -> bool {
        self.devices.route(device_id).is_ok()
    }

    /// The key mode of `device_id`, if registered for `TFHE_LIB_PARAMETERS`.
    pub fn key_mode(&self, device_id: u64) -> Option<KeyMode> {
        self.devices.mode(device_id)
    }

    /// The per-device key cache's counters.
    pub fn cache_stats(&self) -> CacheStats {
        self.devices.stats()
    }

    /// Drops every decompressed per-device key (the counters stay).
    pub fn clear_cache(&self) {
        self.devices.clear_cache();
    }

    /// Decompresses `device_id`'s key into the cache now, on the bridge's pool (nothing to do for a fleet or
    /// public-key device): e.g. at start-up for the devices expected to send first.
    pub fn prefetch(&self, device_id: u64) -> Result<(), InteropError> {
        let key_id = self.devices.route(device_id)?.key_id;
        self.install(|| self.key_for(device_id, key_id).map(drop))
    }

    fn key_for(&self, device_id: u64, key_id: u32) -> Result<KeyHandle<'_>, InteropError> {
        Ok(
            match self.devices.key_for(device_id, key_id, TFHE_LIB_GLWE_1024.id())? {
                None => KeyHandle::Fleet(&self.fleet),
                Some(ksk) => KeyHandle::Device(self.devices.decompressed(device_id, key_id, &ksk)),
            },
        )
    }

    /// Coefficient `index` of `glwe` as a tfhe-rs `LweCiphertext` under the big (1024) key: sample
    /// extraction only, no noise added.
    pub fn extract<C: AsRef<[u32]>>(glwe: &GlweCiphertext<u32, C>, index: usize) -> LweCiphertextOwned<u32> {
        let n = glwe.polynomial_size().0;
        let mut words = vec![0u32; n + 1];
        extract_lwe_sample(glwe, index, &mut words);
        LweCiphertext::from_container(words, CiphertextModulus::new_native())
    }

    /// Fleet and public-key modes: key-switches a ciphertext under the client key's GLWE key to the small key
    /// with the server key's key-switching key. About 1 ms.
    pub fn key_switch(&self, big: &LweCiphertextOwned<u32>) -> Ciphertext {
        let mut small = LweCiphertext::new(0u32, self.fleet.output_lwe_size(), CiphertextModulus::new_native());
        keyswitch_lwe_ciphertext(&self.fleet, big, &mut small);
        Ciphertext::Encrypted(small)
    }

    /// Fleet and public-key modes: extraction then key switch, for one coefficient.
    pub fn to_boolean<C: AsRef<[u32]>>(&self, glwe: &GlweCiphertext<u32, C>, index: usize) -> Ciphertext {
        self.key_switch(&Self::extract(glwe, index))
    }

    /// Key-switches big-key ciphertexts from device `device_id` (key id `key_id`) with that device's key,
    /// spread over rayon's threads by the bridge's strategy.
    pub fn key_switch_batch(
        &self,
        device_id: u64,
        key_id: u32,
        inputs: &[LweCiphertextOwned<u32>],
    ) -> Result<Vec<Ciphertext>, InteropError> {
        self.key_switch_batch_with(self.strategy, device_id, key_id, inputs)
    }

    /// As [`BooleanBridge::key_switch_batch`], with `strategy`.
    pub fn key_switch_batch_with(
        &self,
        strategy: KeySwitchStrategy,
        device_id: u64,
        key_id: u32,
        inputs: &[LweCiphertextOwned<u32>],
    ) -> Result<Vec<Ciphertext>, InteropError> {
        let big_size = TFHE_LIB_GLWE_1024.polynomial_size().0 + 1;
        if inputs.iter().any(|input| input.as_ref().len() != big_size) {
            return Err(InteropError::ParameterMismatch);
        }
        self.install(|| {
            let key = self.key_for(device_id, key_id)?;
            Ok(switch_all(&key, strategy, inputs.len(), |i, out| {
                out.copy_from_slice(inputs[i].as_ref());
            }))
        })
    }

    /// The message bits of `frames` (`8 * chunk_message_bytes()` of each, in order), extracted and
    /// key-switched with device `device_id`'s key.
    pub fn frames_to_booleans(
        &self,
        device_id: u64,
        key_id: u32,
        frames: &[Frame],
    ) -> Result<Vec<Ciphertext>, InteropError> {
        self.frames_to_booleans_with(self.strategy, device_id, key_id, frames)
    }

    /// As [`BooleanBridge::frames_to_booleans`], with `strategy`.
    pub fn frames_to_booleans_with(
        &self,
        strategy: KeySwitchStrategy,
        device_id: u64,
        key_id: u32,
        frames: &[Frame],
    ) -> Result<Vec<Ciphertext>, InteropError> {
        let n = TFHE_LIB_GLWE_1024.polynomial_size().0;
        for frame in frames {
            if frame.header.device_id != device_id || frame.header.key_id != key_id {
                return Err(InteropError::FrameOfAnotherDevice {
                    device_id,
                    found_device_id: frame.header.device_id,
                    found_key_id: frame.header.key_id,
                });
            }
            if frame.ciphertext.polynomial_size().0 != n || frame.ciphertext.glwe_dimension().0 != 1 {
                return Err(InteropError::ParameterMismatch);
            }
        }
        // (frame, coefficient) of every message bit.
        let bits: Vec<(usize, usize)> = frames
            .iter()
            .enumerate()
            .flat_map(|(f, frame)| (0..8 * frame.chunk_message_bytes()).map(move |i| (f, i)))
            .collect();
        self.install(|| {
            let key = self.key_for(device_id, key_id)?;
            Ok(switch_all(&key, strategy, bits.len(), |j, out| {
                let (f, i) = bits[j];
                extract_lwe_sample(&frames[f].ciphertext, i, out);
            }))
        })
    }

    /// Every message bit of an authenticated `message`, as gate inputs: its frames through
    /// [`BooleanBridge::frames_to_booleans`] with the key of the device and key id the intake authenticated.
    pub fn message_to_booleans(&self, message: &Message) -> Result<Vec<Ciphertext>, InteropError> {
        self.frames_to_booleans(message.device_id, message.key_id, &message.frames)
    }
}

impl Converter for BooleanBridge {
    type Unit = Messages;
    type Output = Vec<Ciphertext>;

    fn server_key_fingerprint(&self) -> Option<[u8; 32]> {
        Some(self.fleet_fingerprint)
    }

    /// Fleet and public-key devices of `TFHE_LIB_PARAMETERS` are switched with the server key's
    /// key-switching key, per-device ones with their own [`DeviceKsk`](super::DeviceKsk).
    fn devices(&self) -> Devices<'_> {
        Devices::new(&self.devices, TFHE_LIB_GLWE_1024.id())
    }

    fn convert(&self, message: &Message) -> Result<Vec<Ciphertext>, InteropError> {
        self.message_to_booleans(message)
    }
}
