//! Compact-list devices through the server: a device issued with `issue --mode compact-list` on a key set
//! made with `init --parameters integer --compact-list` sends tfhe-rs's own `CompactCiphertextList`s of
//! u8, u16 and u32 readings inside authenticated frames (kind 3, the Pi client's `--mode
//! tfhe-compact-list` encryptor); the single-process server authenticates them, hands each list to tfhe-rs
//! (`safe_deserialize_conformant`, `expand_with_key` with the casting key) and `--demo-client-key` decrypts
//! exactly the readings sent, once each (a resend is a duplicate). A fleet device's compact list is refused
//! (compact lists are a public-key mode), and the frames' sizes and header checks are the wire format's
//! (`docs/wire-format.md`).
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::service::{Meter, connect};
use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::{IntakeConfig, parse_frame};
use tfhe_sbc_adapter::key_store::KeyMode;
use tfhe_sbc_device::frame::ack::AckStatus;
use tfhe_sbc_device::frame::compact_list::compact_list_frame_bytes;
use tfhe_sbc_device::frame::{FrameKind, ReadingFormat};

const DEVICE: u64 = 61;
const FLEET: u64 = 62;

/// Little-endian bytes of `readings` of `bits` bits.
fn message(readings: &[u32], bits: u32) -> Vec<u8> {
    readings
        .iter()
        .flat_map(|r| r.to_le_bytes()[..bits as usize / 8].to_vec())
        .collect()
}

/// A temporary directory with, in its `keys`, an integer key set made with `--compact-list` (key id
/// `key_id`) and the compact-list device [`DEVICE`].
fn compact_list_key_set(key_id: u32) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("keys");
    tfhe_sbc_keys::commands::init_compact_list(&dir, Some(key_id)).unwrap();
    tfhe_sbc_keys::commands::issue_compact_list_devices(&dir, DEVICE, 1, None).unwrap();
    (root, dir)
}

#[test]
fn compact_list_readings_arrive_through_tfhe_rs_expand() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let (root, dir) = compact_list_key_set(0x1d00_0007);
    tfhe_sbc_keys::commands::issue(&dir, FLEET, KeyMode::FleetSecretKey, None).unwrap();

    // One message per width, each one frame: edge values first.
    let sent: [(u32, Vec<u32>); 3] = [
        (16, vec![0, 65_535, 1_234, 40_000, 7]),
        (8, vec![255, 0, 17, 200]),
        (32, vec![u32::MAX, 0, 3_000_000_000]),
    ];
    let mut frames = Vec::new();
    for (i, (bits, readings)) in sent.iter().enumerate() {
        let mut meter = Meter::compact_list(&dir, DEVICE, DEVICE, 10 * i as u64, *bits);
        let sealed = meter.seal(&message(readings, *bits));
        assert_eq!(sealed.len(), 1);
        assert_eq!(sealed[0][5], FrameKind::CompactList as u8);
        assert_eq!(
            sealed[0].len(),
            compact_list_frame_bytes(*bits, readings.len() * *bits as usize / 8)
        );
        frames.push((meter, sealed.into_iter().next().unwrap()));
    }
    // The fleet device holds the client key's secret: compact lists are not its mode.
    let mut fleet = Meter::compact_list(&dir, FLEET, DEVICE, 0, 8);
    let forged = fleet.seal(&[1, 2, 3]).remove(0);

    let address_file = root.path().join("address");
    let mut server = common::process::demo_server(&dir, &address_file, &["--exit-after", "3"]);
    let address = common::process::wait_for_address(&address_file, Duration::from_secs(120), String::new);
    let mut stream = connect(&address);
    fleet.send_expecting(&mut stream, &forged, AckStatus::NotAllowed);
    for (i, (meter, frame)) in frames.iter().enumerate() {
        meter.send_expecting(&mut stream, frame, AckStatus::Accepted);
        if i == 0 {
            // A resend of an accepted list is acknowledged again, never converted twice.
            meter.send_expecting(&mut stream, frame, AckStatus::Duplicate);
        }
    }
    let started = Instant::now();
    let status = server.wait().unwrap();
    let mut log = String::new();
    server.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(status.success(), "{log}");
    let decrypted: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("decrypted with the demo client key") && l.contains(&format!("device={DEVICE}")))
        .collect();
    assert_eq!(decrypted.len(), 3, "{log}");
    for ((_, readings), line) in sent.iter().zip(&decrypted) {
        assert!(line.contains(&format!("{readings:?}")), "sent {readings:?}: {line}");
    }
    println!(
        "3 compact lists (u16, u8, u32) expanded by tfhe-rs and decrypted; the fleet device's list refused; \
         server done {:.1?} after the last acknowledgement",
        started.elapsed()
    );
}

