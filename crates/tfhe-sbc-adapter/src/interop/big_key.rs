//! The big-key boolean converter: tfhe-rs's 128-bit boolean sets with the "big" encryption key, whose
//! intake needs **no key switch**.
//!
//! tfhe-rs 1.8.2 ships two boolean sets whose encryption key choice is `Big` (`KeyswitchBootstrap` order):
//! `DEFAULT_PARAMETERS_KS_PBS` (`k = 3`, `N = 512`, our `DEFAULT_KS_PBS_GLWE_512_K3`) and
//! `PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS` (`k = 2`, `N = 1024`, our
//! `ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2`). A gate of such a set takes ciphertexts under the big key (the
//! GLWE key read flat, dimension `k * N`) and key-switches them itself before bootstrapping. A coefficient
//! sample-extracted from a device's GLWE ciphertext is exactly such a ciphertext, so it **is** a gate
//! input: [`BigKeyBridge`] extracts and wraps, nothing more (microseconds per bit, against about 1 ms for
//! the key switch that `TFHE_LIB_PARAMETERS`' small-key gates need, [`BooleanBridge`](super::BooleanBridge)).
//!
//! Per-device devices of these sets encrypt under their own key: each of their frames is first switched once,
//! GLWE to GLWE, into the client key's GLWE key with the device's key ([`super::big_key_per_device`]), then
//! extracted the same way.
//!
//! The sets and the trusted party's helpers are in [`super::boolean_set`], re-exported here.

pub use super::boolean_set::{BooleanSet, check_server_key, generate_keys, glwe_key_from_client_key};

use super::converter::{Converter, Devices, Messages};
use super::device_keys::{BigKeyGlweSwitch, CacheStats, DeviceKeys};
use super::error::InteropError;
use super::fingerprint::server_key_fingerprint;
use super::glwe_ksk::keyswitch_frame;
use crate::extraction::extract_lwe_sample;
use crate::intake::{Frame, Message};
use rayon::prelude::*;
use std::num::NonZeroUsize;
use std::sync::Arc;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::server_key::ServerKey;
use tfhe::core_crypto::prelude::{CiphertextModulus, LweCiphertext, LweCiphertextOwned};
use tfhe_sbc_core::entities::GlweCiphertext;

/// Extracted ciphertexts in, `tfhe::boolean` gate inputs out, for a big-key set: sample extraction
/// ([`extract_lwe_sample`], an LWE ciphertext of dimension `k * N` under the big key) wrapped as
/// `Ciphertext::Encrypted`, with no key switch and no added noise.
///
/// It holds its set, the server key's fingerprint if made from one, and (as a [`Converter`]) the devices
/// registered with it, with a bounded cache of per-device keys (transformed for the switch); no secret key. `Send` and `Sync`; clones share the registered devices. It trusts what the
/// [`Intake`](crate::intake::Intake) authenticated and checks every frame's set and shape, so a frame of
/// another set gets an error, never a ciphertext a gate would panic on.
#[derive(Clone, Debug)]
pub struct BigKeyBridge {
    set: BooleanSet,
    fingerprint: Option<[u8; 32]>,
    devices: Arc<DeviceKeys<BigKeyGlweSwitch>>,
}

/// The default number of per-device keys a [`BigKeyBridge`] keeps transformed: 256 (about 147 KiB each on
/// both sets, 37 MiB in all).
pub const DEFAULT_BIG_KEY_CACHE_CAPACITY: usize = 256;

impl PartialEq for BigKeyBridge {
    fn eq(&self, other: &Self) -> bool {
        self.set == other.set && self.fingerprint == other.fingerprint
    }
}

impl BigKeyBridge {
    /// A bridge for `set`; refuses a small-key set ([`BooleanSet::TfheLib`]).
    pub fn new(set: BooleanSet) -> Result<Self, InteropError> {
        Self::with_cache_capacity(set, DEFAULT_BIG_KEY_CACHE_CAPACITY)
    }

