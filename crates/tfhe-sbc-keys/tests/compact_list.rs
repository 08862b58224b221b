//! `tfhe-sbc-keys` for compact-list devices, run as the trusted party runs it: `init --parameters integer
//! --compact-list`, then `issue --mode compact-list`. The device side reads only the file the tool gave it
//! (`devices/<ID>.tscp`, decoded by the device crate), encrypts lists of u8, u16 and u32 with the device
//! crate's `CompactListEncryptor`, and tfhe-rs 1.8.2 alone reads them: `safe_deserialize_conformant`,
//! `expand` with the server key read back from the key set's `server_key.bin` (its casting key), and
//! `decrypt` with the key set's client key. Then the refusals: a key set without compact lists, a compact
//! public key of another key set, a corrupt one, each a one-line error.
#![allow(clippy::unwrap_used)]

mod common;

use common::{KeySet, assert_error, mode, run, run_ok, s, scratch_copy};
use std::path::PathBuf;
use std::time::Instant;
use tfhe::conformance::ListSizeConstraint;
use tfhe::prelude::*;
use tfhe::safe_serialization::safe_deserialize_conformant;
use tfhe::shortint::parameters::PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
use tfhe::{
    CompactCiphertextList, CompactCiphertextListConformanceParams, CompactCiphertextListExpander, FheUint8, FheUint16,
    FheUint32, set_server_key,
};
use tfhe_sbc_adapter::key_set::client_key::read_integer_client_key;
use tfhe_sbc_adapter::key_set::server_key::read_integer_server_key;
use tfhe_sbc_core::parameters::ParameterSetId;
use tfhe_sbc_device::compact_list::CompactReading;
use tfhe_sbc_device::encrypt::compact_list::{CompactListEncryptor, compact_list_bytes};
use tfhe_sbc_device::files::compact_public_key::{
    COMPACT_PUBLIC_KEY_FILE_BYTES, CompactKeyBinding, decode_compact_public_key_file, encode_compact_public_key_file,
};
use tfhe_sbc_device::files::credentials::{KeyMode, decode_credentials};

const DEVICE: u64 = 51;
const KEY_ID: &str = "0x1d000051";
const KEY_ID_VALUE: u32 = 0x1d00_0051;

/// One compact-list key set for the whole file, with one compact-list device.
fn key_set() -> &'static KeySet {
    KeySet::shared(
        &["--parameters", "integer", "--compact-list", "--key-id", KEY_ID],
        &[(DEVICE, "compact-list")],
    )
}

fn dir() -> PathBuf {
    key_set().dir()
}

/// The device's list of `readings`, encrypted under the key in its compact public-key file alone.
fn device_list<T: CompactReading>(key_file: &[u8], readings: &[T], seed: u8) -> Vec<u8> {
    let decoded = decode_compact_public_key_file(key_file).unwrap();
    let key = decoded.for_key_set(KEY_ID_VALUE, None).unwrap();
    let mut encryptor = CompactListEncryptor::EMPTY;
    encryptor.set_public_key_le_bytes(key).unwrap();
    encryptor.seed_from_bytes(&mut [seed; 32]);
    let mut list = vec![0u8; compact_list_bytes::<T>(readings.len())];
    assert_eq!(encryptor.encrypt_list(readings, &mut list).unwrap(), list.len());
    list
}

/// tfhe-rs's own reading of a list from the network: conformance to the compact public-key set, at most 64
/// values.
fn parse(list: &[u8]) -> CompactCiphertextListExpander {
    let conformance = CompactCiphertextListConformanceParams::from_parameters_and_size_constraint(
        PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
        ListSizeConstraint::try_size_in_range(1, 64).unwrap(),
    );
    let parsed: CompactCiphertextList = safe_deserialize_conformant(list, 1 << 22, &conformance).unwrap();
    parsed.expand().unwrap()
}

