//! `tfhe-sbc-keys` on the 128-bit `DEFAULT_PARAMETERS_KS_PBS` (`k = 3`, `N = 512`): fleet, public-key and
//! per-device devices are issued, and their frames go through the intake and the `BigKeyBridge` (extraction;
//! one GLWE switch per frame into the big key for the per-device device) into bits that decrypt under the
//! written client key. One `init` for the tests of this set; the help test makes a key set of every set.
#![allow(clippy::unwrap_used)]

mod common;

use common::{KeySet, assert_decrypts, credentials_path, device_frames, receive_message, run_ok};
use std::path::PathBuf;
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig};
use tfhe_sbc_adapter::interop::Converter;
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet};
use tfhe_sbc_adapter::key_set::client_key::read_client_key;
use tfhe_sbc_adapter::key_set::server_key::read_server_key;
use tfhe_sbc_adapter::key_store::{KeyMode, KeyStore};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_core::parameters::DEFAULT_KS_PBS_GLWE_512_K3;
use tfhe_sbc_device::files::credentials::decode_credentials;

const FLEET: u64 = 1;
const PUBLIC_KEY: u64 = 2;
const PER_DEVICE: u64 = 3;

/// One key set for the whole file, with its two devices.
fn key_set() -> &'static KeySet {
    let key_set = KeySet::shared(
        &["--parameters", "ks-pbs-512"],
        &[(FLEET, "fleet"), (PUBLIC_KEY, "public-key"), (PER_DEVICE, "per-device")],
    );
    let init = &key_set.init_output;
    assert!(init.contains("DEFAULT_PARAMETERS_KS_PBS"), "{init}");
    key_set
}

fn dir() -> PathBuf {
    key_set().dir()
}

#[test]
fn a_per_device_device_gets_its_own_key_and_a_glwe_key_switching_key() {
    let store = KeyStore::decode(&std::fs::read(dir().join("key_store.bin")).unwrap()).unwrap();
    let record = store.get(PER_DEVICE).unwrap();
    assert_eq!(record.mode(), KeyMode::PerDeviceSecretKey);
    // k * 2 levels * N body words and a 16-byte seed.
    assert_eq!(record.key().stored_bytes(), 3 * 2 * 512 * 4 + 16);
    let file = std::fs::read(credentials_path(&dir(), PER_DEVICE)).unwrap();
    let decoded = decode_credentials(&file).unwrap();
    assert_eq!(
        (decoded.mode, decoded.parameters.id()),
        (KeyMode::PerDeviceSecretKey, DEFAULT_KS_PBS_GLWE_512_K3.id())
    );
}

#[test]
fn fleet_public_key_and_per_device_devices_reach_tfhe_rs() {
    let dir = dir();
    let (header, server_key) = read_server_key(&dir.join("server_key.bin")).unwrap();
    assert_eq!(header.set, BooleanSet::DefaultKsPbs);
    let (_, client_key) = read_client_key(&dir.join("client_key.bin")).unwrap();
    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    assert_eq!(
        store.server_key_fingerprint(),
        tfhe_sbc_adapter::interop::server_key_fingerprint(&server_key)
    );
    // A big-key set's adapter: the store's credentials in a registry (public-key frames only from the
    // public-key device) and their key material in the bridge (extraction; a GLWE switch per frame for the
    // per-device device).
    let bridge = BigKeyBridge::for_server_key(BooleanSet::DefaultKsPbs, &server_key).unwrap();
    let mut registry = DeviceRegistry::new();
    for record in store.into_records() {
        let set = record.parameter_set();
        let (credentials, material) = record.into_parts();
        bridge
            .register(credentials.device_id(), credentials.key_id(), set, material.clone())
            .unwrap();
        registry.register_device(credentials, material.encryption(), 0).unwrap();
    }
    let mut intake = Intake::new(IntakeConfig::default(), registry);

    for (id, mode, message) in [
        (FLEET, KeyMode::FleetSecretKey, *b"fleet device: 3x512"),
        (PUBLIC_KEY, KeyMode::PublicKey, *b"public-key device!!"),
        (PER_DEVICE, KeyMode::PerDeviceSecretKey, *b"per-device: own key"),
    ] {
        let file = std::fs::read(credentials_path(&dir, id)).unwrap();
        let decoded = decode_credentials(&file).unwrap();
        assert_eq!(decoded.mode, mode);
        assert_eq!(decoded.parameters.id(), DEFAULT_KS_PBS_GLWE_512_K3.id());
        let frames = device_frames(&file, &message, id as u8);
        let received = receive_message(&frames, |frame, now| intake.receive(frame, now));
        assert_eq!(received.device_id, id);
        let bits = bridge.convert(&received).unwrap();
        assert_decrypts(client_key.get(), &bits[..8 * message.len()], &message);
    }
}

