//! Per-device keys for integers (the key itself is [`IntegerDeviceKsk`], a
//! [`SeededKsk`](crate::interop::SeededKsk)): every device holds its own binary GLWE key (`k = 1`, `N = 2048`), and the
//! cloud holds, per device, a **seeded** key-switching key from that key (read flat, dimension 2048) to the
//! server key's small LWE key (918), made with the set's own key-switching decomposition (base log 4,
//! 4 levels) and LWE noise (TUniform(45)).
//!
//! A block from such a device is key-switched into the small key, then bootstrapped once with an identity
//! lookup table (`x mod 4`) by the server key's bootstrapping key, with the set's modulus switch: the output
//! is an LWE ciphertext under the client key's big key with the noise of a PBS output, which is what
//! tfhe-rs calls [`NoiseLevel::NOMINAL`](tfhe::shortint::ciphertext::NoiseLevel::NOMINAL) (measured: the
//! same error standard deviation as tfhe-rs's own PBS outputs, `tests/integer.rs`). That is one key switch
//! and one PBS per block, the price tfhe-rs's own `CompactCiphertextList::expand` pays per output block to
//! unpack a packed list (one lookup table per block). `benches/integer_intake.rs` times both in paired
//! rounds: 0.99x to 1.03x tfhe-rs's expand with casting per `FheUint8` (`docs/benchmarks-integer.md`).
//!
//! Sizes: the seeded key is `2048 * 4` body words (64 KiB) and a 16-byte seed; decompressed it is
//! `2048 * 4 * 919` words (57.4 MiB).

pub use super::IntegerDeviceKsk;
use super::{
    IntegerExtractor, IntegerParameters, InteropError, MESSAGE_2_CARRY_2_TUNIFORM_2M128, check_parameters, fhe_uint,
};
use crate::interop::DeviceSecrets;
use crate::interop::device_record::{DeviceKeyMaterial, DeviceRecord};
use crate::interop::per_device::credential_pair;
use rand_core::CryptoRng;
use rayon::prelude::*;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, ComputationBuffers, DecompositionBaseLog, DecompositionLevelCount, Fft,
    FourierLweBootstrapKeyOwned, GlweCiphertextOwned, LweCiphertext, LweCiphertextOwned, LweDimension,
    LweKeyswitchKeyOwned, MonomialDegree, blind_rotate_assign_mem_optimized,
    blind_rotate_assign_mem_optimized_requirement, extract_lwe_sample_from_glwe_ciphertext, keyswitch_lwe_ciphertext,
};
use tfhe::shortint::atomic_pattern::AtomicPatternServerKey;
use tfhe::shortint::server_key::{ModulusSwitchConfiguration, ShortintBootstrappingKey};
use tfhe::shortint::{ClassicPBSParameters, PBSOrder};
use tfhe::{FheUint, FheUintId};
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey};
use tfhe_sbc_device::files::credentials::KeyMode;
use tfhe_sbc_device::files::credentials::{credentials_file_bytes, encode_credentials, key_material_bytes};
use zeroize::Zeroizing;

/// The set's key-switching shape, from tfhe-rs's constant (checked against it in `tests/integer.rs`).
fn ks_shape() -> (DecompositionBaseLog, DecompositionLevelCount, LweDimension) {
    let p = tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
    (p.ks_base_log, p.ks_level, p.lwe_dimension)
}

/// The input dimension of a per-device integer key-switching key: the device key read flat (`k * N`).
fn input_dimension(set: &IntegerParameters) -> usize {
    set.glwe().glwe_dimension().0 * set.glwe().polynomial_size().0
}

/// Per-device integer intake: extraction, then per block a key switch with the device's key into the
/// server's small key and one PBS (identity lookup table) back to a nominal big-key shortint block. Borrows
/// the server key's bootstrapping key; `Sync`, so one refresher serves rayon's pool.
pub struct IntegerRefresher<'a> {
    bsk: &'a FourierLweBootstrapKeyOwned,
    modulus_switch: &'a ModulusSwitchConfiguration<u64>,
    /// The identity (`x mod message_modulus`) lookup table, as the server key builds it.
    lut: GlweCiphertextOwned<u64>,
    extractor: IntegerExtractor,
    small_dimension: LweDimension,
}

impl core::fmt::Debug for IntegerRefresher<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("IntegerRefresher")
            .field("small_dimension", &self.small_dimension.0)
            .field("polynomial_size", &self.bsk.polynomial_size().0)
            .finish_non_exhaustive()
    }
}

