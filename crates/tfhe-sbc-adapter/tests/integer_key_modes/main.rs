//! Integer key modes as first-class citizens: devices of the integer set (id 4) in the
//! key store with the fleet key or their own key, provisioned with a credential file the device reads, and
//! `IntegerKeyedIntake`: real `IntegerEncryptor` frames -> `Intake::receive_integer` -> `FheUint` values in
//! the mode the store records, in one call. Device-made blocks, radix ciphertexts and `FheUint`s pass
//! tfhe-rs's `ParameterSetConformant` checks in both modes; a block of the wrong size or degree does not.
//! Modes and devices do not mix: a frame read in the other mode, or with another device's key, decrypts to
//! garbage, and a frame relabelled as another device's is refused by the MAC.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;
mod devices;

use common::key_store::{fake_boolean_ksk, integer_keyed_intake};
use common::u16_bytes;
use devices::*;
use std::time::Instant;
use tfhe::conformance::ParameterSetConformant;
use tfhe::core_crypto::prelude::{CiphertextModulus, LweCiphertext};
use tfhe::integer::IntegerCiphertext;
use tfhe::integer::parameters::RadixCiphertextConformanceParams;
use tfhe::prelude::*;
use tfhe::shortint::ciphertext::Degree;
use tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 as TFHE_DEFAULT;
use tfhe::{FheUint8, FheUint8ConformanceParams, FheUint8Id, FheUint16, FheUint16Id, set_server_key};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::IntegerInput;
use tfhe_sbc_adapter::interop::integer::{
    IntegerBridge, IntegerExtractor, MESSAGE_2_CARRY_2_TUNIFORM_2M128, integer_server_key_fingerprint,
};
use tfhe_sbc_adapter::interop::{Converter, InteropError};
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, DeviceRecord, KeyMode, KeyStore};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

/// §3: per-device integer device end to end through the store: provision -> credential file -> the device
/// encrypts -> intake -> `FheUint16` (key switch + identity PBS, picked from the store) -> tfhe-rs sums ->
/// the client key decrypts the right sum. The fleet device goes through the same call.
#[test]
fn per_device_integer_device_end_to_end_through_the_store() {
    let f = fixture();
    set_server_key(f.server_key.clone());
    let mut intake = keyed_intake();
    assert_eq!(intake.converter().mode(A), Some(KeyMode::PerDeviceSecretKey));
    assert_eq!(intake.converter().mode(F), Some(KeyMode::FleetSecretKey));

    let values = readings16(1, 300);
    let frames = device_frames(credential_file(A), 1, 0, &u16_bytes(&values));
    assert_eq!(frames.len(), 2);
    let opened: Vec<IntegerInput> = frames
        .iter()
        .map(|b| intake.receive(b, Instant::now()).unwrap())
        .collect();
    assert_eq!(
        (
            opened[0].as_frame().unwrap().readings(16),
            opened[1].as_frame().unwrap().readings(16)
        ),
        (256, 44)
    );
    // A replay is refused by the intake.
    assert!(matches!(
        intake.receive(&frames[0], Instant::now()),
        Err(IntakeError::Replayed { .. })
    ));

    let t = Instant::now();
    let mut xs: Vec<FheUint16> = intake.readings::<FheUint16Id>(&opened[0], 10, 3).unwrap();
    let first = t.elapsed();
    xs.extend(intake.readings::<FheUint16Id>(&opened[1], 43, 1).unwrap());
    let second = t.elapsed() - first;
    let expected = [values[10], values[11], values[12], values[299]];
    for (x, &v) in xs.iter().zip(&expected) {
        let d: u16 = x.decrypt(&f.client_key);
        assert_eq!(d, v);
    }
    let sum: u16 = (&xs[0] + &xs[1] + &xs[2] + &xs[3]).decrypt(&f.client_key);
    assert_eq!(
        sum,
        expected.iter().fold(0u16, |acc, &v| acc.wrapping_add(v)),
        "sum of per-device readings"
    );
    eprintln!(
        "per-device: 3 FheUint16 (24 key switches + PBS, key decompressed) {:.0} ms; 1 more (cached key) {:.0} ms",
        first.as_secs_f64() * 1e3,
        second.as_secs_f64() * 1e3
    );

    // The fleet device through the same call: extraction only.
    let fleet_values = readings16(2, 256);
    let frames = device_frames(credential_file(F), 2, 0, &u16_bytes(&fleet_values));
    let frame = intake.receive(&frames[0], Instant::now()).unwrap();
    let t = Instant::now();
    let all: Vec<FheUint16> = intake.frame_readings::<FheUint16Id>(&frame).unwrap();
    let fleet_time = t.elapsed();
    assert_eq!(all.len(), 256);
    for i in (0..256).step_by(51) {
        let d: u16 = all[i].decrypt(&f.client_key);
        assert_eq!(d, fleet_values[i]);
    }
    // Per-device and fleet values compute together.
    let mixed: u16 = (&xs[0] + &all[7]).decrypt(&f.client_key);
    assert_eq!(mixed, values[10].wrapping_add(fleet_values[7]));
    eprintln!(
        "fleet: 256 FheUint16 (a whole frame) in {:.1} ms",
        fleet_time.as_secs_f64() * 1e3
    );

    // Compact bodies (the set's recommended width) through the same call, in both modes.
    let bits = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().compact_body_bits();
    assert!(bits < 64);
    for (id, seed, sequence) in [(A, 3u8, 2u64), (F, 4, 1)] {
        let compact_values = readings16(u16::from(seed), 256);
        let frames = device_frames_with_body(credential_file(id), seed, sequence, &u16_bytes(&compact_values), bits);
        assert!(frames[0].len() < IntegerEncryptor::<2048>::SEEDED_FRAME_BYTES / 4);
        let frame = intake.receive(&frames[0], Instant::now()).unwrap();
        let some: Vec<FheUint16> = intake.readings::<FheUint16Id>(&frame, 100, 2).unwrap();
        for (x, &v) in some.iter().zip(&compact_values[100..]) {
            let d: u16 = x.decrypt(&f.client_key);
            assert_eq!(d, v, "device {id:#x}, {bits}-bit body");
        }
        if id == A {
            eprintln!("compact: {bits}-bit bodies, {} B per frame", frames[0].len());
        }
    }
}