#[test]
fn show_names_the_set_and_its_devices() {
    let stdout = run_ok(&["show", "--dir", dir().to_str().unwrap()]);
    assert!(stdout.contains("ks-pbs-512 (DEFAULT_PARAMETERS_KS_PBS"), "{stdout}");
    assert!(stdout.contains("devices     3"), "{stdout}");
    assert!(
        stdout.contains("fleet") && stdout.contains("public-key") && stdout.contains("per-device"),
        "{stdout}"
    );
}

/// What the help and the README say about key modes is what the tool does. `init --help` gives each
/// parameter set's key modes, `issue --help` (--mode) and the README's Provisioning section say every set
/// takes every key mode; every set `init --help` lists is made here and issues a per-device, a fleet and a
/// public-key device, each recorded in its mode. (The help once said "fleet and public-key modes" for the
/// ks-pbs sets, and the README that per-device keys need tfhe-lib or integer, while the tool issued
/// per-device devices on every set.)
#[test]
fn every_set_the_help_lists_takes_every_key_mode_as_the_help_and_readme_say() {
    let one_line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let issue_help = one_line(&run_ok(&["issue", "--help"]));
    assert!(
        issue_help.contains("Every parameter set takes fleet, public-key and per-device"),
        "{issue_help}"
    );
    // The repository's README (not in this package: from the package, that part is skipped, and says so).
    match tfhe_sbc_adapter::repository::root(env!("CARGO_MANIFEST_DIR")) {
        Some(root) => {
            let readme = one_line(&std::fs::read_to_string(root.join("README.md")).unwrap());
            assert!(
                readme.contains("Every parameter set takes fleet, per-device and public-key devices"),
                "the README's Provisioning section"
            );
        }
        None => eprintln!("skipped: the README check needs the repository (its README is not in this package)"),
    }

    let init_help = run_ok(&["init", "--help"]);
    let sets: Vec<(&str, &str)> = init_help
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("- ")?.split_once(':'))
        .collect();
    let names: Vec<&str> = sets.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        ["tfhe-lib", "ks-pbs-512", "ks-pbs-1024", "integer"],
        "{init_help}"
    );
    for (set, line) in sets {
        assert!(line.contains("every key mode"), "{set}: {line}");
        let modes = [
            (1, "per-device", KeyMode::PerDeviceSecretKey),
            (2, "fleet", KeyMode::FleetSecretKey),
            (3, "public-key", KeyMode::PublicKey),
        ];
        let key_set = KeySet::new(&["--parameters", set], &modes.map(|(id, name, _)| (id, name)));
        let store = KeyStore::decode(&std::fs::read(key_set.dir().join("key_store.bin")).unwrap()).unwrap();
        for (id, name, mode) in modes {
            assert_eq!(store.get(id).unwrap().mode(), mode, "{set}: {name}");
            assert!(credentials_path(&key_set.dir(), id).exists(), "{set}: {name}");
        }
    }
}
