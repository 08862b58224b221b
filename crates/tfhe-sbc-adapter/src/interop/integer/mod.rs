//! tfhe-rs integers: device readings as `tfhe::FheUint8/16/32/64` of the high-level
//! API, with tfhe-rs 1.8.2's default parameters `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`.
//!
//! # The set
//! The device encrypts with the GLWE side of that set ([`MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048`]: `k = 1`,
//! `N = 2048`, `q = 2^64`, TUniform(17)). Its encryption key choice is "big" (`KeyswitchBootstrap` order): a
//! shortint ciphertext is an LWE ciphertext of dimension `k * N = 2048` under the client key's GLWE key read
//! flat, and every operation key-switches it first. A coefficient sample-extracted from a GLWE ciphertext
//! under that key **is** such a ciphertext, with the noise of a fresh tfhe-rs encryption (extraction adds
//! none). So fleet intake ([`IntegerExtractor`]) is extraction and wrapping only, no key switch.
//!
//! # The packing
//! A `b`-bit reading (`b` = 8, 16, 32 or 64) is `b / 2` blocks of 2 message bits, **little-endian** (block 0
//! holds bits 0 and 1), each encoded as shortint encodes a fresh block: `m * 2^59` (message modulus 4, carry
//! modulus 4, one padding bit), carry empty. Reading `r`'s blocks are GLWE coefficients
//! `r * b/2 .. (r + 1) * b/2`, so one `N = 2048` ciphertext carries 512 `u8`, 256 `u16`, 128 `u32` or 64
//! `u64` readings; unused coefficients encode 0. The encoding is
//! [`tfhe_sbc_core::encoding::RadixEncoding`] (no_std, heap-free: the device's as well).
//!
//! # The wrapping
//! Each block becomes `shortint::Ciphertext::new(lwe, Degree::new(3), NoiseLevel::NOMINAL,
//! MessageModulus(4), CarryModulus(4), AtomicPatternKind::Standard(PBSOrder::KeyswitchBootstrap))`: degree 3
//! (a message in `0..4`, carry empty) and nominal noise, which is what a fresh `ClientKey` encryption
//! carries. **Never `NoiseLevel::ZERO`**: tfhe-rs treats a ciphertext of noise level zero whose mask is zero
//! as a trivial one, and the level also enters its noise bookkeeping. The blocks then become an
//! `integer::RadixCiphertext` and a high-level `FheUint` with `from_raw_parts`; the result passes tfhe-rs's
//! `ParameterSetConformant` check for the server key (`tests/integer.rs`).
//!
//! # Key modes
//! * fleet: the device holds the client key's GLWE key ([`glwe_key_from_client_key`]); [`IntegerExtractor`];
//! * per-device: the device holds its own key; the cloud switches each frame once, GLWE to GLWE, into the
//!   client key's GLWE key with a per-device seeded key ([`per_device`], `super::glwe_ksk`), then extracts;
//! * public key: the device holds a seeded RLWE public key under the client key's GLWE key and nothing that
//!   decrypts; the cloud only extracts ([`public_key`]);
//! * compact list: a public-key device sends tfhe-rs's own `CompactCiphertextList` in an authenticated
//!   frame; tfhe-rs reads and expands it with the server key's casting key ([`compact_list`]).
//!
//! The key store records each device's parameter set and mode (`key_set::key_store`), and
//! [`IntegerBridge`] (a [`Converter`](super::Converter), behind `keyed_intake::KeyedIntake`) picks the
//! conversion for the sending device in one call,
//! from an authenticated `IntegerFrame` to `FheUint` values. The trusted party provisions devices with
//! [`per_device::provision_integer_per_device`] / [`per_device::provision_integer_fleet_device`] and writes
//! their credential files with [`DeviceSecrets::credentials_file`](crate::interop::DeviceSecrets::credentials_file).
//!
//! Fleet intake costs about 5 us per `FheUint8` on one thread in batches of 16, frame intake included
//! (the `integer_intake` benchmark): about 3e-5 of tfhe-rs's
//! `CompactCiphertextList::expand` with casting, which key-switches and bootstraps every block. A whole frame
//! materialized at once (512 `FheUint8`, 32 MiB: tfhe-rs holds 4 x 2049 words per `FheUint8`) costs about 45
//! us per value, bound by fresh heap pages; extract in batches ([`IntegerExtractor::extract_readings`] takes a
//! range) to stay in cache.
//!
//! `encrypt_readings_reference` (feature `test-utils`) is a host-side stand-in device for tests: tfhe-rs's
//! `encrypt_glwe_ciphertext` of the same encoding.

