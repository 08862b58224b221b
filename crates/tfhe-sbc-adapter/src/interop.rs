//! tfhe-rs interop (feature `tfhe`, tfhe 1.8.x boolean API): keys for the trusted party, and the
//! conversion of extracted TLWE ciphertexts into `tfhe::boolean` ciphertexts.
//!
//! The device's parameter set [`TFHE_LIB_GLWE_1024`] is the GLWE side of tfhe-rs's stock
//! `TFHE_LIB_PARAMETERS` (k = 1, N = 1024, GLWE noise 2^-25), used as it is. Its encryption-key choice is
//! "small" (`BootstrapKeyswitch` order): gates expect ciphertexts under the 630-dimensional LWE key. An
//! extracted ciphertext is under the 1024-dimensional "big" key (the GLWE key read flat), so each one goes
//! through the server key's key-switching key first. That costs about 1 ms per bit, so
//! [`BooleanBridge::key_switch`] is a separate, visible step.

use crate::extraction::extract_lwe_sample;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::parameters::TFHE_LIB_PARAMETERS;
use tfhe::boolean::server_key::ServerKey;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, GlweSecretKey as TfheGlweSecretKey, GlweSecretKeyOwned as TfheGlweSecretKeyOwned, LweCiphertext,
    LweCiphertextOwned, LweKeyswitchKeyOwned, PBSOrder, PolynomialSize as TfhePolynomialSize, keyswitch_lwe_ciphertext,
};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use zeroize::Zeroize;

/// Why a key or a ciphertext could not be converted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InteropError {
    /// The tfhe-rs parameters are not `TFHE_LIB_PARAMETERS`' shape (k = 1, N = 1024).
    ParameterMismatch,
    /// The server key does not key-switch before bootstrapping (its order is not `BootstrapKeyswitch`).
    UnexpectedPbsOrder,
    /// The device key is not a k = 1, N = 1024 binary key.
    BadDeviceKey,
}

impl core::fmt::Display for InteropError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::ParameterMismatch => f.write_str("tfhe-rs parameters do not match the device parameter set"),
            Self::UnexpectedPbsOrder => f.write_str("server key does not use the BootstrapKeyswitch order"),
            Self::BadDeviceKey => f.write_str("device key is not a k = 1, N = 1024 binary key"),
        }
    }
}

impl std::error::Error for InteropError {}

/// Trusted party: a fresh tfhe-rs boolean `ClientKey` and `ServerKey` with the stock `TFHE_LIB_PARAMETERS`.
/// Generating the server key takes seconds.
pub fn generate_boolean_keys() -> (ClientKey, ServerKey) {
    let client_key = ClientKey::new(&TFHE_LIB_PARAMETERS);
    let server_key = ServerKey::new(&client_key);
    (client_key, server_key)
}

/// Trusted party: the device key, i.e. the client key's GLWE secret key (cloned: `into_raw_parts`
/// consumes the key). Intermediate copies are zeroized.
pub fn device_key_from_client_key(client_key: &ClientKey) -> Result<GlweSecretKeyOwned, InteropError> {
    let (lwe, glwe, parameters) = client_key.clone().into_raw_parts();
    lwe.into_container().zeroize();
    if parameters.glwe_dimension.0 != 1 || parameters.polynomial_size.0 != TFHE_LIB_GLWE_1024.polynomial_size().0 {
        return Err(InteropError::ParameterMismatch);
    }
    let mut words = glwe.into_container();
    let bytes: Vec<u8> = words.iter().map(|&w| w as u8).collect();
    words.zeroize();
    GlweSecretKey::from_container(bytes, PolynomialSize(parameters.polynomial_size.0))
        .map_err(|_| InteropError::BadDeviceKey)
}

/// The reverse: a tfhe-rs client key whose GLWE key is `device_key` (its LWE key is freshly generated), so
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

/// Converts extracted TLWE ciphertexts into tfhe-rs boolean ciphertexts with the server key's key switch.
pub struct BooleanBridge {
    key_switching_key: LweKeyswitchKeyOwned<u32>,
}

impl BooleanBridge {
    /// Keeps a copy of `server_key`'s key-switching key (big key 1024 -> small key 630).
    pub fn new(server_key: &ServerKey) -> Result<Self, InteropError> {
        let (_bootstrapping_key, key_switching_key, order) = server_key.clone().into_raw_parts();
        if order != PBSOrder::BootstrapKeyswitch {
            return Err(InteropError::UnexpectedPbsOrder);
        }
        if key_switching_key.input_key_lwe_dimension().0 != TFHE_LIB_GLWE_1024.polynomial_size().0 {
            return Err(InteropError::ParameterMismatch);
        }
        Ok(Self { key_switching_key })
    }

    /// Coefficient `index` of `glwe` as a tfhe-rs `LweCiphertext` under the big (1024) key: sample
    /// extraction only, no noise added.
    pub fn extract<C: AsRef<[u32]>>(glwe: &GlweCiphertext<u32, C>, index: usize) -> LweCiphertextOwned<u32> {
        let n = glwe.polynomial_size().0;
        let mut words = vec![0u32; n + 1];
        extract_lwe_sample(glwe, index, &mut words);
        LweCiphertext::from_container(words, CiphertextModulus::new_native())
    }

    /// Key-switches a big-key ciphertext to the small key: a `tfhe::boolean` ciphertext the `ServerKey`'s
    /// gates accept. About 1 ms.
    pub fn key_switch(&self, big: &LweCiphertextOwned<u32>) -> Ciphertext {
        let mut small = LweCiphertext::new(
            0u32,
            self.key_switching_key.output_lwe_size(),
            CiphertextModulus::new_native(),
        );
        keyswitch_lwe_ciphertext(&self.key_switching_key, big, &mut small);
        Ciphertext::Encrypted(small)
    }

    /// Extraction then key switch, for one coefficient.
    pub fn to_boolean<C: AsRef<[u32]>>(&self, glwe: &GlweCiphertext<u32, C>, index: usize) -> Ciphertext {
        self.key_switch(&Self::extract(glwe, index))
    }
}
