//! The integer public-key mode end to end, checked with tfhe-rs's own keys: the trusted party makes a
//! seeded public key under the client key's GLWE key and a credential file; the device (the Pi client's
//! `MessageEncryptor`, from the file alone) seals public-key frames; `IntegerKeyedIntake` extracts them as
//! a fleet device's into `FheUint` values that tfhe-rs decrypts and computes on. 2,048 shortint PBS (10,240
//! with `TSBC_FULL_STATISTICS=1`) on their blocks do not fail; the phase noise under the client key is the model's (`docs/noise-budget.md`,
//! "Integer public key"); a public key of another key set, secret-key frames from a public-key device and
//! public-key frames from a fleet device are refused.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

mod common;

use common::key_store::ProvisionedStore;
use rand_core::{Rng, SeedableRng};
use std::sync::OnceLock;
use std::time::Instant;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, GlweCiphertext as TfheGlweCiphertext, PlaintextCount, PlaintextList,
    PolynomialSize as TfhePolynomialSize, decrypt_glwe_ciphertext,
};
use tfhe::prelude::*;
use tfhe::{FheUint16, FheUint16Id, set_server_key};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::IntegerInput;
use tfhe_sbc_adapter::interop::PublicKeyDevice;
use tfhe_sbc_adapter::interop::integer::per_device::provision_integer_fleet_device;
use tfhe_sbc_adapter::interop::integer::public_key::{
    integer_public_key_from_client_key, provision_integer_public_key_device,
};
use tfhe_sbc_adapter::interop::integer::{
    IntegerExtractor, MESSAGE_2_CARRY_2_TUNIFORM_2M128, glwe_key_from_client_key, tfhe_glwe_key_u64,
};
use tfhe_sbc_adapter::key_store::{IntegerKeyedIntake, KeyMode};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::credentials::{credentials_file_bytes, decode_credentials};
use tfhe_sbc_device::files::public_key::public_key_file_bytes_for;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::FrameKind;
use tfhe_sbc_device::std_io::MessageEncryptor;

const N: usize = 2048;
const KEY_ID: u32 = 0x1D_0005;
/// Public-key devices P and Q, fleet device F.
const P: u64 = 0x9A;
const Q: u64 = 0x9B;
const F: u64 = 0x9F;

fn fixture() -> &'static common::IntegerKeys {
    static FIXTURE: OnceLock<common::IntegerKeys> = OnceLock::new();
    common::integer_keys(&FIXTURE, 0x9b1c_5eed, "integer public key")
}

/// Public-key devices P and Q and fleet device F provisioned into a store bound to the fixture's server key.
fn provisioned() -> &'static ProvisionedStore {
    static PROVISIONED: OnceLock<ProvisionedStore> = OnceLock::new();
    PROVISIONED.get_or_init(|| {
        let f = fixture();
        let mut rng = Blake2bXof::from_seed([0x5a; 32]);
        let mut provisioning = ProvisionedStore::for_integers(f);
        let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
        for id in [P, Q] {
            let (device, record) = provision_integer_public_key_device(&f.client_key, id, KEY_ID, &mut rng).unwrap();
            assert_eq!(
                (record.mode(), record.parameter_set()),
                (KeyMode::PublicKey, params.id())
            );
            assert_eq!(device.public_key.len(), public_key_file_bytes_for(&params));
            assert_eq!(device.public_key.len(), 11 + 32 + 8 * N + 16);
            let file = device.credentials_file().unwrap();
            assert_eq!(file.len(), credentials_file_bytes(KeyMode::PublicKey, &params));
            provisioning.add(id, record, &file, None);
        }
        let (fleet, record) = provision_integer_fleet_device(&f.client_key, F, KEY_ID, &mut rng).unwrap();
        let file = fleet.credentials_file(KeyMode::FleetSecretKey, &params).unwrap();
        provisioning.add(F, record, &file, None);
        provisioning.finish()
    })
}

fn credential_file(id: u64) -> &'static [u8] {
    provisioned().credential_file(id)
}

fn keyed_intake() -> IntegerKeyedIntake {
    provisioned().keyed_intake(fixture())
}

/// The device side, from its credential file only (as the Pi client does): the frames of one message.
fn device_frames(file: &[u8], seed: u8, first_sequence: u64, bytes: &[u8]) -> Vec<Vec<u8>> {
    let decoded = decode_credentials(file).unwrap();
    let mut encryptor = MessageEncryptor::new(&decoded, &mut Blake2bXof::from_seed([seed; 32])).unwrap();
    let outgoing = FrameCounter::new(first_sequence)
        .begin_message(bytes.len(), encryptor.chunk_bytes())
        .unwrap();
    encryptor
        .encrypt_message(&decoded.credentials, &outgoing, bytes)
        .unwrap()
        .into_iter()
        .map(|f| f.bytes)
        .collect()
}

