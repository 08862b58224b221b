//! Firmware bring-up with the shipped binary: `issue --unsafe-dev-credential` writes exactly the files of
//! `firmware/examples/test_credential.rs` (the firmware guide's `examples/firmware-guide/devices/1.*`), marked
//! UNSAFE-DEV in their names, in `issue`'s output and in `show`; `check-frame` authenticates a frame made with
//! that credential against the key set and prints the message it decrypts, and says exactly why a damaged,
//! truncated or foreign frame is refused.
#![allow(clippy::unwrap_used)]

mod common;

use common::{KeySet, assert_error, device_frames, run, run_ok, s};
use std::path::{Path, PathBuf};

/// The frame `tests/data/dev-device-1.frame` holds: chunk 0 of this message from development device 1, its
/// CSPRNG seeded with [`FRAME_SEED`]. `scripts/package.sh` checks it with the installed tool.
const MESSAGE: [u8; 40] = *b"tfhe-sbc firmware bring-up: 0x5a5a5a5a5a";
const FRAME_SEED: u8 = 0x5a;

fn key_set() -> &'static KeySet {
    KeySet::shared(&["--parameters", "tfhe-lib"], &[])
}

/// Development device 1 issued into the shared key set (once), and what `issue` printed.
fn dev_device() -> &'static str {
    static ISSUED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ISSUED.get_or_init(|| {
        let d = s(&key_set().dir()).to_owned();
        run_ok(&[
            "issue",
            "--dir",
            &d,
            "--device-id",
            "1",
            "--mode",
            "per-device",
            "--unsafe-dev-credential",
        ])
    })
}

/// The firmware guide's credential files (`examples/firmware-guide/devices`) in the repository; `None`, with
/// a line saying so, when the tests run from this crate's package, which does not hold them.
fn firmware_guide_devices() -> Option<PathBuf> {
    let root = tfhe_sbc_adapter::repository::root(env!("CARGO_MANIFEST_DIR"));
    if root.is_none() {
        eprintln!(
            "skipped: comparing with the firmware guide's examples/firmware-guide/devices/1.* needs the \
             repository (not in this package)"
        );
    }
    Some(root?.join("examples/firmware-guide/devices"))
}

/// Development device 1's credential file as `issue --unsafe-dev-credential` wrote it into the shared key
/// set (the firmware guide's `1.tsdc`: `the_development_credential_is_test_credentials_and_says_so`).
fn dev_credential() -> Vec<u8> {
    dev_device();
    std::fs::read(key_set().dir().join("devices/1.UNSAFE-DEV.tsdc")).unwrap()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dev-device-1.frame")
}

