//! tfhe-rs integers (issue \[G\] section 3): device readings as `tfhe::FheUint8/16/32/64` of the high-level
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
//! * per-device: the device holds its own key; the cloud key-switches each block into the server's small key
//!   with a per-device seeded key-switching key and bootstraps it back to a nominal big-key ciphertext
//!   ([`per_device`]), the work tfhe-rs's own `CompactCiphertextList::expand` does per block of a packed
//!   list.
//!
//! The key store records each device's parameter set and mode (`crate::key_store`), and [`IntegerBridge`]
//! (behind `crate::key_store::IntegerKeyedIntake`) picks the conversion for the sending device in one call,
//! from an authenticated `IntegerFrame` to `FheUint` values. The trusted party provisions devices with
//! [`per_device::provision_integer_per_device`] / [`per_device::provision_integer_fleet_device`] and writes
//! their credential files with [`per_device::integer_credentials_file`].
//!
//! Fleet intake costs about 5 us per `FheUint8` on one thread in batches of 16, frame intake included
//! (`benches/integer_intake.rs`, `docs/benchmarks-integer.md`): about 3e-5 of tfhe-rs's
//! `CompactCiphertextList::expand` with casting, which key-switches and bootstraps every block. A whole frame
//! materialized at once (512 `FheUint8`, 32 MiB: tfhe-rs holds 4 x 2049 words per `FheUint8`) costs about 45
//! us per value, bound by fresh heap pages; extract in batches ([`IntegerExtractor::extract_readings`] takes a
//! range) to stay in cache.
//!
//! [`encrypt_readings_reference`] is a host-side stand-in device (tests): tfhe-rs's
//! `encrypt_glwe_ciphertext` of the same encoding.

mod bridge;
pub mod per_device;

pub use bridge::{DEFAULT_INTEGER_CACHE_CAPACITY, IntegerBridge, integer_server_key_fingerprint};

use super::RngSeeder;
use rand_core::CryptoRng;
use rayon::prelude::*;
use tfhe::core_crypto::commons::math::random::{DefaultRandomGenerator, Seed};
use tfhe::core_crypto::prelude::{
    CiphertextModulus, DynamicDistribution, EncryptionRandomGenerator, GlweCiphertext as TfheGlweCiphertext,
    GlweSecretKey as TfheGlweSecretKey, GlweSecretKeyOwned as TfheGlweSecretKeyOwned, LweCiphertext,
    LweCiphertextOwned, PlaintextList, PolynomialSize as TfhePolynomialSize, encrypt_glwe_ciphertext,
};
use tfhe::shortint::ciphertext::{Degree, NoiseLevel};
use tfhe::shortint::client_key::atomic_pattern::{AtomicPatternClientKey, StandardAtomicPatternClientKey};
use tfhe::shortint::{
    AtomicPatternKind, AtomicPatternParameters, CarryModulus, ClassicPBSParameters, EncryptionKeyChoice,
    MessageModulus, PBSOrder, PBSParameters,
};
use tfhe::{FheUint, FheUintId, ReRandomizationMetadata, Tag};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweCiphertextOwned, GlweSecretKey, GlweSecretKeyOwned};
pub use tfhe_sbc_core::parameters::{
    IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128, MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048,
};
use zeroize::Zeroize;