/// §2: device-made blocks, radix ciphertexts and `FheUint`s pass tfhe-rs's conformance checks in both modes
/// (against the server key and against tfhe-rs's constant); a block of the wrong size or degree, and a radix
/// of the wrong block count, do not, and our wrapping refuses a block of the wrong size with a typed error.
#[test]
fn device_blocks_are_conformant_in_both_modes() {
    let f = fixture();
    let mut intake = keyed_intake();
    let values: Vec<u8> = (0..512u32).map(|i| (i * 151 + 17) as u8).collect();
    let block_params = TFHE_DEFAULT.to_shortint_conformance_param();
    let radix_params = RadixCiphertextConformanceParams::from_pbs_parameters(TFHE_DEFAULT, 4);
    let from_server = FheUint8ConformanceParams::from(&f.server_key);
    let from_constant = FheUint8ConformanceParams::from(TFHE_DEFAULT);
    let mut checked = Vec::new();
    for (id, seed, range) in [(A, 3u8, 200..202usize), (F, 4, 0..512)] {
        let frames = device_frames(credential_file(id), seed, 1000, &values);
        let frame = intake.receive(&frames[0], Instant::now()).unwrap();
        let cts: Vec<FheUint8> = intake.readings::<FheUint8Id>(&frame, range.start, range.len()).unwrap();
        for (ct, &v) in cts.iter().zip(&values[range.clone()]) {
            assert!(ct.is_conformant(&from_server), "device {id:#x}");
            assert!(ct.is_conformant(&from_constant), "device {id:#x}");
            let (radix, ..) = ct.clone().into_raw_parts();
            assert!(radix.is_conformant(&radix_params));
            assert!(radix.blocks().iter().all(|b| b.is_conformant(&block_params)));
            let d: u8 = ct.decrypt(&f.client_key);
            assert_eq!(d, v, "device {id:#x}");
        }
        checked.push(cts.len());
        if id == A {
            // Refused: a block of another degree, a block of the wrong size, a radix missing a block.
            let (radix, ..) = cts[0].clone().into_raw_parts();
            let mut blocks = radix.blocks().to_vec();
            let mut wrong_degree = blocks[0].clone();
            wrong_degree.degree = Degree::new(4);
            assert!(!wrong_degree.is_conformant(&block_params));
            let short =
                LweCiphertext::from_container(blocks[0].ct.as_ref()[1..].to_vec(), CiphertextModulus::new_native());
            let wrong_size = tfhe::shortint::Ciphertext::new(
                short.clone(),
                blocks[0].degree,
                blocks[0].noise_level(),
                blocks[0].message_modulus,
                blocks[0].carry_modulus,
                blocks[0].atomic_pattern,
            );
            assert!(!wrong_size.is_conformant(&block_params));
            assert_eq!(
                IntegerExtractor::new().wrap_block(short).unwrap_err(),
                InteropError::WrongLweSize {
                    expected: 2049,
                    found: 2048
                }
            );
            blocks[1] = wrong_degree;
            let bad_radix = tfhe::integer::RadixCiphertext::from(blocks.clone());
            assert!(!bad_radix.is_conformant(&radix_params));
            blocks.truncate(3);
            let three = tfhe::integer::RadixCiphertext::from(blocks);
            assert!(!three.is_conformant(&radix_params));
            let as_uint = FheUint8::from_raw_parts(
                three,
                FheUint8Id,
                tfhe::Tag::default(),
                tfhe::ReRandomizationMetadata::default(),
            );
            assert!(!as_uint.is_conformant(&from_server));
        }
    }
    assert_eq!(checked, [2, 512]);
}

