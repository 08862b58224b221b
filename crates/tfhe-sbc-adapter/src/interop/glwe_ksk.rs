//! GLWE-to-GLWE key switching for per-device keys: one switch per frame instead of one per value.
//!
//! A device in per-device mode encrypts under its own binary GLWE key `s_d` (`k_d` polynomials of size `N`).
//! The trusted party makes, per device, a **seeded** GLWE key-switching key from `s_d` to the server's big
//! GLWE key `S` (the client key's GLWE key, same `N`): for each polynomial `s_d,i` and each level
//! `j = 1..l`, a GLWE encryption under `S` of `s_d,i * q / B^j` with the set's own GLWE noise. The adapter
//! switches a whole frame at once (tfhe-rs `core_crypto::algorithms::keyswitch_glwe_ciphertext`: `k_d * l`
//! products of a decomposed mask polynomial by a key polynomial list), and then only extracts, as in the
//! fleet mode: the switch costs `k_d * l * (k + 1)` `N`-point products per frame, amortised over its `N`
//! coefficients.
//!
//! The key is tfhe-rs's own layout (`GlweKeyswitchKey`: per input polynomial, `l` ciphertexts from the
//! least significant level `l` to level 1) stored as a tfhe-rs `SeededGlweCiphertextList`: `k_d * l * N`
//! body words and a 128-bit seed from which the masks are regenerated. Its noise term and the failure
//! probability it leaves are recomputed from the parameters by the adapter's GLWE key-switching tests.

use super::error::InteropError;
use super::glwe_ksk_spectra::{GlweKskSpectra, SwitchWord, check_exact_range};
use super::integer::keys::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, glwe_key_from_client_key, tfhe_glwe_key_u64};
use super::rng_seeder::RngSeeder;
use rand_core::CryptoRng;
use tfhe::core_crypto::commons::math::random::{CompressionSeed, DefaultRandomGenerator, Seed};
use tfhe::core_crypto::prelude::{
    CiphertextModulus, Container, ContiguousEntityContainer, DynamicDistribution, GlweCiphertext, GlweCiphertextCount,
    GlweCiphertextList, GlweKeyswitchKey, GlweKeyswitchKeyOwned, GlweSecretKey, GlweSize, PlaintextList,
    PolynomialSize, SeededGlweCiphertextList, SeededGlweCiphertextListOwned, UnsignedTorus,
    decompress_seeded_glwe_ciphertext_list, encrypt_seeded_glwe_ciphertext_list, keyswitch_glwe_ciphertext,
};
use tfhe_sbc_core::entities::GlweSecretKeyOwned;
use zeroize::Zeroize;

pub use super::glwe_ks_shape::GlweKsShape;

/// A seeded GLWE key-switching key from a device's key to the server's big key (public: it encrypts the
/// device key under the big key, which the server does not hold).
#[derive(Clone, PartialEq, Eq)]
pub struct SeededGlweKsk<T: UnsignedTorus> {
    list: SeededGlweCiphertextListOwned<T>,
    shape: GlweKsShape,
    input_dimension: usize,
    mask_seed: u128,
}

impl<T: UnsignedTorus> core::fmt::Debug for SeededGlweKsk<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SeededGlweKsk")
            .field("input_glwe_dimension", &self.input_dimension)
            .field("polynomial_size", &self.list.polynomial_size().0)
            .field("output_glwe_size", &self.list.glwe_size().0)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

impl<T: UnsignedTorus + Sync + Send + Zeroize> SeededGlweKsk<T> {
    /// The key from `device_key` (`k_d` binary polynomials) to `big_key` (same polynomial size), with the
    /// decomposition `shape` and the big key's GLWE `noise`. The mask seed and the noise come from `rng`.
    pub fn generate_from_keys<R: CryptoRng + ?Sized>(
        device_key: &GlweSecretKey<&[T]>,
        big_key: &GlweSecretKey<&[T]>,
        shape: GlweKsShape,
        noise: DynamicDistribution<T>,
        rng: &mut R,
    ) -> Result<Self, InteropError> {
        let n = device_key.polynomial_size();
        if big_key.polynomial_size() != n {
            return Err(InteropError::BadDeviceKey);
        }
        let levels = shape.levels.0;
        let bits = T::BITS;
        // The decomposition keeps `base_log * levels` bits, at most the torus's.
        if shape.base_log.0 == 0 || levels == 0 || shape.base_log.0 * levels > bits {
            return Err(InteropError::ParameterMismatch);
        }
        let input_dimension = device_key.glwe_dimension().0;
        check_exact_range(n.0, input_dimension, shape)?;
        // Per input polynomial, levels l (least significant) down to 1: `s_d,i * 2^(bits - base_log * j)`.
        let mut plaintexts = vec![T::ZERO; input_dimension * levels * n.0];
        for (key_polynomial, block) in device_key
            .as_polynomial_list()
            .iter()
            .zip(plaintexts.chunks_exact_mut(levels * n.0))
        {
            for (position, plaintext) in block.chunks_exact_mut(n.0).enumerate() {
                let level = levels - position;
                let shift = bits - shape.base_log.0 * level;
                for (p, &s) in plaintext.iter_mut().zip(key_polynomial.as_ref()) {
                    *p = s << shift;
                }
            }
        }
        let mut mask_bytes = [0u8; 16];
        rng.fill_bytes(&mut mask_bytes);
        let mask_seed = u128::from_le_bytes(mask_bytes);
        let mut list = SeededGlweCiphertextList::new(
            T::ZERO,
            big_key.glwe_dimension().to_glwe_size(),
            n,
            GlweCiphertextCount(input_dimension * levels),
            CompressionSeed::from(Seed(mask_seed)),
            CiphertextModulus::new_native(),
        );
        let plaintexts = PlaintextList::from_container(plaintexts);
        encrypt_seeded_glwe_ciphertext_list(big_key, &mut list, &plaintexts, noise, &mut RngSeeder(rng));
        // The plaintexts are the device key times public constants: wipe them.
        plaintexts.into_container().zeroize();
        Ok(Self {
            list,
            shape,
            input_dimension,
            mask_seed,
        })
    }