/// Why integer intake, key export or a per-device key failed. Every check of untrusted input ends here,
/// never in a panic.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum IntegerError {
    /// A GLWE ciphertext does not have the set's shape.
    WrongGlweShape {
        /// `(k, N)` of the set.
        expected: (usize, usize),
        /// `(k, N)` of the ciphertext.
        found: (usize, usize),
    },
    /// An LWE ciphertext does not have the set's size (`k * N + 1` words).
    WrongLweSize {
        /// The size the set requires.
        expected: usize,
        /// The size given.
        found: usize,
    },
    /// The readings asked for run past the ciphertext's coefficients.
    ReadingsOutOfRange {
        /// The first reading asked for.
        first: usize,
        /// The number of readings asked for.
        count: usize,
        /// The readings one ciphertext holds at this width.
        capacity: usize,
    },
    /// A reading width or value that the radix encoding refuses.
    Encoding(tfhe_sbc_core::Error),
    /// The tfhe-rs key's parameters are not the set's (`PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`'s
    /// shape: k = 1, N = 2048, moduli 4 and 4, big encryption key, native modulus).
    ParameterMismatch,
    /// The tfhe-rs key uses another atomic pattern than the standard classic-PBS one (`KeySwitch32`, a
    /// multi-bit bootstrapping key, or a dynamic pattern).
    UnsupportedAtomicPattern,
    /// A device key that is not a binary `k = 1`, `N = 2048` key.
    BadDeviceKey,
    /// A per-device key-switching key whose body count does not match the set's key switch.
    BadKeySwitchingKey {
        /// The body words the set requires.
        expected: usize,
        /// The body words given.
        found: usize,
    },
    /// The device is not registered with the [`IntegerBridge`].
    UnknownDevice(u64),
    /// The device is registered with the [`IntegerBridge`] already.
    DuplicateDevice(u64),
    /// The frame names another key id than the device's.
    WrongKeyId {
        /// The device.
        device_id: u64,
        /// Its registered key id.
        expected: u32,
        /// The key id the frame names.
        found: u32,
    },
    /// The device is registered for another parameter set (a boolean one): it has no integer key, so its
    /// frames cannot become `FheUint`s.
    NotAnIntegerDevice {
        /// The device.
        device_id: u64,
        /// The parameter set it is registered for.
        parameter_set: u16,
    },
    /// The frame is of another integer set than the bridge's.
    WrongParameterSet {
        /// The device.
        device_id: u64,
        /// The bridge's set.
        expected: u16,
        /// The frame's set.
        found: u16,
    },
    /// Key material that the integer set does not take (a boolean per-device key-switching key, or the
    /// public-key mode, which the integer set does not have).
    KeyMaterialMismatch {
        /// The device.
        device_id: u64,
    },
    /// The key store was made for another integer server key (its fingerprint differs).
    ServerKeyMismatch,
}

impl core::fmt::Display for IntegerError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::WrongGlweShape { expected, found } => write!(
                f,
                "GLWE ciphertext has (k, N) = {found:?}, the integer set needs {expected:?}"
            ),
            Self::WrongLweSize { expected, found } => {
                write!(f, "LWE ciphertext has {found} words, the integer set needs {expected}")
            }
            Self::ReadingsOutOfRange { first, count, capacity } => write!(
                f,
                "readings {first}..{first}+{count} run past the {capacity} readings a ciphertext holds"
            ),
            Self::Encoding(e) => write!(f, "radix encoding: {e}"),
            Self::ParameterMismatch => f.write_str(
                "tfhe-rs key parameters are not PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128's shape \
                 (k = 1, N = 2048, moduli 4/4, big key, native modulus)",
            ),
            Self::UnsupportedAtomicPattern => {
                f.write_str("tfhe-rs key uses another atomic pattern than the standard classic PBS")
            }
            Self::BadDeviceKey => f.write_str("device key is not a binary k = 1, N = 2048 key"),
            Self::BadKeySwitchingKey { expected, found } => write!(
                f,
                "per-device key-switching key has {found} body words, the set's key switch needs {expected}"
            ),
            Self::UnknownDevice(id) => write!(f, "device {id} is not registered for integers"),
            Self::DuplicateDevice(id) => write!(f, "device {id} is already registered for integers"),
            Self::WrongKeyId {
                device_id,
                expected,
                found,
            } => write!(f, "device {device_id} has key id {expected}, its frame names {found}"),
            Self::NotAnIntegerDevice {
                device_id,
                parameter_set,
            } => write!(
                f,
                "device {device_id} is registered for parameter set {parameter_set}, not an integer set: it has no \
                 integer key"
            ),
            Self::WrongParameterSet {
                device_id,
                expected,
                found,
            } => write!(
                f,
                "device {device_id}'s frame is of parameter set {found}, the integer bridge takes set {expected}"
            ),
            Self::KeyMaterialMismatch { device_id } => write!(
                f,
                "device {device_id}: the integer set takes a fleet key or a per-device integer key-switching key, \
                 not this key material"
            ),
            Self::ServerKeyMismatch => f.write_str(
                "the key store was made for another integer server key (fingerprints differ): its per-device keys \
                 would switch into a small key this server key cannot bootstrap",
            ),
        }
    }
}

impl std::error::Error for IntegerError {}

impl From<tfhe_sbc_core::Error> for IntegerError {
    fn from(e: tfhe_sbc_core::Error) -> Self {
        Self::Encoding(e)
    }
}