use common::u16_bytes;

fn readings16(seed: u16, count: usize) -> Vec<u16> {
    common::readings16(seed, count, 0x3c3c)
}

#[test]
fn public_key_devices_end_to_end_through_the_store() {
    let f = fixture();
    set_server_key(f.server_key.clone());
    let mut intake = keyed_intake();
    assert_eq!(intake.converter().mode(P), Some(KeyMode::PublicKey));

    let values = readings16(1, 300);
    let frames = device_frames(credential_file(P), 1, 0, &u16_bytes(&values));
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0].len(), 47 + 2 * 8 * N + 16);
    assert_eq!(frames[0][5], FrameKind::PublicKey as u8);
    let opened: Vec<IntegerInput> = frames
        .iter()
        .map(|b| intake.receive(b, Instant::now()).unwrap())
        .collect();
    assert!(matches!(
        intake.receive(&frames[0], Instant::now()),
        Err(IntakeError::Replayed { .. })
    ));
    let t = Instant::now();
    let all: Vec<FheUint16> = intake.frame_readings::<FheUint16Id>(&opened[0]).unwrap();
    let elapsed = t.elapsed();
    assert_eq!(all.len(), 256);
    for (x, &v) in all.iter().zip(&values) {
        let d: u16 = x.decrypt(&f.client_key);
        assert_eq!(d, v);
    }
    let last: Vec<FheUint16> = intake.readings::<FheUint16Id>(&opened[1], 43, 1).unwrap();
    let d: u16 = last[0].decrypt(&f.client_key);
    assert_eq!(d, values[299]);

    // Values of two public-key devices and a fleet device compute together under tfhe-rs.
    let q_values = readings16(2, 4);
    let fleet_values = readings16(3, 4);
    let [q, fleet] = [(Q, 2, &q_values), (F, 3, &fleet_values)].map(|(id, seed, values)| {
        let frames = device_frames(credential_file(id), seed, 0, &u16_bytes(values));
        intake.receive(&frames[0], Instant::now()).unwrap()
    });
    let qx: Vec<FheUint16> = intake.readings::<FheUint16Id>(&q, 0, 1).unwrap();
    let fx: Vec<FheUint16> = intake.readings::<FheUint16Id>(&fleet, 0, 1).unwrap();
    let sum: u16 = (&all[0] + &qx[0] + &fx[0]).decrypt(&f.client_key);
    assert_eq!(sum, values[0].wrapping_add(q_values[0]).wrapping_add(fleet_values[0]));
    eprintln!(
        "public key: 256 FheUint16 (a whole frame, extraction only) in {:.1} ms",
        elapsed.as_secs_f64() * 1e3
    );
}

/// The frame kinds follow the mode: a public-key device's seeded frame (made with a secret key it should not
/// have: here the fleet device's file relabelled is refused by the MAC, so the check is made on the fleet
/// device itself sending a public-key frame) and a fleet device's public-key frame are refused after the MAC.
#[test]
fn frame_kinds_follow_the_mode() {
    let mut intake = keyed_intake();
    // A public-key frame from the fleet device F: its credentials, a public-key encryptor.
    let f = fixture();
    let mut rng = Blake2bXof::from_seed([0x77; 32]);
    let public_key = integer_public_key_from_client_key(&f.client_key, KEY_ID, &mut rng).unwrap();
    let fleet = decode_credentials(credential_file(F)).unwrap();
    let forged = PublicKeyDevice {
        public_key,
        credentials: tfhe_sbc_device::frame::mac::DeviceCredentials::new(
            F,
            KEY_ID,
            tfhe_sbc_device::frame::mac::MacKey::from_slice(fleet.credentials.mac_key().as_bytes()).unwrap(),
        ),
    };
    let frames = device_frames(&forged.credentials_file().unwrap(), 5, 0, &[1, 2, 3]);
    assert!(matches!(
        intake.receive(&frames[0], Instant::now()),
        Err(IntakeError::FrameKindNotAllowed {
            device_id: F,
            kind: FrameKind::PublicKey
        })
    ));
    // A public key of another key set (its key id is not the credentials'): the device refuses it.
    let other = integer_public_key_from_client_key(&f.client_key, KEY_ID + 1, &mut rng).unwrap();
    let mismatched = PublicKeyDevice {
        public_key: other,
        credentials: tfhe_sbc_device::frame::mac::DeviceCredentials::new(
            P,
            KEY_ID,
            tfhe_sbc_device::frame::mac::MacKey::from_bytes([9; 32]),
        ),
    };
    let file = mismatched.credentials_file().unwrap();
    let decoded = decode_credentials(&file);
    let refused = decoded.and_then(|d| MessageEncryptor::new(&d, &mut Blake2bXof::from_seed([1; 32])).map(|_| ()));
    assert!(
        matches!(
            refused,
            Err(tfhe_sbc_device::Error::PublicKeyOfAnotherKeySet {
                expected_key_id: KEY_ID,
                ..
            })
        ),
        "{refused:?}"
    );
}