#[test]
fn tfhe_rs_expands_lists_under_the_provisioned_compact_public_key() {
    let dir = dir();
    let init = &key_set().init_output;
    assert!(init.contains("compact_public_key.tscp"), "{init}");
    assert!(
        init.contains("PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128"),
        "{init}"
    );
    eprint!("{init}{}", key_set().issue_outputs[0]);
    assert!(
        key_set().issue_outputs[0].contains("compact-list mode"),
        "{}",
        key_set().issue_outputs[0]
    );

    // The device's files: the compact public key (public) and its credentials (secret: the MAC key).
    let key_path = dir.join("devices").join(format!("{DEVICE}.tscp"));
    assert_eq!(mode(&key_path), 0o644);
    assert_eq!(mode(&dir.join("compact_public_key.tscp")), 0o644);
    let key_file = std::fs::read(&key_path).unwrap();
    assert_eq!(key_file.len(), COMPACT_PUBLIC_KEY_FILE_BYTES);
    assert_eq!(key_file, std::fs::read(dir.join("compact_public_key.tscp")).unwrap());
    let credentials_path = dir.join("devices").join(format!("{DEVICE}.tsdc"));
    assert_eq!(mode(&credentials_path), 0o600);
    let credentials_file = std::fs::read(&credentials_path).unwrap();
    let credentials = decode_credentials(&credentials_file).unwrap();
    assert_eq!(credentials.mode, KeyMode::PublicKey);
    assert_eq!(credentials.credentials.device_id(), DEVICE);
    assert_eq!(credentials.credentials.key_id(), KEY_ID_VALUE);

    // The cloud's files, read back as the server reads them.
    let t = Instant::now();
    let (envelope, server_key) = read_integer_server_key(&dir.join("server_key.bin")).unwrap();
    let (_, client_key) = read_integer_client_key(&dir.join("client_key.bin")).unwrap();
    eprintln!("key files read in {:.1} s", t.elapsed().as_secs_f64());
    let decoded = decode_compact_public_key_file(&key_file).unwrap();
    assert_eq!(
        decoded.binding,
        CompactKeyBinding {
            key_set_parameters: ParameterSetId(4),
            key_id: KEY_ID_VALUE,
            server_key_fingerprint: envelope.server_key_fingerprint,
        }
    );
    set_server_key(server_key);

    let t = Instant::now();
    let u8s = [0u8, 1, 2, 77, 128, 200, 254, u8::MAX];
    let u16s = [0u16, 1, 0x1234, 40_000, u16::MAX];
    let u32s = [0u32, 1, 0xdead_beef, u32::MAX];
    let expanded = parse(&device_list(&key_file, &u8s, 1));
    for (i, &value) in u8s.iter().enumerate() {
        let fhe: FheUint8 = expanded.get(i).unwrap().unwrap();
        let decrypted: u8 = fhe.decrypt(client_key.get());
        assert_eq!(decrypted, value, "u8 {i}");
    }
    let expanded = parse(&device_list(&key_file, &u16s, 2));
    for (i, &value) in u16s.iter().enumerate() {
        let fhe: FheUint16 = expanded.get(i).unwrap().unwrap();
        let decrypted: u16 = fhe.decrypt(client_key.get());
        assert_eq!(decrypted, value, "u16 {i}");
    }
    let expanded = parse(&device_list(&key_file, &u32s, 3));
    let mut sum = None;
    for (i, &value) in u32s.iter().enumerate() {
        let fhe: FheUint32 = expanded.get(i).unwrap().unwrap();
        let decrypted: u32 = fhe.decrypt(client_key.get());
        assert_eq!(decrypted, value, "u32 {i}");
        sum = Some(match sum {
            None => fhe,
            Some(total) => total + fhe,
        });
    }
    // And the server computes on them.
    let sum: u32 = sum.unwrap().decrypt(client_key.get());
    assert_eq!(sum, u32s.iter().fold(0u32, |a, &b| a.wrapping_add(b)));
    eprintln!(
        "tfhe-rs expanded and decrypted {} device values in {:.1} s",
        u8s.len() + u16s.len() + u32s.len(),
        t.elapsed().as_secs_f64()
    );

    // `show` lists the key and the device's copy of it.
    let show = run_ok(&["show", "--dir", s(&dir)]);
    assert!(show.contains("compact_public_key.tscp"), "{show}");
    assert!(show.contains(&format!("{DEVICE}.tscp, compact list")), "{show}");
}

