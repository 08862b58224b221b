//! Replays the fuzzing corpus and every crash the fuzzer ever found (fuzz/corpus/intake, fuzz/artifacts/intake)
//! as ordinary tests, on stable, with the fuzz target's own checks.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use tfhe_sbc_adapter::intake::decode_frame;

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz").join(dir);
    match std::fs::read_dir(&dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn corpus_and_crashes_replay() {
    let corpus = files("corpus/intake");
    assert!(corpus.len() >= 7, "the checked-in seed corpus is missing");
    let crashes = files("artifacts/intake");
    for path in corpus.iter().chain(&crashes) {
        tfhe_sbc_adapter::fuzzing::intake(&std::fs::read(path).unwrap());
    }
    // The seed frames made by a real device decode.
    for name in ["seeded-chunk0", "seeded-chunk1", "seeded-empty-message", "full"] {
        let bytes = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fuzz/corpus/intake")
                .join(name),
        )
        .unwrap();
        assert!(decode_frame(&bytes).is_ok(), "{name}");
    }
    println!(
        "replayed {} corpus inputs and {} crash artifacts",
        corpus.len(),
        crashes.len()
    );
}
