//! Device ciphertexts computed on by tfhe-rs: 256 random bit pairs encrypted on the device, extracted and
//! key-switched by the adapter, NAND/AND/XOR/MUX evaluated with the tfhe-rs `ServerKey`, and every result
//! decrypted by the tfhe-rs `ClientKey`. Plus an 8-bit "reading > threshold" comparison built from gates,
//! and key export/import (`glwe_key_from_client_key`, `client_key_from_device_key`).
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

mod common;

use rand_core::{Rng, SeedableRng};
use std::sync::OnceLock;
use std::time::Instant;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::server_key::{BinaryBooleanGates, ServerKey};
use tfhe_sbc_adapter::interop::boolean_set::{BooleanSet, glwe_key_from_client_key};
use tfhe_sbc_adapter::interop::{client_key_from_device_key, tfhe_glwe_key};
use tfhe_sbc_adapter::registry::DeviceEncryption;
use tfhe_sbc_core::entities::GlweCiphertextOwned;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

/// One key set for the whole file: server-key generation takes seconds.
fn keys() -> &'static common::BooleanKeys {
    static KEYS: OnceLock<common::BooleanKeys> = OnceLock::new();
    common::boolean_keys(&KEYS, BooleanSet::TfheLib, [0x1B; 32])
}

/// Device side: encrypts 1024 bits (128 bytes) as one authenticated seeded frame; server side: receives it
/// through the authenticated intake.
fn device_encrypt(client_key: &ClientKey, bits: &[u8; 128], seed: u8) -> GlweCiphertextOwned<u32> {
    let device_key = glwe_key_from_client_key(BooleanSet::TfheLib, client_key).unwrap();
    let mut encryptor = Box::new(
        GlweEncryptor::<1024>::new(&TFHE_LIB_GLWE_1024, &device_key, Blake2bXof::from_seed([seed; 32])).unwrap(),
    );
    let credentials = DeviceCredentials::new(u64::from(seed), 1, MacKey::from_bytes([seed; 32]));
    let frames = common::sealed_frames(&mut *encryptor, &credentials, &mut FrameCounter::new(0), bits);
    assert_eq!(frames.len(), 1);
    let mut intake = common::intake_of(
        DeviceCredentials::new(u64::from(seed), 1, MacKey::from_bytes([seed; 32])),
        DeviceEncryption::SecretKey,
    );
    let message = common::receive_message(&mut intake, &frames, Instant::now());
    message.frames.into_iter().next().unwrap().ciphertext
}

fn bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

#[test]
fn gates_on_256_device_encrypted_bit_pairs() {
    const PAIRS: usize = 256;
    let keys = keys();
    let (client_key, bridge) = (&keys.client_key, &keys.bridge);
    let mut rng = Blake2bXof::from_seed([7; 32]);
    let mut a_bits = [0u8; 128];
    let mut b_bits = [0u8; 128];
    let mut c_bits = [0u8; 128];
    rng.fill_bytes(&mut a_bits);
    rng.fill_bytes(&mut b_bits);
    rng.fill_bytes(&mut c_bits);
    let (a_glwe, b_glwe, c_glwe) = (
        device_encrypt(client_key, &a_bits, 1),
        device_encrypt(client_key, &b_bits, 2),
        device_encrypt(client_key, &c_bits, 3),
    );
    let mut checked = 0;
    for i in 0..PAIRS {
        let (a, b, c) = (bit(&a_bits, i), bit(&b_bits, i), bit(&c_bits, i));
        let ca = bridge.to_boolean(&a_glwe, i);
        let cb = bridge.to_boolean(&b_glwe, i);
        let cc = bridge.to_boolean(&c_glwe, i);
        assert_eq!(client_key.decrypt(&ca), a, "pair {i}: a after key switch");
        checked += keys.check_gates([&ca, &cb, &cc], [a, b, c], &format!("pair {i}"));
    }
    println!("{checked} gate results on {PAIRS} device-encrypted bit pairs: all correct");
    assert_eq!(checked, 4 * PAIRS);
}

/// `x > y` on 8-bit little-endian encrypted values: from the low bit up, where the bits differ `x`'s bit
/// decides, otherwise the lower bits' answer stands.
fn greater_than(server_key: &ServerKey, x: &[Ciphertext], y: &[Ciphertext]) -> Ciphertext {
    let mut gt = server_key.trivial_encrypt(false);
    for (xi, yi) in x.iter().zip(y) {
        let differ = server_key.xor(xi, yi);
        gt = server_key.mux(&differ, xi, &gt);
    }
    gt
}

#[test]
fn eight_bit_reading_above_threshold() {
    let common::BooleanKeys {
        client_key,
        server_key,
        bridge,
    } = keys();
    // Eight readings and eight thresholds, one byte each, in two device frames.
    let readings = [0u8, 17, 99, 100, 101, 200, 255, 128];
    let thresholds = [0u8, 18, 100, 100, 100, 199, 254, 127];
    let mut r_bytes = [0u8; 128];
    let mut t_bytes = [0u8; 128];
    r_bytes[..8].copy_from_slice(&readings);
    t_bytes[..8].copy_from_slice(&thresholds);
    let (r_glwe, t_glwe) = (
        device_encrypt(client_key, &r_bytes, 4),
        device_encrypt(client_key, &t_bytes, 5),
    );
    for k in 0..readings.len() {
        let x: Vec<Ciphertext> = (0..8).map(|j| bridge.to_boolean(&r_glwe, 8 * k + j)).collect();
        let y: Vec<Ciphertext> = (0..8).map(|j| bridge.to_boolean(&t_glwe, 8 * k + j)).collect();
        let above = client_key.decrypt(&greater_than(server_key, &x, &y));
        assert_eq!(
            above,
            readings[k] > thresholds[k],
            "{} > {}",
            readings[k],
            thresholds[k]
        );
    }
}

#[test]
fn keys_export_and_import() {
    let client_key = &keys().client_key;
    let device_key = glwe_key_from_client_key(BooleanSet::TfheLib, client_key).unwrap();
    // The exported key is the client key's GLWE key.
    let (_, glwe, _) = client_key.clone().into_raw_parts();
    assert_eq!(tfhe_glwe_key(&device_key).as_ref(), glwe.as_ref());
    // Import: a client key built around the device key decrypts what the device encrypts.
    let imported = client_key_from_device_key(&device_key).unwrap();
    let (_, imported_glwe, _) = imported.clone().into_raw_parts();
    assert_eq!(imported_glwe.as_ref(), glwe.as_ref());
}
