//! The integer public-key mode: the device holds a seeded RLWE public key `(a, b = a * S + e)` under the
//! client key's GLWE key `S` (`k = 1`, `N = 2048`) and nothing that decrypts; its frames (kind 2, the mask in
//! full) are under `S` already, so the cloud only extracts their blocks, as for a fleet device.
//!
//! The key's noise `e` is the set's GLWE noise, TUniform(17); a frame's phase error is then
//! `e * u + e2 - e1 * S`, of variance `(N/2 + 1 + N/2) V = 2049 V` (std `2^21.71` on the `2^64` torus,
//! against `2^16.21` for a fresh secret-key encryption): p-fail per PBS stays tfhe-rs's
//! (the public-key encryption's noise, summed term by term). The key is an RLWE sample under `S` with TUniform(17)
//! noise, like every fresh ciphertext the server already holds, so it reveals nothing the set's security
//! estimate does not cover.

use super::keys::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, glwe_key_from_client_key};
use crate::interop::device_record::{DeviceKeyMaterial, DeviceRecord};
use crate::interop::error::InteropError;
use crate::interop::per_device::{PublicKeyDevice, credentials_and_record, seeded_public_key_file};
use negacyclic_ntt::NttPlan64;
use rand_core::CryptoRng;
use tfhe_sbc_device::noise::DeviceNoise;

/// Trusted party: a seeded public key under `client_key`'s GLWE key, as an integer-set public-key file
/// (`tfhe_sbc_device::files::public_key`, `u64` body words: 16,443 bytes) for key id `key_id`. The seed
/// and the noise come from `rng`; the copies of the key and its spectrum are wiped before returning. One
/// public key can serve any number of devices.
pub fn integer_public_key_from_client_key<R: CryptoRng + ?Sized>(
    client_key: &tfhe::ClientKey,
    key_id: u32,
    rng: &mut R,
) -> Result<Vec<u8>, InteropError> {
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
    let key = glwe_key_from_client_key(client_key)?;
    let noise = DeviceNoise::for_tuniform_parameters(&params).map_err(|_| InteropError::ParameterMismatch)?;
    seeded_public_key_file(&NttPlan64::new::<2048>(), &params, key, &noise, key_id, rng)
}

/// Trusted party, integer public-key mode: a fresh seeded public key ([`integer_public_key_from_client_key`])
/// and a fresh MAC key for device `device_id`. Returns what goes to the device (its credential file:
/// [`PublicKeyDevice::credentials_file`]) and the record that goes to the cloud's `KeyStore`: parameter set
/// 4, [`DeviceKeyMaterial::PublicKey`] (nothing of its own; public-key frames only).
pub fn provision_integer_public_key_device<R: CryptoRng + ?Sized>(
    client_key: &tfhe::ClientKey,
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> Result<(PublicKeyDevice, DeviceRecord), InteropError> {
    let public_key = integer_public_key_from_client_key(client_key, key_id, rng)?;
    let set = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().id();
    let (credentials, record) = credentials_and_record(device_id, key_id, set, DeviceKeyMaterial::PublicKey, rng)?;
    Ok((
        PublicKeyDevice {
            public_key,
            credentials,
        },
        record,
    ))
}
