//! The client binary end to end on loopback, against a test server built from the adapter's intake (no
//! tfhe-rs) that drops connections mid-stream: every message arrives exactly once, in order, and decrypts to
//! the input; resends are acknowledged as duplicates; a restart continues above the persisted counter; the
//! refusals that sending again cannot fix end the client with an error that says what to do; and the advice
//! of a server that cannot authenticate the device (unauthenticated records) reaches the operator without
//! ending anything early.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Act, DEVICE, Fault, KEY_ID, Provisioned, TestServer, client, read_counter, readings, registry, stderr};
use std::net::TcpListener;
use std::process::Output;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_device::frame::ack::AckStatus;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

/// 30 messages of 80 u16 readings (160 bytes: two frames each) through a server that drops four
/// connections, before and after its intake took a frame, in the middle of messages too.
#[test]
fn resends_after_dropped_connections_deliver_every_message_once() {
    let device = Provisioned::new(1);
    let faults = vec![
        Fault::new(0, 3, Act::CloseAfterIntake),
        Fault::new(1, 2, Act::CloseBeforeIntake),
        Fault::new(2, 10, Act::CloseAfterIntake),
        Fault::new(3, 1, Act::CloseAfterIntake),
    ];
    let server = TestServer::start(registry(0), faults);
    let (input, bytes) = readings(30 * 80, 42);
    let output = client(&device, server.address, &["--format", "u16", "--batch", "80"], &input);
    let seen = server.finish();
    assert!(output.status.success(), "{}", stderr(&output));

    // Every message once, in order, decrypting to the input.
    assert_eq!(seen.messages.len(), 30, "{}", stderr(&output));
    let mut ids: Vec<u32> = seen.messages.iter().map(|m| m.message_id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 30, "a message completed twice");
    let received: Vec<u8> = seen.messages.iter().flat_map(|m| device.decrypt(m)).collect();
    assert_eq!(received, bytes);
    // The frames the intake took before a drop came again and were acknowledged as duplicates, not taken.
    let count = |s| seen.statuses.iter().filter(|&&x| x == s).count();
    assert_eq!(count(AckStatus::Accepted), 60);
    assert!(count(AckStatus::Duplicate) >= 3, "{:?}", seen.statuses);
    assert_eq!(
        seen.statuses.len(),
        count(AckStatus::Accepted) + count(AckStatus::Duplicate)
    );
    assert_eq!(seen.connections, 5);
    let log = stderr(&output);
    assert!(log.contains("60 frames") && log.contains("5 connections"), "{log}");
    // The counter file holds the end of the reserved block, above every number used.
    assert!(read_counter(&device.counter()) >= 60);
}

/// A second run continues above the first run's numbers (the counter file); a server whose window has moved
/// on refuses a counter that went back, and the client says which file to fix.
#[test]
fn restarts_never_reuse_sequence_numbers() {
    let device = Provisioned::new(2);
    let server = TestServer::start(registry(0), Vec::new());
    let block = ["--counter-block", "4"];
    let first = client(&device, server.address, &block, "1\n2\n3\n");
    assert!(first.status.success(), "{}", stderr(&first));
    let after_first = read_counter(&device.counter());
    assert_eq!(after_first, 4, "one block of 4 reserved for 3 frames");
    let second = client(&device, server.address, &block, "4\n5\n6\n7\n8\n");
    assert!(second.status.success(), "{}", stderr(&second));
    let seen = server.finish();
    let sequences: Vec<u64> = seen.messages.iter().map(|m| m.first_sequence).collect();
    assert_eq!(sequences, vec![0, 1, 2, 4, 5, 6, 7, 8]);
    let values: Vec<u8> = seen.messages.iter().flat_map(|m| device.decrypt(m)).collect();
    assert_eq!(values, (1..=8).collect::<Vec<u8>>());

    // The counter file lost (reset to 0) against a server that has seen up to 1000: refused, and told.
    std::fs::remove_file(device.counter()).unwrap();
    let server = TestServer::start(registry(1000), Vec::new());
    let output = client(&device, server.address, &[], "9\n10\n11\n");
    server.finish();
    assert_eq!(output.status.code(), Some(1));
    let log = stderr(&output);
    assert!(
        log.contains("too old") && log.contains("write 1000 into") && log.contains("7.counter"),
        "{log}"
    );
    // The frames sealed below the server's floor can never be accepted: none is kept for the next start.
    assert!(device.outbox_files().is_empty(), "{:?}", device.outbox_files());
    // Fixed as told: the next run goes through.
    std::fs::write(device.counter(), "1000\n").unwrap();
    let server = TestServer::start(registry(1000), Vec::new());
    let output = client(&device, server.address, &[], "12\n");
    let seen = server.finish();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(seen.accepted, [1000]);
}

