//! `tfhe-sbc-keys` on the 128-bit `DEFAULT_PARAMETERS_KS_PBS` (`k = 3`, `N = 512`): per-device keys are
//! refused (the set's gates take big-key inputs), fleet and public-key devices are issued, and their frames
//! go through the intake and the `BigKeyBridge` (no key switch) into bits that decrypt under the written
//! client key. One `init` for the whole file.
#![allow(clippy::unwrap_used)]

mod common;

use common::{KeySet, assert_decrypts, assert_error, credentials_path, device_frames, receive_message, run, run_ok};
use std::path::PathBuf;
use std::sync::OnceLock;
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig};
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet};
use tfhe_sbc_adapter::key_set::client_key::read_client_key;
use tfhe_sbc_adapter::key_set::server_key::read_server_key;
use tfhe_sbc_adapter::key_store::{KeyMode, KeyStore};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_core::parameters::DEFAULT_KS_PBS_GLWE_512_K3;
use tfhe_sbc_device::files::credentials::decode_credentials;

const FLEET: u64 = 1;
const PUBLIC_KEY: u64 = 2;

/// One key set for the whole file, with its two devices.
fn key_set() -> &'static KeySet {
    static KEY_SET: OnceLock<KeySet> = OnceLock::new();
    KEY_SET.get_or_init(|| {
        let key_set = KeySet::new(
            &["--parameters", "ks-pbs-512"],
            &[(FLEET, "fleet"), (PUBLIC_KEY, "public-key")],
        );
        let init = &key_set.init_output;
        assert!(init.contains("DEFAULT_PARAMETERS_KS_PBS"), "{init}");
        key_set
    })
}

fn dir() -> PathBuf {
    key_set().dir()
}

#[test]
fn per_device_keys_are_refused_on_a_ks_pbs_set() {
    let dir = dir();
    let before = std::fs::read(dir.join("key_store.bin")).unwrap();
    assert_error(
        &run(&[
            "issue",
            "--dir",
            dir.to_str().unwrap(),
            "--device-id",
            "3",
            "--mode",
            "per-device",
        ]),
        &[
            "--mode per-device is not allowed with parameter set ks-pbs-512",
            "--mode fleet or --mode public-key",
        ],
    );
    assert_eq!(std::fs::read(dir.join("key_store.bin")).unwrap(), before);
    assert!(!credentials_path(&dir, 3).exists());
}

#[test]
fn fleet_and_public_key_devices_reach_tfhe_rs_with_no_key_switch() {
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
    // public-key device), extraction only.
    let mut registry = DeviceRegistry::new();
    for record in store.into_records() {
        let (credentials, material) = record.into_parts();
        registry.register_device(credentials, material.encryption(), 0).unwrap();
    }
    let mut intake = Intake::new(IntakeConfig::default(), registry);
    let bridge = BigKeyBridge::for_server_key(BooleanSet::DefaultKsPbs, &server_key).unwrap();

    for (id, mode, message) in [
        (FLEET, KeyMode::FleetSecretKey, *b"fleet device: 3x512"),
        (PUBLIC_KEY, KeyMode::PublicKey, *b"public-key device!!"),
    ] {
        let file = std::fs::read(credentials_path(&dir, id)).unwrap();
        let decoded = decode_credentials(&file).unwrap();
        assert_eq!(decoded.mode, mode);
        assert_eq!(decoded.parameters.id(), DEFAULT_KS_PBS_GLWE_512_K3.id());
        let frames = device_frames(&file, &message, id as u8);
        let received = receive_message(&frames, |frame, now| intake.receive(frame, now));
        assert_eq!(received.device_id, id);
        let bits = bridge.message_to_booleans(&received).unwrap();
        assert_decrypts(client_key.get(), &bits[..8 * message.len()], &message);
    }
}

#[test]
fn show_names_the_set_and_both_devices() {
    let stdout = run_ok(&["show", "--dir", dir().to_str().unwrap()]);
    assert!(stdout.contains("ks-pbs-512 (DEFAULT_PARAMETERS_KS_PBS"), "{stdout}");
    assert!(stdout.contains("devices     2"), "{stdout}");
    assert!(stdout.contains("fleet") && stdout.contains("public-key"), "{stdout}");
}
