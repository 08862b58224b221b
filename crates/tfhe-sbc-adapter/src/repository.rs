//! The repository's own files, for the tests that check them (the fuzz corpus against its generator, the
//! docs' hex dump, the firmware guide's credential): a crate's tests run from the repository, where these
//! files are, and from the crate's package (`scripts/package.sh` runs them unpacked), which holds none of
//! them. Test scaffolding (feature `test-utils`), not for production.

use std::path::{Path, PathBuf};

/// The line of the repository's root manifest that names its root package (never published, so never in
/// a workspace around unpacked packages).
const ROOT_PACKAGE: &str = r#"name = "tfhe-sbc""#;

/// The repository's root directory when the crate whose manifest directory is `manifest_dir` (a test's
/// `env!("CARGO_MANIFEST_DIR")`) is one of its members (`crates/<name>`); `None` when it is not, e.g. unpacked
/// from its package. A caller that gets `None` says which file it needs and skips that check, printing
/// `skipped: ...`; inside the repository a missing file is a failure, never a skip.
pub fn root(manifest_dir: &str) -> Option<PathBuf> {
    let root = Path::new(manifest_dir).join("../..");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    manifest.lines().any(|line| line.trim() == ROOT_PACKAGE).then_some(root)
}