/// §3: modes and devices do not mix. A per-device frame read in fleet mode and a fleet frame read in
/// per-device mode decrypt to garbage; device A's frame opened with device B's key decrypts to garbage, and
/// relabelled as B's frame it is refused by B's MAC key; per-device keys are independent (different seeds
/// and bodies). Wrong set, unknown device, wrong key id and a store of another server key get typed errors.
#[test]
fn modes_and_devices_do_not_mix() {
    let f = fixture();
    let values = readings16(5, 256);
    let bytes = u16_bytes(&values);
    let count = 4;
    let store = provisioned().key_store();
    let ksk = |id| match store.get(id).unwrap().key() {
        DeviceKeyMaterial::IntegerPerDevice(k) => k.clone(),
        DeviceKeyMaterial::Fleet
        | DeviceKeyMaterial::PerDevice(_)
        | DeviceKeyMaterial::PublicKey
        | DeviceKeyMaterial::BigKeyPerDevice(_) => unreachable!("{id} is per-device"),
    };
    let (ksk_a, ksk_b) = (ksk(A), ksk(B));
    assert_ne!(ksk_a.mask_seed(), ksk_b.mask_seed());
    assert_ne!(ksk_a.bodies(), ksk_b.bodies());
    assert_ne!(device_key(A).key.as_bytes(), device_key(B).key.as_bytes());

    // The right way, for reference.
    let mut right = keyed_intake();
    let frame_a = right
        .receive(&device_frames(credential_file(A), 6, 0, &bytes)[0], Instant::now())
        .unwrap();
    let ok = right.readings::<FheUint16Id>(&frame_a, 0, count).unwrap();
    assert_eq!(count_right(&ok, &values), count);

    // A per-device device read as a fleet device.
    let mut as_fleet = intake_with(A, DeviceKeyMaterial::Fleet);
    let frame = as_fleet
        .receive(&device_frames(credential_file(A), 7, 0, &bytes)[0], Instant::now())
        .unwrap();
    let garbage = as_fleet.readings::<FheUint16Id>(&frame, 0, count).unwrap();
    assert_eq!(count_right(&garbage, &values), 0, "per-device frame read in fleet mode");

    // A fleet device read as a per-device device (with A's key).
    let mut as_per_device = intake_with(F, DeviceKeyMaterial::IntegerPerDevice(ksk_a.clone()));
    let frame = as_per_device
        .receive(&device_frames(credential_file(F), 8, 0, &bytes)[0], Instant::now())
        .unwrap();
    let garbage = as_per_device.readings::<FheUint16Id>(&frame, 0, count).unwrap();
    assert_eq!(count_right(&garbage, &values), 0, "fleet frame read in per-device mode");

    // Device A's frame opened with device B's key.
    let mut with_b_key = intake_with(A, DeviceKeyMaterial::IntegerPerDevice(ksk_b));
    let frame = with_b_key
        .receive(&device_frames(credential_file(A), 9, 0, &bytes)[0], Instant::now())
        .unwrap();
    let garbage = with_b_key.readings::<FheUint16Id>(&frame, 0, count).unwrap();
    assert_eq!(count_right(&garbage, &values), 0, "A's frame under B's key");
    // Relabelled as B's frame (device id field, bytes 13..21 of the header), B's MAC key refuses it.
    let mut relabelled = device_frames(credential_file(A), 10, 0, &bytes)[0].clone();
    let at = relabelled.windows(8).position(|w| w == A.to_le_bytes()).unwrap();
    assert!(at < 47, "the device id is in the header");
    relabelled[at..at + 8].copy_from_slice(&B.to_le_bytes());
    let mut intake = keyed_intake();
    assert!(matches!(
        intake.receive(&relabelled, Instant::now()),
        Err(IntakeError::BadMac { device_id: B })
    ));

    // Typed errors. A device registered for a boolean set, with an integer frame under its MAC key.
    let decoded = decode_credentials(credential_file(F)).unwrap();
    let mac = MacKey::from_slice(decoded.credentials.mac_key().as_bytes()).unwrap();
    let mut store = KeyStore::for_integers(&f.server_key).unwrap();
    store
        .insert(
            DeviceRecord::with_parameter_set(
                DeviceCredentials::new(F, KEY_ID, mac),
                TFHE_LIB_GLWE_1024.id(),
                DeviceKeyMaterial::Fleet,
            )
            .unwrap(),
        )
        .unwrap();
    let mut boolean = integer_keyed_intake(f, store).unwrap();
    let frame = boolean
        .receive(&device_frames(credential_file(F), 11, 0, &bytes)[0], Instant::now())
        .unwrap();
    let err = error(boolean.readings::<FheUint16Id>(&frame, 0, 1));
    assert_eq!(
        err,
        InteropError::DeviceOfAnotherSet {
            device_id: F,
            device_set: 1,
            converter_set: 4
        }
    );
    assert!(err.to_string().contains("has no key here"), "{err}");
    // An unknown device, a wrong key id, readings out of range (nothing decompressed for it).
    let empty = IntegerBridge::new(f.server_key.clone()).unwrap();
    assert_eq!(
        error(empty.readings::<FheUint16Id>(frame_a.as_frame().unwrap(), 0, 1)),
        InteropError::UnknownDevice(A)
    );
    empty
        .register(A, KEY_ID + 1, SET, DeviceKeyMaterial::IntegerPerDevice(ksk_a.clone()))
        .unwrap();
    assert_eq!(
        error(empty.readings::<FheUint16Id>(frame_a.as_frame().unwrap(), 0, 1)),
        InteropError::WrongKeyId {
            device_id: A,
            expected: KEY_ID + 1,
            found: KEY_ID
        }
    );
    assert_eq!(
        empty.register(A, KEY_ID, SET, DeviceKeyMaterial::Fleet).unwrap_err(),
        InteropError::DuplicateDevice(A)
    );
    assert!(empty.unregister(A));
    // A boolean set's per-device key has no place on the integer set.
    assert_eq!(
        empty
            .register(A, KEY_ID, SET, DeviceKeyMaterial::PerDevice(fake_boolean_ksk()))
            .unwrap_err(),
        InteropError::KeyMaterialMismatch { device_id: A }
    );
    assert_eq!(
        error(right.readings::<FheUint16Id>(&frame_a, 250, 7)),
        InteropError::ReadingsOutOfRange {
            first: 250,
            count: 7,
            capacity: 256
        }
    );
    // A store of another server key.
    assert_eq!(
        integer_keyed_intake(f, KeyStore::with_fingerprint([9; 32])).unwrap_err(),
        InteropError::ServerKeyMismatch
    );
    assert_eq!(
        integer_server_key_fingerprint(&f.server_key).unwrap(),
        store_fingerprint()
    );
}