impl<'a> IntegerRefresher<'a> {
    /// The refresher for `server_key`, which must be a standard classic-PBS key of the set in
    /// `KeyswitchBootstrap` order.
    pub fn new(server_key: &'a tfhe::ServerKey) -> Result<Self, InteropError> {
        let set = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
        let integer: &tfhe::integer::ServerKey = server_key.as_ref();
        let shortint: &tfhe::shortint::ServerKey = integer.as_ref();
        if shortint.message_modulus.0 != set.message_modulus() || shortint.carry_modulus.0 != set.carry_modulus() {
            return Err(InteropError::ParameterMismatch);
        }
        let AtomicPatternServerKey::Standard(ap) = &shortint.atomic_pattern else {
            return Err(InteropError::UnsupportedAtomicPattern);
        };
        if ap.pbs_order != PBSOrder::KeyswitchBootstrap {
            return Err(InteropError::ParameterMismatch);
        }
        let ShortintBootstrappingKey::Classic {
            bsk,
            modulus_switch_noise_reduction_key,
        } = &ap.bootstrapping_key
        else {
            return Err(InteropError::UnsupportedAtomicPattern);
        };
        let glwe = set.glwe();
        if bsk.polynomial_size().0 != glwe.polynomial_size().0
            || bsk.glwe_size().0 != glwe.glwe_dimension().0 + 1
            || bsk.output_lwe_dimension().0 != input_dimension(&set)
            || bsk.input_lwe_dimension() != ks_shape().2
        {
            return Err(InteropError::ParameterMismatch);
        }
        let modulus = set.message_modulus();
        let lut = shortint.generate_lookup_table(|x| x % modulus).acc;
        Ok(Self {
            bsk,
            modulus_switch: modulus_switch_noise_reduction_key,
            lut,
            extractor: IntegerExtractor::new(),
            small_dimension: bsk.input_lwe_dimension(),
        })
    }

    /// Checks a decompressed per-device key against the server key's shape.
    fn check_ksk(&self, ksk: &LweKeyswitchKeyOwned<u64>) -> Result<(), InteropError> {
        let (base_log, levels, _) = ks_shape();
        let expected = IntegerDeviceKsk::body_words();
        if ksk.input_key_lwe_dimension().0 != input_dimension(&self.extractor.parameters())
            || ksk.output_key_lwe_dimension() != self.small_dimension
            || ksk.decomposition_base_log() != base_log
            || ksk.decomposition_level_count() != levels
            || !ksk.ciphertext_modulus().is_native_modulus()
        {
            return Err(InteropError::BadKeySwitchingKey {
                expected,
                found: ksk.input_key_lwe_dimension().0 * ksk.decomposition_level_count().0,
            });
        }
        Ok(())
    }

    /// One block: `big` (under the device key, `k * N + 1` words) key-switched with `ksk`, bootstrapped
    /// with the identity table, and wrapped as a nominal shortint block under the client key's big key.
    pub fn refresh_block(
        &self,
        ksk: &LweKeyswitchKeyOwned<u64>,
        big: LweCiphertextOwned<u64>,
    ) -> Result<tfhe::shortint::Ciphertext, InteropError> {
        self.check_ksk(ksk)?;
        if big.lwe_size().0 != self.extractor.lwe_size() || !big.ciphertext_modulus().is_native_modulus() {
            return Err(InteropError::WrongLweSize {
                expected: self.extractor.lwe_size(),
                found: big.lwe_size().0,
            });
        }
        let mut buffers = ComputationBuffers::new();
        Ok(self.refresh_unchecked(ksk, big, &mut buffers))
    }

    /// Key switch, modulus switch (the set's), blind rotation of the identity table, extraction of
    /// coefficient 0 into `big`'s buffer: what tfhe-rs's `apply_lookup_table` does in `KeyswitchBootstrap`
    /// order.
    fn refresh_unchecked(
        &self,
        ksk: &LweKeyswitchKeyOwned<u64>,
        mut big: LweCiphertextOwned<u64>,
        buffers: &mut ComputationBuffers,
    ) -> tfhe::shortint::Ciphertext {
        let mut small = LweCiphertext::new(
            0u64,
            self.small_dimension.to_lwe_size(),
            CiphertextModulus::new_native(),
        );
        keyswitch_lwe_ciphertext(ksk, &big, &mut small);
        let mut acc = self.lut.clone();
        let log_modulus = acc.polynomial_size().to_blind_rotation_input_modulus_log();
        let switched = self
            .modulus_switch
            .lwe_ciphertext_modulus_switch::<usize, _>(&small, log_modulus);
        let fft = Fft::new(self.bsk.polynomial_size());
        let fft = fft.as_view();
        buffers.resize(
            blind_rotate_assign_mem_optimized_requirement::<u64>(self.bsk.glwe_size(), self.bsk.polynomial_size(), fft)
                .unaligned_bytes_required(),
        );
        blind_rotate_assign_mem_optimized(&switched, &mut acc, self.bsk, fft, buffers.stack());
        extract_lwe_sample_from_glwe_ciphertext(&acc, &mut big, MonomialDegree(0));
        self.extractor.wrap_unchecked(big)
    }

