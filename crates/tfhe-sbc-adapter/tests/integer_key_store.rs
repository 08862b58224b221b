//! The key store's file format with the integer set: each record carries its parameter set (version 2),
//! version 1 files read as set 1, modes a set does not allow and unknown sets are refused, and no corruption
//! (behind a recomputed digest) or truncation panics. Fake key material of the right shape: no key
//! generation.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

mod common;

use common::key_store::{fake_boolean_ksk, fake_integer_ksk, redigest, store_digest};
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, DeviceRecord, KEY_STORE_MAGIC, KeyMode, KeySetError, KeyStore};
use tfhe_sbc_core::parameters::{ParameterSetId, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

const SET: ParameterSetId = ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048;
const KEY_ID: u32 = 0x1D_0004;

fn credentials(id: u64) -> DeviceCredentials {
    DeviceCredentials::new(id, KEY_ID, MacKey::from_bytes([id as u8; 32]))
}

/// The key store records each device's parameter set (version 2) and reads version 1 files as set 1; it
/// refuses modes a set does not allow, unknown sets, and any corruption, with typed errors and no panic.
#[test]
fn key_store_records_parameter_sets() {
    let mut store = KeyStore::with_fingerprint([5; 32]);
    store
        .insert(DeviceRecord::new(
            credentials(1),
            DeviceKeyMaterial::IntegerPerDevice(fake_integer_ksk(1)),
        ))
        .unwrap();
    store
        .insert(DeviceRecord::with_parameter_set(credentials(2), SET, DeviceKeyMaterial::Fleet).unwrap())
        .unwrap();
    store
        .insert(
            DeviceRecord::with_parameter_set(credentials(3), ParameterSetId(2), DeviceKeyMaterial::PublicKey).unwrap(),
        )
        .unwrap();
    store
        .insert(DeviceRecord::new(credentials(4), DeviceKeyMaterial::Fleet))
        .unwrap();
    let file = store.encode();
    assert_eq!(file[KEY_STORE_MAGIC.len()], 2, "version 2");
    let back = KeyStore::decode(&file).unwrap();
    let sets: Vec<(u64, u16, KeyMode)> = back
        .iter()
        .map(|r| (r.device_id(), r.parameter_set().0, r.mode()))
        .collect();
    assert_eq!(
        sets,
        [
            (1, 4, KeyMode::PerDeviceSecretKey),
            (2, 4, KeyMode::FleetSecretKey),
            (3, 2, KeyMode::PublicKey),
            (4, 1, KeyMode::FleetSecretKey)
        ]
    );
    match (store.get(1).unwrap().key(), back.get(1).unwrap().key()) {
        (DeviceKeyMaterial::IntegerPerDevice(x), DeviceKeyMaterial::IntegerPerDevice(y)) => {
            assert_eq!((x.mask_seed(), x.bodies()), (y.mask_seed(), y.bodies()));
            assert_eq!(y.stored_bytes(), 2 * 2048 * 8 + 16);
        }
        _ => panic!("device 1 is an integer per-device device"),
    }
    assert_eq!(back.get(1).unwrap().key().stored_bytes(), 32_784);
    assert_eq!(&back.encode()[..], &file[..], "encoding is deterministic");
    eprintln!("key store, 1 integer per-device + 3 others: {} bytes", file.len());

    // Modes a set does not allow, and unknown sets.
    let refused = [
        (SET, DeviceKeyMaterial::PerDevice(fake_boolean_ksk())),
        (
            ParameterSetId(2),
            DeviceKeyMaterial::IntegerPerDevice(fake_integer_ksk(2)),
        ),
        (
            TFHE_LIB_GLWE_1024.id(),
            DeviceKeyMaterial::IntegerPerDevice(fake_integer_ksk(3)),
        ),
    ];
    for (set, key) in refused {
        let mode = key.mode();
        let err = DeviceRecord::with_parameter_set(credentials(9), set, key).unwrap_err();
        assert!(
            matches!(err, KeySetError::ModeNotAllowed { device_id: 9, mode: m, parameter_set: p } if m == mode && p == set.0),
            "{err}"
        );
    }
    assert!(matches!(
        DeviceRecord::with_parameter_set(credentials(9), ParameterSetId(99), DeviceKeyMaterial::Fleet).unwrap_err(),
        KeySetError::UnknownParameterSet {
            device_id: 9,
            parameter_set: 99
        }
    ));

    // Version 1, as earlier builds wrote it: parameter set 1 once, no set per record.
    let mut v1 = KEY_STORE_MAGIC.to_vec();
    v1.push(1);
    v1.push(1); // parameter_set varint
    v1.push(32);
    v1.extend_from_slice(&[6; 32]);
    v1.push(2); // two records
    for id in [7u8, 8] {
        v1.extend_from_slice(&[id, 3, 32]); // device id, key id, MAC key length
        v1.extend_from_slice(&[id; 32]);
        v1.extend_from_slice(&[if id == 7 { 0 } else { 2 }, 0]); // mode (fleet, public key), no ksk
    }
    let d = store_digest(&v1);
    v1.extend_from_slice(&d);
    let old = KeyStore::decode(&v1).unwrap();
    assert_eq!(old.server_key_fingerprint(), [6; 32]);
    let read: Vec<(u64, u32, u16, KeyMode)> = old
        .iter()
        .map(|r| (r.device_id(), r.key_id(), r.parameter_set().0, r.mode()))
        .collect();
    assert_eq!(
        read,
        [(7, 3, 1, KeyMode::FleetSecretKey), (8, 3, 1, KeyMode::PublicKey)]
    );
    assert_eq!(old.encode()[KEY_STORE_MAGIC.len()], 2, "rewritten as version 2");
    let mut v1_other_set = v1.clone();
    v1_other_set[9] = 4;
    assert!(matches!(
        KeyStore::decode(&redigest(v1_other_set)).unwrap_err(),
        KeySetError::UnsupportedParameterSet(4)
    ));

    // A per-device integer key of the wrong length, behind a valid digest: a typed error.
    let mut one = KeyStore::with_fingerprint([5; 32]);
    one.insert(DeviceRecord::new(
        credentials(1),
        DeviceKeyMaterial::IntegerPerDevice(fake_integer_ksk(1)),
    ))
    .unwrap();
    let file = one.encode().to_vec();
    // The bodies' length varint (32,768 = 0x80 0x80 0x02) is followed by the bodies, then the digest.
    let len_at = file.len() - 32 - 32_768 - 3;
    assert_eq!(&file[len_at..len_at + 3], &[0x80, 0x80, 0x02]);
    let mut shorter = file[..len_at].to_vec();
    shorter.extend_from_slice(&[0xf8, 0xff, 0x01]); // 32,760
    shorter.extend_from_slice(&file[len_at + 3..file.len() - 32 - 8]);
    let d = store_digest(&shorter);
    shorter.extend_from_slice(&d);
    assert!(matches!(
        KeyStore::decode(&shorter).unwrap_err(),
        KeySetError::WrongLength {
            device_id: Some(1),
            field: "key-switching key",
            expected: 32_768,
            found: 32_760
        }
    ));
    // The set of that record changed to set 1: the record's set decides its key's type, so the same 32,768
    // bytes now read as set 1's per-device key (an LWE key of 8,192 `u32`), never as an integer one. The
    // store's digest, not the key's length, is what guards a record.
    let set_at = 9 + 33 + 1 + 1 + 3; // prefix, fingerprint, count, device id, key id (varint 0x1D0004: 3 bytes)
    let mut as_boolean = file.clone();
    assert_eq!(as_boolean[set_at], 4);
    as_boolean[set_at] = 1;
    let read = KeyStore::decode(&redigest(as_boolean)).unwrap();
    let record = read.get(1).unwrap();
    assert_eq!(record.parameter_set().0, 1);
    assert!(matches!(record.key(), DeviceKeyMaterial::PerDevice(_)));
    // Mutations behind a recomputed digest and truncations never panic.
    for position in (0..300).chain((300..file.len()).step_by(4099)) {
        for flip in [0x01u8, 0x80] {
            let mut bad = file.clone();
            bad[position] ^= flip;
            let _ = KeyStore::decode(&redigest(bad));
        }
    }
    for len in (0..file.len()).step_by(1021) {
        assert!(KeyStore::decode(&file[..len]).is_err());
    }
}
