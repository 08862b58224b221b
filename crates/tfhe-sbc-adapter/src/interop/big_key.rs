//! tfhe-rs's 128-bit boolean parameter sets with the "big" encryption key: intake with **no key switch**.
//!
//! tfhe-rs 1.8.2 ships two boolean sets whose encryption key choice is `Big` (`KeyswitchBootstrap` order):
//! `DEFAULT_PARAMETERS_KS_PBS` (`k = 3`, `N = 512`, our [`DEFAULT_KS_PBS_GLWE_512_K3`]) and
//! `PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS` (`k = 2`, `N = 1024`, our
//! [`ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2`]). A gate of such a set takes ciphertexts under the big key (the
//! GLWE key read flat, dimension `k * N`) and key-switches them itself before bootstrapping. A coefficient
//! sample-extracted from a device's GLWE ciphertext is exactly such a ciphertext, so it **is** a gate
//! input: [`BigKeyBridge`] extracts and wraps, nothing more (microseconds per bit, against about 1 ms for
//! the key switch that `TFHE_LIB_PARAMETERS`' small-key gates need, `super::BooleanBridge`).
//!
//! [`BooleanSet`] names the three tfhe-rs boolean sets whose GLWE side is one of our named sets, with the
//! tfhe-rs constants and key choices. The trusted-party helpers make a set's tfhe-rs keys
//! ([`generate_keys`]), export the client key's GLWE key for the devices ([`glwe_key_from_client_key`],
//! `k * N` bytes) and check that a server key belongs to a set ([`check_server_key`]).
//!
//! Which key modes these sets allow (fleet, per-device, public key), with their noise, is in
//! `docs/security.md`, "Parameter sets and the key modes they allow".

use super::RngSeeder;
use crate::extraction::extract_lwe_sample;
use crate::intake::{Frame, Message};
use rand_core::CryptoRng;
use rayon::prelude::*;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::engine::BooleanEngine;
use tfhe::boolean::parameters::{
    BooleanParameters, DEFAULT_PARAMETERS_KS_PBS, EncryptionKeyChoice, PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS,
    TFHE_LIB_PARAMETERS,
};
use tfhe::boolean::server_key::ServerKey;
use tfhe::core_crypto::prelude::{CiphertextModulus, LweCiphertext, LweCiphertextOwned};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::{
    DEFAULT_KS_PBS_GLWE_512_K3, ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, GlweParameters, ParameterSetId,
    TFHE_LIB_GLWE_1024,
};
use zeroize::Zeroize;

/// A tfhe-rs 1.8.2 boolean parameter set whose GLWE side is one of our named sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BooleanSet {
    /// `TFHE_LIB_PARAMETERS` ([`TFHE_LIB_GLWE_1024`]): about 120 bits, small encryption key, so extracted
    /// ciphertexts need a key switch (`super::BooleanBridge`).
    TfheLib,
    /// `DEFAULT_PARAMETERS_KS_PBS` ([`DEFAULT_KS_PBS_GLWE_512_K3`]): 128 bits, p-fail `2^-64`, big key.
    DefaultKsPbs,
    /// `PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS` ([`ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2`]): 128 bits,
    /// p-fail `2^-165`, big key.
    ErrorProb2m165KsPbs,
}

impl BooleanSet {
    /// Every set, in parameter-set id order.
    pub const ALL: [Self; 3] = [Self::TfheLib, Self::DefaultKsPbs, Self::ErrorProb2m165KsPbs];
    /// The two big-key sets.
    pub const BIG_KEY: [Self; 2] = [Self::DefaultKsPbs, Self::ErrorProb2m165KsPbs];

    /// The set whose GLWE side has this id, if any.
    pub const fn from_id(id: ParameterSetId) -> Option<Self> {
        match id {
            ParameterSetId::TFHE_LIB_GLWE_1024 => Some(Self::TfheLib),
            ParameterSetId::DEFAULT_KS_PBS_GLWE_512_K3 => Some(Self::DefaultKsPbs),
            ParameterSetId::ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2 => Some(Self::ErrorProb2m165KsPbs),
            _ => None,
        }
    }

    /// The set whose tfhe-rs parameters are exactly `parameters`, if any.
    pub fn from_tfhe_parameters(parameters: &BooleanParameters) -> Option<Self> {
        Self::ALL.into_iter().find(|set| set.tfhe_parameters() == *parameters)
    }

