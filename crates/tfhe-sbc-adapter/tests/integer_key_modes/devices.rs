//! The devices of the key-mode tests: per-device devices A and B and fleet device F of the integer set,
//! provisioned into a store bound to one tfhe-rs key set; each device's frames made from its credential file
//! alone; the server side read back from the store's file.

use crate::common;
use common::key_store::{ProvisionedStore, integer_keyed_intake};
use rand_core::SeedableRng;
use std::sync::OnceLock;
use std::time::Instant;
use tfhe::FheUint16;
use tfhe::prelude::*;
use tfhe_sbc_adapter::interop::integer::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_adapter::interop::integer::per_device::{provision_integer_fleet_device, provision_integer_per_device};
use tfhe_sbc_adapter::interop::{DeviceSecrets, InteropError};
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, DeviceRecord, IntegerKeyedIntake, KeyMode, KeyStore};
use tfhe_sbc_core::parameters::ParameterSetId;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

/// The integer set.
pub const SET: ParameterSetId = ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048;
/// The key id of every device here.
pub const KEY_ID: u32 = 0x1D_0004;
/// Per-device devices A and B, fleet device F.
pub const A: u64 = 0xA;
pub const B: u64 = 0xB;
pub const F: u64 = 0xF;

/// One tfhe-rs integer key set (the high-level default) for the whole file, from a fixed seed.
pub fn fixture() -> &'static common::IntegerKeys {
    static FIXTURE: OnceLock<common::IntegerKeys> = OnceLock::new();
    common::integer_keys(&FIXTURE, 0x4be1_5eed, "integer")
}

/// Provisions A and B (per-device) and F (fleet) into a store bound to the fixture's server key, as the
/// trusted party does; the store and the credential files leave as bytes.
pub fn provisioned() -> &'static ProvisionedStore {
    static PROVISIONED: OnceLock<ProvisionedStore> = OnceLock::new();
    PROVISIONED.get_or_init(|| {
        let f = fixture();
        let mut rng = Blake2bXof::from_seed([0x44; 32]);
        let mut provisioning = ProvisionedStore::for_integers(f);
        let t = Instant::now();
        for (id, mode) in [
            (A, KeyMode::PerDeviceSecretKey),
            (B, KeyMode::PerDeviceSecretKey),
            (F, KeyMode::FleetSecretKey),
        ] {
            let (device, record) = match mode {
                KeyMode::PerDeviceSecretKey => provision_integer_per_device(&f.client_key, id, KEY_ID, &mut rng),
                KeyMode::FleetSecretKey => provision_integer_fleet_device(&f.client_key, id, KEY_ID, &mut rng),
                KeyMode::PublicKey => unreachable!("no public-key device here"),
            }
            .unwrap();
            assert_eq!((record.parameter_set(), record.mode()), (SET, mode));
            assert!(record.is_integer());
            let file = device
                .credentials_file(mode, &MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe())
                .unwrap();
            assert_eq!(file.len(), 324, "header 52 + packed key 256 + check 16");
            provisioning.add(id, record, &file, Some(device));
        }
        eprintln!(
            "provisioned 2 per-device + 1 fleet integer devices: {:.2} s",
            t.elapsed().as_secs_f64()
        );
        provisioning.finish()
    })
}

/// Device `id`'s credential file.
pub fn credential_file(id: u64) -> &'static [u8] {
    provisioned().credential_file(id)
}

/// Device `id`'s secrets.
pub fn device_key(id: u64) -> &'static DeviceSecrets {
    provisioned().secrets(id)
}

/// The server side, from the store file.
pub fn keyed_intake() -> IntegerKeyedIntake {
    provisioned().keyed_intake(fixture())
}

/// The device side, from its credential file only: the frames of one message of reading bytes.
pub fn device_frames(file: &[u8], seed: u8, first_sequence: u64, bytes: &[u8]) -> Vec<Vec<u8>> {
    device_frames_with_body(file, seed, first_sequence, bytes, 64)
}

/// [`device_frames`] with the top `body_bits` bits of each body coefficient on the wire (64: the full body).
pub fn device_frames_with_body(
    file: &[u8],
    seed: u8,
    first_sequence: u64,
    bytes: &[u8],
    body_bits: u32,
) -> Vec<Vec<u8>> {
    let decoded = decode_credentials(file).unwrap();
    assert_eq!(decoded.parameters.id(), SET);
    let mut enc = Box::new(IntegerEncryptor::<2048>::EMPTY);
    enc.set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, decoded.key_material)
        .unwrap();
    enc.seed_from_bytes(&mut [seed; 32]);
    enc.set_body_bits(body_bits).unwrap();
    common::sealed_frames(
        &mut *enc,
        &decoded.credentials,
        &mut FrameCounter::new(first_sequence),
        bytes,
    )
}

/// `count` fixed pseudo-random `u16` readings from `seed`.
pub fn readings16(seed: u16, count: usize) -> Vec<u16> {
    common::readings16(seed, count, 0x5a5a)
}

/// Decrypts `cts` and counts how many equal `expected`.
pub fn count_right(cts: &[FheUint16], expected: &[u16]) -> usize {
    let ck = &fixture().client_key;
    cts.iter()
        .zip(expected)
        .filter(|(ct, v)| {
            let d: u16 = ct.decrypt(ck);
            d == **v
        })
        .count()
}

/// A store in which device `id` has `key` but the MAC key its credential file holds.
pub fn intake_with(id: u64, key: DeviceKeyMaterial) -> IntegerKeyedIntake {
    let f = fixture();
    let decoded = decode_credentials(credential_file(id)).unwrap();
    let mut store = KeyStore::for_integers(&f.server_key).unwrap();
    let mac = MacKey::from_slice(decoded.credentials.mac_key().as_bytes()).unwrap();
    store
        .insert(DeviceRecord::with_parameter_set(DeviceCredentials::new(id, KEY_ID, mac), SET, key).unwrap())
        .unwrap();
    integer_keyed_intake(f, store).unwrap()
}

/// The error of a call that must fail (`FheUint` has no `Debug`, so no `unwrap_err`).
pub fn error<T>(result: Result<T, InteropError>) -> InteropError {
    match result {
        Err(e) => e,
        Ok(_) => panic!("expected an error"),
    }
}

/// The fingerprint of the server key the store is bound to.
pub fn store_fingerprint() -> [u8; 32] {
    provisioned().key_store().server_key_fingerprint()
}
