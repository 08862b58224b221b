//! `tfhe-sbc-keys` on `TFHE_LIB_PARAMETERS`, run as the trusted party runs it: one `init` for the whole file
//! (key generation takes seconds), three devices issued into it (per-device, public key, fleet), then the
//! files, the key store, `show`, an end-to-end check through the adapter's `KeyedIntake` and tfhe-rs, and
//! the errors. Tests that damage files work on a scratch copy of the key set.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    KeySet, assert_decrypts, assert_error, credentials_path, device_frames, mode, receive_message, run, run_ok, s,
    scratch_copy,
};
use rand_core::{Rng, SeedableRng};
use tfhe::boolean::server_key::BinaryBooleanGates;
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::{BooleanBridge, server_key_fingerprint};
use tfhe_sbc_adapter::key_set::client_key::read_client_key;
use tfhe_sbc_adapter::key_set::server_key::read_server_key;
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, KeyMode, KeyStore, KeyedIntake};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::credentials::decode_credentials;

const PER_DEVICE: u64 = 1;
const PUBLIC_KEY: u64 = 2;
const FLEET: u64 = 3;
const KEY_ID: &str = "0x5eed0001";
const KEY_ID_VALUE: u32 = 0x5eed_0001;

/// One key set for the whole file, with its three devices.
fn key_set() -> &'static KeySet {
    let init = ["--parameters", "tfhe-lib", "--key-id", KEY_ID];
    KeySet::shared(
        &init,
        &[(PER_DEVICE, "per-device"), (PUBLIC_KEY, "public-key"), (FLEET, "fleet")],
    )
}

fn dir() -> std::path::PathBuf {
    key_set().dir()
}

#[test]
fn init_and_issue_write_every_file_with_its_mode() {
    let init = &key_set().init_output;
    assert!(init.contains("TFHE_LIB_PARAMETERS"), "{init}");
    assert!(init.contains("0x5eed0001"), "{init}");
    let dir = dir();
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("devices")), 0o700);
    for (name, expected) in [
        ("client_key.bin", 0o600),
        ("key_store.bin", 0o600),
        ("server_key.bin", 0o644),
        ("public_key.tspk", 0o644),
    ] {
        assert_eq!(mode(&dir.join(name)), expected, "{name}");
    }
    for id in [PER_DEVICE, PUBLIC_KEY, FLEET] {
        assert_eq!(mode(&credentials_path(&dir, id)), 0o600, "device {id}");
    }
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.join("devices")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn credential_files_and_the_key_store_agree_and_bind_to_the_server_key() {
    let dir = dir();
    let (server_header, server_key) = read_server_key(&dir.join("server_key.bin")).unwrap();
    let (client_header, _client_key) = read_client_key(&dir.join("client_key.bin")).unwrap();
    assert_eq!(server_header.key_id, KEY_ID_VALUE);
    assert_eq!(
        client_header.server_key_fingerprint,
        server_header.server_key_fingerprint
    );

    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    assert_eq!(store.server_key_fingerprint(), server_key_fingerprint(&server_key));
    assert_eq!(store.len(), 3);
    let public_key = std::fs::read(dir.join("public_key.tspk")).unwrap();
    for (id, expected_mode) in [
        (PER_DEVICE, KeyMode::PerDeviceSecretKey),
        (PUBLIC_KEY, KeyMode::PublicKey),
        (FLEET, KeyMode::FleetSecretKey),
    ] {
        let bytes = std::fs::read(credentials_path(&dir, id)).unwrap();
        let file = decode_credentials(&bytes).unwrap();
        let record = store.get(id).unwrap();
        assert_eq!(file.mode, expected_mode);
        assert_eq!(record.mode(), expected_mode);
        assert_eq!(file.parameters.id(), TFHE_LIB_GLWE_1024.id());
        assert_eq!(file.credentials.device_id(), id);
        assert_eq!(file.credentials.key_id(), KEY_ID_VALUE);
        assert_eq!(record.key_id(), KEY_ID_VALUE);
        assert_eq!(
            file.credentials.mac_key().as_bytes(),
            record.credentials().mac_key().as_bytes()
        );
        match expected_mode {
            KeyMode::PerDeviceSecretKey => {
                assert!(matches!(record.key(), DeviceKeyMaterial::PerDevice(_)));
                assert_eq!(file.key_material.len(), 128);
            }
            KeyMode::PublicKey => assert_eq!(file.key_material, &public_key[..]),
            KeyMode::FleetSecretKey => assert_eq!(file.key_material.len(), 128),
        }
    }
    // Every device has its own MAC key.
    let macs: Vec<[u8; 32]> = store.iter().map(|r| *r.credentials().mac_key().as_bytes()).collect();
    assert!(macs[0] != macs[1] && macs[1] != macs[2] && macs[0] != macs[2]);
}

