//! Seeded per-device key-switching keys: one type, [`SeededKsk`], for every set with per-device keys, the
//! set named by a [`KeySwitchSet`] (its torus, its key switch's shape, where the small key comes from).
//!
//! A device in per-device mode holds its own binary GLWE key; the cloud holds a **seeded** LWE key-switching
//! key from that key (read flat, dimension `k * N`) to the tfhe-rs small LWE key, with the set's own
//! decomposition and LWE noise (tfhe-rs's `generate_seeded_lwe_keyswitch_key`). It stores one body word per
//! (key bit, level) and a 16-byte seed from which the masks are regenerated:
//!
//! | set | alias | torus | `k * N -> n` | base log, levels | stored | decompressed |
//! |---|---|---|---|---|---|---|
//! | `TFHE_LIB_PARAMETERS` | [`DeviceKsk`] | `u32` | 1024 -> 630 | 2, 8 | 32 KiB + 16 | 19.7 MiB |
//!
//! The integer set needs no LWE key switch per block: its per-device key switches a whole frame, GLWE to
//! GLWE, into the client key's GLWE key (`super::glwe_ksk`, `IntegerDeviceKsk`).
//!
//! The key is not secret in the sense of the MAC key: it encrypts the device key under the small key,
//! which the cloud does not have (the per-device key mode's premise).

use super::device_glwe_key::tfhe_glwe_key;
use super::error::InteropError;
use super::rng_seeder::RngSeeder;
use rand_core::CryptoRng;
use tfhe::boolean::parameters::TFHE_LIB_PARAMETERS;
use tfhe::core_crypto::commons::math::random::{CompressionSeed, DefaultRandomGenerator, Seed};
use tfhe::core_crypto::prelude::{
    CiphertextModulus, DecompositionBaseLog, DecompositionLevelCount, DynamicDistribution, LweDimension,
    LweKeyswitchKey, LweKeyswitchKeyOwned, LweSecretKey, LweSecretKeyOwned, LweSize, Numeric, SeededLweKeyswitchKey,
    SeededLweKeyswitchKeyOwned, UnsignedTorus, generate_seeded_lwe_keyswitch_key,
    par_decompress_seeded_lwe_keyswitch_key,
};
use tfhe_sbc_core::entities::GlweSecretKeyOwned;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use zeroize::Zeroize;

/// A client key's small LWE key and the set's LWE noise distribution.
pub type SmallKey<T> = (LweSecretKeyOwned<T>, DynamicDistribution<T>);

/// A parameter set with per-device key-switching keys: its torus, the shape of its key switch, and how the
/// trusted party reads the small LWE key (and the LWE noise) out of the set's tfhe-rs client key.
pub trait KeySwitchSet: Send + Sync + 'static {
    /// The torus (`u32` or `u64`).
    type Scalar: UnsignedTorus + Send + Sync + Zeroize;
    /// The set's tfhe-rs client key.
    type ClientKey;
    /// The tfhe-rs name of the set, for `Debug`.
    const NAME: &'static str;
    /// The input dimension: the device's GLWE key read flat (`k * N`).
    fn input_dimension() -> LweDimension;
    /// The small key's dimension.
    fn output_dimension() -> LweDimension;
    /// The decomposition's base log.
    fn base_log() -> DecompositionBaseLog;
    /// The decomposition's level count.
    fn levels() -> DecompositionLevelCount;
    /// A copy of `client_key`'s small LWE key (the caller wipes it) and the set's LWE noise, after checking
    /// the client key's parameters against the set.
    fn small_key(client_key: &Self::ClientKey) -> Result<SmallKey<Self::Scalar>, InteropError>;
    /// `device_key` as an LWE key of the torus (the caller wipes it), after checking its shape.
    fn device_lwe_key(device_key: &GlweSecretKeyOwned) -> Result<LweSecretKeyOwned<Self::Scalar>, InteropError>;
}

/// `TFHE_LIB_PARAMETERS` (`u32`, 1024 -> 630, base log 2, 8 levels, Gaussian noise of std `2^-15`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfheLibKeySwitch;

impl KeySwitchSet for TfheLibKeySwitch {
    type Scalar = u32;
    type ClientKey = tfhe::boolean::client_key::ClientKey;
    const NAME: &'static str = "TFHE_LIB_PARAMETERS";

    fn input_dimension() -> LweDimension {
        LweDimension(TFHE_LIB_GLWE_1024.glwe_dimension().0 * TFHE_LIB_GLWE_1024.polynomial_size().0)
    }

    fn output_dimension() -> LweDimension {
        TFHE_LIB_PARAMETERS.lwe_dimension
    }

    fn base_log() -> DecompositionBaseLog {
        TFHE_LIB_PARAMETERS.ks_base_log
    }

    fn levels() -> DecompositionLevelCount {
        TFHE_LIB_PARAMETERS.ks_level
    }

    fn small_key(
        client_key: &Self::ClientKey,
    ) -> Result<(LweSecretKeyOwned<u32>, DynamicDistribution<u32>), InteropError> {
        let (small_key, glwe, parameters) = client_key.clone().into_raw_parts();
        glwe.into_container().zeroize();
        if parameters.lwe_dimension != Self::output_dimension()
            || parameters.ks_base_log != Self::base_log()
            || parameters.ks_level != Self::levels()
        {
            small_key.into_container().zeroize();
            return Err(InteropError::ParameterMismatch);
        }
        Ok((small_key, parameters.lwe_noise_distribution))
    }

    fn device_lwe_key(device_key: &GlweSecretKeyOwned) -> Result<LweSecretKeyOwned<u32>, InteropError> {
        if device_key.glwe_dimension().0 * device_key.polynomial_size().0 != Self::input_dimension().0 {
            return Err(InteropError::BadDeviceKey);
        }
        Ok(LweSecretKey::from_container(tfhe_glwe_key(device_key).into_container()))
    }
}