    /// Our named GLWE parameter set: what the device encrypts with.
    pub const fn glwe_parameters(self) -> GlweParameters {
        match self {
            Self::TfheLib => TFHE_LIB_GLWE_1024,
            Self::DefaultKsPbs => DEFAULT_KS_PBS_GLWE_512_K3,
            Self::ErrorProb2m165KsPbs => ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2,
        }
    }

    /// The tfhe-rs parameters, as tfhe-rs 1.8.2 defines them.
    pub const fn tfhe_parameters(self) -> BooleanParameters {
        match self {
            Self::TfheLib => TFHE_LIB_PARAMETERS,
            Self::DefaultKsPbs => DEFAULT_PARAMETERS_KS_PBS,
            Self::ErrorProb2m165KsPbs => PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS,
        }
    }

    /// The tfhe-rs constant's name.
    pub const fn tfhe_name(self) -> &'static str {
        match self {
            Self::TfheLib => "TFHE_LIB_PARAMETERS",
            Self::DefaultKsPbs => "DEFAULT_PARAMETERS_KS_PBS",
            Self::ErrorProb2m165KsPbs => "PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS",
        }
    }

    /// Which key a gate's inputs are under, as we rely on it: `Big` (the GLWE key read flat, so an
    /// extracted ciphertext is a gate input) or `Small` (the LWE key of dimension `n`, so it needs a key
    /// switch first). `tests/parameter_sets.rs` checks it against tfhe-rs's constants.
    pub const fn encryption_key_choice(self) -> EncryptionKeyChoice {
        match self {
            Self::TfheLib => EncryptionKeyChoice::Small,
            Self::DefaultKsPbs | Self::ErrorProb2m165KsPbs => EncryptionKeyChoice::Big,
        }
    }

    /// Whether gates take extracted ciphertexts as they are.
    pub const fn is_big_key(self) -> bool {
        matches!(self.encryption_key_choice(), EncryptionKeyChoice::Big)
    }

    /// `k`.
    pub const fn glwe_dimension(self) -> usize {
        self.glwe_parameters().glwe_dimension().0
    }

    /// `N`.
    pub const fn polynomial_size(self) -> usize {
        self.glwe_parameters().polynomial_size().0
    }

    /// The LWE dimension of an extracted ciphertext (the big key): `k * N`.
    pub const fn big_lwe_dimension(self) -> usize {
        self.glwe_dimension() * self.polynomial_size()
    }

    /// The number of `u32` words of the server key's key-switching key: `k*N * ks_level * (n + 1)`.
    pub fn key_switching_key_words(self) -> usize {
        let p = self.tfhe_parameters();
        self.big_lwe_dimension() * p.ks_level.0 * (p.lwe_dimension.0 + 1)
    }

    /// The number of complex (`c64`) elements of the server key's Fourier bootstrapping key:
    /// `n * pbs_level * (k + 1)^2 * N / 2`.
    pub fn bootstrapping_key_elements(self) -> usize {
        let p = self.tfhe_parameters();
        let k1 = self.glwe_dimension() + 1;
        p.lwe_dimension.0 * p.pbs_level.0 * k1 * k1 * self.polynomial_size() / 2
    }
}

impl core::fmt::Display for BooleanSet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.tfhe_name())
    }
}

/// Why a big-key conversion or a key helper refused its input.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BigKeyError {
    /// The set's gates take small-key ciphertexts: extracted ciphertexts need a key switch
    /// (`super::BooleanBridge`).
    NotABigKeySet(BooleanSet),
    /// A frame names another parameter set than the bridge's.
    WrongParameterSet {
        /// The bridge's set.
        expected: ParameterSetId,
        /// The frame's.
        found: ParameterSetId,
    },
    /// A ciphertext does not have the set's shape.
    WrongCiphertextShape {
        /// The set's `(k, N)`.
        expected: (usize, usize),
        /// The ciphertext's `(k, N)`.
        found: (usize, usize),
    },
    /// A coefficient index is not below `N`.
    IndexOutOfRange {
        /// The index asked for.
        index: usize,
        /// `N`.
        polynomial_size: usize,
    },
    /// The client key's parameters are not the set's tfhe-rs parameters.
    ClientKeyMismatch,
    /// The server key's key-switching or bootstrapping key does not have the set's size.
    ServerKeyMismatch {
        /// The set whose shape was expected.
        set: BooleanSet,
        /// The key-switching key's `u32` words: expected, found.
        key_switching_words: (usize, usize),
        /// The bootstrapping key's `c64` elements: expected, found.
        bootstrapping_elements: (usize, usize),
    },
    /// The client key's GLWE key is not binary, or not `k * N` coefficients.
    BadGlweKey,
}

