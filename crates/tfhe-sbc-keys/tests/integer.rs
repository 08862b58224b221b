//! `tfhe-sbc-keys` on the integer set (tfhe-rs's high-level default, our set 4), run as the trusted party
//! runs it: one `init --parameters integer` for the whole file, a per-device and a fleet device issued into
//! it; the files, the key store (parameter set 4 per device), `show`, the errors, and an end-to-end check:
//! each device encrypts from its credential file alone, the adapter's `IntegerKeyedIntake` reads the store
//! and the server key files, tfhe-rs sums, and the client key file decrypts.
#![allow(clippy::unwrap_used)]

mod common;

use common::{KeySet, assert_error, credentials_path, mode, run, run_ok, s, scratch_copy};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;
use tfhe::prelude::*;
use tfhe::{FheUint16, FheUint16Id, set_server_key};
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::integer::{IntegerBridge, MESSAGE_2_CARRY_2_TUNIFORM_2M128};
use tfhe_sbc_adapter::key_set::client_key::read_integer_client_key;
use tfhe_sbc_adapter::key_set::server_key::{read_integer_server_key, read_server_key_envelope};
use tfhe_sbc_adapter::key_store::{IntegerKeyedIntake, KeyMode, KeyStore};
use tfhe_sbc_core::parameters::ParameterSetId;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_keys::KeySetParameters;

const PER_DEVICE: u64 = 41;
const FLEET: u64 = 42;
const KEY_ID: &str = "0x1d000004";
const KEY_ID_VALUE: u32 = 0x1d00_0004;

/// One integer key set for the whole file, with its two devices.
fn key_set() -> &'static KeySet {
    static KEY_SET: OnceLock<KeySet> = OnceLock::new();
    KEY_SET.get_or_init(|| {
        let init = ["--parameters", "integer", "--key-id", KEY_ID];
        KeySet::new(&init, &[(PER_DEVICE, "per-device"), (FLEET, "fleet")])
    })
}

fn dir() -> PathBuf {
    key_set().dir()
}

#[test]
fn init_and_issue_write_an_integer_key_set() {
    let init = &key_set().init_output;
    assert!(init.contains("PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128"), "{init}");
    assert!(init.contains("set 4"), "{init}");
    assert!(init.contains("0x1d000004"), "{init}");
    eprintln!("{init}");
    let dir = dir();
    for (name, expected) in [
        ("client_key.bin", 0o600),
        ("key_store.bin", 0o600),
        ("server_key.bin", 0o644),
    ] {
        assert_eq!(mode(&dir.join(name)), expected, "{name}");
    }
    assert!(
        !dir.join("public_key.tspk").exists(),
        "no public key for the integer set"
    );
    for (id, out) in [PER_DEVICE, FLEET].iter().zip(&key_set().issue_outputs) {
        assert_eq!(mode(&credentials_path(&dir, *id)), 0o600, "device {id}");
        assert!(out.contains("parameter set integer"), "{out}");
        eprint!("{out}");
    }
    let envelope = read_server_key_envelope(&dir.join("server_key.bin")).unwrap();
    assert_eq!(envelope.parameters, KeySetParameters::Integer);
    assert_eq!(envelope.key_id, KEY_ID_VALUE);

    // The store records parameter set 4 and the mode of each device; the credential files agree.
    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    assert_eq!(store.server_key_fingerprint(), envelope.server_key_fingerprint);
    for (id, mode, stored) in [
        (PER_DEVICE, KeyMode::PerDeviceSecretKey, 2 * 2048 * 8 + 16),
        (FLEET, KeyMode::FleetSecretKey, 0),
    ] {
        let record = store.get(id).unwrap();
        assert_eq!(
            (record.parameter_set(), record.mode(), record.key_id()),
            (ParameterSetId(4), mode, KEY_ID_VALUE)
        );
        assert_eq!(record.key().stored_bytes(), stored);
        let bytes = std::fs::read(credentials_path(&dir, id)).unwrap();
        let file = decode_credentials(&bytes).unwrap();
        assert_eq!((file.mode, file.parameters.id()), (mode, ParameterSetId(4)));
        assert_eq!(file.credentials.device_id(), id);
        assert_eq!(
            file.credentials.mac_key().as_bytes(),
            record.credentials().mac_key().as_bytes()
        );
    }

    let shown = run_ok(&["show", "--dir", s(&dir)]);
    assert!(shown.contains("integer"), "{shown}");
    assert!(shown.contains("per-device") && shown.contains("fleet"), "{shown}");
    assert!(!shown.contains("public_key.tspk"), "{shown}");
}

