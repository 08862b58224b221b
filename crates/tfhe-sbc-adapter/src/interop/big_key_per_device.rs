//! Per-device keys on tfhe-rs's 128-bit big-key boolean sets (`DEFAULT_PARAMETERS_KS_PBS`, `k = 3`,
//! `N = 512`; `PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS`, `k = 2`, `N = 1024`), by GLWE key switching:
//! the device holds its own binary GLWE key of the set's shape (`k` polynomials of `N`); the cloud holds a
//! seeded GLWE key-switching key from it to the client key's GLWE key ([`BigKeyDeviceKsk`],
//! `super::glwe_ksk`), base `2^10`, 2 levels, at the set's own GLWE noise. Each frame is switched once (exact
//! NTT products, `super::glwe_ksk_spectra`) and its bits are then extracted as a fleet device's: gate inputs
//! under the big key, no LWE key switch per bit.
//!
//! The switch's noise, summed term by term from the parameters: `2^-15.84` on the torus for both sets, five
//! bits below a gate's own output noise.

use super::boolean_set::{BooleanSet, glwe_key_from_client_key};
use super::device_glwe_key::tfhe_glwe_key;
use super::device_record::{DeviceKeyMaterial, DeviceRecord};
use super::error::InteropError;
use super::glwe_ksk::{GlweKsShape, SeededGlweKsk};
use super::per_device::{DeviceSecrets, credentials_and_record};
use rand_core::CryptoRng;
use tfhe::boolean::client_key::ClientKey;
use tfhe::core_crypto::prelude::{DecompositionBaseLog, DecompositionLevelCount, GlweSize, PolynomialSize};
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned};
use zeroize::Zeroize;

pub use super::glwe_ksk::BigKeyDeviceKsk;

/// The decomposition of the big-key sets' per-device keys: base `2^10`, 2 levels (the top 20 bits of each
/// mask coefficient kept).
pub const BIG_KEY_KS_SHAPE: GlweKsShape = GlweKsShape {
    base_log: DecompositionBaseLog(10),
    levels: DecompositionLevelCount(2),
};

/// Refuses a set whose encryption key is not the big one ([`InteropError::NotABigKeySet`]).
fn check_big_key(set: BooleanSet) -> Result<(), InteropError> {
    if set.is_big_key() {
        Ok(())
    } else {
        Err(InteropError::NotABigKeySet(set))
    }
}

/// The trusted party's key for `device_key` (the set's shape), to `client_key`'s GLWE key, at the set's
/// GLWE noise.
pub fn generate_big_key_device_ksk<R: CryptoRng + ?Sized>(
    set: BooleanSet,
    device_key: &GlweSecretKeyOwned,
    client_key: &ClientKey,
    rng: &mut R,
) -> Result<BigKeyDeviceKsk, InteropError> {
    check_big_key(set)?;
    if (device_key.glwe_dimension().0, device_key.polynomial_size().0) != (set.glwe_dimension(), set.polynomial_size())
    {
        return Err(InteropError::BadDeviceKey);
    }
    let big = glwe_key_from_client_key(set, client_key)?;
    let (device, big) = (tfhe_glwe_key(device_key), tfhe_glwe_key(&big));
    let ksk = SeededGlweKsk::generate_from_keys(
        &device.as_view(),
        &big.as_view(),
        BIG_KEY_KS_SHAPE,
        set.tfhe_parameters().glwe_noise_distribution,
        rng,
    );
    device.into_container().zeroize();
    big.into_container().zeroize();
    ksk
}

/// A big-key set's per-device key read back from storage: its mask seed and its `k * 2 * N` body words.
pub fn big_key_device_ksk_from_parts(
    set: BooleanSet,
    mask_seed: u128,
    bodies: Vec<u32>,
) -> Result<BigKeyDeviceKsk, InteropError> {
    check_big_key(set)?;
    let k = set.glwe_dimension();
    SeededGlweKsk::from_raw_parts(
        BIG_KEY_KS_SHAPE,
        k,
        GlweSize(k + 1),
        PolynomialSize(set.polynomial_size()),
        mask_seed,
        bodies,
    )
}

/// The body words of a big-key set's per-device key: `k * 2 * N`.
pub fn big_key_device_ksk_words(set: BooleanSet) -> usize {
    set.glwe_dimension() * BIG_KEY_KS_SHAPE.levels.0 * set.polynomial_size()
}

/// Trusted party, per-device mode on a big-key set: a fresh binary GLWE key of the set's shape for device
/// `device_id`, a fresh MAC key, and its [`BigKeyDeviceKsk`]. Returns what goes to the device and the record
/// that goes to the cloud's `KeyStore` (the set's id, [`DeviceKeyMaterial::BigKeyPerDevice`]).
///
/// `rng` must be a CSPRNG seeded from real entropy, e.g. `tfhe_sbc_device::csprng::seeding::from_os_entropy()`.
pub fn provision_big_key_per_device<R: CryptoRng + ?Sized>(
    set: BooleanSet,
    client_key: &ClientKey,
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> Result<(DeviceSecrets, DeviceRecord), InteropError> {
    check_big_key(set)?;
    let params = set.glwe_parameters();
    let key = GlweSecretKey::generate_binary(
        vec![0u8; set.glwe_dimension() * set.polynomial_size()],
        params.polynomial_size(),
        rng,
    )
    .map_err(|_| InteropError::BadDeviceKey)?;
    let ksk = generate_big_key_device_ksk(set, &key, client_key, rng)?;
    let material = DeviceKeyMaterial::BigKeyPerDevice(ksk);
    let (credentials, record) = credentials_and_record(device_id, key_id, params.id(), material, rng)?;
    Ok((DeviceSecrets { key, credentials }, record))
}