/// Checks that tfhe-rs parameters have the shape of our set: standard atomic pattern with classic PBS,
/// `k = 1`, `N = 2048`, message and carry moduli as ours, big encryption key (`KeyswitchBootstrap`), native
/// modulus; returns them. The noise figures are checked against tfhe-rs's constants in `tests/integer.rs`.
pub fn check_parameters(
    parameters: &AtomicPatternParameters,
    set: &IntegerParameters,
) -> Result<ClassicPBSParameters, IntegerError> {
    let AtomicPatternParameters::Standard(PBSParameters::PBS(pbs)) = *parameters else {
        return Err(IntegerError::UnsupportedAtomicPattern);
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
        Err(IntegerError::ParameterMismatch)
    }
}

/// The shortint client key inside a high-level client key, checked against `set`.
fn standard_client_key<'a>(
    client_key: &'a tfhe::ClientKey,
    set: &IntegerParameters,
) -> Result<(&'a StandardAtomicPatternClientKey, ClassicPBSParameters), IntegerError> {
    let parameters = check_parameters(&client_key.computation_parameters(), set)?;
    let integer: &tfhe::integer::ClientKey = client_key.as_ref();
    let shortint: &tfhe::shortint::ClientKey = integer.as_ref();
    match &shortint.atomic_pattern {
        AtomicPatternClientKey::Standard(ap) => Ok((ap, parameters)),
        _ => Err(IntegerError::UnsupportedAtomicPattern),
    }
}

/// Trusted party, fleet mode: the device key, i.e. the high-level client key's GLWE key (2048 bytes, 0 or
/// 1), for [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`]. The key is read through a view, without a copy of the
/// client key; the one `u64` copy made here is zeroized.
pub fn glwe_key_from_client_key(client_key: &tfhe::ClientKey) -> Result<GlweSecretKeyOwned, IntegerError> {
    let set = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let (ap, _) = standard_client_key(client_key, &set)?;
    let flat = ap.large_lwe_secret_key();
    let bytes: Vec<u8> = flat.as_ref().iter().map(|&w| w as u8).collect();
    GlweSecretKey::from_container(bytes, set.glwe().polynomial_size()).map_err(|_| IntegerError::BadDeviceKey)
}

/// A device key as a tfhe-rs `GlweSecretKey<Vec<u64>>` (for tfhe-rs's encryption and key generation).
pub fn tfhe_glwe_key_u64(device_key: &GlweSecretKeyOwned) -> TfheGlweSecretKeyOwned<u64> {
    let words: Vec<u64> = device_key.as_bytes().iter().map(|&b| u64::from(b)).collect();
    TfheGlweSecretKey::from_container(words, TfhePolynomialSize(device_key.polynomial_size().0))
}

/// Checks that a device key is a binary key of the set's shape.
fn check_device_key(device_key: &GlweSecretKeyOwned, set: &IntegerParameters) -> Result<(), IntegerError> {
    let glwe = set.glwe();
    if device_key.glwe_dimension() != glwe.glwe_dimension() || device_key.polynomial_size() != glwe.polynomial_size() {
        return Err(IntegerError::BadDeviceKey);
    }
    Ok(())
}

