//! Per-device keys for integers: every device holds its own binary GLWE key (`k = 1`, `N = 2048`), and the
//! cloud holds, per device, a **seeded GLWE** key-switching key ([`IntegerDeviceKsk`], `super::super::glwe_ksk`)
//! from that key to the client key's GLWE key, base `2^12`, 2 levels, the set's GLWE noise TUniform(17).
//!
//! A frame from such a device is switched once, as a whole GLWE ciphertext, and its blocks are then extracted
//! as a fleet device's: no key switch or PBS per block. The switch adds noise of std `2^43.2` on the `2^64`
//! torus, 0.0005% of what the set budgets before a PBS; p-fail stays tfhe-rs's 2^-129.58
//! (`tests/glwe_keyswitch.rs` checks the switched noise against this model).
//!
//! Sizes: the seeded key is `2 * 2048` body words (32 KiB) and a 16-byte seed; decompressed it is
//! `2 * 2 * 2048` words (64 KiB).

use super::keys::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, check_parameters, glwe_key_from_client_key};
use crate::interop::device_record::{DeviceKeyMaterial, DeviceRecord};
use crate::interop::error::InteropError;
pub use crate::interop::glwe_ksk::IntegerDeviceKsk;
use crate::interop::per_device::DeviceSecrets;
use crate::interop::per_device::credentials_and_record;
use rand_core::CryptoRng;
use tfhe::shortint::atomic_pattern::AtomicPatternServerKey;
use tfhe::shortint::server_key::ShortintBootstrappingKey;
use tfhe::shortint::{ClassicPBSParameters, PBSOrder};
use tfhe_sbc_core::entities::GlweSecretKey;

/// Checks that `server_key` is a standard classic-PBS key of the set in `KeyswitchBootstrap` order whose
/// bootstrapping key outputs under a GLWE key of the set's shape: the key extracted blocks are computed on.
pub fn check_server_key(server_key: &tfhe::ServerKey) -> Result<(), InteropError> {
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
    let ShortintBootstrappingKey::Classic { bsk, .. } = &ap.bootstrapping_key else {
        return Err(InteropError::UnsupportedAtomicPattern);
    };
    let glwe = set.glwe();
    if bsk.polynomial_size().0 != glwe.polynomial_size().0
        || bsk.glwe_size().0 != glwe.glwe_dimension().0 + 1
        || bsk.output_lwe_dimension().0 != glwe.glwe_dimension().0 * glwe.polynomial_size().0
    {
        return Err(InteropError::ParameterMismatch);
    }
    Ok(())
}

/// The classic-PBS parameters of a high-level client key, checked against the set (for tests and tools).
pub fn client_key_parameters(client_key: &tfhe::ClientKey) -> Result<ClassicPBSParameters, InteropError> {
    check_parameters(&client_key.computation_parameters(), &MESSAGE_2_CARRY_2_TUNIFORM_2M128)
}

/// Trusted party, integer per-device mode: a fresh binary GLWE key (`k = 1`, `N = 2048`) for device
/// `device_id`, a fresh MAC key, and the seeded GLWE [`IntegerDeviceKsk`] from the device key to
/// `client_key`'s GLWE key. Returns what goes to the device (its key and credentials;
/// [`DeviceSecrets::credentials_file`] writes them as its credential file) and the record that goes to the cloud's
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
    let material = DeviceKeyMaterial::IntegerPerDevice(ksk);
    let (credentials, record) = credentials_and_record(device_id, key_id, glwe.id(), material, rng)?;
    Ok((DeviceSecrets { key, credentials }, record))
}

/// Trusted party, integer fleet mode: the device gets the client key's GLWE key
/// ([`glwe_key_from_client_key`]) and a fresh MAC key; the cloud extracts
/// its blocks with no key switch. One stolen device then exposes every fleet device.
pub fn provision_integer_fleet_device<R: CryptoRng + ?Sized>(
    client_key: &tfhe::ClientKey,
    device_id: u64,
    key_id: u32,
    rng: &mut R,
) -> Result<(DeviceSecrets, DeviceRecord), InteropError> {
    let key = glwe_key_from_client_key(client_key)?;
    let set = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().id();
    let (credentials, record) = credentials_and_record(device_id, key_id, set, DeviceKeyMaterial::Fleet, rng)?;
    Ok((DeviceSecrets { key, credentials }, record))
}
