//! The server on an integer key set (`init --parameters integer`, made with the keys tool's functions): a
//! per-device, a fleet and a public-key meter send 16-bit readings from their credential files (one frame
//! each: seeded frames from `IntegerEncryptor`, a public-key frame from `IntegerPublicKeyEncryptor`) over
//! TCP; the server takes them through its keyed intake into `FheUint16` values, and `--demo-client-key`
//! decrypts exactly the readings sent.
//!
//! Without `--nats` the server keeps the highest sequence number accepted from each device in
//! `replay_state.txt` of the key set (no flag needed): killed and started again, it accepts none of the frames
//! it accepted before (they are "too old" now), the last number a device counter hands out included.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::process::RoleProcess;
use crate::common::service::{Meter, connect, integer_key_set, send};

use std::io::Read;
use std::net::TcpStream;
use std::path::Path;

use std::time::Duration;
use tfhe_sbc_adapter::key_set::key_store::KeyMode;
use tfhe_sbc_adapter::stream::write_frame;
use tfhe_sbc_device::frame::ack::AckStatus;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind};

const PER_DEVICE: u64 = 41;
const FLEET: u64 = 42;
const PUBLIC_KEY: u64 = 43;
const METERS: [u64; 3] = [PER_DEVICE, FLEET, PUBLIC_KEY];

/// The readings meter `id` sends.
fn readings(id: u64) -> Vec<u16> {
    (0..3u16).map(|i| 20_000 + 7_919 * i + id as u16).collect()
}

/// The one frame of meter `id`, from its credential file alone: seeded under its secret key, or a public-key
/// frame under the key set's public key.
fn frame(dir: &Path, id: u64) -> Vec<u8> {
    Meter::new(dir, id, 0).message(&readings(id)).remove(0)
}

#[test]
fn integer_key_set_readings_arrive_as_fhe_uint16() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("keys");
    tfhe_sbc_keys::commands::init_integer(&dir, Some(0x1d00_0004)).unwrap();
    tfhe_sbc_keys::commands::issue(&dir, PER_DEVICE, KeyMode::PerDeviceSecretKey, None).unwrap();
    tfhe_sbc_keys::commands::issue(&dir, FLEET, KeyMode::FleetSecretKey, None).unwrap();
    tfhe_sbc_keys::commands::issue(&dir, PUBLIC_KEY, KeyMode::PublicKey, None).unwrap();
    let frames: Vec<Vec<u8>> = METERS.iter().map(|&id| frame(&dir, id)).collect();
    assert_eq!(frames[2][5], FrameKind::PublicKey as u8);
    assert_eq!(frames[2].len(), 32_831);

    let address_file = root.path().join("address");
    let mut server = common::process::demo_server(&dir, &address_file, &["--integer-bits", "16", "--exit-after", "3"]);
    let address = common::process::wait_for_address(&address_file, Duration::from_secs(120), String::new);
    let mut stream = TcpStream::connect(&address).unwrap();
    for frame in &frames {
        write_frame(&mut stream, frame).unwrap();
    }
    let status = server.wait().unwrap();
    let mut log = String::new();
    server.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(status.success(), "{log}");
    assert!(log.contains("43 (public-key)"), "{log}");
    // --threshold (boolean gates) with this integer key set: refused in one line, not ignored.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args([
            "--keys",
            dir.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--threshold",
            "3",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--threshold") && stderr.contains("integer key set"),
        "{stderr}"
    );
    for id in METERS {
        let values = format!("{:?}", readings(id));
        let line = log
            .lines()
            .find(|l| l.contains("decrypted with the demo client key") && l.contains(&format!("device={id}")))
            .unwrap_or_else(|| panic!("no decryption of device {id}: {log}"));
        assert!(line.contains(&values), "device {id} sent {values}: {line}");
    }
    assert!(log.contains("FheUint16"), "{log}");
}

#[test]
fn the_single_process_server_accepts_no_frame_twice_across_a_kill() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0006);
    let args = ["--keys", keys.to_str().unwrap(), "--listen", "127.0.0.1:0"].map(str::to_owned);
    let mut server = RoleProcess::start(
        "server",
        args.to_vec(),
        root.path().join("server.log"),
        Some(root.path().join("address")),
    );
    let mut meters: Vec<Meter> = common::service::METERS
        .iter()
        .map(|&(id, _)| Meter::new(&keys, id, 10))
        .collect();
    // One message of each meter, and one numbered u64::MAX - 1, the last a device counter hands out.
    let mut sent: Vec<(usize, Vec<u8>)> = Vec::new();
    for (i, meter) in meters.iter_mut().enumerate() {
        sent.extend(meter.message(&[1, 2, 3]).into_iter().map(|f| (i, f)));
    }
    meters[0].counter = FrameCounter::new(u64::MAX - 1);
    sent.extend(meters[0].message(&[4]).into_iter().map(|f| (0, f)));
    let mut stream = connect(&server.address());
    for (i, frame) in &sent {
        let ack = send(&mut stream, frame, meters[*i].credentials.mac_key()).unwrap();
        assert_eq!(ack.status, AckStatus::Accepted);
    }

    server.kill();
    server.restart();
    let mut stream = connect(&server.address());
    for (n, (i, frame)) in sent.iter().enumerate() {
        let ack = send(&mut stream, frame, meters[*i].credentials.mac_key()).unwrap();
        // The server resumes above each device's highest number: every frame it accepted before is "too
        // old" now (as a reused number of a device that lost its counter would be), never accepted again;
        // after u64::MAX - 1 the lowest acceptable is u64::MAX.
        assert_eq!(ack.status, AckStatus::TooOld, "frame {n} after the kill");
        if n == sent.len() - 1 {
            assert_eq!(ack.detail, u64::MAX);
        }
    }
    for meter in &mut meters[1..] {
        let frame = meter.message(&[5, 6]).remove(0);
        meter.send_expecting(&mut stream, &frame, AckStatus::Accepted);
    }
    let state = std::fs::read_to_string(keys.join("replay_state.txt")).unwrap();
    // Meter 0's window: highest u64::MAX - 1 (little-endian fe ff .. ff after the floor and the flag).
    let line = format!("{} 000000000000000001feffffffffffffff", meters[0].id);
    assert!(state.lines().any(|l| l.starts_with(&line)), "{state}");

    // A replay state the server cannot write would make every acknowledgement a promise a restart forgets:
    // refused at start-up (exit 2, one line naming the file), before any device is answered.
    let unwritable = root.path().join("no such directory").join("state.txt");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", keys.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(["--state", unwritable.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A server that starts instead would serve for ever: killed after a minute, and the test fails.
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write the replay state") && stderr.contains("no such directory"),
        "{stderr}"
    );
}