#[test]
fn integer_key_set_errors_are_one_line() {
    let dir = dir();
    // No public-key mode on the integer set.
    let out = run(&["issue", "--dir", s(&dir), "--device-id", "99", "--mode", "public-key"]);
    assert_error(&out, &["public-key", "integer", "per-device"]);
    // Fleet devices carry the key set's key id.
    let out = run(&[
        "issue",
        "--dir",
        s(&dir),
        "--device-id",
        "99",
        "--mode",
        "fleet",
        "--key-id",
        "7",
    ]);
    assert_error(&out, &["--key-id"]);
    // The same device twice.
    let out = run(&[
        "issue",
        "--dir",
        s(&dir),
        "--device-id",
        &FLEET.to_string(),
        "--mode",
        "fleet",
    ]);
    assert_error(&out, &["already provisioned"]);
    // init refuses a directory holding the key set.
    let out = run(&["init", "--dir", s(&dir), "--parameters", "integer"]);
    assert_error(&out, &["exists"]);

    // A damaged credential file, in a scratch copy: show names it.
    let scratch = scratch_copy(&dir);
    let mut bytes = std::fs::read(credentials_path(&dir, PER_DEVICE)).unwrap();
    bytes[60] ^= 1;
    std::fs::write(credentials_path(scratch.path(), PER_DEVICE), &bytes).unwrap();
    let out = run(&["show", "--dir", s(scratch.path())]);
    assert_error(&out, &[&format!("{PER_DEVICE}.tsdc"), "not a valid credential file"]);
    // A boolean reader given the integer client key: one line, no panic.
    let err = tfhe_sbc_adapter::key_set::client_key::read_client_key(&dir.join("client_key.bin")).unwrap_err();
    assert!(err.to_string().contains("integer key set"), "{err}");
}

/// The devices encrypt from their credential files alone; the server reads the store and the server key
/// files; the trusted party's client key file decrypts.
#[test]
fn devices_of_an_integer_key_set_reach_tfhe_rs() {
    let dir = dir();
    let t = Instant::now();
    let (_, server_key) = read_integer_server_key(&dir.join("server_key.bin")).unwrap();
    let (_, client_key) = read_integer_client_key(&dir.join("client_key.bin")).unwrap();
    eprintln!("key files read: {:.1} s", t.elapsed().as_secs_f64());
    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    set_server_key(server_key.clone());
    let mut intake =
        IntegerKeyedIntake::new(IntakeConfig::default(), store, IntegerBridge::new(server_key).unwrap()).unwrap();
    for (id, seed) in [(PER_DEVICE, 1u8), (FLEET, 2)] {
        let bytes = std::fs::read(credentials_path(&dir, id)).unwrap();
        let file = decode_credentials(&bytes).unwrap();
        let mut enc = Box::new(IntegerEncryptor::<2048>::EMPTY);
        enc.set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, file.key_material)
            .unwrap();
        enc.seed_from_bytes(&mut [seed; 32]);
        let readings: Vec<u16> = (0..3u16).map(|i| 20_000 + 7_919 * i + u16::from(seed)).collect();
        let message: Vec<u8> = readings.iter().flat_map(|r| r.to_le_bytes()).collect();
        let mut counter = FrameCounter::new(0);
        let outgoing = enc.begin_message(&mut counter, message.len()).unwrap();
        let chunk = chunks(&message, IntegerEncryptor::<2048>::MESSAGE_BYTES)
            .next()
            .unwrap();
        let mut frame = vec![0u8; IntegerEncryptor::<2048>::SEEDED_FRAME_BYTES];
        enc.encrypt_frame_into(&file.credentials, &outgoing, &chunk, &mut frame)
            .unwrap();
        let opened = intake.receive(&frame, Instant::now()).unwrap();
        let values: Vec<FheUint16> = intake.frame_readings::<FheUint16Id>(&opened).unwrap();
        assert_eq!(values.len(), 3);
        let sum: u16 = (&values[0] + &values[1] + &values[2]).decrypt(client_key.get());
        assert_eq!(
            sum,
            readings.iter().fold(0u16, |a, &r| a.wrapping_add(r)),
            "device {id}"
        );
    }
}