    /// Readings `first..first + count` of a per-device ciphertext as `FheUint<Id>`, one task per block on
    /// rayon's pool. `ksk` is the sending device's decompressed key ([`IntegerDeviceKsk::decompress`]).
    pub fn extract_readings_par<Id: FheUintId + Send, C: AsRef<[u64]> + Sync>(
        &self,
        ksk: &LweKeyswitchKeyOwned<u64>,
        glwe: &GlweCiphertext<u64, C>,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, InteropError> {
        self.check_ksk(ksk)?;
        let blocks = self
            .extractor
            .reading_range(glwe, FheUint::<Id>::num_bits() as u32, first, count)?;
        let refreshed: Vec<tfhe::shortint::Ciphertext> = (first * blocks..(first + count) * blocks)
            .into_par_iter()
            .map_init(ComputationBuffers::new, |buffers, i| {
                self.refresh_unchecked(ksk, self.extractor.extract(glwe, i), buffers)
            })
            .collect();
        let mut refreshed = refreshed.into_iter();
        Ok((0..count)
            .map(|_| {
                fhe_uint(tfhe::integer::RadixCiphertext::from(
                    refreshed.by_ref().take(blocks).collect::<Vec<_>>(),
                ))
            })
            .collect())
    }
}

/// The classic-PBS parameters of a high-level client key, checked against the set (for tests and tools).
pub fn client_key_parameters(client_key: &tfhe::ClientKey) -> Result<ClassicPBSParameters, InteropError> {
    check_parameters(&client_key.computation_parameters(), &MESSAGE_2_CARRY_2_TUNIFORM_2M128)
}

/// Trusted party, integer per-device mode: a fresh binary GLWE key (`k = 1`, `N = 2048`) for device
/// `device_id`, a fresh MAC key, and the seeded [`IntegerDeviceKsk`] from the device key to `client_key`'s
/// small key. Returns what goes to the device (its key and credentials;
/// [`integer_credentials_file`] writes them as its credential file) and the record that goes to the cloud's
/// `KeyStore`: parameter set 4, [`DeviceKeyMaterial::IntegerPerDevice`].
///
/// `rng` must be a CSPRNG seeded from real entropy, e.g. `tfhe_sbc_device::csprng::seeding::from_os_entropy()`.
pub fn provision_integer_per_device<R: CryptoRng + ?Sized>(
    client_key: &tfhe::ClientKey,
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> Result<(DeviceSecrets, DeviceRecord), InteropError> {
    let set = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let glwe = set.glwe();
    let key = GlweSecretKey::generate_binary(
        vec![0u8; glwe.glwe_dimension().0 * glwe.polynomial_size().0],
        glwe.polynomial_size(),
        rng,
    )
    .map_err(|_| InteropError::BadDeviceKey)?;
    let ksk = IntegerDeviceKsk::generate(&key, client_key, rng)?;
    let (credentials, record_credentials) = credential_pair(device_id, key_id, rng);
    let record =
        DeviceRecord::with_parameter_set(record_credentials, glwe.id(), DeviceKeyMaterial::IntegerPerDevice(ksk))
            .map_err(|_| InteropError::KeyMaterialMismatch { device_id })?;
    Ok((DeviceSecrets { key, credentials }, record))
}

/// Trusted party, integer fleet mode: the device gets the client key's GLWE key
/// ([`glwe_key_from_client_key`](super::glwe_key_from_client_key)) and a fresh MAC key; the cloud extracts
/// its blocks with no key switch. One stolen device then exposes every fleet device (`docs/security.md`).
pub fn provision_integer_fleet_device<R: CryptoRng + ?Sized>(
    client_key: &tfhe::ClientKey,
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> Result<(DeviceSecrets, DeviceRecord), InteropError> {
    let key = super::glwe_key_from_client_key(client_key)?;
    let (credentials, record_credentials) = credential_pair(device_id, key_id, rng);
    let record = DeviceRecord::with_parameter_set(
        record_credentials,
        MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().id(),
        DeviceKeyMaterial::Fleet,
    )
    .map_err(|_| InteropError::KeyMaterialMismatch { device_id })?;
    Ok((DeviceSecrets { key, credentials }, record))
}

/// An integer device's credential file (`tfhe_sbc_device::files::credentials`, version 1, parameter set 4):
/// the header, its MAC key, its key packed eight bits to a byte (256 bytes) and the check; 324 bytes. `mode`
/// is [`KeyMode::FleetSecretKey`] or [`KeyMode::PerDeviceSecretKey`]. It holds the key, so it is wiped on
/// drop. The device reads it with `decode_credentials` and hands the packed key to
/// `IntegerEncryptor::set_packed_key`.
pub fn integer_credentials_file(
    mode: KeyMode,
    secrets: &DeviceSecrets,
) -> Result<Zeroizing<Vec<u8>>, tfhe_sbc_device::Error> {
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
    if mode == KeyMode::PublicKey {
        return Err(tfhe_sbc_device::Error::BadKeyFile);
    }
    let mut packed = Zeroizing::new(vec![0u8; key_material_bytes(mode, &params)]);
    pack_secret_key(secrets.key.as_bytes(), &mut packed)?;
    let mut out = Zeroizing::new(vec![0u8; credentials_file_bytes(mode, &params)]);
    let len = encode_credentials(mode, &params, &secrets.credentials, &packed, &mut out)?;
    out.truncate(len);
    Ok(out)
}
