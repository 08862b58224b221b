//! A message whose link goes down for longer than the server's maximum message age is reported lost, never
//! "accepted". The shipped client sends one 16-chunk message to a loopback server built from the adapter's
//! intake with a 2 s maximum age; the server answers the first 8 chunks, then stalls 3 s (a link down: the
//! other 8 chunks wait in the socket), sweeps the expired message as the real server does every second,
//! and goes on. The intake answers every late chunk "expired" (authenticated) and completes nothing; the
//! client drops the message, reports the whole of it lost (the 8 chunks acknowledged before included, none
//! of them counted as accepted) and exits 1.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Provisioned, client, readings, registry, stderr};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::ack::{ack_for, seal_ack};
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig, Received};
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_device::frame::ack::AckStatus;
use tfhe_sbc_device::std_io::write_ack;

const MAX_AGE: Duration = Duration::from_secs(2);
/// Readings (u16) per message: 64 per 128-byte chunk, 16 chunks.
const READINGS: usize = 1024;

#[derive(Default)]
struct Seen {
    statuses: Vec<AckStatus>,
    completed: usize,
    expired_by_sweep: usize,
}

#[test]
fn a_message_expired_at_the_server_is_reported_lost_with_a_failing_exit() {
    let device = Provisioned::new(71);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    {
        let seen = seen.clone();
        let config = IntakeConfig {
            max_message_age: MAX_AGE,
            ..IntakeConfig::default()
        };
        let mut intake = Intake::new(config, registry(0));
        // Serves connections until the test process ends.
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                let socket = socket.unwrap();
                let mut writer = socket.try_clone().unwrap();
                let mut reader = FrameReader::new(socket);
                let mut answered = 0;
                while let Ok(Some(frame)) = reader.next_frame() {
                    if answered == 8 {
                        // The link is down past the maximum age, then the server's sweep runs.
                        std::thread::sleep(MAX_AGE + Duration::from_secs(1));
                        seen.lock().unwrap().expired_by_sweep += intake.evict_expired(Instant::now()).len();
                    }
                    answered += 1;
                    let result = intake.receive(frame, Instant::now());
                    let ack = ack_for(frame, &result);
                    {
                        let mut seen = seen.lock().unwrap();
                        seen.statuses.push(ack.status);
                        seen.completed += usize::from(matches!(result, Ok(Received::Complete(_))));
                    }
                    if write_ack(&mut writer, &seal_ack(frame, &ack, intake.mac_key(ack.device_id))).is_err() {
                        break;
                    }
                }
            }
        });
    }

    let (input, _) = readings(READINGS, 71);
    let batch = READINGS.to_string();
    let output = client(&device, address, &["--format", "u16", "--batch", &batch], &input);
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{log}");
    assert!(log.contains("expired"), "{log}");
    assert!(log.contains("lost"), "{log}");
    // The 8 chunks acknowledged before the message expired are lost with it, never counted as accepted.
    assert!(log.contains(" 0 frames accepted"), "{log}");
    assert!(
        log.contains("1 messages lost (16 frames, 8 of them acknowledged before their message expired"),
        "{log}"
    );
    // The late chunks answered "expired" after the first are expected, not ignored records.
    assert!(log.contains("0 acknowledgement records ignored"), "{log}");
    assert!(!log.contains("ignored an acknowledgement record"), "{log}");

    let seen = seen.lock().unwrap();
    assert_eq!(seen.expired_by_sweep, 1);
    assert_eq!(seen.completed, 0, "nothing of the expired message is complete");
    // The first 8 chunks accepted, then only "expired": no late chunk is ever accepted.
    assert_eq!(seen.statuses[..8], [AckStatus::Accepted; 8]);
    assert!(seen.statuses.len() > 8, "{:?}", seen.statuses);
    assert!(
        seen.statuses[8..].iter().all(|s| *s == AckStatus::Expired),
        "{:?}",
        seen.statuses
    );
    // The client forgot the frames: its outbox is empty (the message is lost, not waiting).
    assert!(device.outbox_files().is_empty(), "{:?}", device.outbox_files());
}