/// Refusals that resending cannot fix end the client with one line saying what to do. A server that cannot
/// authenticate the device's frames (another MAC key, or no record of the device) can only answer with
/// unauthenticated records: the client acts on none of them, keeps its frames (in the outbox), and passes the
/// server's claim on as advice, in a warning and in the error when it gives up.
#[test]
fn unfixable_refusals_and_unreachable_servers_are_one_line_errors() {
    let device = Provisioned::new(3);
    let patience = ["--give-up-after", "2s", "--ack-timeout", "500ms"];
    // The server knows another MAC key for the device.
    let mut wrong = DeviceRegistry::new();
    wrong
        .register(DeviceCredentials::new(DEVICE, KEY_ID, MacKey::from_bytes([1; 32])))
        .unwrap();
    let server = TestServer::start(wrong, Vec::new());
    let output = client(&device, server.address, &patience, "1\n");
    let seen = server.finish();
    assert_eq!(output.status.code(), Some(1));
    let log = stderr(&output);
    let error = log.lines().last().unwrap_or_default();
    assert!(
        error.contains("no acknowledgement from")
            && error.contains("different provisioning runs")
            && error.contains("7.counter.outbox"),
        "{log}"
    );
    assert!(
        seen.statuses.iter().all(|&s| s == AckStatus::BadCredentials),
        "{:?}",
        seen.statuses
    );
    assert_eq!(device.outbox_files().len(), 1, "the frame stays for the next start");

    // The server does not know the device.
    let server = TestServer::start(DeviceRegistry::new(), Vec::new());
    let output = client(&device, server.address, &patience, "1\n");
    server.finish();
    assert_exit(&output, 1, "does not know device 7");
    assert_eq!(device.outbox_files().len(), 2);

    // Nobody listens: the client retries, then gives up when told to. (The outbox's frames go out first.)
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let started = Instant::now();
    let output = client(&device, closed, &["--give-up-after", "1s"], "1\n");
    assert_exit(&output, 1, "no acknowledgement from");
    assert!(started.elapsed().as_secs() < 30);

    // Bad input, a bad credential file and a bad argument: exit codes 1, 2, 2, each one line that says what to do.
    let server = TestServer::start(registry(0), Vec::new());
    let output = client(&device, server.address, &[], "1\n300\n");
    server.finish();
    assert_exit(&output, 1, "line 2 of standard input: \"300\" is not a u8");
    let output = client(&device, closed, &["--batch", "5000"], "");
    assert_exit(&output, 2, "use --batch 2048 or less");
    // A server address without a port (or not HOST:PORT at all): refused at start-up, not retried for ever.
    for address in ["127.0.0.1", "gateway.example", "::1:7000"] {
        let started = Instant::now();
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
            .arg("--credentials")
            .arg(device.credentials())
            .args(["--server", address])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_exit(&output, 2, "--server <HOST:PORT>");
        assert!(stderr(&output).contains("HOST:PORT"), "{}", stderr(&output));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{address}: {:?}",
            started.elapsed()
        );
    }
    // Durations that would make a loop without a pause (reconnect at once, give up on every connection at
    // once, run the sensor command back to back) and --runs 0: refused at start-up, naming the minimum.
    for (flags, said) in [
        (&["--max-backoff", "0s"][..], "--max-backoff 0s: use 10 ms or more"),
        (&["--ack-timeout", "0s"][..], "--ack-timeout 0s: use 100 ms or more"),
        (
            &["--command", "echo 1", "--interval", "0s"][..],
            "--interval 0s: use 1 ms or more",
        ),
        (
            &["--command", "echo 1", "--interval", "1s", "--runs", "0"][..],
            "--runs",
        ),
        // An input that cannot be read: refused before the counter file reserves numbers, in one line.
        (
            &["--input", "/nonexistent/readings.txt"][..],
            "cannot read --input /nonexistent/readings.txt",
        ),
        // An option of another mode is refused, not ignored.
        (
            &["--compact-public-key", "key.tscp"][..],
            "--compact-public-key is the key of --mode tfhe-compact-list",
        ),
    ] {
        let started = Instant::now();
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
            .arg("--credentials")
            .arg(device.credentials())
            // Without the refusal the client would run: it gives up (exit 1) instead of hanging the test.
            .args(["--server", &closed.to_string(), "--give-up-after", "2s"])
            .args(flags)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(said), "{flags:?}: {}", stderr(&output));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{flags:?}: {:?}",
            started.elapsed()
        );
    }
    // --give-up-after 0s would give up before the first acknowledgement could arrive.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
        .arg("--credentials")
        .arg(device.credentials())
        .args(["--server", &closed.to_string(), "--give-up-after", "0s"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_exit(&output, 2, "--give-up-after 0s: use 100 ms or more");
    // Clap's own refusals (an unknown option, a missing credential file option, a bad number) are one line
    // too, naming what to fix.
    for (program, args, said) in [
        (
            env!("CARGO_BIN_EXE_tfhe-sbc-client"),
            &["--no-such-option"][..],
            "--no-such-option",
        ),
        (
            env!("CARGO_BIN_EXE_tfhe-sbc-client"),
            &["--server", "127.0.0.1:1"][..],
            "--credentials",
        ),
        (
            env!("CARGO_BIN_EXE_tfhe-sbc-client"),
            &["--credentials", "x", "--batch", "many"][..],
            "--batch",
        ),
    ] {
        let output = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {text}");
        assert_eq!(text.trim().lines().count(), 1, "{args:?}: {text}");
        assert!(text.contains(said) && text.contains("--help"), "{args:?}: {text}");
    }
    // A standard error nobody reads (its pipe closed, e.g. a supervisor gone): the lines are lost, the exit
    // status is the client's own (1: gave up), never a panic's 101.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
        .arg("--credentials")
        .arg(device.credentials())
        .args(["--server", &closed.to_string(), "--give-up-after", "1s"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(1), "with standard error closed");
    std::fs::write(device.credentials(), b"TSDC but not really").unwrap();
    let output = client(&device, closed, &[], "");
    assert_eq!(output.status.code(), Some(2));
    let log = stderr(&output);
    assert!(
        log.contains("is not a valid device credential file") && !log.contains("panicked"),
        "{log}"
    );
}

/// Checks that the client exited with `code` and that its standard error says `says`.
fn assert_exit(output: &Output, code: i32, says: &str) {
    let log = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{log}");
    assert!(log.contains(says), "{log}");
}
