//! A device's GLWE key on tfhe-rs's side: as a tfhe-rs `GlweSecretKey` ([`tfhe_glwe_key`]) and inside a
//! tfhe-rs boolean client key built around it ([`client_key_from_device_key`]), for a device provisioned
//! before its deployment.

use crate::interop::error::InteropError;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::parameters::TFHE_LIB_PARAMETERS;
use tfhe::core_crypto::prelude::{
    GlweSecretKey as TfheGlweSecretKey, GlweSecretKeyOwned as TfheGlweSecretKeyOwned,
    PolynomialSize as TfhePolynomialSize,
};
use tfhe_sbc_core::entities::GlweSecretKeyOwned;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use zeroize::Zeroize;

/// Trusted party: a tfhe-rs client key whose GLWE key is `device_key` (its LWE key is freshly generated), so
/// that a device provisioned first can join a tfhe-rs deployment. The server key must then be generated
/// from the returned client key.
pub fn client_key_from_device_key(device_key: &GlweSecretKeyOwned) -> Result<ClientKey, InteropError> {
    if device_key.glwe_dimension().0 != 1 || device_key.polynomial_size() != TFHE_LIB_GLWE_1024.polynomial_size() {
        return Err(InteropError::BadDeviceKey);
    }
    let (lwe, fresh_glwe, parameters) = ClientKey::new(&TFHE_LIB_PARAMETERS).into_raw_parts();
    fresh_glwe.into_container().zeroize();
    let glwe = tfhe_glwe_key(device_key);
    Ok(ClientKey::new_from_raw_parts(lwe, glwe, parameters))
}

/// The device key as a tfhe-rs `GlweSecretKey<Vec<u32>>`.
pub fn tfhe_glwe_key(device_key: &GlweSecretKeyOwned) -> TfheGlweSecretKeyOwned<u32> {
    let words: Vec<u32> = device_key.as_bytes().iter().map(|&b| u32::from(b)).collect();
    TfheGlweSecretKey::from_container(words, TfhePolynomialSize(device_key.polynomial_size().0))
}