#[test]
fn show_lists_the_devices_and_no_secret() {
    let dir = dir();
    let output = run(&["show", "--dir", s(&dir)]);
    assert!(output.status.success());
    assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("TFHE_LIB_PARAMETERS"), "{stdout}");
    assert!(stdout.contains("devices     3"), "{stdout}");
    for (id, name) in [(PER_DEVICE, "per-device"), (PUBLIC_KEY, "public-key"), (FLEET, "fleet")] {
        let row = stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(&id.to_string()))
            .unwrap_or_else(|| panic!("no row for device {id}: {stdout}"));
        assert!(row.contains(name) && row.contains("0x5eed0001"), "{row}");
    }
    assert!(stdout.contains("32.0 KiB"), "the per-device key's size: {stdout}");
    // No MAC key appears, in any common spelling.
    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    for record in store.iter() {
        let mac = record.credentials().mac_key().as_bytes();
        let hex: String = mac[..6].iter().map(|b| format!("{b:02x}")).collect();
        assert!(
            !stdout.to_lowercase().contains(&hex),
            "MAC key of device {}",
            record.device_id()
        );
        assert!(
            !stdout.contains(&format!("{:?}", &mac[..4])),
            "MAC key of device {}",
            record.device_id()
        );
    }
}

/// The end-to-end check: devices built from the credential files encrypt frames that the adapter's
/// `KeyedIntake`, built from the written key store and server key, accepts, and whose bits (after each
/// device's key switch) decrypt under the written client key; tfhe-rs gates mix the devices' bits.
#[test]
fn devices_from_credential_files_reach_tfhe_rs_through_the_keyed_intake() {
    let dir = dir();
    let (_, server_key) = read_server_key(&dir.join("server_key.bin")).unwrap();
    let (_, client_key) = read_client_key(&dir.join("client_key.bin")).unwrap();
    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    let bridge = BooleanBridge::new(&server_key).unwrap();
    let mut intake = KeyedIntake::new(IntakeConfig::default(), store, bridge).unwrap();

    let mut sensor = Blake2bXof::seed_from_u64(7);
    let mut bits = Vec::new();
    for (i, id) in [PER_DEVICE, PUBLIC_KEY, FLEET].into_iter().enumerate() {
        let mut message = [0u8; 16];
        sensor.fill_bytes(&mut message);
        let file = std::fs::read(credentials_path(&dir, id)).unwrap();
        let frames = device_frames(&file, &message, 10 + i as u8);
        let received = receive_message(&frames, |frame, now| intake.receive(frame, now));
        assert_eq!(received.device_id, id);
        let device_bits = intake.converter().message_to_booleans(&received).unwrap();
        assert_decrypts(client_key.get(), &device_bits, &message);
        bits.push((message, device_bits));
    }
    // Gates across devices: per-device AND public key, XOR fleet.
    for j in 0..8 {
        let bit = |d: usize| (bits[d].0[j / 8] >> (j % 8)) & 1 == 1;
        let and = server_key.and(&bits[0].1[j], &bits[1].1[j]);
        let out = server_key.xor(&and, &bits[2].1[j]);
        assert_eq!(client_key.get().decrypt(&out), (bit(0) & bit(1)) ^ bit(2), "gate {j}");
    }
}