/// 2,048 shortint PBS (`x -> 3x + 1 mod 4`; 10,240 with `TSBC_FULL_STATISTICS=1`) on the blocks of
/// public-key frames, with tfhe-rs's own server key, decrypted with its client key: 0 failures.
#[test]
fn pbs_on_public_key_blocks_do_not_fail() {
    let f = fixture();
    let mut intake = keyed_intake();
    let mut rng = Blake2bXof::from_seed([0x33; 32]);
    let (mut pbs, mut failures) = (0, 0);
    for frame_index in 0..common::pbs_frames() as u64 {
        let bytes: Vec<u8> = (0..N / 4).map(|_| rng.next_u32() as u8).collect();
        let frame = intake
            .receive(
                &device_frames(credential_file(P), 40 + frame_index as u8, 10 + frame_index, &bytes)[0],
                Instant::now(),
            )
            .unwrap();
        failures += common::failed_pbs(f, &frame.as_frame().unwrap().ciphertext, |i| {
            u64::from(bytes[i / 4] >> (2 * (i % 4))) & 3
        });
        pbs += N;
    }
    common::assert_pbs_without_failure(pbs, failures, "public-key blocks");
}

/// The phase error under the client key's GLWE key, with tfhe-rs's own GLWE decryption: 16 public keys (the
/// fixed part of `e * u` depends on each key's `e`), 2 frames each (65,536 blocks): the variance within 10%
/// of the model `2049 V`, V = TUniform(17)'s `(2^35 + 1) / 6` (std `2^21.71`).
#[test]
fn public_key_noise_under_tfhe_rs_decryption_is_the_models() {
    let f = fixture();
    let big = tfhe_glwe_key_u64(&glwe_key_from_client_key(&f.client_key).unwrap());
    let encoding = MESSAGE_2_CARRY_2_TUNIFORM_2M128.encoding();
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let mut rng = Blake2bXof::from_seed([0x21; 32]);
    let (mut sum_sq, mut count) = (0f64, 0usize);
    for key_index in 0..16u8 {
        let file = integer_public_key_from_client_key(&f.client_key, KEY_ID, &mut rng).unwrap();
        let (header, body) = tfhe_sbc_device::files::public_key::public_key_body(&file, KEY_ID).unwrap();
        let mut enc = Box::new(tfhe_sbc_device::encrypt::IntegerPublicKeyEncryptor::<2048>::EMPTY);
        enc.set_integer_public_key_le_bytes(&params, &header.seed, body)
            .unwrap();
        enc.seed_from_bytes(&mut [key_index; 32]);
        for _ in 0..2 {
            let readings: Vec<u8> = (0..N / 4).map(|_| rng.next_u32() as u8).collect();
            let (mut mask, mut body) = (vec![0u64; N], vec![0u64; N]);
            enc.encrypt_u8(&readings, &mut mask, &mut body).unwrap();
            let mut words = mask;
            words.extend(&body);
            let ct = TfheGlweCiphertext::from_container(
                words.as_slice(),
                TfhePolynomialSize(N),
                CiphertextModulus::new_native(),
            );
            let mut phase = PlaintextList::new(0u64, PlaintextCount(N));
            decrypt_glwe_ciphertext(&big, &ct, &mut phase);
            let mut expected = vec![0u64; N];
            let values: Vec<u64> = readings.iter().map(|&v| u64::from(v)).collect();
            encoding.encode_values(&values, 8, &mut expected).unwrap();
            for (p, m) in phase.as_ref().iter().zip(&expected) {
                let e = p.wrapping_sub(*m) as i64 as f64;
                sum_sq += e * e;
                count += 1;
            }
            // The frame's blocks also extract to what tfhe-rs decrypts.
            let glwe = GlweCiphertext::from_container(words, PolynomialSize(N)).unwrap();
            let block = IntegerExtractor::new().extract_block(&glwe, 5).unwrap();
            let (integer_client, ..) = f.client_key.clone().into_raw_parts();
            let client: &tfhe::shortint::ClientKey = integer_client.as_ref();
            assert_eq!(client.decrypt(&block), u64::from(readings[1] >> 2) & 3);
        }
    }
    let v = (2f64.powi(35) + 1.0) / 6.0;
    let model = 2049.0 * v;
    let measured = sum_sq / count as f64;
    println!(
        "integer public key under tfhe-rs decryption: std 2^{:.3} over {count} blocks, 16 keys; model 2^{:.3}",
        measured.sqrt().log2(),
        model.sqrt().log2()
    );
    assert!(
        (measured / model - 1.0).abs() < 0.10,
        "variance ratio {:.3}",
        measured / model
    );
}
