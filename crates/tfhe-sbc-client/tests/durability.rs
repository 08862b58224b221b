//! What survives a crash, and who may touch the device's files: frames sealed before a `kill -9` are sent
//! after the restart, each exactly once (the outbox), and a second client on the same credential file stops
//! at start-up without touching the counter, the outbox or the server.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Provisioned, SilentServer, TestServer, client, read_counter, registry, spawn_client, stderr};
use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc;
use std::time::Duration;

/// Eight readings sealed and sent to a server that never acknowledges; the client is killed (SIGKILL) while
/// it waits. A new client, against a working server, first sends what the outbox kept, then its own reading:
/// every frame sealed before the kill arrives exactly once. The old client kept unacknowledged frames in
/// memory only: they died with it.
#[test]
fn frames_sealed_before_a_kill_arrive_once_after_the_restart() {
    let device = Provisioned::new(21);
    let silent = SilentServer::start();
    let mut first = spawn_client(&device, silent.address, &["--counter-block", "4"]);
    let input: String = (1..=8).map(|v| format!("{v}\n")).collect();
    first.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let sent = silent.wait_for(8, Duration::from_secs(60));
    assert_eq!(sent, (0..8).collect::<Vec<u64>>());
    assert_eq!(device.outbox_files().len(), 8);
    first.kill().unwrap();
    first.wait().unwrap();
    silent.finish();

    let server = TestServer::start(registry(0), Vec::new());
    let output = client(&device, server.address, &["--counter-block", "4"], "9\n");
    let seen = server.finish();
    let log = stderr(&output);
    assert!(output.status.success(), "{log}");
    assert!(log.contains("first the 8 unacknowledged frames"), "{log}");
    // Sequence numbers 0..8 from the outbox, then one above the first run's reserved blocks.
    let next = seen.accepted.last().copied().unwrap_or_default();
    assert!(next >= 8, "{:?}", seen.accepted);
    let mut expected: Vec<u64> = (0..8).collect();
    expected.push(next);
    assert_eq!(seen.accepted, expected, "each frame exactly once, in order: {log}");
    assert_eq!(device.decrypt_in_order(&seen.messages), (1..=9).collect::<Vec<u8>>());
    assert!(device.outbox_files().is_empty(), "{:?}", device.outbox_files());
    assert!(read_counter(&device.counter()) > next);
}

/// A first client holds the credential file's counter while it waits for input; a second one on the same
/// file stops at start-up (exit 2) with the one-line "in use" error, having written nothing and sent
/// nothing; the first goes on and delivers its readings.
#[test]
fn a_second_client_on_one_credential_file_stops_at_start_up() {
    let device = Provisioned::new(22);
    let server = TestServer::start(registry(0), Vec::new());
    let mut first = spawn_client(&device, server.address, &[]);
    // Its log, line by line, so that the test knows when it holds the counter.
    let (lines, log) = mpsc::channel();
    let stderr_pipe = first.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr_pipe).lines() {
            if lines.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let started = log
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("the first client did not start: {e}"));
    assert!(started.contains("device 7:"), "{started}");
    let counter = read_counter(&device.counter());
    let mut files: Vec<String> = std::fs::read_dir(device.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();

    let second = client(&device, server.address, &[], "5\n");
    let second_log = stderr(&second);
    assert_eq!(second.status.code(), Some(2), "{second_log}");
    assert_eq!(second_log.lines().count(), 1, "{second_log}");
    assert!(second_log.contains("is in use by another process"), "{second_log}");
    assert_eq!(read_counter(&device.counter()), counter);
    let mut after: Vec<String> = std::fs::read_dir(device.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    after.sort();
    assert_eq!(after, files, "no temporary or other file left by the second client");
    assert_eq!(server.state.lock().unwrap().frames, 0, "the second client sent nothing");

    first.stdin.take().unwrap().write_all(b"1\n2\n3\n").unwrap();
    let status = first.wait().unwrap();
    reader.join().unwrap();
    let first_log: Vec<String> = log.try_iter().collect();
    assert!(status.success(), "{first_log:?}");
    let seen = server.finish();
    assert_eq!(seen.accepted.len(), 3);
    assert_eq!(device.decrypt_in_order(&seen.messages), [1, 2, 3]);
}

/// A damaged outbox file stops the client at start-up (exit 2) with one line naming the file and what to do,
/// before it connects anywhere; moved away as told, the next start goes through.
#[test]
fn a_damaged_outbox_file_is_a_one_line_error() {
    let device = Provisioned::new(23);
    let server = TestServer::start(registry(0), Vec::new());
    std::fs::create_dir_all(device.outbox()).unwrap();
    let damaged = device.outbox().join("00000000000000000003.frame");
    std::fs::write(&damaged, [0x42; 1503]).unwrap();
    let output = client(&device, server.address, &[], "1\n");
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{log}");
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(
        log.contains("00000000000000000003.frame") && log.contains("move it out of") && !log.contains("panicked"),
        "{log}"
    );
    assert_eq!(server.state.lock().unwrap().connections, 0);

    std::fs::remove_file(&damaged).unwrap();
    let output = client(&device, server.address, &[], "1\n");
    let seen = server.finish();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(device.decrypt_in_order(&seen.messages), [1]);
}
