//! Acknowledgement records are authenticated: the client acts only on a record whose tag verifies under the
//! device's MAC key for a frame it is waiting for. Forged, unauthenticated, misdirected and undecodable
//! records are ignored (one warning line, however many): they never end the client, never make it forget a
//! frame, and their numbers never reach the operator. An authenticated "expired" loses its message, and the
//! summary and the exit status say so.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Act, FORGED_FLOOR, Fault, Provisioned, TestServer, client, registry, stderr};
use std::process::Command;

/// A man in the middle answers the first two frames with forged records (an "accepted" with a random tag, a
/// "too old" asking to set the counter to 2^64 - 2, with a random tag and with none, records for another
/// device and for a frame not waiting, and bytes that are no record), and the intake never sees those frames;
/// then the server behaves. Every reading arrives exactly once, the client exits 0, and the forged floor is
/// never printed. The old client forgot the first frame (its reading never arrived) and stopped on the second
/// with "write 18446744073709551614 into ...7.counter".
#[test]
fn forged_acknowledgements_change_nothing_and_every_reading_arrives() {
    let device = Provisioned::new(11);
    let faults = vec![Fault::new(0, 1, Act::Forge), Fault::new(0, 2, Act::Forge)];
    let server = TestServer::start(registry(0), faults);
    let input: String = (1..=10).map(|v| format!("{v}\n")).collect();
    let output = client(&device, server.address, &["--ack-timeout", "1s"], &input);
    let seen = server.finish();
    let log = stderr(&output);
    assert!(output.status.success(), "{log}");

    // Every frame accepted exactly once, every reading there, in sequence order.
    let mut accepted = seen.accepted.clone();
    accepted.sort_unstable();
    assert_eq!(accepted, (0..10).collect::<Vec<u64>>(), "{log}");
    assert_eq!(device.decrypt_in_order(&seen.messages), (1..=10).collect::<Vec<u8>>());
    // The two frames the forgeries covered went out again on a second connection.
    assert_eq!(seen.connections, 2, "{log}");
    assert!(device.outbox_files().is_empty());

    // Twelve records ignored, one warning line; the forged floor never printed, no counter advice at all.
    assert!(
        !log.contains(&FORGED_FLOOR.to_string()) && !log.contains("write "),
        "{log}"
    );
    assert_eq!(log.matches("ignored an acknowledgement record").count(), 1, "{log}");
    assert!(
        log.contains("10 frames accepted")
            && log.contains(" 0 messages lost (0 frames")
            && log.contains("12 acknowledgement records ignored"),
        "{log}"
    );
}

/// The server answers one frame with a sealed "expired" (its message is lost) and another first with a
/// forged "expired", then with its real "accepted". The client reports one frame lost, not accepted, counts
/// the forged record as ignored, and exits 1; `--help` documents the exit status. The old client dropped
/// the frame the forged record named too, and called both "dropped".
#[test]
fn an_expired_message_is_reported_lost_and_the_exit_status_says_so() {
    let device = Provisioned::new(12);
    let faults = vec![Fault::new(0, 1, Act::ForgedExpiredFirst), Fault::new(0, 2, Act::Expire)];
    let server = TestServer::start(registry(0), faults);
    let output = client(&device, server.address, &[], "1\n2\n3\n");
    let seen = server.finish();
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{log}");
    assert_eq!(seen.accepted, [0, 2]);
    assert_eq!(device.decrypt_in_order(&seen.messages), [1, 3]);
    let summary = log.lines().find(|l| l.contains("readings in")).unwrap_or_default();
    assert!(
        summary.contains("2 frames accepted")
            && summary.contains("1 messages lost (1 frames, 0 of them acknowledged before their message expired; 1 expired at the server")
            && summary.contains("1 acknowledgement records ignored"),
        "{log}"
    );
    let error = log.lines().last().unwrap_or_default();
    assert!(
        error.contains("error: 1 messages lost (1 frames)") && error.contains("expired"),
        "{log}"
    );
    // Lost frames are not kept for a next start: the server will never take them.
    assert!(device.outbox_files().is_empty());

    let help = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("Exit status: 0 when every frame was acknowledged") && help.contains("lost"),
        "{help}"
    );
}
