//! `tfhe-sbc-server read`, outside in: one JetStream service (a real nats-server, the real server process
//! with gateway and workers) serves three key sets side by side, an integer set made with `--compact-list`
//! (a fleet, a per-device, a public-key and a compact-list meter), the `tfhe-lib` boolean set and the
//! big-key `ks-pbs-512` boolean set (each a fleet, a per-device and a public-key device); each device sends
//! real frames sealed from its credential file. The `read` binary, run once per key set with its client
//! key, lists every message of its set with exactly the readings (or bytes) sent, lists the other sets'
//! messages as another key set's, and exits 0; `--device 71 --max 1` lists one of that meter's two messages, the first
//! announced. A frame
//! then changed in the results bucket makes its message a verification failure, listed with its reason
//! while the others still are, and the command ends with a one-line error, exit code 2.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::nats::NatsServer;
use crate::common::service::{Meter, Server, runtime, send_until_acknowledged};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_adapter::key_store::KeyMode;
use tfhe_sbc_device::frame::ReadingFormat;
use tfhe_sbc_device::frame::ack::AckStatus;

const INTEGER_KEY_ID: u32 = 0x1d00_0a01;
/// The boolean sets: the small-key `tfhe-lib` set (key switch per bit) and a big-key set (`ks-pbs-512`,
/// extraction only), each with a fleet, a per-device and a public-key device.
const BOOLEAN_SETS: [(BooleanSet, &str, u32, u64); 2] = [
    (BooleanSet::TfheLib, "tfhe-lib", 0x1d00_0b01, 80),
    (BooleanSet::DefaultKsPbs, "ks-pbs-512", 0x1d00_0c01, 90),
];
/// The integer set's secret-key and public-key meters.
const INTEGER_METERS: [(u64, KeyMode); 3] = [
    (71, KeyMode::FleetSecretKey),
    (72, KeyMode::PerDeviceSecretKey),
    (73, KeyMode::PublicKey),
];
/// The integer set's compact-list meter.
const COMPACT_LIST: u64 = 74;
/// The modes of each boolean set's devices, numbered from its base + 1.
const BOOLEAN_MODES: [KeyMode; 3] = [KeyMode::FleetSecretKey, KeyMode::PerDeviceSecretKey, KeyMode::PublicKey];

/// One message sent: its device, first frame number, frame count and the text its listing line must hold.
struct Sent {
    device: u64,
    first_frame: u64,
    frames: usize,
    contents: String,
}

impl Sent {
    /// The start of its listing line ("device D (mode) message M: first frame S, N frame(s)") is checked
    /// field by field, then the decrypted contents.
    fn is_listed_in(&self, listing: &str) -> bool {
        let head = format!("device {} (", self.device);
        let frames = format!(
            "first frame {}, {} frame{}",
            self.first_frame,
            self.frames,
            if self.frames == 1 { "" } else { "s" }
        );
        listing
            .lines()
            .any(|line| line.starts_with(&head) && line.contains(&frames) && line.ends_with(&self.contents))
    }
}

/// Sends every frame of `frames` from `meter` until acknowledged "accepted"; the message's record.
fn send(address: &str, meter: &Meter, first_frame: u64, frames: Vec<Vec<u8>>, contents: String) -> Sent {
    for frame in &frames {
        let status = send_until_acknowledged(address, frame, meter.credentials.mac_key());
        assert_eq!(status, AckStatus::Accepted, "device {}", meter.id);
    }
    Sent {
        device: meter.id,
        first_frame,
        frames: frames.len(),
        contents,
    }
}

/// "N readings (16-bit): r1 r2 ..." as the reader prints an integer message.
fn integer_line(readings: &[u16], kind: &str) -> String {
    let numbers: Vec<String> = readings.iter().map(u16::to_string).collect();
    format!("{} readings (16-bit{kind}): {}", readings.len(), numbers.join(" "))
}