impl core::fmt::Display for BigKeyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotABigKeySet(set) => write!(
                f,
                "{set} gates take small-key ciphertexts: extracted ciphertexts need a key switch first"
            ),
            Self::WrongParameterSet { expected, found } => write!(
                f,
                "frame names parameter set {}, the bridge converts set {}",
                found.0, expected.0
            ),
            Self::WrongCiphertextShape { expected, found } => write!(
                f,
                "ciphertext has k = {}, N = {}; the set has k = {}, N = {}",
                found.0, found.1, expected.0, expected.1
            ),
            Self::IndexOutOfRange { index, polynomial_size } => {
                write!(f, "coefficient {index} out of range for N = {polynomial_size}")
            }
            Self::ClientKeyMismatch => f.write_str("client key parameters are not the set's tfhe-rs parameters"),
            Self::ServerKeyMismatch {
                set,
                key_switching_words,
                bootstrapping_elements,
            } => write!(
                f,
                "server key is not a {set} key: key-switching key {} words (expected {}), bootstrapping key {} \
                 elements (expected {})",
                key_switching_words.1, key_switching_words.0, bootstrapping_elements.1, bootstrapping_elements.0
            ),
            Self::BadGlweKey => f.write_str("client key's GLWE key is not a binary key of k * N coefficients"),
        }
    }
}

impl std::error::Error for BigKeyError {}

/// Trusted party: a fresh tfhe-rs boolean `ClientKey` and `ServerKey` for `set`, every secret and every
/// mask drawn from a tfhe-rs engine seeded by 16 bytes of `rng` (the OS in production, a fixed seed in
/// tests). A few seconds for the big-key sets.
pub fn generate_keys<R: CryptoRng + ?Sized>(set: BooleanSet, rng: &mut R) -> (ClientKey, ServerKey) {
    let mut engine = BooleanEngine::new_from_seeder(&mut RngSeeder(rng));
    let client_key = engine.create_client_key(set.tfhe_parameters());
    let server_key = engine.create_server_key(&client_key);
    (client_key, server_key)
}

/// Trusted party: the GLWE secret key of `client_key` (`k * N` bytes, 0 or 1), which every device of a
/// fleet-key deployment holds. Checks that the client key has `set`'s tfhe-rs parameters. The client key
/// is cloned (tfhe-rs gives its keys out only by value) and the copies are zeroized.
pub fn glwe_key_from_client_key(set: BooleanSet, client_key: &ClientKey) -> Result<GlweSecretKeyOwned, BigKeyError> {
    let (lwe, glwe, parameters) = client_key.clone().into_raw_parts();
    lwe.into_container().zeroize();
    let mut words = glwe.into_container();
    if parameters != set.tfhe_parameters() {
        words.zeroize();
        return Err(BigKeyError::ClientKeyMismatch);
    }
    if words.len() != set.big_lwe_dimension() {
        words.zeroize();
        return Err(BigKeyError::BadGlweKey);
    }
    // A word above 1 becomes a byte above 1 (or wraps to 0 or 1 only above 255): refuse both.
    let not_binary = words.iter().fold(0u32, |acc, &w| acc | (w & !1));
    let mut bytes: Vec<u8> = words.iter().map(|&w| w as u8).collect();
    words.zeroize();
    if not_binary != 0 {
        bytes.zeroize();
        return Err(BigKeyError::BadGlweKey);
    }
    GlweSecretKey::from_container(bytes, set.glwe_parameters().polynomial_size()).map_err(|_| BigKeyError::BadGlweKey)
}

