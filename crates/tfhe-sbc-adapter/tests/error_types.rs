//! The rule: the adapter has one public error type per origin of a failure (`docs/architecture.md`), so a
//! caller knows from the type where to look:
//! - `IntakeError`: bytes from a device (over a stream, or read back from the results store and verified
//!   again), the replay window's verdict included;
//! - `InteropError`: tfhe-rs interop (keys, device registrations, conversions into tfhe-rs values);
//! - `KeySetError`: key material on disk (key-set files and key store records);
//! - `ResultsError`: the JetStream service's results store (the stream of announcements, the bucket of
//!   stored frames), which the reader does not trust.
//!
//! Any other `Error` implementation or public type named `...Error` anywhere in `src/` fails this test, and
//! so does one of these four gone.

use std::collections::BTreeSet;
use std::path::Path;

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a source file");
            out.push((path.display().to_string(), text));
        }
    }
}

/// The name after `prefix` on `line`, up to the first character that is not part of an identifier.
fn name_after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &line[line.find(prefix)? + prefix.len()..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

#[test]
fn the_adapter_has_one_public_error_type_per_origin() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 20, "found {} source files", files.len());
    let mut implemented = BTreeSet::new();
    let mut named = BTreeSet::new();
    for (path, text) in &files {
        for line in text.lines().map(str::trim_start) {
            for prefix in ["impl std::error::Error for ", "impl core::error::Error for "] {
                if let Some(name) = name_after(line, prefix) {
                    implemented.insert(format!("{name} ({path})"));
                }
            }
            for prefix in ["pub enum ", "pub struct "] {
                if let Some(name) =
                    name_after(line, prefix).filter(|n| n.ends_with("Error") && line.starts_with("pub "))
                {
                    named.insert(format!("{name} ({path})"));
                }
            }
        }
    }
    let bare = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter()
            .map(|s| s.split(' ').next().unwrap_or_default().to_owned())
            .collect()
    };
    let expected: BTreeSet<String> = ["IntakeError", "InteropError", "KeySetError", "ResultsError"]
        .map(String::from)
        .into();
    assert_eq!(
        bare(&implemented),
        expected,
        "types implementing Error: {implemented:?}"
    );
    assert_eq!(bare(&named), expected, "public types named ...Error: {named:?}");
}