mod bridge;
pub mod compact_list;
pub mod per_device;
pub mod public_key;
#[cfg(feature = "test-utils")]
mod reference;

pub use super::fingerprint::integer_server_key_fingerprint;
pub use super::glwe_ksk::IntegerDeviceKsk;
pub use bridge::{DEFAULT_INTEGER_CACHE_CAPACITY, FheUintReadings, IntegerBridge, ReadingBits};
#[cfg(feature = "test-utils")]
pub use reference::encrypt_readings_reference;

use super::InteropError;
use rayon::prelude::*;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, GlweSecretKey as TfheGlweSecretKey, GlweSecretKeyOwned as TfheGlweSecretKeyOwned, LweCiphertext,
    LweCiphertextOwned, PolynomialSize as TfhePolynomialSize,
};
use tfhe::shortint::ciphertext::{Degree, NoiseLevel};
use tfhe::shortint::client_key::atomic_pattern::{AtomicPatternClientKey, StandardAtomicPatternClientKey};
use tfhe::shortint::{
    AtomicPatternKind, AtomicPatternParameters, CarryModulus, ClassicPBSParameters, EncryptionKeyChoice,
    MessageModulus, PBSOrder, PBSParameters,
};
use tfhe::{FheUint, FheUintId, ReRandomizationMetadata, Tag};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
pub use tfhe_sbc_core::parameters::{
    IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128, MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048,
};

/// Checks that tfhe-rs parameters have the shape of our set: standard atomic pattern with classic PBS,
/// `k = 1`, `N = 2048`, message and carry moduli as ours, big encryption key (`KeyswitchBootstrap`), native
/// modulus; returns them. The noise figures are checked against tfhe-rs's constants in `tests/integer.rs`.
pub fn check_parameters(
    parameters: &AtomicPatternParameters,
    set: &IntegerParameters,
) -> Result<ClassicPBSParameters, InteropError> {
    let AtomicPatternParameters::Standard(PBSParameters::PBS(pbs)) = *parameters else {
        return Err(InteropError::UnsupportedAtomicPattern);
    };
    let glwe = set.glwe();
    let ok = pbs.glwe_dimension.0 == glwe.glwe_dimension().0
        && pbs.polynomial_size.0 == glwe.polynomial_size().0
        && pbs.message_modulus.0 == set.message_modulus()
        && pbs.carry_modulus.0 == set.carry_modulus()
        && pbs.encryption_key_choice == EncryptionKeyChoice::Big
        && pbs.ciphertext_modulus.is_native_modulus();
    if ok {
        Ok(pbs)
    } else {
        Err(InteropError::ParameterMismatch)
    }
}

/// The shortint client key inside a high-level client key, checked against `set`.
pub(crate) fn standard_client_key<'a>(
    client_key: &'a tfhe::ClientKey,
    set: &IntegerParameters,
) -> Result<(&'a StandardAtomicPatternClientKey, ClassicPBSParameters), InteropError> {
    let parameters = check_parameters(&client_key.computation_parameters(), set)?;
    let integer: &tfhe::integer::ClientKey = client_key.as_ref();
    let shortint: &tfhe::shortint::ClientKey = integer.as_ref();
    match &shortint.atomic_pattern {
        AtomicPatternClientKey::Standard(ap) => Ok((ap, parameters)),
        _ => Err(InteropError::UnsupportedAtomicPattern),
    }
}