    /// [`BigKeyBridge::new`] keeping at most `capacity` per-device keys transformed (at least 1).
    pub fn with_cache_capacity(set: BooleanSet, capacity: usize) -> Result<Self, InteropError> {
        if set.is_big_key() {
            Ok(Self {
                set,
                fingerprint: None,
                devices: Arc::new(DeviceKeys::new(
                    NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN),
                )),
            })
        } else {
            Err(InteropError::NotABigKeySet(set))
        }
    }

    /// The per-device key cache's counters.
    pub fn cache_stats(&self) -> CacheStats {
        self.devices.stats()
    }

    /// A bridge for `set` whose outputs `server_key` computes on: [`BigKeyBridge::new`] and
    /// [`check_server_key`]; it keeps the key's [`server_key_fingerprint`] (what a key store is bound to).
    pub fn for_server_key(set: BooleanSet, server_key: &ServerKey) -> Result<Self, InteropError> {
        let mut bridge = Self::new(set)?;
        check_server_key(set, server_key)?;
        bridge.fingerprint = Some(server_key_fingerprint(server_key));
        Ok(bridge)
    }

    /// The bridge's set.
    pub fn set(&self) -> BooleanSet {
        self.set
    }

    fn check_shape<C: AsRef<[u32]>>(&self, glwe: &GlweCiphertext<u32, C>) -> Result<(), InteropError> {
        let expected = (self.set.glwe_dimension(), self.set.polynomial_size());
        let found = (glwe.glwe_dimension().0, glwe.polynomial_size().0);
        if expected == found {
            Ok(())
        } else {
            Err(InteropError::WrongGlweShape { expected, found })
        }
    }

    fn check_frame(&self, frame: &Frame) -> Result<(), InteropError> {
        let expected = self.set.glwe_parameters().id().0;
        let found = frame.parameters.id().0;
        if expected != found {
            return Err(InteropError::WrongParameterSet {
                device_id: frame.header.device_id,
                expected,
                found,
            });
        }
        self.check_shape(&frame.ciphertext)
    }

    /// Coefficient `index` of `glwe` as a tfhe-rs LWE ciphertext under the big key (`k * N + 1` words).
    pub fn extract_lwe<C: AsRef<[u32]>>(
        &self,
        glwe: &GlweCiphertext<u32, C>,
        index: usize,
    ) -> Result<LweCiphertextOwned<u32>, InteropError> {
        self.check_shape(glwe)?;
        let n = self.set.polynomial_size();
        if index >= n {
            return Err(InteropError::IndexOutOfRange {
                index,
                polynomial_size: n,
            });
        }
        Ok(extract_unchecked(glwe, index, self.set.big_lwe_dimension()))
    }

    /// Coefficient `index` of `glwe` as a gate input.
    pub fn extract<C: AsRef<[u32]>>(
        &self,
        glwe: &GlweCiphertext<u32, C>,
        index: usize,
    ) -> Result<Ciphertext, InteropError> {
        self.extract_lwe(glwe, index).map(Ciphertext::Encrypted)
    }

    /// The message bits of one authenticated frame (`8 * chunk_message_bytes()`, least-significant bit of
    /// the first byte first) as gate inputs.
    pub fn frame_to_booleans(&self, frame: &Frame) -> Result<Vec<Ciphertext>, InteropError> {
        self.check_frame(frame)?;
        let dimension = self.set.big_lwe_dimension();
        Ok((0..8 * frame.chunk_message_bytes())
            .map(|i| Ciphertext::Encrypted(extract_unchecked(&frame.ciphertext, i, dimension)))
            .collect())
    }

    /// Every message bit of an authenticated message, in order, as gate inputs; extracted in parallel with
    /// rayon. All frames are checked before any is extracted.
    pub fn message_to_booleans(&self, message: &Message) -> Result<Vec<Ciphertext>, InteropError> {
        message.frames.iter().try_for_each(|frame| self.check_frame(frame))?;
        let bits: Vec<(usize, usize)> = message
            .frames
            .iter()
            .enumerate()
            .flat_map(|(f, frame)| (0..8 * frame.chunk_message_bytes()).map(move |i| (f, i)))
            .collect();
        let dimension = self.set.big_lwe_dimension();
        Ok(bits
            .into_par_iter()
            .map(|(f, i)| Ciphertext::Encrypted(extract_unchecked(&message.frames[f].ciphertext, i, dimension)))
            .collect())
    }
}

impl Converter for BigKeyBridge {
    type Unit = Messages;
    type Output = Vec<Ciphertext>;

    fn server_key_fingerprint(&self) -> Option<[u8; 32]> {
        self.fingerprint
    }

    /// Fleet and public-key devices of the bridge's set (both encrypt under the client key's GLWE key, whose
    /// extracted bits are gate inputs), and per-device devices with their [`BigKeyDeviceKsk`](super::big_key_per_device::BigKeyDeviceKsk).
    fn devices(&self) -> Devices<'_> {
        Devices::new(&*self.devices, self.set.glwe_parameters().id())
    }

    fn convert(&self, message: &Message) -> Result<Vec<Ciphertext>, InteropError> {
        let set = self.set.glwe_parameters().id();
        match self.devices.key_for(message.device_id, message.key_id, set)? {
            None => self.message_to_booleans(message),
            Some(ksk) => {
                message.frames.iter().try_for_each(|frame| self.check_frame(frame))?;
                let key = self.devices.decompressed(message.device_id, message.key_id, &ksk);
                let dimension = self.set.big_lwe_dimension();
                let mut bits = Vec::new();
                for frame in &message.frames {
                    let switched = keyswitch_frame(&key, &frame.ciphertext)?;
                    bits.par_extend(
                        (0..8 * frame.chunk_message_bytes())
                            .into_par_iter()
                            .map(|i| Ciphertext::Encrypted(extract_unchecked(&switched, i, dimension))),
                    );
                }
                Ok(bits)
            }
        }
    }
}

/// Extraction into a fresh tfhe-rs ciphertext; the caller checked the shape and the index.
fn extract_unchecked<C: AsRef<[u32]>>(
    glwe: &GlweCiphertext<u32, C>,
    index: usize,
    dimension: usize,
) -> LweCiphertextOwned<u32> {
    let mut words = vec![0u32; dimension + 1];
    extract_lwe_sample(glwe, index, &mut words);
    LweCiphertext::from_container(words, CiphertextModulus::new_native())
}