/// Runs `tfhe-sbc-server read` on the key set in `keys`; its exit code, stdout and stderr.
fn read(keys: &Path, nats: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["read", "--keys", keys.to_str().unwrap()])
        .args(["--client-key", keys.join("client_key.bin").to_str().unwrap()])
        .args(["--nats", nats, "--read-timeout", "30"])
        .args(if extra.is_empty() { &["--max", "100"][..] } else { extra })
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn read_lists_each_key_sets_messages_decrypted_and_the_other_sets_as_such() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let started = Instant::now();
    let root = tempfile::tempdir().unwrap();
    let integer = root.path().join("integer");
    tfhe_sbc_keys::commands::init_compact_list(&integer, Some(INTEGER_KEY_ID)).unwrap();
    for (id, mode) in INTEGER_METERS {
        tfhe_sbc_keys::commands::issue(&integer, id, mode, None).unwrap();
    }
    tfhe_sbc_keys::commands::issue_compact_list_devices(&integer, COMPACT_LIST, 1, None).unwrap();
    let booleans: Vec<_> = BOOLEAN_SETS
        .iter()
        .map(|&(set, name, key_id, base)| {
            let dir = root.path().join(name);
            tfhe_sbc_keys::commands::init(&dir, set, Some(key_id)).unwrap();
            for (i, mode) in BOOLEAN_MODES.into_iter().enumerate() {
                tfhe_sbc_keys::commands::issue(&dir, base + 1 + i as u64, mode, None).unwrap();
            }
            (dir, base)
        })
        .collect();
    let keys_made = started.elapsed();

    let nats = NatsServer::start();
    let (_server, address) = Server::start_with(
        &integer,
        &nats.url(),
        &root.path().join("address"),
        &[
            "--keys",
            booleans[0].0.to_str().unwrap(),
            "--keys",
            booleans[1].0.to_str().unwrap(),
        ],
        Stdio::null(),
        "",
    );
    // A second gateway of the same deployment that serves the integer set only (its devices' own entry
    // point): the first process's marks of the boolean devices are none of its business, and no sign of an
    // attack (no "do not authenticate"). A gateway only: workers take every set's frames from one consumer,
    // so every worker serves every key set (docs/operations.md).
    let second_log = root.path().join("second.log");
    let (_second, _) = Server::start_with(
        &integer,
        &nats.url(),
        &root.path().join("second-address"),
        &["--role", "gateway"],
        Stdio::from(std::fs::File::create(&second_log).unwrap()),
        "",
    );

    // The integer set: one message of one frame per meter, a second of two frames (300 readings) from the
    // fleet meter, and a compact list.
    let mut integer_sent = Vec::new();
    for (id, _) in INTEGER_METERS {
        let mut meter = Meter::new(&integer, id, 0);
        let readings: Vec<u16> = (0..5).map(|i| (id * 1000 + i * 11) as u16).collect();
        let frames = meter.message(&readings);
        integer_sent.push(send(&address, &meter, 0, frames, integer_line(&readings, "")));
        if id == 71 {
            let long: Vec<u16> = (0..300).map(|i| (60_000 + i * 7) as u16).collect();
            let frames = meter.message(&long);
            assert_eq!(frames.len(), 2);
            integer_sent.push(send(&address, &meter, 1, frames, integer_line(&long, "")));
            // Frames that state their readings' format are read at its width (f32: FheUint32, although
            // the reader's --integer-bits is 16) and listed as the device read them.
            let floats: Vec<u8> = [48.3f32, -7.25, 21.5].iter().flat_map(|r| r.to_le_bytes()).collect();
            let frames = meter.seal_as(&floats, ReadingFormat::F32);
            let contents = "3 f32 readings (32-bit): 48.3, -7.25, 21.5".to_string();
            integer_sent.push(send(&address, &meter, 3, frames, contents));
            let signed: Vec<u8> = [-5i16, 300, -32_768].iter().flat_map(|r| r.to_le_bytes()).collect();
            let frames = meter.seal_as(&signed, ReadingFormat::I16);
            let contents = "3 i16 readings (16-bit): -5, 300, -32768".to_string();
            integer_sent.push(send(&address, &meter, 4, frames, contents));
        }
    }
    let mut meter = Meter::compact_list(&integer, COMPACT_LIST, COMPACT_LIST, 0, 16);
    let list = [0u16, 65_535, 1_234, 40_000];
    let frames = meter.seal(&list.iter().flat_map(|r| r.to_le_bytes()).collect::<Vec<_>>());
    integer_sent.push(send(&address, &meter, 0, frames, integer_line(&list, ", compact list")));

    // The boolean sets: one message per device.
    let mut sets = vec![(integer.clone(), integer_sent)];
    for (dir, base) in &booleans {
        let mut sent = Vec::new();
        for (i, mode) in BOOLEAN_MODES.into_iter().enumerate() {
            let id = base + 1 + i as u64;
            let mut meter = Meter::new(dir, id, 0);
            let text = format!("device {id}: {}", mode.name());
            let hex: Vec<String> = text.bytes().map(|b| format!("{b:02x}")).collect();
            let contents = format!("{} bits ({} bytes): {}", 8 * text.len(), text.len(), hex.join(" "));
            let frames = meter.seal(text.as_bytes());
            let first = frames.len() as u64;
            sent.push(send(&address, &meter, 0, frames, contents));
            if i == 0 {
                // A message whose frames say its bytes are f32 readings is listed as those floats.
                let floats: Vec<u8> = [48.3f32, -7.25].iter().flat_map(|r| r.to_le_bytes()).collect();
                let frames = meter.seal_as(&floats, ReadingFormat::F32);
                let contents = "64 bits (8 bytes), 2 f32 readings: 48.3, -7.25".to_string();
                sent.push(send(&address, &meter, first, frames, contents));
            }
        }
        sets.push((dir.clone(), sent));
    }

    // Every message committed and announced (the workers commit after the gateway acknowledges).
    let announced: usize = sets.iter().map(|(_, sent)| sent.len()).sum();
    runtime().block_on(async {
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut stream = js.get_stream("TSBC_RESULTS").await.unwrap();
            let messages = stream.info().await.unwrap().state.messages;
            if messages >= announced as u64 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{messages} of {announced} messages announced in 60 s"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let sent_at = started.elapsed();
    // The marks of every write reach the second process within 100 ms (and all of them every 10 s).
    std::thread::sleep(Duration::from_secs(2));
    let second = std::fs::read_to_string(&second_log).unwrap();
    assert!(
        !second.contains("do not authenticate"),
        "a process serving one key set called the marks of another set's devices forged:\n{second}"
    );

    for (keys, ours) in &sets {
        let theirs: Vec<&Sent> = sets
            .iter()
            .filter(|(other, _)| other != keys)
            .flat_map(|(_, sent)| sent)
            .collect();
        let (code, listing, log) = read(keys, &nats.url(), &[]);
        println!("read --keys {}:\n{listing}{log}", keys.display());
        assert_eq!(code, Some(0), "{listing}{log}");
        for sent in ours {
            assert!(
                sent.is_listed_in(&listing),
                "device {} sent '{}' (first frame {}):\n{listing}",
                sent.device,
                sent.contents,
                sent.first_frame
            );
        }
        for sent in &theirs {
            let other = ", of another key set (not in this key store): skipped";
            let line = format!("device {} message ", sent.device);
            assert!(
                listing.lines().any(|l| l.starts_with(&line) && l.ends_with(other)),
                "device {} of the other key set:\n{listing}",
                sent.device
            );
        }
        let summary = format!(
            "{} messages of this key set, {} of another key set (skipped), 0 failed verification",
            ours.len(),
            theirs.len()
        );
        assert_eq!(listing.lines().last(), Some(summary.as_str()), "{listing}");
        assert_eq!(listing.lines().count(), ours.len() + theirs.len() + 1, "{listing}");
    }

    // One device's messages, at most one of them: the first announced. Device 71's four messages were sent
    // one after the other, but two workers commit them, so any may be announced first (under load the
    // two-frame one was).
    let (code, listing, log) = read(&integer, &nats.url(), &["--device", "71", "--max", "1"]);
    println!("read --keys {} --device 71 --max 1:\n{listing}{log}", integer.display());
    assert_eq!(code, Some(0), "{listing}{log}");
    let integer_sent = &sets[0].1;
    let device_71: Vec<&Sent> = integer_sent.iter().filter(|sent| sent.device == 71).collect();
    assert_eq!(device_71.len(), 4);
    assert_eq!(
        device_71.iter().filter(|sent| sent.is_listed_in(&listing)).count(),
        1,
        "{listing}"
    );
    assert_eq!(
        listing.lines().last(),
        Some("1 messages of this key set, 0 of another key set (skipped), 0 failed verification"),
        "{listing}"
    );
    assert_eq!(listing.lines().count(), 2, "{listing}");

    // A stored frame changed in the results bucket (a byte under the frame's MAC): that message is
    // listed as failing verification, with the reason, the others still are, and the command ends non-zero.
    runtime().block_on(async {
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        let bucket = js.get_key_value("tsbc-results").await.unwrap();
        let mut frame = bucket.get("frames/72/0").await.unwrap().unwrap().to_vec();
        // A byte of the frame's body (the binding after the frame covers its MAC tag, which is unchanged).
        frame[60] ^= 1;
        bucket.put("frames/72/0", frame.into()).await.unwrap();
    });
    let (code, listing, log) = read(&integer, &nats.url(), &[]);
    println!(
        "read --keys {} after a stored frame was changed:\n{listing}{log}",
        integer.display()
    );
    assert_eq!(code, Some(2), "{listing}{log}");
    assert!(
        listing.lines().any(|l| l
            .starts_with("device 72 (per-device) message 0: first frame 0, 1 frame: FAILED verification: ")
            && l.contains("bad frame MAC")),
        "{listing}"
    );
    for sent in integer_sent.iter().filter(|sent| sent.device != 72) {
        assert!(sent.is_listed_in(&listing), "device {}:\n{listing}", sent.device);
    }
    assert_eq!(
        listing.lines().last(),
        Some(
            format!(
                "{} messages of this key set, {} of another key set (skipped), 1 failed verification",
                integer_sent.len() - 1,
                sets[1..].iter().map(|(_, sent)| sent.len()).sum::<usize>()
            )
            .as_str()
        ),
        "{listing}"
    );
    assert_eq!(
        log.trim(),
        format!(
            "tfhe-sbc-server: error: 1 of {} messages of this key set failed verification (listed above)",
            integer_sent.len()
        )
    );
    println!(
        "keys made in {keys_made:.1?}, messages sent and committed by {sent_at:.1?}, five listings by {:.1?}",
        started.elapsed()
    );
}

/// `read`'s mistakes, before any key or NATS: a bad value or a missing key set is an error whose first
/// line names it, exit code 2, no panic.
#[test]
fn read_errors_name_the_flag() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let missing = missing.to_str().unwrap();
    let run = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
            .args(["read", "--keys", missing, "--client-key", "client_key.bin"])
            .args(["--nats", "nats://127.0.0.1:1"])
            .args(extra)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("tfhe-sbc-server: error: ") && stderr.contains("server_key.bin"),
        "{stderr}"
    );
    for (extra, named) in [
        (&["--integer-bits", "12"][..], "--integer-bits 12"),
        (&["--max", "0"][..], "--max 0"),
    ] {
        let (code, stderr) = run(extra);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(named) && !stderr.contains("panicked"), "{stderr}");
    }
    let (code, stderr) = run(&["--max", "many"]);
    assert_eq!(code, Some(2), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(first.contains("'many'") && first.contains("--max"), "{stderr}");
}
