//! A host-side stand-in for an integer device (feature `test-utils`, for tests and benches): tfhe-rs's
//! `encrypt_glwe_ciphertext` of the set's radix encoding, packed as [`super`] says.

use super::keys::{IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128, tfhe_glwe_key_u64};
use crate::interop::error::InteropError;
use crate::interop::rng_seeder::RngSeeder;
use rand_core::CryptoRng;
use tfhe::core_crypto::commons::math::random::{DefaultRandomGenerator, Seed};
use tfhe::core_crypto::prelude::{
    CiphertextModulus, DynamicDistribution, EncryptionRandomGenerator, GlweCiphertext as TfheGlweCiphertext,
    PlaintextList, PolynomialSize as TfhePolynomialSize, encrypt_glwe_ciphertext,
};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweCiphertextOwned, GlweSecretKeyOwned};
use zeroize::Zeroize;

/// Checks that a device key is a binary key of the set's shape.
fn check_device_key(device_key: &GlweSecretKeyOwned, set: &IntegerParameters) -> Result<(), InteropError> {
    let glwe = set.glwe();
    if device_key.glwe_dimension() != glwe.glwe_dimension() || device_key.polynomial_size() != glwe.polynomial_size() {
        return Err(InteropError::BadDeviceKey);
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
) -> Result<GlweCiphertextOwned<u64>, InteropError> {
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
    GlweCiphertext::from_container(ct.into_container(), PolynomialSize(n)).map_err(InteropError::Encoding)
}
