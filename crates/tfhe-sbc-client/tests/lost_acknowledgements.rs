//! A lost or forged acknowledgement costs a resend after `--ack-timeout`, never a reading. The shipped client
//! talks to the loopback server (the adapter's intake) through a proxy that drops or forges chosen
//! acknowledgement records on their way back, as a lossy or hostile link would. The client keeps every frame
//! it sends less than `--max-sequence-span` (64) above the oldest one not acknowledged, so the frame whose
//! answer never came, sent again on the next connection, is still inside the server's replay window (128)
//! and is answered "duplicate". Without that bound the client went on sending newer frames for the whole
//! acknowledgement timeout, the frame sent again was refused as too old and counted lost: "299 of 300", exit 1.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Provisioned, TestServer, client, readings, registry, stderr};
use rand_core::SeedableRng;
use std::io::Read;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::ack::ack_for;
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::frame::ack::{ACK_BYTES, ACK_FIELDS_BYTES, AckRecord, AckStatus};
use tfhe_sbc_device::std_io::{write_ack, write_frame};

/// Frames (one reading each) per run.
const FRAMES: u64 = 300;
/// The client's default `--max-sequence-span`.
const SPAN: u64 = 64;

/// What the proxy does to the first acknowledgement record for a sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tamper {
    /// The record never reaches the client.
    Drop,
    /// The client gets the record's fields with a random tag instead.
    Forge,
}

#[derive(Default)]
struct ProxyLog {
    /// The sequence numbers of the frames the client sent, per connection.
    sent: Vec<Vec<u64>>,
    /// (connection, sequence number, what was done), in order.
    tampered: Vec<(usize, u64, Tamper)>,
    /// Still to do: each applies once, to the first record for its sequence number.
    faults: Vec<(u64, Tamper)>,
}

/// A man in the middle between the client and the server: frames pass as they are, acknowledgement records
/// pass unless a fault names their sequence number.
struct Proxy {
    address: SocketAddr,
    log: Arc<Mutex<ProxyLog>>,
}

impl Proxy {
    fn start(upstream: SocketAddr, faults: Vec<(u64, Tamper)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(ProxyLog {
            faults,
            ..ProxyLog::default()
        }));
        let shared = log.clone();
        // Runs until the test process ends; each connection ends when either side closes.
        std::thread::spawn(move || {
            for (connection, socket) in listener.incoming().enumerate() {
                let Ok(client) = socket else { return };
                shared.lock().unwrap().sent.push(Vec::new());
                relay(connection, client, upstream, shared.clone());
            }
        });
        Self { address, log }
    }
}

fn close(sockets: &[&TcpStream]) {
    for socket in sockets {
        let _ = socket.shutdown(Shutdown::Both);
    }
}