/// A device's seeded LWE key-switching key of set `S` (device key, `k * N` -> the set's small key), with the
/// set's decomposition. Its shape is checked on construction, so decompressing and key switching with it
/// cannot panic. Stored as its mask seed and its body words ([`SeededKsk::from_parts`] reads them back).
#[derive(Clone)]
pub struct SeededKsk<S: KeySwitchSet> {
    mask_seed: u128,
    key: SeededLweKeyswitchKeyOwned<S::Scalar>,
}

/// The per-device key of `TFHE_LIB_PARAMETERS` (`u32`, 32 KiB stored).
pub type DeviceKsk = SeededKsk<TfheLibKeySwitch>;

impl<S: KeySwitchSet> core::fmt::Debug for SeededKsk<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SeededKsk")
            .field("set", &S::NAME)
            .field("mask_seed", &format_args!("{:#034x}", self.mask_seed))
            .field("input_dimension", &self.key.input_key_lwe_dimension().0)
            .field("output_dimension", &self.key.output_key_lwe_dimension().0)
            .field("body_words", &self.key.as_ref().len())
            .finish()
    }
}

impl<S: KeySwitchSet> SeededKsk<S> {
    /// The number of body words of a seeded key: one per (input key bit, level).
    pub fn body_words() -> usize {
        S::input_dimension().0 * S::levels().0
    }

    /// Trusted party: the seeded key-switching key from `device_key` to `client_key`'s small LWE key. The
    /// 16-byte mask seed and the 16-byte noise seed come from `rng`. Every copy of a secret key made here is
    /// wiped.
    pub fn generate<R: CryptoRng + ?Sized>(
        device_key: &GlweSecretKeyOwned,
        client_key: &S::ClientKey,
        rng: &mut R,
    ) -> Result<Self, InteropError> {
        let device_lwe_key = S::device_lwe_key(device_key)?;
        let (small_key, noise) = match S::small_key(client_key) {
            Ok(small) => small,
            Err(e) => {
                device_lwe_key.into_container().zeroize();
                return Err(e);
            }
        };
        let mut seed_bytes = [0u8; 16];
        rng.fill_bytes(&mut seed_bytes);
        let mask_seed = u128::from_le_bytes(seed_bytes);
        let mut key = SeededLweKeyswitchKeyOwned::new(
            S::Scalar::ZERO,
            S::base_log(),
            S::levels(),
            device_lwe_key.lwe_dimension(),
            small_key.lwe_dimension(),
            CompressionSeed::from(Seed(mask_seed)),
            CiphertextModulus::new_native(),
        );
        generate_seeded_lwe_keyswitch_key(&device_lwe_key, &small_key, &mut key, noise, &mut RngSeeder(rng));
        device_lwe_key.into_container().zeroize();
        small_key.into_container().zeroize();
        Ok(Self { mask_seed, key })
    }

    /// A key read back from storage: its mask seed and its [`SeededKsk::body_words`] body words. Checks the
    /// length.
    pub fn from_parts(mask_seed: u128, bodies: Vec<S::Scalar>) -> Result<Self, InteropError> {
        if bodies.len() != Self::body_words() {
            return Err(InteropError::BadKeySwitchingKey {
                expected: Self::body_words(),
                found: bodies.len(),
            });
        }
        let key = SeededLweKeyswitchKey::from_container(
            bodies,
            S::base_log(),
            S::levels(),
            S::output_dimension().to_lwe_size(),
            CompressionSeed::from(Seed(mask_seed)),
            CiphertextModulus::new_native(),
        );
        Ok(Self { mask_seed, key })
    }

    /// The seed of the masks (public).
    pub fn mask_seed(&self) -> u128 {
        self.mask_seed
    }

    /// The body words: input bit major, then level as tfhe-rs lays them out.
    pub fn bodies(&self) -> &[S::Scalar] {
        self.key.as_ref()
    }

    /// The tfhe-rs seeded key.
    pub fn as_seeded(&self) -> &SeededLweKeyswitchKeyOwned<S::Scalar> {
        &self.key
    }

    /// Bytes of key material stored per device: the body words and the 16-byte mask seed.
    pub fn stored_bytes(&self) -> usize {
        size_of_val(self.key.as_ref()) + 16
    }

    /// Bytes of the decompressed key: `k*N * levels * (n + 1)` words.
    pub fn decompressed_bytes() -> usize {
        size_of::<S::Scalar>() * Self::body_words() * S::output_dimension().to_lwe_size().0
    }

    /// The output LWE size (`n + 1`).
    pub fn output_lwe_size(&self) -> LweSize {
        self.key.output_lwe_size()
    }

    /// Regenerates the masks with rayon (`par_decompress_seeded_lwe_keyswitch_key`): the key tfhe-rs's
    /// `keyswitch_lwe_ciphertext` takes.
    pub fn decompress(&self) -> LweKeyswitchKeyOwned<S::Scalar> {
        let mut out = LweKeyswitchKey::new(
            S::Scalar::ZERO,
            S::base_log(),
            S::levels(),
            S::input_dimension(),
            S::output_dimension(),
            CiphertextModulus::new_native(),
        );
        par_decompress_seeded_lwe_keyswitch_key::<_, _, _, DefaultRandomGenerator>(&mut out, &self.key);
        out
    }
}

/// The number of body words of a seeded `TFHE_LIB_PARAMETERS` per-device key (`1024 * 8`).
pub fn device_ksk_words() -> usize {
    DeviceKsk::body_words()
}