/// An acknowledgement promises that a restart remembers the frame: when the replay state can no longer be
/// written (here its directory is removed while the server runs), the server answers nothing it could not
/// record and stops with an error naming the file, instead of serving on, or exiting 0 as if done.
#[test]
fn a_replay_state_the_server_can_no_longer_write_stops_it_unanswered() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_000d);
    let state_dir = root.path().join("state");
    std::fs::create_dir(&state_dir).unwrap();
    let state = state_dir.join("replay_state.txt");
    let args = ["--keys", keys.to_str().unwrap(), "--listen", "127.0.0.1:0"]
        .into_iter()
        .chain(["--state", state.to_str().unwrap()])
        .map(str::to_owned);
    let mut server = RoleProcess::start(
        "server",
        args.collect(),
        root.path().join("server.log"),
        Some(root.path().join("address")),
    );
    let (id, _) = common::service::METERS[0];
    let mut meter = Meter::new(&keys, id, 10);
    let mut stream = connect(&server.address());
    let first = meter.message(&[1, 2, 3]).remove(0);
    meter.send_expecting(&mut stream, &first, AckStatus::Accepted);
    assert!(std::fs::read_to_string(&state).unwrap().contains(&id.to_string()));

    std::fs::remove_dir_all(&state_dir).unwrap();
    let second = meter.message(&[4, 5, 6]).remove(0);
    let mut framed = (second.len() as u32).to_le_bytes().to_vec();
    framed.extend_from_slice(&second);
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    std::io::Write::write_all(&mut stream, &framed).unwrap();
    let mut record = [0u8; tfhe_sbc_device::frame::ack::ACK_BYTES];
    // No answer at all (the connection closes with the process): an acknowledgement here, even a
    // refusal, would come from a server that carried on without its state.
    let answered = stream.read_exact(&mut record);
    assert!(
        answered.is_err(),
        "the frame the server could not record was answered: {record:02x?}"
    );

    let status = server.wait_for_exit(Duration::from_secs(60));
    let log = std::fs::read_to_string(root.path().join("server.log")).unwrap();
    let status = status.unwrap_or_else(|| panic!("the server served on without its replay state:\n{log}"));
    assert!(!status.success(), "exit {status} without its replay state:\n{log}");
    assert!(
        log.contains("cannot write the replay state") && log.contains(state.to_str().unwrap()),
        "{log}"
    );
}

/// A device whose counter went back (a counter file restored from a backup, or cloned onto another board)
/// sends new readings under numbers the server's window already holds. "Duplicate" would tell it they were
/// delivered, and they would be lost without an error: the server answers "too old" with the lowest number
/// the device may use (above its highest), while the frames it did accept under those numbers, sent again,
/// are still "duplicate". The device, moved to that number, is accepted again.
#[test]
fn another_frame_under_an_accepted_number_is_too_old_not_a_duplicate() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_000e);
    let args = ["--keys", keys.to_str().unwrap(), "--listen", "127.0.0.1:0"].map(str::to_owned);
    let server = RoleProcess::start(
        "server",
        args.to_vec(),
        root.path().join("server.log"),
        Some(root.path().join("address")),
    );
    let (id, _) = common::service::METERS[0];
    let mut meter = Meter::new(&keys, id, 10);
    let mut stream = connect(&server.address());
    let sequence = |frame: &[u8]| tfhe_sbc_adapter::intake::header_of(frame).unwrap().sequence;
    let mut sent = Vec::new();
    for readings in [&[1u16, 2, 3][..], &[4, 5, 6], &[7, 8, 9]] {
        for frame in meter.message(readings) {
            meter.send_expecting(&mut stream, &frame, AckStatus::Accepted);
            sent.push(frame);
        }
    }
    let highest = sequence(sent.last().unwrap());

    // Every number accepted so far, reused for other readings (the oldest, one inside, the highest).
    for reused_at in [sequence(&sent[0]), sequence(&sent[1]), highest] {
        meter.counter = FrameCounter::new(reused_at);
        let reused = meter.message(&[100, 200]).remove(0);
        assert_eq!(sequence(&reused), reused_at);
        let ack = send(&mut stream, &reused, meter.credentials.mac_key()).unwrap();
        assert_eq!(ack.status, AckStatus::TooOld, "number {reused_at} reused");
        assert_eq!(ack.detail, highest + 1, "number {reused_at} reused");
    }
    for frame in &sent {
        meter.send_expecting(&mut stream, frame, AckStatus::Duplicate);
    }
    meter.counter = FrameCounter::new(highest + 1);
    let next = meter.message(&[300]).remove(0);
    meter.send_expecting(&mut stream, &next, AckStatus::Accepted);
    let log = std::fs::read_to_string(root.path().join("server.log")).unwrap();
    assert_eq!(log.matches("counter went back").count(), 3, "{log}");
}