/// The credential file of an integer device: parameter set 4, its mode, the packed key the encryptor takes;
/// `DeviceSecrets::credentials_file` writes secret-key files only (a public-key device's comes from
/// `PublicKeyDevice::credentials_file`, `tests/integer_public_key.rs`), and a damaged file is refused with a
/// typed error.
#[test]
fn integer_credential_files_are_checked() {
    let per_device = decode_credentials(credential_file(A)).unwrap();
    assert_eq!(per_device.mode, KeyMode::PerDeviceSecretKey);
    assert_eq!(per_device.parameters.id(), SET);
    assert_eq!(per_device.credentials.device_id(), A);
    assert_eq!(per_device.key_material.len(), 256);
    let fleet = decode_credentials(credential_file(F)).unwrap();
    assert_eq!(fleet.mode, KeyMode::FleetSecretKey);
    assert!(matches!(
        device_key(A).credentials_file(KeyMode::PublicKey, &MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe()),
        Err(tfhe_sbc_device::Error::BadKeyFile)
    ));
    let file = credential_file(A);
    for position in [0usize, 4, 5, 6, 20, 100, file.len() - 1] {
        let mut bad = file.to_vec();
        bad[position] ^= 1;
        assert!(decode_credentials(&bad).is_err(), "flip at {position} accepted");
    }
    assert!(decode_credentials(&file[..file.len() - 1]).is_err());
}
