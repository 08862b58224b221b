//! `tfhe-sbc-keys` on the integer set (tfhe-rs's high-level default, our set 4), run as the trusted party
//! runs it: one `init --parameters integer` for the whole file, a per-device, a fleet and a public-key
//! device issued into it; the files (the key set's 64-bit public key and each credential file, sizes
//! included), the key store (parameter set 4 per device), `show`, the errors, and an end-to-end check: each
//! device encrypts from its credential file alone, the adapter's `IntegerKeyedIntake` reads the store and
//! the server key files, tfhe-rs sums, and the client key file decrypts.
#![allow(clippy::unwrap_used)]

mod common;

use common::{KeySet, assert_error, credentials_path, device_frames, mode, run, run_ok, s, scratch_copy};
use std::path::PathBuf;
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
use tfhe_sbc_device::files::credentials::{credentials_file_bytes, decode_credentials};
use tfhe_sbc_device::files::public_key::{decode_public_key_header, public_key_body, public_key_file_bytes_for};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};
use tfhe_sbc_keys::KeySetParameters;

const PER_DEVICE: u64 = 41;
const FLEET: u64 = 42;
const PUBLIC_KEY: u64 = 43;
const KEY_ID: &str = "0x1d000004";
const KEY_ID_VALUE: u32 = 0x1d00_0004;

/// One integer key set for the whole file, with its three devices.
fn key_set() -> &'static KeySet {
    let init = ["--parameters", "integer", "--key-id", KEY_ID];
    KeySet::shared(
        &init,
        &[(PER_DEVICE, "per-device"), (FLEET, "fleet"), (PUBLIC_KEY, "public-key")],
    )
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
        ("public_key.tspk", 0o644),
    ] {
        assert_eq!(mode(&dir.join(name)), expected, "{name}");
    }
    assert!(init.contains("public_key.tspk"), "{init}");
    for (id, out) in [PER_DEVICE, FLEET, PUBLIC_KEY].iter().zip(&key_set().issue_outputs) {
        assert_eq!(mode(&credentials_path(&dir, *id)), 0o600, "device {id}");
        assert!(out.contains("parameter set integer"), "{out}");
        eprint!("{out}");
    }
    assert!(
        key_set().issue_outputs[2].contains("public-key mode")
            && key_set().issue_outputs[2].contains("the public key (nothing that decrypts)"),
        "{}",
        key_set().issue_outputs[2]
    );
    let envelope = read_server_key_envelope(&dir.join("server_key.bin")).unwrap();
    assert_eq!(envelope.parameters, KeySetParameters::Integer);
    assert_eq!(envelope.key_id, KEY_ID_VALUE);

    // The store records parameter set 4 and the mode of each device; the credential files agree.
    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    assert_eq!(store.server_key_fingerprint(), envelope.server_key_fingerprint);
    for (id, mode, stored) in [
        (PER_DEVICE, KeyMode::PerDeviceSecretKey, 2 * 2048 * 8 + 16),
        (FLEET, KeyMode::FleetSecretKey, 0),
        (PUBLIC_KEY, KeyMode::PublicKey, 0),
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
    assert!(
        shown.contains("per-device") && shown.contains("fleet") && shown.contains("public-key"),
        "{shown}"
    );
    assert!(shown.contains("public_key.tspk"), "{shown}");
    assert!(shown.contains("devices     3"), "{shown}");
}

/// The integer public-key device's files: the key set's public key (`u64` body words, 16,443 bytes, set 4,
/// bound to the key set's key id) inside its credential file (16,511 bytes), and its store record.
#[test]
fn an_integer_public_key_device_holds_the_key_sets_64_bit_public_key() {
    let dir = dir();
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
    let public_key = std::fs::read(dir.join("public_key.tspk")).unwrap();
    assert_eq!(public_key.len(), public_key_file_bytes_for(&params));
    assert_eq!(public_key.len(), 4 + 1 + 2 + 4 + 32 + 8 * 2048 + 16);
    assert_eq!(public_key.len(), 16_443);
    assert_eq!(
        &public_key[..7],
        b"TSPK\x01\x04\x00",
        "magic, version 1, parameter set 4 (u16 LE)"
    );
    assert_eq!(public_key[7..11], KEY_ID_VALUE.to_le_bytes(), "key id (u32 LE)");
    let header = decode_public_key_header(&public_key).unwrap();
    assert_eq!(
        (header.parameters.id(), header.key_id),
        (ParameterSetId(4), KEY_ID_VALUE)
    );

    let bytes = std::fs::read(credentials_path(&dir, PUBLIC_KEY)).unwrap();
    assert_eq!(bytes.len(), credentials_file_bytes(KeyMode::PublicKey, &params));
    assert_eq!(bytes.len(), 68 + 16_443);
    let file = decode_credentials(&bytes).unwrap();
    assert_eq!(
        (
            file.mode,
            file.parameters.id(),
            file.credentials.device_id(),
            file.credentials.key_id()
        ),
        (KeyMode::PublicKey, ParameterSetId(4), PUBLIC_KEY, KEY_ID_VALUE)
    );
    assert_eq!(
        file.key_material,
        &public_key[..],
        "the key set's public key, as init wrote it"
    );
    // Bound to the key set: the device refuses it under any other key id.
    let (_, body) = public_key_body(file.key_material, KEY_ID_VALUE).unwrap();
    assert_eq!(body.len(), 8 * 2048);
    assert!(public_key_body(file.key_material, KEY_ID_VALUE + 1).is_err());

    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    let record = store.get(PUBLIC_KEY).unwrap();
    assert_eq!(
        (
            record.mode(),
            record.parameter_set(),
            record.key_id(),
            record.key().stored_bytes()
        ),
        (KeyMode::PublicKey, ParameterSetId(4), KEY_ID_VALUE, 0)
    );
    assert_eq!(
        file.credentials.mac_key().as_bytes(),
        record.credentials().mac_key().as_bytes()
    );
    // A second public-key device gets the same public key and its own MAC key.
    let scratch = scratch_copy(&dir);
    let out = run_ok(&[
        "issue",
        "--dir",
        s(scratch.path()),
        "--device-id",
        "44",
        "--mode",
        "public-key",
    ]);
    assert!(!out.contains("made now"), "{out}");
    let other = std::fs::read(credentials_path(scratch.path(), 44)).unwrap();
    let other = decode_credentials(&other).unwrap();
    assert_eq!(other.key_material, &public_key[..]);
    assert_ne!(
        other.credentials.mac_key().as_bytes(),
        file.credentials.mac_key().as_bytes()
    );
}