#[test]
fn compact_list_frames_are_sized_and_checked_by_their_header() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let (_root, dir) = compact_list_key_set(0x1d00_0008);
    let config = IntakeConfig::default();

    // 1,030 u8 readings: two chunks, a whole one (1,024 values) and a list of the 6 left.
    let mut meter = Meter::compact_list(&dir, DEVICE, DEVICE, 0, 8);
    let readings: Vec<u8> = (0..1030u32).map(|i| (i * 7) as u8).collect();
    let frames = meter.seal(&readings);
    let lengths: Vec<usize> = frames.iter().map(Vec::len).collect();
    assert_eq!(
        lengths,
        [compact_list_frame_bytes(8, 1024), compact_list_frame_bytes(8, 6)]
    );
    assert_eq!(lengths, [49_426, 16_850]); // 47 + 211 + 8 (2048 + lwes) + 16 values + 16
    for frame in &frames {
        parse_frame(frame, &config).unwrap();
    }

    // Header fields the wire format fixes (the tag is not checked yet: parse_frame is stateless).
    let with = |at: usize, value: u8| {
        let mut bad = frames[1].clone();
        bad[at] = value;
        parse_frame(&bad, &config).unwrap_err()
    };
    // Offsets: prefix 5, kind 5, set 6..8, xof 8, body_bits 9, ..., message_length 43..47.
    assert!(matches!(with(9, 12), IntakeError::UnsupportedReadingWidth(12)));
    assert!(matches!(with(9, 64), IntakeError::UnsupportedReadingWidth(64)));
    assert!(matches!(with(8, 1), IntakeError::UnsupportedXof(1)));
    assert!(matches!(with(6, 1), IntakeError::UnsupportedParameterSet(1)));
    assert!(matches!(with(9, 16), IntakeError::WrongFrameLength { .. }));
    // The reading format (offset 10) must state the list's width (8 bits here) or none.
    assert!(matches!(
        with(10, ReadingFormat::U16.to_u8()),
        IntakeError::ReadingFormatWidth {
            format: 3,
            width_bits: 8
        }
    ));
    assert!(matches!(
        with(10, ReadingFormat::I16.to_u8()),
        IntakeError::ReadingFormatWidth {
            format: 4,
            width_bits: 8
        }
    ));
    for format in [ReadingFormat::Bytes, ReadingFormat::U8, ReadingFormat::I8] {
        let mut frame = frames[1].clone();
        frame[10] = format.to_u8();
        parse_frame(&frame, &config).unwrap();
    }
    let mut u16s = Meter::compact_list(&dir, DEVICE, DEVICE, 10, 16);
    let odd = {
        let mut frame = u16s.seal(&[1, 0, 2, 0]).remove(0);
        frame[43] = 3; // message_length 3: one and a half u16
        frame
    };
    assert!(matches!(
        parse_frame(&odd, &config).unwrap_err(),
        IntakeError::PartialReadings {
            message_length: 3,
            reading_bytes: 2
        }
    ));
    let mut truncated = frames[1].clone();
    truncated.pop();
    assert!(matches!(
        parse_frame(&truncated, &config).unwrap_err(),
        IntakeError::WrongFrameLength { .. }
    ));
}

/// A device whose frames authenticate (it holds its credential) sends a list that tfhe-rs's conformance
/// accepts but whose per-value declarations were changed: 6 and 2 blocks where two u8 values have 4 and 4,
/// the same total, so the same size. The server refuses it before the expansion (a key switch and a
/// bootstrap per block, minutes in release for a full list, spent before the value types were read), and
/// converts the device's next genuine list.
#[test]
fn a_list_with_redeclared_values_is_refused_before_its_expansion() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    use std::io::BufRead;
    use tfhe_sbc_device::frame::mac::TAG_BYTES;

    let (root, dir) = compact_list_key_set(0x1d00_0009);
    let mut meter = Meter::compact_list(&dir, DEVICE, DEVICE, 0, 8);
    let readings: Vec<u8> = (0..512u32).map(|i| (i * 3) as u8).collect();
    let mut crafted = meter.seal(&readings).remove(0);
    // The per-value info (docs/compact-list.md): DataKind V1 (u32 1), Unsigned (u32 0), its blocks (u64).
    let entry = |blocks: u64| {
        [
            1u32.to_le_bytes().as_slice(),
            &0u32.to_le_bytes(),
            &blocks.to_le_bytes(),
        ]
        .concat()
    };
    let (four, six, two) = (entry(4), entry(6), entry(2));
    let at = crafted
        .windows(32)
        .position(|w| w[..16] == four[..] && w[16..] == four[..])
        .unwrap();
    crafted[at..at + 16].copy_from_slice(&six);
    crafted[at + 16..at + 32].copy_from_slice(&two);
    let end = crafted.len() - TAG_BYTES;
    let tag = meter.credentials.mac_key().tag(&crafted[..end]);
    crafted[end..].copy_from_slice(&tag);
    let genuine = meter.seal(&[9, 8, 7]).remove(0);

    let address_file = root.path().join("address");
    let mut server = common::process::demo_server(&dir, &address_file, &[]);
    let lines = {
        let stderr = server.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        rx
    };
    let address = common::process::wait_for_address(&address_file, Duration::from_secs(120), String::new);
    let mut stream = connect(&address);
    // Accepted: the frame authenticates and its list is conformant; the conversion decides the rest.
    meter.send_expecting(&mut stream, &crafted, AckStatus::Accepted);
    let sent = Instant::now();
    meter.send_expecting(&mut stream, &genuine, AckStatus::Accepted);
    let deadline = sent + Duration::from_secs(600);
    let (mut refusal, mut converted) = (None, None);
    while (refusal.is_none() || converted.is_none()) && Instant::now() < deadline {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(1)) else {
            continue;
        };
        if line.contains("conversion failed") && refusal.is_none() {
            refusal = Some((line, sent.elapsed()));
        } else if line.contains("decrypted with the demo client key") && line.contains(&format!("device={DEVICE}")) {
            converted = Some(line);
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    let (refusal, after) = refusal.expect("no conversion failure logged for the crafted list");
    assert!(
        refusal.contains("value 0 is declared Some(Uint12), not Uint8: refused before expansion"),
        "{refusal}"
    );
    let converted = converted.expect("the genuine list after it was not converted");
    assert!(converted.contains("[9, 8, 7]"), "{converted}");
    println!("crafted list refused {after:.1?} after it was sent: {refusal}");
}