/// The stand-in device until the device encrypts on a 64-bit torus: encodes `values` (each `value_bits`
/// bits) with the set's radix encoding, packed as the module docs say, and encrypts them with tfhe-rs's
/// `encrypt_glwe_ciphertext` under `device_key` with the set's noise, TUniform(17). The mask seed and the
/// noise seed come from `rng`. Errors on a width or a value the encoding refuses, too many values, or a
/// key of another shape.
pub fn encrypt_readings_reference<R: CryptoRng + ?Sized>(
    device_key: &GlweSecretKeyOwned,
    values: &[u64],
    value_bits: u32,
    rng: &mut R,
) -> Result<GlweCiphertextOwned<u64>, IntegerError> {
    let set = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    check_device_key(device_key, &set)?;
    let glwe = set.glwe();
    let n = glwe.polynomial_size().0;
    let mut plain = vec![0u64; n];
    set.encoding().encode_values(values, value_bits, &mut plain)?;
    let key = tfhe_glwe_key_u64(device_key);
    let mut ct = TfheGlweCiphertext::new(
        0u64,
        tfhe::core_crypto::prelude::GlweSize(glwe.glwe_dimension().0 + 1),
        TfhePolynomialSize(n),
        CiphertextModulus::new_native(),
    );
    let mut seed = [0u8; 16];
    rng.fill_bytes(&mut seed);
    let mut generator =
        EncryptionRandomGenerator::<DefaultRandomGenerator>::new(Seed(u128::from_le_bytes(seed)), &mut RngSeeder(rng));
    let noise: DynamicDistribution<u64> = DynamicDistribution::new_t_uniform(17);
    encrypt_glwe_ciphertext(
        &key,
        &mut ct,
        &PlaintextList::from_container(plain.as_slice()),
        noise,
        &mut generator,
    );
    key.into_container().zeroize();
    plain.zeroize();
    GlweCiphertext::from_container(ct.into_container(), PolynomialSize(n)).map_err(IntegerError::Encoding)
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
    pub fn check_glwe<C: AsRef<[u64]>>(&self, glwe: &GlweCiphertext<u64, C>) -> Result<(), IntegerError> {
        let set = self.set.glwe();
        let expected = (set.glwe_dimension().0, set.polynomial_size().0);
        let found = (glwe.glwe_dimension().0, glwe.polynomial_size().0);
        if expected == found {
            Ok(())
        } else {
            Err(IntegerError::WrongGlweShape { expected, found })
        }
    }

    /// Readings of `value_bits` bits one ciphertext holds (`N / (value_bits / 2)`).
    pub fn capacity(&self, value_bits: u32) -> Result<usize, IntegerError> {
        Ok(self.set.glwe().polynomial_size().0 / self.set.encoding().blocks_per_value(value_bits)?)
    }

    /// Wraps an LWE ciphertext under the big key (dimension `k * N`) as a fresh shortint block: degree 3,
    /// [`NoiseLevel::NOMINAL`], the set's moduli, `KeyswitchBootstrap` order. Errors if it has another size.
    pub fn wrap_block(&self, lwe: LweCiphertextOwned<u64>) -> Result<tfhe::shortint::Ciphertext, IntegerError> {
        if lwe.lwe_size().0 != self.lwe_size() || !lwe.ciphertext_modulus().is_native_modulus() {
            return Err(IntegerError::WrongLweSize {
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
    ) -> Result<tfhe::shortint::Ciphertext, IntegerError> {
        self.check_glwe(glwe)?;
        let n = glwe.polynomial_size().0;
        if index >= n {
            return Err(IntegerError::ReadingsOutOfRange {
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
    ) -> Result<usize, IntegerError> {
        self.check_glwe(glwe)?;
        let blocks = self.set.encoding().blocks_per_value(value_bits)?;
        let capacity = glwe.polynomial_size().0 / blocks;
        if first.checked_add(count).is_none_or(|end| end > capacity) {
            return Err(IntegerError::ReadingsOutOfRange { first, count, capacity });
        }
        Ok(blocks)
    }

    /// Reading `index` of `value_bits` bits as a radix ciphertext (its blocks little-endian).
    pub fn extract_radix<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        value_bits: u32,
        index: usize,
    ) -> Result<tfhe::integer::RadixCiphertext, IntegerError> {
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
    ) -> Result<Vec<FheUint<Id>>, IntegerError> {
        let blocks = self.reading_range(glwe, FheUint::<Id>::num_bits() as u32, first, count)?;
        Ok((first..first + count)
            .map(|r| fhe_uint(self.radix_unchecked(glwe, blocks, r)))
            .collect())
    }

    /// [`IntegerExtractor::extract_readings`] on rayon's pool, one task per reading.
    pub fn extract_readings_par<Id: FheUintId + Send, C: AsRef<[u64]> + Sync>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, IntegerError> {
        let blocks = self.reading_range(glwe, FheUint::<Id>::num_bits() as u32, first, count)?;
        Ok((first..first + count)
            .into_par_iter()
            .map(|r| fhe_uint(self.radix_unchecked(glwe, blocks, r)))
            .collect())
    }
}

/// A radix ciphertext as a high-level `FheUint<Id>` (default tag, no re-randomization metadata).
fn fhe_uint<Id: FheUintId>(radix: tfhe::integer::RadixCiphertext) -> FheUint<Id> {
    FheUint::from_raw_parts(radix, Id::default(), Tag::default(), ReRandomizationMetadata::default())
}