/// Trusted party, fleet mode: the device key, i.e. the high-level client key's GLWE key (2048 bytes, 0 or
/// 1), for [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`]. The key is read through a view, without a copy of the
/// client key; the one `u64` copy made here is zeroized.
pub fn glwe_key_from_client_key(client_key: &tfhe::ClientKey) -> Result<GlweSecretKeyOwned, InteropError> {
    let set = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let (ap, _) = standard_client_key(client_key, &set)?;
    let flat = ap.large_lwe_secret_key();
    let bytes: Vec<u8> = flat.as_ref().iter().map(|&w| w as u8).collect();
    GlweSecretKey::from_container(bytes, set.glwe().polynomial_size()).map_err(|_| InteropError::BadDeviceKey)
}

/// A device key as a tfhe-rs `GlweSecretKey<Vec<u64>>` (for tfhe-rs's encryption and key generation).
pub fn tfhe_glwe_key_u64(device_key: &GlweSecretKeyOwned) -> TfheGlweSecretKeyOwned<u64> {
    let words: Vec<u64> = device_key.as_bytes().iter().map(|&b| u64::from(b)).collect();
    TfheGlweSecretKey::from_container(words, TfhePolynomialSize(device_key.polynomial_size().0))
}

/// Fleet-mode integer intake: GLWE ciphertexts of [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`] (under the client key's
/// GLWE key) to shortint blocks, radix ciphertexts and high-level `FheUint`s, by sample extraction and
/// wrapping, with no key switch and no bootstrap. Stateless apart from the set; cheap to build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntegerExtractor {
    set: IntegerParameters,
}

impl Default for IntegerExtractor {
    fn default() -> Self {
        Self {
            set: MESSAGE_2_CARRY_2_TUNIFORM_2M128,
        }
    }
}

impl IntegerExtractor {
    /// The extractor for [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`], the only integer set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The set.
    pub fn parameters(&self) -> IntegerParameters {
        self.set
    }

    /// The LWE size of a block: `k * N + 1` (2049).
    pub fn lwe_size(&self) -> usize {
        let glwe = self.set.glwe();
        glwe.glwe_dimension().0 * glwe.polynomial_size().0 + 1
    }

    /// Checks a ciphertext's shape against the set.
    pub fn check_glwe<C: AsRef<[u64]>>(&self, glwe: &GlweCiphertext<u64, C>) -> Result<(), InteropError> {
        let set = self.set.glwe();
        let expected = (set.glwe_dimension().0, set.polynomial_size().0);
        let found = (glwe.glwe_dimension().0, glwe.polynomial_size().0);
        if expected == found {
            Ok(())
        } else {
            Err(InteropError::WrongGlweShape { expected, found })
        }
    }

    /// Readings of `value_bits` bits one ciphertext holds (`N / (value_bits / 2)`).
    pub fn capacity(&self, value_bits: u32) -> Result<usize, InteropError> {
        Ok(self.set.glwe().polynomial_size().0 / self.set.encoding().blocks_per_value(value_bits)?)
    }

    /// Wraps an LWE ciphertext under the big key (dimension `k * N`) as a fresh shortint block: degree 3,
    /// [`NoiseLevel::NOMINAL`], the set's moduli, `KeyswitchBootstrap` order. Errors if it has another size.
    pub fn wrap_block(&self, lwe: LweCiphertextOwned<u64>) -> Result<tfhe::shortint::Ciphertext, InteropError> {
        if lwe.lwe_size().0 != self.lwe_size() || !lwe.ciphertext_modulus().is_native_modulus() {
            return Err(InteropError::WrongLweSize {
                expected: self.lwe_size(),
                found: lwe.lwe_size().0,
            });
        }
        Ok(self.wrap_unchecked(lwe))
    }

    fn wrap_unchecked(&self, lwe: LweCiphertextOwned<u64>) -> tfhe::shortint::Ciphertext {
        tfhe::shortint::Ciphertext::new(
            lwe,
            Degree::new(self.set.message_modulus() - 1),
            NoiseLevel::NOMINAL,
            MessageModulus(self.set.message_modulus()),
            CarryModulus(self.set.carry_modulus()),
            AtomicPatternKind::Standard(PBSOrder::KeyswitchBootstrap),
        )
    }