#[test]
fn integer_key_set_errors_are_one_line() {
    let dir = dir();
    // Public-key and fleet devices carry the key set's key id.
    for (mode, why) in [
        (
            "public-key",
            &["--key-id", "public-key devices encrypt under the key set's key"][..],
        ),
        ("fleet", &["--key-id"][..]),
    ] {
        let issue = [
            "issue",
            "--dir",
            s(&dir),
            "--device-id",
            "99",
            "--mode",
            mode,
            "--key-id",
            "7",
        ];
        assert_error(&run(&issue), why);
    }
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

    // A public key of another key set (a boolean set's file would be refused the same way), then a corrupt one.
    let mut public_key = std::fs::read(dir.join("public_key.tspk")).unwrap();
    let scratch = scratch_copy(&dir);
    let forged = public_key_with_key_id(&public_key, KEY_ID_VALUE + 1);
    std::fs::write(scratch.path().join("public_key.tspk"), &forged).unwrap();
    let issue =
        |d: &std::path::Path, id: &str| run(&["issue", "--dir", s(d), "--device-id", id, "--mode", "public-key"]);
    assert_error(
        &issue(scratch.path(), "99"),
        &["public_key.tspk (key id 0x1d000005, parameter set 4) is not the public key of the key set"],
    );
    public_key[100] ^= 1;
    std::fs::write(scratch.path().join("public_key.tspk"), &public_key).unwrap();
    assert_error(
        &issue(scratch.path(), "99"),
        &["public_key.tspk", "not a valid public-key file for integer"],
    );
    assert_error(&run(&["show", "--dir", s(scratch.path())]), &["public_key.tspk"]);
}

/// `public_key` (a valid public-key file) relabelled with key id `key_id`, its check recomputed: a valid
/// file of another key set.
fn public_key_with_key_id(public_key: &[u8], key_id: u32) -> Vec<u8> {
    let header = decode_public_key_header(public_key).unwrap();
    let mut body = vec![0u64; 2048];
    tfhe_sbc_device::files::public_key::decode_public_key(public_key, &mut body).unwrap();
    let mut out = vec![0u8; public_key.len()];
    tfhe_sbc_device::files::public_key::encode_public_key(
        header.parameters.id(),
        key_id,
        &header.seed,
        &body,
        &mut out,
    )
    .unwrap();
    out
}