#[test]
fn a_corrupted_key_store_is_refused() {
    let scratch = scratch_copy(&dir());
    let path = scratch.path().join("key_store.bin");
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let d = s(scratch.path());
    assert_error(
        &run(&["issue", "--dir", d, "--device-id", "9", "--mode", "fleet"]),
        &["key_store.bin", "corrupt", "restore it"],
    );
    assert_error(&run(&["show", "--dir", d]), &["key_store.bin", "corrupt"]);
    assert!(!credentials_path(scratch.path(), 9).exists());
}

#[test]
fn a_truncated_credential_file_is_refused() {
    let scratch = scratch_copy(&dir());
    let path = credentials_path(scratch.path(), PER_DEVICE);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert_error(
        &run(&["show", "--dir", s(scratch.path())]),
        &["1.tsdc", "truncated (98 of 196 bytes)"],
    );
    // Corrupt rather than short: still refused, with its own message.
    let mut bad = bytes.clone();
    bad[40] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    assert_error(
        &run(&["show", "--dir", s(scratch.path())]),
        &["1.tsdc", "not a valid credential file"],
    );
}

#[test]
fn a_duplicate_device_id_is_refused() {
    let scratch = scratch_copy(&dir());
    let d = s(scratch.path());
    let before = std::fs::read(scratch.path().join("key_store.bin")).unwrap();
    assert_error(
        &run(&["issue", "--dir", d, "--device-id", "2", "--mode", "fleet"]),
        &["device 2 is already provisioned", "pick another --device-id"],
    );
    assert_eq!(std::fs::read(scratch.path().join("key_store.bin")).unwrap(), before);
    // A credential file the key store does not know (an interrupted issue) is not overwritten either.
    std::fs::write(credentials_path(scratch.path(), 5), b"left over").unwrap();
    assert_error(
        &run(&["issue", "--dir", d, "--device-id", "5", "--mode", "fleet"]),
        &["5.tsdc exists", "key store has no device 5"],
    );
}

#[test]
fn mismatched_wrong_and_missing_files_are_refused() {
    let scratch = scratch_copy(&dir());
    let d = s(scratch.path());
    let issue = |args: &[&str]| {
        let mut all = vec!["issue", "--dir", d];
        all.extend_from_slice(args);
        run(&all)
    };
    // A key store of another key set.
    let store = scratch.path().join("key_store.bin");
    let original = std::fs::read(&store).unwrap();
    std::fs::write(&store, KeyStore::with_fingerprint([7; 32]).encode().as_slice()).unwrap();
    assert_error(
        &issue(&["--device-id", "9", "--mode", "public-key"]),
        &["bound to another server key", "run init again or point --dir at"],
    );
    std::fs::write(&store, &original).unwrap();

    // The server key file where the client key should be.
    let client = scratch.path().join("client_key.bin");
    std::fs::remove_file(&client).unwrap();
    std::os::unix::fs::symlink(dir().join("server_key.bin"), &client).unwrap();
    assert_error(
        &issue(&["--device-id", "9", "--mode", "per-device"]),
        &["client_key.bin", "holds the server key, not the client key"],
    );
    // A truncated client key, then none.
    let key = std::fs::read(dir().join("client_key.bin")).unwrap();
    std::fs::remove_file(&client).unwrap();
    std::fs::write(&client, &key[..key.len() - 100]).unwrap();
    assert_error(
        &issue(&["--device-id", "9", "--mode", "fleet"]),
        &["client_key.bin", "truncated"],
    );
    std::fs::remove_file(&client).unwrap();
    assert_error(
        &issue(&["--device-id", "9", "--mode", "fleet"]),
        &["client_key.bin not found", "run `tfhe-sbc-keys init"],
    );
    // Not a key file at all.
    std::fs::write(&client, b"-----BEGIN PRIVATE KEY-----\n").unwrap();
    assert_error(&issue(&["--device-id", "9", "--mode", "fleet"]), &["bad magic"]);
    // A public-key device needs no client key.
    run_ok(&["issue", "--dir", d, "--device-id", "9", "--mode", "public-key"]);
    // A truncated server key, then a corrupt one.
    let server = scratch.path().join("server_key.bin");
    let key = std::fs::read(dir().join("server_key.bin")).unwrap();
    std::fs::remove_file(&server).unwrap();
    std::fs::write(&server, &key[..4096]).unwrap();
    assert_error(
        &issue(&["--device-id", "10", "--mode", "public-key"]),
        &["server_key.bin", "the server key file is truncated (4096 of"],
    );
    let mut corrupt = key.clone();
    corrupt[key.len() / 3] ^= 0x80;
    std::fs::write(&server, &corrupt).unwrap();
    assert_error(
        &run(&["show", "--dir", d]),
        &[
            "server_key.bin",
            "corrupt (integrity check failed)",
            "restore it from a backup",
        ],
    );

    // A directory that is not a key set, and init over an existing key set.
    let empty = tempfile::tempdir().unwrap();
    assert_error(
        &run(&["show", "--dir", s(empty.path())]),
        &["server_key.bin not found", "init"],
    );
    // issue and repair refuse it too, and leave nothing in it (no lock file).
    for command in [
        &["issue", "--dir", s(empty.path()), "--device-id", "9", "--mode", "fleet"][..],
        &["repair", "--dir", s(empty.path())][..],
    ] {
        assert_error(&run(command), &["server_key.bin not found", "init"]);
        assert_eq!(
            std::fs::read_dir(empty.path()).unwrap().count(),
            0,
            "{command:?} left a file"
        );
    }
    assert_error(
        &run(&["init", "--dir", d, "--parameters", "tfhe-lib"]),
        &["already holds a key set", "pick an empty --dir"],
    );
}

