//! Replays the fuzzing corpus and every crash the fuzzer ever found as ordinary tests, on stable, with the
//! fuzz target's own checks: the v2 seed corpus as its generator makes it (`seed_corpus`), the legacy v1
//! frames the v1 firmware made (`tests/data/intake_v1`, which `fuzz/corpus/intake_v1` links to), and, run
//! from the repository, the checked-in `fuzz/corpus/intake_v2` and `fuzz/artifacts/intake`. Also checks, in
//! the repository, that the checked-in seed corpus and the doc's hex dump are what the generators produce
//! today: from the crate's package (no `fuzz/`, no `docs/`) those checks print why they are skipped.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::fuzzing::{FUZZ_DEVICE_ID_2, FUZZ_PUBLIC_KEY_DEVICE_ID, fix_up_mac, fuzz_intake, seed_corpus};
use tfhe_sbc_adapter::intake::{IntakeConfig, Received, parse_frame};
use tfhe_sbc_device::frame::FrameKind;

/// The repository's root, or `None` (with a line saying what `check` needs) when run from the package.
fn repository(check: &str) -> Option<PathBuf> {
    let root = tfhe_sbc_adapter::repository::root(env!("CARGO_MANIFEST_DIR"));
    if root.is_none() {
        eprintln!("skipped: {check} needs the repository (fuzz/ and docs/ are not in this package)");
    }
    root
}

/// The files of `dir`, sorted (none if it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

/// The legacy v1 frames, in this crate.
fn legacy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/intake_v1")
}

fn legacy(name: &str) -> Vec<u8> {
    std::fs::read(legacy_dir().join(name)).unwrap()
}