/// An integer key set made before the integer set had public keys (no `public_key.tspk`): its first
/// public-key device makes the key from the client key and writes it; once a public-key device holds it, a
/// lost file is refused instead of replaced.
#[test]
fn an_integer_key_set_without_a_public_key_gets_one_at_its_first_public_key_device() {
    let scratch = scratch_copy(&dir());
    let d = scratch.path();
    std::fs::remove_file(d.join("public_key.tspk")).unwrap();
    // The public-key device 43 holds the lost key: restore the file, do not replace it.
    let issue = |id: &str| run(&["issue", "--dir", s(d), "--device-id", id, "--mode", "public-key"]);
    assert_error(&issue("50"), &["public_key.tspk not found"]);
    assert_error(&run(&["show", "--dir", s(d)]), &["public_key.tspk not found"]);

    // As the key set was before: no public-key device, no public key. show lists no public key.
    let store_path = d.join("key_store.bin");
    let mut store = KeyStore::read_file(&store_path).unwrap();
    store.remove(PUBLIC_KEY).unwrap();
    std::fs::write(&store_path, store.encode().as_slice()).unwrap();
    std::fs::remove_file(credentials_path(d, PUBLIC_KEY)).unwrap();
    let shown = run_ok(&["show", "--dir", s(d)]);
    assert!(!shown.contains("public_key.tspk"), "{shown}");

    let out = run_ok(&["issue", "--dir", s(d), "--device-id", "50", "--mode", "public-key"]);
    assert!(out.contains("public_key.tspk") && out.contains("made now"), "{out}");
    let public_key = std::fs::read(d.join("public_key.tspk")).unwrap();
    assert_eq!(mode(&d.join("public_key.tspk")), 0o644);
    let header = decode_public_key_header(&public_key).unwrap();
    assert_eq!(
        (header.parameters.id(), header.key_id),
        (ParameterSetId(4), KEY_ID_VALUE)
    );
    let file = std::fs::read(credentials_path(d, 50)).unwrap();
    assert_eq!(decode_credentials(&file).unwrap().key_material, &public_key[..]);
    // The next one reuses it.
    let out = run_ok(&["issue", "--dir", s(d), "--device-id", "51", "--mode", "public-key"]);
    assert!(!out.contains("made now"), "{out}");
    let file = std::fs::read(credentials_path(d, 51)).unwrap();
    assert_eq!(decode_credentials(&file).unwrap().key_material, &public_key[..]);
    let shown = run_ok(&["show", "--dir", s(d)]);
    assert!(shown.contains("public_key.tspk"), "{shown}");
}

/// `issue --count N` provisions N consecutive devices in one pass: one public key for all of them even when
/// the pass makes it; a range that meets a device already in the store writes nothing at all.
#[test]
fn issue_count_provisions_consecutive_devices_in_one_pass() {
    let scratch = scratch_copy(&dir());
    let d = scratch.path();
    let store_path = d.join("key_store.bin");
    let mut store = KeyStore::read_file(&store_path).unwrap();
    store.remove(PUBLIC_KEY).unwrap();
    std::fs::write(&store_path, store.encode().as_slice()).unwrap();
    std::fs::remove_file(credentials_path(d, PUBLIC_KEY)).unwrap();
    std::fs::remove_file(d.join("public_key.tspk")).unwrap();
    let before = KeyStore::read_file(&store_path).unwrap().len();

    let issue = |first: &str, count: &str, mode: &str| {
        run(&[
            "issue",
            "--dir",
            s(d),
            "--device-id",
            first,
            "--count",
            count,
            "--mode",
            mode,
        ])
    };
    let out = issue("60", "3", "public-key");
    assert!(out.status.success(), "{out:?}");
    let public_key = std::fs::read(d.join("public_key.tspk")).unwrap();
    for id in 60..63 {
        let file = std::fs::read(credentials_path(d, id)).unwrap();
        assert_eq!(
            decode_credentials(&file).unwrap().key_material,
            &public_key[..],
            "device {id}"
        );
    }
    assert!(issue("70", "4", "fleet").status.success());
    let store = KeyStore::read_file(&store_path).unwrap();
    assert_eq!(store.len(), before + 7);
    assert!((60..63).chain(70..74).all(|id| store.get(id).is_some()));

    // 80..=84 meets device 82: refused, nothing written.
    assert!(issue("82", "1", "fleet").status.success());
    assert_error(&issue("80", "5", "fleet"), &["82"]);
    assert!(!credentials_path(d, 80).exists() && !credentials_path(d, 84).exists());
    assert_eq!(KeyStore::read_file(&store_path).unwrap().len(), before + 8);
    let zero = issue("90", "0", "fleet");
    assert_eq!(zero.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("'0' for '--count"));
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

    // The public-key device, built from its credential file as the Pi client builds it: public-key frames
    // (kind 2, u64 words, the mask in full), extracted as a fleet device's.
    let bytes = std::fs::read(credentials_path(&dir, PUBLIC_KEY)).unwrap();
    let readings: Vec<u16> = (0..300u16).map(|i| i.wrapping_mul(40_503) ^ 0x3c3c).collect();
    let message: Vec<u8> = readings.iter().flat_map(|r| r.to_le_bytes()).collect();
    let frames = device_frames(&bytes, &message, 3);
    assert_eq!(frames.len(), 2, "256 u16 readings per frame");
    for frame in &frames {
        assert_eq!(frame.len(), frame_bytes(FrameKind::PublicKey, 1, 2048, 64, 64));
        assert_eq!(frame.len(), 47 + 2 * 8 * 2048 + 16);
        assert_eq!(frame.len(), 32_831);
        assert_eq!(frame[5], FrameKind::PublicKey as u8);
    }
    let mut decrypted = Vec::new();
    for frame in &frames {
        let opened = intake.receive(frame, Instant::now()).unwrap();
        let values: Vec<FheUint16> = intake.frame_readings::<FheUint16Id>(&opened).unwrap();
        decrypted.extend(values.iter().map(|v| -> u16 { v.decrypt(client_key.get()) }));
    }
    assert_eq!(decrypted, readings);
}