    /// A key read back from storage: its shape, the device key's GLWE dimension, the big key's GLWE size,
    /// the polynomial size, the mask seed and the body words ([`Self::body_words`]). Checks the length.
    pub fn from_raw_parts(
        shape: GlweKsShape,
        input_dimension: usize,
        output_glwe_size: GlweSize,
        polynomial_size: PolynomialSize,
        mask_seed: u128,
        bodies: Vec<T>,
    ) -> Result<Self, InteropError> {
        check_exact_range(polynomial_size.0, input_dimension, shape)?;
        let expected = input_dimension * shape.levels.0 * polynomial_size.0;
        if expected == 0 || output_glwe_size.0 < 2 || bodies.len() != expected {
            return Err(InteropError::BadKeySwitchingKey {
                expected,
                found: bodies.len(),
            });
        }
        let list = SeededGlweCiphertextList::from_container(
            bodies,
            output_glwe_size,
            polynomial_size,
            CompressionSeed::from(Seed(mask_seed)),
            CiphertextModulus::new_native(),
        );
        Ok(Self {
            list,
            shape,
            input_dimension,
            mask_seed,
        })
    }

    /// The body words as stored: `k_d * levels * N`, per input polynomial and level.
    pub fn bodies(&self) -> &[T] {
        self.list.as_ref()
    }

    /// The seed of the masks (public).
    pub fn mask_seed(&self) -> u128 {
        self.mask_seed
    }

    /// The decomposition.
    pub fn shape(&self) -> GlweKsShape {
        self.shape
    }

    /// The polynomial size `N`.
    pub fn polynomial_size(&self) -> usize {
        self.list.polynomial_size().0
    }

    /// The device key's GLWE dimension `k_d`.
    pub fn input_glwe_dimension(&self) -> usize {
        self.input_dimension
    }

    /// The key with its masks regenerated and transformed once: what the adapter switches frames with
    /// ([`GlweKskSpectra::keyswitch`], bit-identical to [`keyswitch_glwe`]).
    pub fn spectra(&self) -> GlweKskSpectra<T>
    where
        T: SwitchWord,
    {
        GlweKskSpectra::new(&self.decompress()).expect("the shape is checked when the seeded key is made or read")
    }

    /// The key with its masks regenerated: what [`keyswitch_glwe`] takes (`k_d * levels * (k + 1) * N` words).
    pub fn decompress(&self) -> GlweKeyswitchKeyOwned<T> {
        let glwe_size = self.list.glwe_size();
        let n = self.list.polynomial_size();
        let mut list = GlweCiphertextList::new(
            T::ZERO,
            glwe_size,
            n,
            GlweCiphertextCount(self.input_dimension * self.shape.levels.0),
            CiphertextModulus::new_native(),
        );
        decompress_seeded_glwe_ciphertext_list::<_, _, _, DefaultRandomGenerator>(&mut list, &self.list);
        GlweKeyswitchKey::from_container(
            list.into_container(),
            self.shape.base_log,
            self.shape.levels,
            glwe_size,
            n,
            CiphertextModulus::new_native(),
        )
    }
}

