//! The shipped server, started on a key store that lists a development device (`tfhe-sbc-keys issue
//! --unsafe-dev-credential`: its keys are derived from its id by a public stream), says so at start-up in
//! both of its forms (the single process and a JetStream role), naming the device; on a key store without one
//! it says nothing of the kind.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_adapter::key_set::key_store::KeyMode;

/// The server's stderr lines with `args` until `wanted` appears, it exits, or 60 s pass; the server is then
/// killed.
fn start_up_lines(args: &[&str], wanted: &str) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(args)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut lines = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                let done = line.contains(wanted) || line.contains("listening");
                lines.push(line);
                if done {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    lines
}

fn has_warning(lines: &[String], device_id: u64) -> bool {
    lines
        .iter()
        .any(|l| l.contains("UNSAFE-DEV") && l.contains(&format!("device {device_id}")) && l.contains("public"))
}

#[test]
fn a_key_store_with_a_development_device_is_named_at_start_up() {
    let root = tempfile::tempdir().unwrap();
    let dev = root.path().join("dev");
    tfhe_sbc_keys::commands::init(&dev, BooleanSet::TfheLib, None).unwrap();
    tfhe_sbc_keys::commands::issue_dev_devices(&dev, 7, 1, None).unwrap();
    let plain = root.path().join("plain");
    tfhe_sbc_keys::commands::init(&plain, BooleanSet::TfheLib, None).unwrap();
    tfhe_sbc_keys::commands::issue(&plain, 7, KeyMode::PerDeviceSecretKey, None).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_owned();

    // The single process.
    let lines = start_up_lines(&["--keys", &s(&dev), "--listen", "127.0.0.1:0"], "UNSAFE-DEV");
    assert!(has_warning(&lines, 7), "{lines:#?}");
    let lines = start_up_lines(&["--keys", &s(&plain), "--listen", "127.0.0.1:0"], "UNSAFE-DEV");
    assert!(!lines.iter().any(|l| l.contains("UNSAFE-DEV")), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.contains("listening")),
        "the plain server started: {lines:#?}"
    );

    // An option of the other kind of key set is refused in one line, not ignored: --integer-bits with a
    // boolean key set (exit 2, naming the option and the set).
    let output = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", &s(&plain), "--listen", "127.0.0.1:0", "--integer-bits", "16"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--integer-bits") && stderr.contains("boolean key set"),
        "{stderr}"
    );

    // A JetStream role: the key store is read before NATS is reached (nothing listens on port 9).
    let lines = start_up_lines(
        &["--keys", &s(&dev), "--nats", "nats://127.0.0.1:9", "--role", "worker"],
        "UNSAFE-DEV",
    );
    assert!(has_warning(&lines, 7), "{lines:#?}");
}