fn relay(connection: usize, client: TcpStream, upstream: SocketAddr, log: Arc<Mutex<ProxyLog>>) {
    let Ok(server) = TcpStream::connect(upstream) else {
        close(&[&client]);
        return;
    };
    let (client2, server2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let frames_log = log.clone();
    std::thread::spawn(move || {
        let mut reader = FrameReader::new(client2.try_clone().unwrap());
        let mut to_server = server2.try_clone().unwrap();
        while let Ok(Some(frame)) = reader.next_frame() {
            let sequence = ack_for(frame, &Ok::<(), IntakeError>(())).sequence;
            frames_log.lock().unwrap().sent[connection].push(sequence);
            if write_frame(&mut to_server, frame).is_err() {
                break;
            }
        }
        close(&[&client2, &server2]);
    });
    std::thread::spawn(move || {
        let (mut from_server, mut to_client) = (server.try_clone().unwrap(), client.try_clone().unwrap());
        let mut record = [0u8; ACK_BYTES];
        while from_server.read_exact(&mut record).is_ok() {
            let sequence = AckRecord::decode(&record).map(|r| r.claimed.sequence).ok();
            let tamper = {
                let mut log = log.lock().unwrap();
                let found = log.faults.iter().position(|&(s, _)| Some(s) == sequence);
                found.map(|i| {
                    let (s, tamper) = log.faults.remove(i);
                    log.tampered.push((connection, s, tamper));
                    tamper
                })
            };
            let forwarded = match tamper {
                Some(Tamper::Drop) => continue,
                Some(Tamper::Forge) => {
                    let mut forged = record;
                    rand_core::Rng::fill_bytes(
                        &mut Blake2bXof::seed_from_u64(sequence.unwrap_or_default()),
                        &mut forged[ACK_FIELDS_BYTES..],
                    );
                    write_ack(&mut to_client, &forged)
                }
                None => write_ack(&mut to_client, &record),
            };
            if forwarded.is_err() {
                break;
            }
        }
        close(&[&client, &server]);
    });
}

/// 300 readings, one frame each, through a proxy applying `faults` to the acknowledgements, with a 2 s
/// acknowledgement timeout: the server accepts every frame exactly once and refuses none as too old, every
/// reading arrives, the client reports 0 lost and exits 0, and on each connection where an acknowledgement
/// was withheld no frame went out `SPAN` or more above the frame it answered.
fn every_reading_arrives_once_despite(device_seed: u8, faults: Vec<(u64, Tamper)>) {
    let device = Provisioned::new(device_seed);
    let server = TestServer::start(registry(0), Vec::new());
    let proxy = Proxy::start(server.address, faults.clone());
    let (input, bytes) = readings(FRAMES as usize, u64::from(device_seed));
    let output = client(
        &device,
        proxy.address,
        &["--format", "u16", "--ack-timeout", "2s"],
        &input,
    );
    let seen = server.finish();
    let log = stderr(&output);
    let proxy_log = std::mem::take(&mut *proxy.log.lock().unwrap());

    // Every fault was applied, once.
    let mut applied: Vec<(u64, Tamper)> = proxy_log.tampered.iter().map(|&(_, s, t)| (s, t)).collect();
    applied.sort_unstable_by_key(|&(s, _)| s);
    assert_eq!(applied, faults, "{log}");

    // Server side: each frame accepted exactly once, none refused as too old; the readings are all there.
    let mut accepted = seen.accepted.clone();
    accepted.sort_unstable();
    assert_eq!(accepted, (0..FRAMES).collect::<Vec<u64>>(), "{log}");
    let too_old = seen.statuses.iter().filter(|s| **s == AckStatus::TooOld).count();
    assert_eq!(too_old, 0, "frames refused as too old: {log}");
    assert_eq!(device.decrypt_in_order(&seen.messages), bytes);

    // Client side: exit 0, nothing lost, nothing left in the outbox; the frames whose answers were lost or
    // forged went out again on a later connection.
    assert!(output.status.success(), "{log}");
    let summary = log.lines().find(|l| l.contains("readings in")).unwrap_or_default();
    assert!(
        summary.contains(&format!("{FRAMES} frames accepted")) && summary.contains(" 0 messages lost"),
        "{log}"
    );
    assert!(seen.connections >= 2, "{log}");
    assert!(device.outbox_files().is_empty(), "{:?}", device.outbox_files());

    // The bound itself: while an answer was missing, nothing went out `SPAN` or more above its frame.
    for (connection, sent) in proxy_log.sent.iter().enumerate() {
        let withheld = proxy_log
            .tampered
            .iter()
            .filter(|t| t.0 == connection)
            .map(|t| t.1)
            .min();
        if let (Some(withheld), Some(highest)) = (withheld, sent.iter().max()) {
            assert!(
                *highest < withheld + SPAN,
                "connection {connection}: frame {highest} sent while {withheld} waited: {log}"
            );
        }
    }
}

/// (a) The acknowledgement of frame 3 is lost: the client stops 64 frames above it, times out, reconnects
/// and sends frame 3 again ("duplicate") with the rest.
#[test]
fn a_lost_acknowledgement_costs_a_resend_not_a_reading() {
    every_reading_arrives_once_despite(41, vec![(3, Tamper::Drop)]);
}

/// (b) The acknowledgement of frame 3 is replaced by a forged one (its fields, a random tag): ignored, and
/// then as (a).
#[test]
fn a_forged_acknowledgement_costs_a_resend_not_a_reading() {
    every_reading_arrives_once_despite(42, vec![(3, Tamper::Forge)]);
}

/// (c) Several acknowledgements are lost, two in a row, one far behind them on the same connection, one on
/// a later connection and the very last one.
#[test]
fn several_lost_acknowledgements_cost_resends_not_readings() {
    let faults = [3, 4, 40, 150, FRAMES - 1].map(|s| (s, Tamper::Drop));
    every_reading_arrives_once_despite(43, faults.to_vec());
}

/// `--max-sequence-span` must stay inside the server's replay window: 0 and 128 are refused at start-up
/// (exit 2) with one line saying the range.
#[test]
fn a_sequence_span_outside_the_replay_window_is_refused() {
    for span in ["0", "128"] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
            .args([
                "--credentials",
                "7.tsdc",
                "--server",
                "127.0.0.1:1",
                "--max-sequence-span",
                span,
            ])
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{log}");
        let error = log.lines().next().unwrap_or_default();
        assert!(
            error.starts_with("error: ")
                && error.contains("--max-sequence-span")
                && error.contains("is not in 1..=127")
                && log.trim().lines().count() == 1,
            "{log}"
        );
    }
}
