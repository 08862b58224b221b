//! The integer set's keys on tfhe-rs's side: the check that tfhe-rs parameters are ours
//! ([`check_parameters`]), the client key's GLWE key for fleet devices ([`glwe_key_from_client_key`]) and a
//! device key as a tfhe-rs key ([`tfhe_glwe_key_u64`]).

use crate::interop::error::InteropError;
use tfhe::core_crypto::prelude::{
    GlweSecretKey as TfheGlweSecretKey, GlweSecretKeyOwned as TfheGlweSecretKeyOwned,
    PolynomialSize as TfhePolynomialSize,
};
use tfhe::shortint::client_key::atomic_pattern::{AtomicPatternClientKey, StandardAtomicPatternClientKey};
use tfhe::shortint::{AtomicPatternParameters, ClassicPBSParameters, EncryptionKeyChoice, PBSParameters};
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned};
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
        AtomicPatternClientKey::KeySwitch32(_) => Err(InteropError::UnsupportedAtomicPattern),
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