#[test]
fn compact_public_keys_of_other_key_sets_and_corrupt_ones_are_refused() {
    let dir = dir();
    let good = std::fs::read(dir.join("compact_public_key.tscp")).unwrap();
    let issue = |scratch: &std::path::Path, id: &str| {
        run(&[
            "issue",
            "--dir",
            s(scratch),
            "--device-id",
            id,
            "--mode",
            "compact-list",
        ])
    };

    // A key set without compact lists (its init ran without --compact-list): no file, refused.
    let scratch = scratch_copy(&dir);
    std::fs::remove_file(scratch.path().join("compact_public_key.tscp")).unwrap();
    assert_error(
        &issue(scratch.path(), "60"),
        &["has no compact_public_key.tscp", "--compact-list"],
    );

    // Another key set's key (another key id and server key, checked as its own file).
    let decoded = decode_compact_public_key_file(&good).unwrap();
    let words: Vec<u64> = decoded
        .key
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect();
    let other = CompactKeyBinding {
        key_id: 0x0bad_0001,
        server_key_fingerprint: [7; 32],
        ..decoded.binding
    };
    let mut foreign = vec![0u8; COMPACT_PUBLIC_KEY_FILE_BYTES];
    encode_compact_public_key_file(&other, &words, &mut foreign).unwrap();
    std::fs::write(scratch.path().join("compact_public_key.tscp"), &foreign).unwrap();
    assert_error(
        &issue(scratch.path(), "61"),
        &[
            "is not the compact public key of the key set",
            "0x0bad0001",
            "0x1d000051",
        ],
    );
    assert_error(&run(&["show", "--dir", s(scratch.path())]), &["0x0bad0001"]);
    // Same key id, another server key: refused too.
    let other = CompactKeyBinding {
        server_key_fingerprint: [7; 32],
        ..decoded.binding
    };
    encode_compact_public_key_file(&other, &words, &mut foreign).unwrap();
    std::fs::write(scratch.path().join("compact_public_key.tscp"), &foreign).unwrap();
    assert_error(
        &issue(scratch.path(), "62"),
        &["is not the compact public key of the key set"],
    );

    // Corrupt (one bit of the key flipped) or truncated.
    let mut corrupt = good.clone();
    corrupt[1000] ^= 4;
    std::fs::write(scratch.path().join("compact_public_key.tscp"), &corrupt).unwrap();
    assert_error(
        &issue(scratch.path(), "63"),
        &["not a valid compact public-key file", "corrupt"],
    );
    std::fs::write(scratch.path().join("compact_public_key.tscp"), &good[..good.len() - 16]).unwrap();
    assert_error(
        &issue(scratch.path(), "64"),
        &["not a valid compact public-key file", "32816 bytes"],
    );
    // Nothing was issued by the refused commands.
    for id in 60..=64 {
        assert!(!scratch.path().join("devices").join(format!("{id}.tscp")).exists());
        assert!(!scratch.path().join("devices").join(format!("{id}.tsdc")).exists());
    }

    // A device's copy that is not the key set's key: `show` refuses it.
    let scratch = scratch_copy(&dir);
    std::fs::write(scratch.path().join("devices").join(format!("{DEVICE}.tscp")), &corrupt).unwrap();
    assert_error(
        &run(&["show", "--dir", s(scratch.path())]),
        &["is not the key set's compact_public_key.tscp"],
    );

    // --compact-list takes the integer set only.
    let fresh = tempfile::tempdir().unwrap();
    assert_error(
        &run(&[
            "init",
            "--dir",
            s(&fresh.path().join("k")),
            "--parameters",
            "tfhe-lib",
            "--compact-list",
        ]),
        &["--compact-list takes --parameters integer"],
    );
}
