//! The single-process server (no `--nats`) and a message that outlives `--max-message-age`: a device sends
//! the first half of a four-chunk message (acknowledged "accepted"), its link is down past the maximum age,
//! then it sends the rest. Every late chunk, and a resend of one, is answered "expired" under the device's
//! MAC key (never "accepted"), and the server converts nothing of that message; a message completed within
//! the age before it, and one after it, are converted and decrypt to what was sent.
//!
//! Also: `--max-message-age 0` is a one-line error, and the option is refused with `--nats`.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::process::ChildSlot;
use crate::common::service::{Meter, connect};
use std::process::{Command, Stdio};
use std::time::Duration;
use tfhe_sbc_adapter::intake::header_of;
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_adapter::key_store::KeyMode;
use tfhe_sbc_device::frame::ack::AckStatus;

const DEVICE: u64 = 61;
/// The server's maximum message age in this test, in seconds.
const MAX_AGE: u64 = 2;

/// The message bytes of message `m`: `chunks` chunks of 128 bytes (1024 bits each on `tfhe-lib`).
fn message(m: u8, chunks: usize) -> Vec<u8> {
    (0..chunks * 128)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(m))
        .collect()
}

#[test]
fn late_chunks_of_an_expired_message_are_answered_expired_and_nothing_of_it_is_converted() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("keys");
    tfhe_sbc_keys::commands::init(&dir, BooleanSet::TfheLib, Some(0x1d00_0061)).unwrap();
    tfhe_sbc_keys::commands::issue(&dir, DEVICE, KeyMode::FleetSecretKey, None).unwrap();
    let address_file = root.path().join("address");
    // The demo client key: the server logs what it decrypts; the summary (standard output) is read too.
    let server = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", dir.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(["--address-file", address_file.to_str().unwrap()])
        .args(["--demo-client-key", dir.join("client_key.bin").to_str().unwrap()])
        .args(["--max-message-age", &MAX_AGE.to_string(), "--exit-after", "2"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed if the test fails before the server exits by itself.
    let mut server = {
        let mut slot = ChildSlot::default();
        slot.set(server);
        slot
    };
    let address = common::process::wait_for_address(&address_file, Duration::from_secs(120), String::new);
    let mut meter = Meter::new(&dir, DEVICE, 1);
    let mut stream = connect(&address);

    // The control: a four-chunk message completed within the age.
    let (complete, in_time) = (message(1, 4), meter.seal(&message(1, 4)));
    assert_eq!(in_time.len(), 4);
    for frame in &in_time {
        meter.send_expecting(&mut stream, frame, AckStatus::Accepted);
    }

    // Half a message, then the link is down past the maximum age (and the server's once-a-second sweep).
    let late = meter.seal(&message(2, 4));
    for frame in &late[..2] {
        meter.send_expecting(&mut stream, frame, AckStatus::Accepted);
    }
    std::thread::sleep(Duration::from_secs(MAX_AGE + 3));
    // Every late chunk is "expired", authenticated (send_expecting opens the record under the device's key);
    // a resend of one too: none is ever "accepted".
    for frame in late[2..].iter().chain(&late[2..3]) {
        let ack = meter.send_expecting(&mut stream, frame, AckStatus::Expired);
        assert_eq!(ack.device_id, DEVICE);
    }

    // The device goes on: its next message is taken and converted.
    let (after, next) = (message(3, 2), meter.seal(&message(3, 2)));
    for frame in &next {
        meter.send_expecting(&mut stream, frame, AckStatus::Accepted);
    }

    let output = server.take().unwrap().wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr).into_owned();
    let summary = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{log}");
    let message_id = |frames: &[Vec<u8>]| header_of(&frames[0]).unwrap().message_id;
    let converted: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("message converted to tfhe-rs ciphertexts"))
        .collect();
    assert_eq!(converted.len(), 2, "{log}");
    for (frames, bytes) in [(&in_time, &complete), (&next, &after)] {
        let id = format!("message_id={}", message_id(frames));
        assert!(converted.iter().any(|l| l.contains(&id)), "{id} not converted: {log}");
        let decrypted = log
            .lines()
            .find(|l| l.contains("decrypted with the demo client key") && l.contains(&id))
            .unwrap_or_else(|| panic!("{id} not decrypted: {log}"));
        assert!(decrypted.contains(&format!("{bytes:?}")), "{decrypted}");
    }
    let expired_id = format!("message_id={}", message_id(&late));
    assert!(
        !log.lines().any(|l| l.contains(&expired_id) && l.contains("converted")),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "device {DEVICE}, message {}: expired with 2 of 4 chunks",
            message_id(&late)
        )),
        "{log}"
    );
    // The summary: 4 + 2 + 2 frames accepted, the three late answers refused, two messages.
    let row = summary
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{DEVICE} |")))
        .unwrap_or_else(|| panic!("no summary row: {summary}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(cells[1..5], ["8", "0", "3", "2"], "{row}");
}

#[test]
fn the_maximum_age_is_checked() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
            .args(args)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().to_str().unwrap();
    let (code, stderr) = run(&["--keys", keys, "--max-message-age", "0"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--max-message-age 0"), "{stderr}");
    let (code, stderr) = run(&["--keys", keys, "--max-message-age", "5", "--nats", "nats://127.0.0.1:1"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--max-message-age"), "{stderr}");
}