/// Switches `input` (under the device key) to `output` (under the big key) with a decompressed key. The
/// shapes are checked first: a key for another shape is an error, never a panic.
pub fn keyswitch_glwe<T: UnsignedTorus, C: Container<Element = T>>(
    ksk: &GlweKeyswitchKey<C>,
    input: &GlweCiphertext<&[T]>,
    output: &mut GlweCiphertext<&mut [T]>,
) -> Result<(), InteropError> {
    let n = ksk.polynomial_size().0;
    let input_shape = (input.glwe_size().to_glwe_dimension().0, input.polynomial_size().0);
    if input_shape != (ksk.input_key_glwe_dimension().0, n) {
        return Err(InteropError::WrongGlweShape {
            expected: (ksk.input_key_glwe_dimension().0, n),
            found: input_shape,
        });
    }
    let output_shape = (output.glwe_size().to_glwe_dimension().0, output.polynomial_size().0);
    if output_shape != (ksk.output_key_glwe_dimension().0, n) {
        return Err(InteropError::WrongGlweShape {
            expected: (ksk.output_key_glwe_dimension().0, n),
            found: output_shape,
        });
    }
    keyswitch_glwe_ciphertext(ksk, input, output);
    Ok(())
}

/// A frame's ciphertext (ours, `tfhe_sbc_core`'s) under the device key, switched with a transformed key
/// ([`SeededGlweKsk::spectra`]) to a new ciphertext under the big key, which extraction then reads as a
/// fleet frame's. `u64` for the integer set, `u32` for the big-key boolean sets.
pub fn keyswitch_frame<T: SwitchWord + tfhe_sbc_core::torus::UnsignedTorus, F: AsRef<[T]>>(
    ksk: &GlweKskSpectra<T>,
    frame: &tfhe_sbc_core::entities::GlweCiphertext<T, F>,
) -> Result<tfhe_sbc_core::entities::GlweCiphertextOwned<T>, InteropError> {
    let n = PolynomialSize(frame.polynomial_size().0);
    let native = CiphertextModulus::new_native();
    let input = GlweCiphertext::from_container(frame.as_slice(), n, native);
    let mut output = GlweCiphertext::new(
        <T as tfhe_sbc_core::torus::UnsignedTorus>::ZERO,
        GlweSize(ksk.output_glwe_size()),
        n,
        native,
    );
    ksk.keyswitch(&input, &mut output.as_mut_view())?;
    tfhe_sbc_core::entities::GlweCiphertext::from_container(output.into_container(), frame.polynomial_size())
        .map_err(InteropError::Encoding)
}

/// A per-device key of a big-key boolean set: [`SeededGlweKsk`] on the 32-bit torus, `k * 2 * N` body
/// words (12 KiB at `k = 3`, `N = 512`; 16 KiB at `k = 2`, `N = 1024`) and a 16-byte seed.
pub type BigKeyDeviceKsk = SeededGlweKsk<u32>;

/// A per-device key of the integer set (`PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`): from the device's
/// binary GLWE key (`k = 1`, `N = 2048`) to the client key's GLWE key, [`GlweKsShape::INTEGER`], the set's
/// GLWE noise TUniform(17). Stored as `2 * 2048` body words (32 KiB) and a 16-byte seed; decompressed, 64 KiB.
pub type IntegerDeviceKsk = SeededGlweKsk<u64>;

impl SeededGlweKsk<u64> {
    /// The trusted party's key for `device_key`, to `client_key`'s GLWE key (both checked against the set).
    pub fn generate<R: CryptoRng + ?Sized>(
        device_key: &GlweSecretKeyOwned,
        client_key: &tfhe::ClientKey,
        rng: &mut R,
    ) -> Result<Self, InteropError> {
        let glwe = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
        if device_key.glwe_dimension() != glwe.glwe_dimension()
            || device_key.polynomial_size() != glwe.polynomial_size()
        {
            return Err(InteropError::BadDeviceKey);
        }
        let big = glwe_key_from_client_key(client_key)?;
        let (device, big) = (tfhe_glwe_key_u64(device_key), tfhe_glwe_key_u64(&big));
        let ksk = Self::generate_from_keys(
            &device.as_view(),
            &big.as_view(),
            GlweKsShape::INTEGER,
            DynamicDistribution::new_t_uniform(17),
            rng,
        );
        device.into_container().zeroize();
        big.into_container().zeroize();
        ksk
    }

    /// The body words of an integer set key: `2 * 2048`.
    pub fn body_words() -> usize {
        let glwe = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
        glwe.glwe_dimension().0 * GlweKsShape::INTEGER.levels.0 * glwe.polynomial_size().0
    }

    /// An integer set key read back from storage: its mask seed and its [`Self::body_words`] body words.
    pub fn from_parts(mask_seed: u128, bodies: Vec<u64>) -> Result<Self, InteropError> {
        let glwe = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
        Self::from_raw_parts(
            GlweKsShape::INTEGER,
            glwe.glwe_dimension().0,
            GlweSize(glwe.glwe_dimension().0 + 1),
            PolynomialSize(glwe.polynomial_size().0),
            mask_seed,
            bodies,
        )
    }

    /// Bytes stored: the body words and the 16-byte seed.
    pub fn stored_bytes(&self) -> usize {
        8 * self.list.as_ref().len() + 16
    }
}
