//! Writes the intake fuzz target's seed corpus, `fuzz/corpus/intake_v2/`, from fixed seeds
//! (`tfhe_sbc_adapter::fuzzing::seed_corpus`). Rerun it whenever the frame bytes change (wire format, mask
//! XOF, encryption): `crates/tfhe-sbc-adapter/tests/fuzz_corpus.rs` fails on a stale corpus.
//!
//! Run: `cargo run --example make_fuzz_corpus`

use std::path::Path;

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/intake_v2");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let corpus = tfhe_sbc_adapter::fuzzing::seed_corpus();
    for (name, bytes) in &corpus {
        std::fs::write(dir.join(name), bytes)?;
        println!("{:>6} bytes  fuzz/corpus/intake_v2/{name}", bytes.len());
    }
    println!("{} seed inputs written", corpus.len());
    Ok(())
}