    /// Coefficient `index`, extracted into a fresh LWE ciphertext of `k * N + 1` words (one pass, no
    /// zero-fill first).
    fn extract(&self, glwe: &GlweCiphertext<u64, impl AsRef<[u64]>>, index: usize) -> LweCiphertextOwned<u64> {
        let n = glwe.polynomial_size().0;
        let mut words = Vec::with_capacity(self.lwe_size());
        for a in glwe.mask().chunks_exact(n) {
            words.extend(a[..=index].iter().rev());
            words.extend(a[index + 1..].iter().rev().map(|x| x.wrapping_neg()));
        }
        words.push(glwe.body()[index]);
        LweCiphertext::from_container(words, CiphertextModulus::new_native())
    }

    /// The shortint block of coefficient `index`.
    pub fn extract_block<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        index: usize,
    ) -> Result<tfhe::shortint::Ciphertext, InteropError> {
        self.check_glwe(glwe)?;
        let n = glwe.polynomial_size().0;
        if index >= n {
            return Err(InteropError::ReadingsOutOfRange {
                first: index,
                count: 1,
                capacity: n,
            });
        }
        Ok(self.wrap_unchecked(self.extract(glwe, index)))
    }

    /// Checks `first..first + count` readings of `value_bits` bits against the ciphertext and returns the
    /// blocks per reading.
    fn reading_range<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        value_bits: u32,
        first: usize,
        count: usize,
    ) -> Result<usize, InteropError> {
        self.check_glwe(glwe)?;
        let blocks = self.set.encoding().blocks_per_value(value_bits)?;
        let capacity = glwe.polynomial_size().0 / blocks;
        if first.checked_add(count).is_none_or(|end| end > capacity) {
            return Err(InteropError::ReadingsOutOfRange { first, count, capacity });
        }
        Ok(blocks)
    }

    /// Reading `index` of `value_bits` bits as a radix ciphertext (its blocks little-endian).
    pub fn extract_radix<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        value_bits: u32,
        index: usize,
    ) -> Result<tfhe::integer::RadixCiphertext, InteropError> {
        let blocks = self.reading_range(glwe, value_bits, index, 1)?;
        Ok(self.radix_unchecked(glwe, blocks, index))
    }

    fn radix_unchecked<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        blocks: usize,
        index: usize,
    ) -> tfhe::integer::RadixCiphertext {
        let start = index * blocks;
        let blocks: Vec<_> = (start..start + blocks)
            .map(|i| self.wrap_unchecked(self.extract(glwe, i)))
            .collect();
        tfhe::integer::RadixCiphertext::from(blocks)
    }

    /// Readings `first..first + count` as high-level `FheUint<Id>` (`FheUint8`: 4 blocks each, and so on),
    /// on the calling thread.
    pub fn extract_readings<Id: FheUintId, C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, InteropError> {
        let reading = self.reading_fn::<Id, C>(glwe, first, count)?;
        Ok((first..first + count).map(reading).collect())
    }

    /// [`IntegerExtractor::extract_readings`] on rayon's pool, one task per reading.
    pub fn extract_readings_par<Id: FheUintId + Send, C: AsRef<[u64]> + Sync>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, InteropError> {
        let reading = self.reading_fn(glwe, first, count)?;
        Ok((first..first + count).into_par_iter().map(reading).collect())
    }

    /// Reading `r` of `glwe` as an `FheUint<Id>`, once readings `first..first + count` are checked to be in
    /// range ([`IntegerExtractor::reading_range`]).
    fn reading_fn<'a, Id: FheUintId, C: AsRef<[u64]>>(
        &'a self,
        glwe: &'a GlweCiphertext<u64, C>,
        first: usize,
        count: usize,
    ) -> Result<impl Fn(usize) -> FheUint<Id> + 'a, InteropError> {
        let blocks = self.reading_range(glwe, FheUint::<Id>::num_bits() as u32, first, count)?;
        Ok(move |r| fhe_uint(self.radix_unchecked(glwe, blocks, r)))
    }
}

/// A radix ciphertext as a high-level `FheUint<Id>` (default tag, no re-randomization metadata).
fn fhe_uint<Id: FheUintId>(radix: tfhe::integer::RadixCiphertext) -> FheUint<Id> {
    FheUint::from_raw_parts(radix, Id::default(), Tag::default(), ReRandomizationMetadata::default())
}