/// Checks that `server_key` has `set`'s shape: the sizes of its key-switching key (`k*N -> n`, `ks_level`
/// levels) and of its bootstrapping key (`n`, `k`, `N`, `pbs_level`). tfhe-rs exposes a server key's
/// order (`KeyswitchBootstrap` or not) only by consuming it; among tfhe-rs's boolean sets these sizes tell
/// them all apart, a custom set built to share one's sizes with the other order would pass.
pub fn check_server_key(set: BooleanSet, server_key: &ServerKey) -> Result<(), BigKeyError> {
    let key_switching_words = (
        set.key_switching_key_words(),
        server_key.key_switching_key_size_elements(),
    );
    let bootstrapping_elements = (
        set.bootstrapping_key_elements(),
        server_key.bootstrapping_key_size_elements(),
    );
    if key_switching_words.0 == key_switching_words.1 && bootstrapping_elements.0 == bootstrapping_elements.1 {
        Ok(())
    } else {
        Err(BigKeyError::ServerKeyMismatch {
            set,
            key_switching_words,
            bootstrapping_elements,
        })
    }
}

/// Extracted ciphertexts in, `tfhe::boolean` gate inputs out, for a big-key set: sample extraction
/// ([`extract_lwe_sample`], an LWE ciphertext of dimension `k * N` under the big key) wrapped as
/// `Ciphertext::Encrypted`, with no key switch and no added noise.
///
/// It holds only its set (no key): `Copy`, `Send` and `Sync`. It trusts what the
/// [`Intake`](crate::intake::Intake) authenticated and checks every frame's set and shape, so a frame of
/// another set gets an error, never a ciphertext a gate would panic on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BigKeyBridge {
    set: BooleanSet,
}

impl BigKeyBridge {
    /// A bridge for `set`; refuses a small-key set ([`BooleanSet::TfheLib`]).
    pub fn new(set: BooleanSet) -> Result<Self, BigKeyError> {
        if set.is_big_key() {
            Ok(Self { set })
        } else {
            Err(BigKeyError::NotABigKeySet(set))
        }
    }

    /// A bridge for `set` whose outputs `server_key` computes on: [`BigKeyBridge::new`] and
    /// [`check_server_key`].
    pub fn for_server_key(set: BooleanSet, server_key: &ServerKey) -> Result<Self, BigKeyError> {
        let bridge = Self::new(set)?;
        check_server_key(set, server_key)?;
        Ok(bridge)
    }

    /// The bridge's set.
    pub fn set(&self) -> BooleanSet {
        self.set
    }

    fn check_shape<C: AsRef<[u32]>>(&self, glwe: &GlweCiphertext<u32, C>) -> Result<(), BigKeyError> {
        let expected = (self.set.glwe_dimension(), self.set.polynomial_size());
        let found = (glwe.glwe_dimension().0, glwe.polynomial_size().0);
        if expected == found {
            Ok(())
        } else {
            Err(BigKeyError::WrongCiphertextShape { expected, found })
        }
    }

    fn check_frame(&self, frame: &Frame) -> Result<(), BigKeyError> {
        let expected = self.set.glwe_parameters().id();
        let found = frame.parameters.id();
        if expected != found {
            return Err(BigKeyError::WrongParameterSet { expected, found });
        }
        self.check_shape(&frame.ciphertext)
    }

    /// Coefficient `index` of `glwe` as a tfhe-rs LWE ciphertext under the big key (`k * N + 1` words).
    pub fn extract_lwe<C: AsRef<[u32]>>(
        &self,
        glwe: &GlweCiphertext<u32, C>,
        index: usize,
    ) -> Result<LweCiphertextOwned<u32>, BigKeyError> {
        self.check_shape(glwe)?;
        let n = self.set.polynomial_size();
        if index >= n {
            return Err(BigKeyError::IndexOutOfRange {
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
    ) -> Result<Ciphertext, BigKeyError> {
        self.extract_lwe(glwe, index).map(Ciphertext::Encrypted)
    }

    /// The message bits of one authenticated frame (`8 * chunk_message_bytes()`, least-significant bit of
    /// the first byte first) as gate inputs.
    pub fn frame_to_booleans(&self, frame: &Frame) -> Result<Vec<Ciphertext>, BigKeyError> {
        self.check_frame(frame)?;
        let dimension = self.set.big_lwe_dimension();
        Ok((0..8 * frame.chunk_message_bytes())
            .map(|i| Ciphertext::Encrypted(extract_unchecked(&frame.ciphertext, i, dimension)))
            .collect())
    }

    /// Every message bit of an authenticated message, in order, as gate inputs; extracted in parallel with
    /// rayon. All frames are checked before any is extracted.
    pub fn message_to_booleans(&self, message: &Message) -> Result<Vec<Ciphertext>, BigKeyError> {
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