/// The v2 seed `name` as the generator makes it (`checked_in_corpus_is_current`: the checked-in file is
/// the same bytes).
fn seed(name: &str) -> Vec<u8> {
    static SEEDS: std::sync::OnceLock<Vec<(&'static str, Vec<u8>)>> = std::sync::OnceLock::new();
    let seeds = SEEDS.get_or_init(seed_corpus);
    let (_, bytes) = seeds
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no seed {name}"));
    bytes.clone()
}

#[test]
fn corpus_and_crashes_replay() {
    let seeds = seed_corpus();
    let legacy = files(&legacy_dir());
    assert!(seeds.len() >= 14, "the v2 seed corpus shrank");
    assert!(legacy.len() >= 7, "the legacy v1 seeds are missing");
    for (_, bytes) in &seeds {
        tfhe_sbc_adapter::fuzzing::intake(bytes);
    }
    for path in &legacy {
        tfhe_sbc_adapter::fuzzing::intake(&std::fs::read(path).unwrap());
    }
    println!(
        "replayed {} v2 seeds and {} legacy v1 inputs",
        seeds.len(),
        legacy.len()
    );
    let Some(root) = repository("replaying fuzz/corpus/intake_v2 and the crash artifacts fuzz/artifacts/intake") else {
        return;
    };
    let corpus = files(&root.join("fuzz/corpus/intake_v2"));
    let crashes = files(&root.join("fuzz/artifacts/intake"));
    assert!(corpus.len() >= 14, "the checked-in v2 seed corpus is missing");
    for path in corpus.iter().chain(&crashes) {
        tfhe_sbc_adapter::fuzzing::intake(&std::fs::read(path).unwrap());
    }
    println!(
        "replayed {} checked-in v2 corpus inputs and {} crash artifacts",
        corpus.len(),
        crashes.len()
    );
}

#[test]
fn checked_in_corpus_is_current() {
    let Some(root) = repository("comparing fuzz/corpus/intake_v2 with the generator") else {
        return;
    };
    let dir = root.join("fuzz/corpus/intake_v2");
    let expected = seed_corpus();
    let names: Vec<String> = files(&dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut expected_names: Vec<String> = expected.iter().map(|(n, _)| n.to_string()).collect();
    expected_names.sort();
    assert_eq!(names, expected_names, "run `cargo run --example make_fuzz_corpus`");
    for (name, bytes) in &expected {
        assert!(
            std::fs::read(dir.join(name)).unwrap() == *bytes,
            "fuzz/corpus/intake_v2/{name} is stale: run `cargo run --example make_fuzz_corpus`"
        );
    }
}

#[test]
fn docs_hex_dump_is_current() {
    let Some(root) = repository("comparing docs/wire-format.md's hex dump with the generator") else {
        return;
    };
    let doc = std::fs::read_to_string(root.join("docs/wire-format.md")).unwrap();
    let dump = tfhe_sbc_adapter::fuzzing::wire_format_dump();
    assert!(
        doc.contains(&format!("<!-- wire_format_dump: begin -->\n```text\n{dump}```\n")),
        "docs/wire-format.md's hex dump is stale: run `cargo run --example wire_format_dump -- --update-doc`"
    );
}

/// What each seed is for: the single frames decode as intended, the legacy v1 frames are refused as such.
#[test]
fn seeds_do_what_their_names_say() {
    let now = Instant::now();
    for name in ["seeded-single", "seeded-empty-message", "device2-seeded"] {
        let bytes = seed(name);
        assert!(
            matches!(fuzz_intake(false).receive(&bytes, now), Ok(Received::Complete(_))),
            "{name}"
        );
    }
    let mut intake = fuzz_intake(false);
    assert!(matches!(
        intake.receive(&seed("seeded-chunk0"), now),
        Ok(Received::Pending { .. })
    ));
    assert!(matches!(
        intake.receive(&seed("seeded-chunk1"), now),
        Ok(Received::Complete(_))
    ));
    let full = seed("full-single");
    assert_eq!(
        fuzz_intake(false).receive(&full, now).unwrap_err(),
        IntakeError::FullFrameRejected
    );
    assert!(fuzz_intake(true).receive(&full, now).is_ok());
    // Compact bodies: an 11-bit chunk waits for its second chunk; the integer frame is the integer intake's.
    assert!(matches!(
        fuzz_intake(false).receive(&seed("compact-11-bit-chunk0"), now),
        Ok(Received::Pending { .. })
    ));
    let integer = seed("integer-compact-14-bit");
    assert_eq!(
        parse_frame(&integer, &IntakeConfig::default())
            .unwrap()
            .header
            .body_bits,
        14
    );
    assert!(fuzz_intake(false).receive_integer(&integer).is_ok());
    assert!(matches!(
        fuzz_intake(false).receive(&integer, now),
        Err(IntakeError::UnsupportedParameterSet(4))
    ));
    // The integer public-key frame (mask in full, u64 words) from the public-key fuzz device is the integer
    // intake's; relabelled as a secret-key device's and re-tagged, its kind is refused.
    let public_key = seed("integer-public-key");
    let parsed = parse_frame(&public_key, &IntakeConfig::default()).unwrap();
    assert_eq!(
        (parsed.kind, parsed.header.device_id),
        (FrameKind::PublicKey, FUZZ_PUBLIC_KEY_DEVICE_ID)
    );
    assert_eq!(public_key.len(), 47 + 2 * 8 * 2048 + 16);
    assert_eq!(
        fuzz_intake(false)
            .receive_integer(&public_key)
            .unwrap()
            .ciphertext
            .as_slice()
            .len(),
        2 * 2048
    );
    // The compact-list frame (kind 3, three u16 readings) from the public-key fuzz device: the integer
    // intake's, as a compact list; the GLWE-only `receive_integer` refuses its kind before the MAC.
    let list = seed("integer-compact-list");
    assert_eq!(
        list.len(),
        tfhe_sbc_device::frame::compact_list::compact_list_frame_bytes(16, 6)
    );
    assert!(matches!(
        fuzz_intake(false).receive_integer_input(&list),
        Ok(tfhe_sbc_adapter::intake::IntegerInput::CompactList(_))
    ));
    assert!(matches!(
        fuzz_intake(false).receive_integer(&list),
        Err(IntakeError::FrameKindNotAllowed {
            kind: FrameKind::CompactList,
            ..
        })
    ));
    let mut as_secret_key_device = public_key.clone();
    as_secret_key_device[11..19].copy_from_slice(&FUZZ_DEVICE_ID_2.to_le_bytes());
    fix_up_mac(&mut as_secret_key_device);
    assert!(matches!(
        fuzz_intake(false).receive_integer(&as_secret_key_device),
        Err(IntakeError::FrameKindNotAllowed {
            device_id: FUZZ_DEVICE_ID_2,
            kind: FrameKind::PublicKey
        })
    ));
    // MAC'd by device 1, naming device 2: refused; the fix-up path re-tags it under device 2's key.
    let mut relabelled = seed("maced-as-a-named-b");
    assert_eq!(
        fuzz_intake(false).receive(&relabelled, now).unwrap_err(),
        IntakeError::BadMac {
            device_id: FUZZ_DEVICE_ID_2
        }
    );
    fix_up_mac(&mut relabelled);
    assert!(fuzz_intake(false).receive(&relabelled, now).is_ok());
    assert_eq!(
        parse_frame(&seed("version-1"), &IntakeConfig::default()).unwrap_err(),
        IntakeError::UnsupportedVersion(1)
    );
    // The frames the v1 firmware made.
    for name in ["seeded-chunk0", "seeded-chunk1", "seeded-empty-message", "full"] {
        assert_eq!(
            parse_frame(&legacy(name), &IntakeConfig::default()).unwrap_err(),
            IntakeError::UnsupportedVersion(1),
            "{name}"
        );
    }
}