#[test]
fn key_ids_follow_the_mode() {
    let scratch = scratch_copy(&dir());
    let d = s(scratch.path());
    assert_error(
        &run(&[
            "issue",
            "--dir",
            d,
            "--device-id",
            "20",
            "--mode",
            "fleet",
            "--key-id",
            "77",
        ]),
        &[
            "--key-id 0x0000004d is not the key set's key id 0x5eed0001",
            "omit --key-id",
        ],
    );
    run_ok(&[
        "issue",
        "--dir",
        d,
        "--device-id",
        "20",
        "--mode",
        "per-device",
        "--key-id",
        "77",
    ]);
    run_ok(&[
        "issue",
        "--dir",
        d,
        "--device-id",
        "21",
        "--mode",
        "public-key",
        "--key-id",
        KEY_ID,
    ]);
    let stdout = run_ok(&["show", "--dir", d]);
    assert!(stdout.contains("0x0000004d  per-device"), "{stdout}");
    assert!(stdout.contains("devices     5"), "{stdout}");
}

#[test]
fn help_everywhere_and_usage_errors() {
    for args in [
        &["--help"][..],
        &["init", "--help"],
        &["issue", "--help"],
        &["show", "--help"],
    ] {
        let output = run(args);
        assert!(output.status.success(), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stdout).contains("--"), "{args:?}");
    }
    let output = run(&["issue", "--dir", ".", "--device-id", "1", "--mode", "sideways"]);
    assert_eq!(output.status.code(), Some(2));
    let output = run(&[
        "init",
        "--dir",
        ".",
        "--parameters",
        "tfhe-lib",
        "--key-id",
        "0x1_0000_0000",
    ]);
    assert_eq!(output.status.code(), Some(2));
}

/// A key set made inside a git work tree is ignored by git as a whole, whatever the directory's name (the
/// repository's .gitignore names keys/, lists/ and dev-keys/: a new user's `ints/` left its lock file
/// untracked, and `results` then refused the dirty tree).
#[test]
fn a_key_set_inside_a_git_work_tree_leaves_nothing_to_commit() {
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .output()
            .expect("git runs (the README's set-up has it: CI clones with it)")
    };
    assert!(git(&["init", "-q"]).status.success());
    let dir = repo.path().join("ints");
    let dir = dir.to_str().unwrap();
    run_ok(&["init", "--dir", dir, "--parameters", "tfhe-lib"]);
    run_ok(&["issue", "--dir", dir, "--device-id", "7", "--mode", "per-device"]);
    let status = git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(status.status.success());
    assert!(
        status.stdout.is_empty(),
        "a key set in the work tree shows in git status:\n{}",
        String::from_utf8_lossy(&status.stdout)
    );
}