#[test]
fn the_development_credential_is_test_credentials_and_says_so() {
    let out = dev_device();
    assert!(
        out.contains("device 1: per-device mode UNSAFE-DEV (NOT FOR PRODUCTION), key id 0x00000000"),
        "{out}"
    );
    assert!(out.contains("anyone can decrypt and forge their frames"), "{out}");
    let dir = key_set().dir();
    let guide_devices = firmware_guide_devices();
    for (made, guide) in [("1.UNSAFE-DEV.tsdc", "1.tsdc"), ("1.UNSAFE-DEV.seed", "1.seed")] {
        let made_path = dir.join("devices").join(made);
        assert_eq!(common::mode(&made_path), 0o600, "{made}");
        if let Some(guide_devices) = &guide_devices {
            assert_eq!(
                std::fs::read(&made_path).unwrap(),
                std::fs::read(guide_devices.join(guide)).unwrap(),
                "{made} is test_credential's {guide}"
            );
        }
    }
    let show = run(&["show", "--dir", s(&dir)]);
    assert!(show.status.success());
    let stdout = String::from_utf8_lossy(&show.stdout);
    assert!(
        stdout.contains("devices/1.UNSAFE-DEV.tsdc (0600), UNSAFE-DEV: its keys are public"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&show.stderr);
    assert!(
        stderr.contains("warning: device 1 is a development device (UNSAFE-DEV"),
        "{stderr}"
    );
    // Only per-device mode, only a tfhe-lib key set, only key id 0.
    assert_error(
        &run(&[
            "issue",
            "--dir",
            s(&dir),
            "--device-id",
            "9",
            "--mode",
            "fleet",
            "--unsafe-dev-credential",
        ]),
        &["--unsafe-dev-credential takes --mode per-device"],
    );
    assert_error(
        &run(&[
            "issue",
            "--dir",
            s(&dir),
            "--device-id",
            "9",
            "--mode",
            "per-device",
            "--unsafe-dev-credential",
            "--key-id",
            "7",
        ]),
        &["no --key-id but 0"],
    );
    let help = run_ok(&["issue", "--help"]);
    assert!(help.contains("UNSAFE FOR PRODUCTION"), "{help}");
}

/// The checked-in frame is what development device 1 makes (deterministic from its public credential and
/// the seed): rewritten with `TSBC_REGENERATE_FIXTURES=1` when the frame format changes.
#[test]
fn the_checked_in_frame_is_development_device_1s() {
    let frames = device_frames(&dev_credential(), &MESSAGE, FRAME_SEED);
    assert_eq!(frames.len(), 1);
    if std::env::var_os("TSBC_REGENERATE_FIXTURES").is_some() {
        std::fs::write(fixture(), &frames[0]).unwrap();
    }
    assert_eq!(
        std::fs::read(fixture()).unwrap(),
        frames[0],
        "rerun with TSBC_REGENERATE_FIXTURES=1"
    );
}

#[test]
fn check_frame_decrypts_a_development_frame_and_says_why_a_bad_one_is_refused() {
    dev_device();
    let dir = key_set().dir();
    let d = s(&dir);
    let frame = std::fs::read(fixture()).unwrap();
    let good = run_ok(&["check-frame", "--dir", d, "--file", s(&fixture())]);
    eprintln!("check-frame (good frame):\n{good}");
    assert!(
        good.contains(&format!("frame: {} bytes, authenticated by", frame.len())),
        "{good}"
    );
    assert!(
        good.contains("device 1 (per-device mode, UNSAFE-DEV: its keys are public), key id 0x00000000"),
        "{good}"
    );
    assert!(good.contains("kind seeded (secret key, mask seed)"), "{good}");
    assert!(good.contains("chunk 0 of 1, message length 40 bytes"), "{good}");
    assert!(good.contains("message bytes 0..40 (40 bytes)"), "{good}");
    let hex: String = MESSAGE.iter().map(|b| format!("{b:02x}")).collect();
    assert!(
        good.contains(&format!("  {}\n  {}\n", &hex[..64], &hex[64..])),
        "{good}"
    );
    // The same frame as hexadecimal, with whitespace.
    let frame_hex: String = frame.iter().map(|b| format!("{b:02x} ")).collect();
    assert_eq!(run_ok(&["check-frame", "--dir", d, "--hex", &frame_hex]), good);

    let refused = |bytes: &[u8], needles: &[&str]| {
        let line = assert_error_exit_1(&run(&["check-frame", "--dir", d, "--hex", &to_hex(bytes)]), needles);
        eprintln!("check-frame (bad frame): {line}");
    };
    // One bit of the body flipped.
    let mut corrupted = frame.clone();
    let middle = corrupted.len() / 2;
    corrupted[middle] ^= 0x01;
    refused(&corrupted, &["device 1: bad frame MAC [BadMac]"]);
    refused(&frame[..frame.len() - 1], &["WrongFrameLength"]);
    refused(&frame[..20], &["frame truncated", "[Truncated]"]);
    // Another device id in the header: the key store has no such device.
    let mut foreign = frame.clone();
    let at = (0..foreign.len() - 8)
        .find(|&i| foreign[i..i + 8] == 1u64.to_le_bytes())
        .unwrap();
    foreign[at] = 2;
    refused(&foreign, &["unknown device 2 [UnknownDevice]"]);
    assert_error(&run(&["check-frame", "--dir", d, "--hex", "0g"]), &["--hex takes"]);
    // A frame file that is missing or no frame: named, with what to give instead (not the key set's advice).
    assert_error(
        &run(&["check-frame", "--dir", d, "--file", "/nonexistent/frame.bin"]),
        &["--file /nonexistent/frame.bin", "--hex"],
    );
    // Clap's own refusals are one line too, naming what is missing or wrong.
    assert_error(&run(&["issue"]), &["--device-id", "--mode", "--help"]);
    // A pass holds its devices in memory until it commits: at most 10,000 (refused at once, not after hours).
    assert_error(
        &run(&[
            "issue",
            "--dir",
            d,
            "--device-id",
            "5",
            "--mode",
            "per-device",
            "--count",
            "99999999999",
        ]),
        &["--count", "1..=10000"],
    );
    assert_error(
        &run(&["check-frame", "--no-such-option"]),
        &["--no-such-option", "--help"],
    );
    assert_error(
        &run(&["issue", "--dir", d, "--device-id", "one", "--mode", "per-device"]),
        &["--device-id"],
    );
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A refused frame: exit code 1, nothing on stdout, one `error: frame refused ...` line holding `needles`.
fn assert_error_exit_1(output: &std::process::Output, needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty(), "{}", String::from_utf8_lossy(&output.stdout));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: frame refused ("), "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
    stderr.trim_end().to_owned()
}
