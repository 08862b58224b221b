//! Authenticated intake (wire format v2): real device frames round-trip; every malformed, forged, replayed or
//! inconsistent frame gets its typed error; reassembly keeps messages apart and within limits.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Device, header_of, intake, receive_message, reframe, retag};
use proptest::prelude::*;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::intake::{Frame, IntakeConfig, Received, parse_frame};
use tfhe_sbc_adapter::reassembly::Reassembler;
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_adapter::stream::{FrameReader, write_frame};
use tfhe_sbc_adapter::{IntakeError, MessageField};
use tfhe_sbc_device::frame::mac::MacKey;
use tfhe_sbc_device::frame::{
    FULL_FRAME_BYTES_1024, FrameCounter, FrameKind, HEADER_BYTES, ReadingFormat, SEEDED_FRAME_BYTES_1024, TAG_BYTES,
};

fn full_frames_allowed() -> IntakeConfig {
    IntakeConfig {
        allow_full_frames: true,
        ..IntakeConfig::default()
    }
}

#[test]
fn single_and_multi_chunk_messages_round_trip() {
    let mut device = Device::new(1, 100);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let now = Instant::now();

    let short = device.seeded_frames(b"one chunk");
    let message = intake.receive(&short[0], now).unwrap().into_message().unwrap();
    assert_eq!((message.device_id, message.key_id, message.frames.len()), (100, 3, 1));
    assert_eq!(device.decrypt_message(&message), b"one chunk");

    let long: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    let frames = device.seeded_frames(&long);
    assert_eq!(frames.len(), 3);
    for (i, frame) in frames[..2].iter().enumerate() {
        match intake.receive(frame, now).unwrap() {
            Received::Pending {
                chunk_index,
                received,
                chunk_count,
                ..
            } => assert_eq!((chunk_index, received, chunk_count), (i as u32, i as u32 + 1, 3)),
            Received::Complete(_) => panic!("complete too early"),
        }
    }
    assert_eq!(intake.open_messages(), 1);
    let message = intake.receive(&frames[2], now).unwrap().into_message().unwrap();
    assert_eq!(intake.open_messages(), 0);
    assert_eq!(message.first_sequence, 1);
    assert_eq!(message.message_id, 1);
    assert_eq!(message.message_length, 300);
    assert_eq!(device.decrypt_message(&message), long);
    assert_eq!(intake.highest_sequence(100), Some(3));

    // The empty message travels as one chunk.
    let empty = device.seeded_frames(b"");
    let message = intake.receive(&empty[0], now).unwrap().into_message().unwrap();
    assert_eq!((message.message_length, device.decrypt_message(&message).len()), (0, 0));
}

#[test]
fn chunks_arriving_out_of_order_reassemble_in_chunk_order() {
    let mut device = Device::new(2, 7);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let message: Vec<u8> = (0..500u32).map(|i| (i % 251) as u8).collect();
    let frames = device.seeded_frames(&message);
    let now = Instant::now();
    let order = [3, 0, 2, 1];
    let mut complete = None;
    for &i in &order {
        complete = intake.receive(&frames[i], now).unwrap().into_message();
    }
    let complete = complete.unwrap();
    let indices: Vec<u32> = complete.frames.iter().map(|f| f.header.chunk_index).collect();
    assert_eq!(indices, [0, 1, 2, 3]);
    assert_eq!(device.decrypt_message(&complete), message);
}

#[test]
fn full_frames_are_rejected_by_default_and_accepted_with_the_opt_in() {
    let mut device = Device::new(3, 5);
    let frames = device.full_frames(b"paper form");
    let mut strict = intake(IntakeConfig::default(), &[&device]);
    assert_eq!(
        strict.receive(&frames[0], Instant::now()).unwrap_err(),
        IntakeError::FullFrameRejected
    );
    let mut lenient = intake(full_frames_allowed(), &[&device]);
    let message = lenient
        .receive(&frames[0], Instant::now())
        .unwrap()
        .into_message()
        .unwrap();
    assert_eq!(message.frames[0].kind, FrameKind::Full);
    assert_eq!(device.decrypt_message(&message), b"paper form");
    // Rejected at the header: the sequence number was not consumed, the full frame is not replayable state.
    assert_eq!(strict.highest_sequence(5), None);
}

#[test]
fn version_1_is_refused_as_unauthenticated() {
    // A version-1 frame as the old firmware wrote it: magic, version 1, then v1's varint header.
    let mut v1 = b"TSBC\x01\x01\x00\x01\x00\x01\x05".to_vec();
    v1.extend([0u8; 32 + 4096]);
    let error = parse_frame(&v1, &IntakeConfig::default()).unwrap_err();
    assert_eq!(error, IntakeError::UnsupportedVersion(1));
    let text = error.to_string();
    assert!(text.contains("version 1") && text.contains("unauthenticated"), "{text}");
    assert_eq!(
        parse_frame(b"TSBC\x03", &IntakeConfig::default()).unwrap_err(),
        IntakeError::UnsupportedVersion(3)
    );
}

/// Every header-level error, checked on frames whose tag is valid (so only the named field is wrong).
#[test]
fn every_malformed_header_gets_its_error() {
    let mut device = Device::new(4, 9);
    let frame = device.seeded_frames(b"hello").remove(0);
    let key = device.mac_key();
    let edit = |f: fn(&mut tfhe_sbc_device::frame::FrameHeader)| reframe(&frame, &key, f);
    let mut bad_magic = frame.clone();
    bad_magic[..4].copy_from_slice(b"XXXX");
    // The refusals of the set's body widths (11 to 32 bits) and of lengths that do not fit 128-byte chunks.
    let body_bits = |found| IntakeError::UnsupportedBodyBits {
        found,
        min: 11,
        max: 32,
    };
    let inconsistent = |message_length, chunk_count| IntakeError::InconsistentMessageLength {
        message_length,
        chunk_count,
        chunk_bytes: 128,
    };
    let cases: Vec<(Vec<u8>, IntakeError)> = vec![
        (bad_magic, IntakeError::BadMagic(*b"XXXX")),
        (b"GET / HTTP/1.1\r\n".to_vec(), IntakeError::BadMagic(*b"GET ")),
        (Vec::new(), IntakeError::Truncated { needed: 5, found: 0 }),
        (frame[..3].to_vec(), IntakeError::Truncated { needed: 5, found: 3 }),
        (
            frame[..HEADER_BYTES - 1].to_vec(),
            IntakeError::Truncated {
                needed: HEADER_BYTES,
                found: HEADER_BYTES - 1,
            },
        ),
        (
            edit(|h| h.reading_format = 0x80),
            IntakeError::UnknownReadingFormat(0x80),
        ),
        (edit(|h| h.reading_format = 8), IntakeError::UnknownReadingFormat(8)),
        (
            // "hello" is not a whole number of u16 readings.
            edit(|h| h.reading_format = ReadingFormat::U16.to_u8()),
            IntakeError::PartialReadings {
                message_length: 5,
                reading_bytes: 2,
            },
        ),
        (edit(|h| h.kind = 9), IntakeError::UnknownFrameKind(9)),
        (
            // A public-key frame has no seed: its XOF id must be 0.
            edit(|h| h.kind = FrameKind::PublicKey.to_u8()),
            IntakeError::UnsupportedXof(2),
        ),
        (
            // A public-key frame carries its mask in full: a seeded frame's length does not fit.
            edit(|h| {
                h.kind = FrameKind::PublicKey.to_u8();
                h.xof_id = 0;
            }),
            IntakeError::WrongFrameLength {
                expected: FULL_FRAME_BYTES_1024,
                found: SEEDED_FRAME_BYTES_1024,
            },
        ),
        (
            edit(|h| h.kind = FrameKind::Full.to_u8()),
            IntakeError::FullFrameRejected,
        ),
        (edit(|h| h.parameter_set = 0), IntakeError::UnknownParameterSet(0)),
        (edit(|h| h.parameter_set = 999), IntakeError::UnknownParameterSet(999)),
        (edit(|h| h.xof_id = 9), IntakeError::UnsupportedXof(9)),
        (edit(|h| h.body_bits = 10), body_bits(10)),
        (edit(|h| h.body_bits = 33), body_bits(33)),
        (edit(|h| h.chunk_count = 0), IntakeError::ZeroChunkCount),
        (
            edit(|h| h.chunk_index = 1),
            IntakeError::ChunkIndexOutOfRange { index: 1, count: 1 },
        ),
        (
            edit(|h| {
                h.chunk_count = 17;
                h.message_length = 17 * 128;
            }),
            IntakeError::TooManyChunks { count: 17, limit: 16 },
        ),
        (edit(|h| h.message_length = 129), inconsistent(129, 1)),
        (edit(|h| h.chunk_count = 3), inconsistent(5, 3)),
        (
            // A forged length must not size anything: it is just inconsistent.
            edit(|h| h.message_length = u32::MAX),
            inconsistent(u32::MAX, 1),
        ),
        (
            edit(|h| {
                h.sequence = 0;
                h.chunk_index = 1;
                h.chunk_count = 2;
                h.message_length = 200;
            }),
            IntakeError::SequenceOutOfRange {
                sequence: 0,
                chunk_index: 1,
            },
        ),
        (
            edit(|h| {
                h.sequence = u64::MAX;
                h.chunk_count = 2;
                h.message_length = 200;
            }),
            IntakeError::SequenceOutOfRange {
                sequence: u64::MAX,
                chunk_index: 0,
            },
        ),
        (
            frame[..frame.len() - 1].to_vec(),
            IntakeError::WrongFrameLength {
                expected: SEEDED_FRAME_BYTES_1024,
                found: SEEDED_FRAME_BYTES_1024 - 1,
            },
        ),
        (
            [&frame[..], &[0u8]].concat(),
            IntakeError::WrongFrameLength {
                expected: SEEDED_FRAME_BYTES_1024,
                found: SEEDED_FRAME_BYTES_1024 + 1,
            },
        ),
    ];
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    for (bytes, expected) in cases {
        assert_eq!(parse_frame(&bytes, intake.config()).unwrap_err(), expected);
        assert_eq!(intake.receive(&bytes, Instant::now()).unwrap_err(), expected);
        assert!(!expected.to_string().is_empty());
    }
    // A seeded header on a full frame's payload: the length is the seeded one.
    let mut lenient = common::intake(full_frames_allowed(), &[&device]);
    let full = device.full_frames(b"x").remove(0);
    let seeded_header_full_payload = reframe(&full, &key, |h| {
        h.kind = FrameKind::Seeded.to_u8();
        h.xof_id = tfhe_sbc_device::csprng::mask::MASK_XOF_ID;
    });
    assert_eq!(
        lenient
            .receive(&seeded_header_full_payload, Instant::now())
            .unwrap_err(),
        IntakeError::WrongFrameLength {
            expected: SEEDED_FRAME_BYTES_1024,
            found: full.len(),
        }
    );
    // A full frame must not name a mask XOF.
    assert_eq!(
        lenient
            .receive(&reframe(&full, &key, |h| h.xof_id = 1), Instant::now())
            .unwrap_err(),
        IntakeError::UnsupportedXof(1)
    );
    // Nothing above moved the replay window.
    assert_eq!(intake.highest_sequence(9), None);
    assert!(intake.receive(&frame, Instant::now()).is_ok());
}

#[test]
fn unknown_device_wrong_key_id_and_bad_mac() {
    let mut device = Device::new(5, 11);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let frame = device.seeded_frames(b"authentic").remove(0);
    let key = device.mac_key();
    let now = Instant::now();
    assert_eq!(
        intake
            .receive(&reframe(&frame, &key, |h| h.device_id = 12), now)
            .unwrap_err(),
        IntakeError::UnknownDevice(12)
    );
    assert_eq!(
        intake
            .receive(&reframe(&frame, &key, |h| h.key_id = 4), now)
            .unwrap_err(),
        IntakeError::WrongKeyId {
            device_id: 11,
            expected: 3,
            found: 4
        }
    );
    // Flip one bit in each region the MAC covers (header fields the parser does not otherwise constrain,
    // the seed, the body), and in the tag itself.
    let positions = [
        (11 + 7, "device id, top byte"),
        (23, "sequence"),
        (31, "message id"),
        (HEADER_BYTES, "seed, first byte"),
        (HEADER_BYTES + 31, "seed, last byte"),
        (HEADER_BYTES + 32, "body, first byte"),
        (frame.len() - TAG_BYTES - 1, "body, last byte"),
        (frame.len() - TAG_BYTES, "tag, first byte"),
        (frame.len() - 1, "tag, last byte"),
    ];
    for (position, region) in positions {
        for bit in [0, 7] {
            let mut forged = frame.clone();
            forged[position] ^= 1 << bit;
            let error = intake.receive(&forged, now).unwrap_err();
            let expected = if position == 18 {
                IntakeError::UnknownDevice(11 ^ (1u64 << (56 + bit)))
            } else {
                IntakeError::BadMac { device_id: 11 }
            };
            assert_eq!(error, expected, "{region}, bit {bit}");
        }
    }
    // A tag under a wrong key.
    let mut wrong_key = frame.clone();
    retag(&mut wrong_key, &MacKey::from_bytes([0; 32]));
    assert_eq!(
        intake.receive(&wrong_key, now).unwrap_err(),
        IntakeError::BadMac { device_id: 11 }
    );
    // None of it moved the window; the authentic frame is still accepted, once.
    assert_eq!(intake.highest_sequence(11), None);
    assert!(intake.receive(&frame, now).is_ok());
}

#[test]
fn a_frame_maced_as_a_but_sent_as_b_is_rejected() {
    let mut a = Device::new(6, 1);
    let b = Device::new(7, 2);
    let mut intake = intake(IntakeConfig::default(), &[&a, &b]);
    // A's frame, relabelled as B's, tag left as A computed it: B's key does not verify it.
    let frame = a.seeded_frames(b"from a").remove(0);
    let relabelled = {
        let mut f = frame.clone();
        f[11..19].copy_from_slice(&2u64.to_le_bytes());
        f
    };
    assert_eq!(
        intake.receive(&relabelled, Instant::now()).unwrap_err(),
        IntakeError::BadMac { device_id: 2 }
    );
    // A computing a tag under its own key over a header naming B: the same.
    let a_key = a.mac_key();
    assert_eq!(
        intake
            .receive(&reframe(&frame, &a_key, |h| h.device_id = 2), Instant::now())
            .unwrap_err(),
        IntakeError::BadMac { device_id: 2 }
    );
    assert_eq!(intake.highest_sequence(2), None);
    assert!(intake.receive(&frame, Instant::now()).is_ok());
}

#[test]
fn replays_and_old_frames_are_refused_and_reordering_within_the_window_is_not() {
    let mut device = Device::new(8, 40);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let now = Instant::now();
    let old = device.seeded_frames(b"sequence 0").remove(0);
    let in_window = {
        device.counter = FrameCounter::new(150);
        device.seeded_frames(b"sequence 150").remove(0)
    };
    let newest = {
        device.counter = FrameCounter::new(200);
        device.seeded_frames(b"sequence 200").remove(0)
    };
    intake.receive(&newest, now).unwrap();
    assert_eq!(
        intake.receive(&newest, now).unwrap_err(),
        IntakeError::Replayed {
            device_id: 40,
            sequence: 200
        }
    );
    assert_eq!(
        intake.receive(&old, now).unwrap_err(),
        IntakeError::TooOld {
            device_id: 40,
            sequence: 0,
            lowest_acceptable: 73
        }
    );
    // 150 < 200, but inside the 128-wide window and never seen: accepted, then a replay.
    let message = intake.receive(&in_window, now).unwrap().into_message().unwrap();
    assert_eq!(device.decrypt_message(&message), b"sequence 150");
    assert!(matches!(
        intake.receive(&in_window, now),
        Err(IntakeError::Replayed { sequence: 150, .. })
    ));
    assert_eq!(intake.highest_sequence(40), Some(200));
}

#[test]
fn the_registered_floor_refuses_frames_from_before_a_restart() {
    let mut device = Device::new(9, 41);
    let before_restart = device.seeded_frames(b"old");
    let after_restart = device.seeded_frames(b"new");
    let mut registry = DeviceRegistry::new();
    registry.register_with_floor(device.server_credentials(), 1).unwrap();
    assert_eq!(
        registry.register(device.server_credentials()),
        Err(IntakeError::DuplicateDevice(41))
    );
    let mut intake = tfhe_sbc_adapter::intake::Intake::new(IntakeConfig::default(), registry);
    assert_eq!(
        intake.receive(&before_restart[0], Instant::now()).unwrap_err(),
        IntakeError::TooOld {
            device_id: 41,
            sequence: 0,
            lowest_acceptable: 1
        }
    );
    assert!(intake.receive(&after_restart[0], Instant::now()).is_ok());
    assert!(intake.register(device.server_credentials(), 0).is_err());
}

#[test]
fn chunks_that_disagree_are_never_merged() {
    let mut device = Device::new(10, 50);
    let key = device.mac_key();
    let now = Instant::now();
    let frames = device.seeded_frames(&[1u8; 300]);
    let cases: Vec<(Vec<u8>, MessageField)> = vec![
        (
            reframe(&frames[1], &key, |h| h.message_length = 301),
            MessageField::MessageLength,
        ),
        (
            reframe(&frames[1], &key, |h| {
                h.chunk_count = 4;
                h.message_length = 400;
            }),
            MessageField::ChunkCount,
        ),
        (
            // Same message id, a chunk of another run of sequence numbers (e.g. a message id reused after a
            // reboot).
            reframe(&frames[1], &key, |h| h.sequence += 1000),
            MessageField::FirstSequence,
        ),
        (
            // 300 bytes are 75 f32 readings too: chunk 0 said bytes.
            reframe(&frames[1], &key, |h| h.reading_format = ReadingFormat::F32.to_u8()),
            MessageField::ReadingFormat,
        ),
    ];
    for (forged, field) in cases {
        let mut intake = intake(IntakeConfig::default(), &[&device]);
        assert!(matches!(intake.receive(&frames[0], now), Ok(Received::Pending { .. })));
        assert_eq!(
            intake.receive(&forged, now).unwrap_err(),
            IntakeError::MessageMismatch {
                device_id: 50,
                message_id: 0,
                field
            }
        );
        // The open message is gone; the genuine chunks 1 and 2 alone do not complete anything.
        assert_eq!(intake.open_messages(), 0);
        assert!(matches!(intake.receive(&frames[1], now), Ok(Received::Pending { .. })));
        assert!(matches!(intake.receive(&frames[2], now), Ok(Received::Pending { .. })));
        assert_eq!(intake.open_messages(), 1);
    }
}

/// Through the intake, a duplicate chunk is a replay (index and first sequence fix the sequence number);
/// the reassembler rejects it on its own too.
#[test]
fn duplicate_chunks_are_rejected() {
    let mut device = Device::new(11, 60);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let frames = device.seeded_frames(&[2u8; 200]);
    let now = Instant::now();
    let first = intake.receive(&frames[0], now);
    assert!(matches!(first, Ok(Received::Pending { .. })));
    assert!(matches!(
        intake.receive(&frames[0], now),
        Err(IntakeError::Replayed { .. })
    ));

    let frame = |index: u32| -> Frame {
        let mut header = header_of(&frames[0]);
        header.chunk_index = index;
        header.sequence = u64::from(index);
        Frame {
            header,
            kind: FrameKind::Seeded,
            parameters: tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024,
            ciphertext: tfhe_sbc_core::entities::GlweCiphertext::from_container(
                vec![0u32; 2048],
                tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024.polynomial_size(),
            )
            .unwrap(),
        }
    };
    let mut reassembler = Reassembler::new(&IntakeConfig::default());
    assert!(matches!(
        reassembler.insert(frame(0), now),
        Ok(Received::Pending { .. })
    ));
    assert_eq!(
        reassembler.insert(frame(0), now).unwrap_err(),
        IntakeError::DuplicateChunk {
            device_id: 60,
            message_id: 0,
            chunk_index: 0
        }
    );
    let message = reassembler.insert(frame(1), now).unwrap().into_message().unwrap();
    assert_eq!(message.frames.len(), 2);
}

#[test]
fn open_message_limits_per_device_and_in_total() {
    let mut a = Device::new(12, 70);
    let mut b = Device::new(13, 71);
    let config = IntakeConfig {
        max_open_messages_per_device: 1,
        max_open_messages: 1,
        ..IntakeConfig::default()
    };
    let mut intake = intake(config, &[&a, &b]);
    let now = Instant::now();
    let a1 = a.seeded_frames(&[1u8; 200]);
    let a2 = a.seeded_frames(&[2u8; 200]);
    let b1 = b.seeded_frames(&[3u8; 200]);
    intake.receive(&a1[0], now).unwrap();
    assert_eq!(
        intake.receive(&a2[0], now).unwrap_err(),
        IntakeError::TooManyOpenMessagesForDevice {
            device_id: 70,
            limit: 1
        }
    );
    assert_eq!(
        intake.receive(&b1[0], now).unwrap_err(),
        IntakeError::TooManyOpenMessages { limit: 1 }
    );
    // One-chunk messages need no room.
    assert!(intake.receive(&b.seeded_frames(b"short")[0], now).is_ok());
    // A refused frame did not consume its sequence number: once there is room, the same bytes go through.
    let message = receive_message(&mut intake, &a1[1..], now);
    assert_eq!(a.decrypt_message(&message), [1u8; 200]);
    let message = receive_message(&mut intake, &a2, now);
    assert_eq!(a.decrypt_message(&message), [2u8; 200]);
    let message = receive_message(&mut intake, &b1, now);
    assert_eq!(b.decrypt_message(&message), [3u8; 200]);

    // Chunk counts are bounded when the header is parsed.
    let mut long = Device::new(14, 72);
    let frames = long.seeded_frames(&[0u8; 128 * 17]);
    let mut intake = common::intake(IntakeConfig::default(), &[&long]);
    assert_eq!(
        intake.receive(&frames[0], now).unwrap_err(),
        IntakeError::TooManyChunks { count: 17, limit: 16 }
    );
    assert_eq!(
        IntakeConfig::default().max_buffered_bytes(1, 1024),
        256 * 15 * 8192,
        "the documented bound"
    );
}

#[test]
fn incomplete_messages_expire() {
    let mut device = Device::new(15, 80);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let t0 = Instant::now();
    let first = device.seeded_frames(&[5u8; 200]);
    let second = device.seeded_frames(&[6u8; 200]);
    intake.receive(&first[0], t0).unwrap();
    intake.receive(&second[0], t0 + Duration::from_secs(30)).unwrap();
    assert!(intake.evict_expired(t0 + Duration::from_secs(60)).is_empty());
    // Evicted by the periodic sweep.
    assert_eq!(
        intake.evict_expired(t0 + Duration::from_secs(61)),
        [IntakeError::MessageExpired {
            device_id: 80,
            message_id: 0,
            received: 1,
            chunk_count: 2
        }]
    );
    assert_eq!(intake.open_messages(), 1);
    // Or when a chunk arrives late.
    assert_eq!(
        intake.receive(&second[1], t0 + Duration::from_secs(91)).unwrap_err(),
        IntakeError::MessageExpired {
            device_id: 80,
            message_id: 2,
            received: 1,
            chunk_count: 2
        }
    );
    assert_eq!(intake.open_messages(), 0);
}

#[test]
fn late_chunks_of_an_expired_message_are_refused_as_expired() {
    let mut device = Device::new(17, 81);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let t0 = Instant::now();
    // Four chunks: the first two arrive, then the link is down past the maximum age.
    let frames = device.seeded_frames(&[7u8; 512]);
    assert_eq!(frames.len(), 4);
    for frame in &frames[..2] {
        assert!(matches!(intake.receive(frame, t0).unwrap(), Received::Pending { .. }));
    }
    let late = t0 + Duration::from_secs(61);
    let expired = IntakeError::MessageExpired {
        device_id: 81,
        message_id: 0,
        received: 2,
        chunk_count: 4,
    };
    assert_eq!(intake.evict_expired(late), std::slice::from_ref(&expired));
    assert_eq!(intake.open_messages(), 0);
    // Every late chunk, and every resend of one, is "expired": none opens a new message.
    for frame in frames[2..].iter().chain(&frames[2..]) {
        assert_eq!(intake.receive(frame, late).unwrap_err(), expired);
        assert_eq!(intake.open_messages(), 0);
    }
    // An earlier chunk sent again is still a replay (the window took it).
    assert!(matches!(
        intake.receive(&frames[0], late).unwrap_err(),
        IntakeError::Replayed { .. }
    ));
    // The refused chunks consumed nothing: the device's next message goes through.
    assert_eq!(intake.highest_sequence(81), Some(1));
    let next = device.seeded_frames(&[8u8; 200]);
    let message = receive_message(&mut intake, &next, late);
    assert_eq!(device.decrypt_message(&message), [8u8; 200]);
    assert_eq!(intake.expired_remembered(), 1);

    // A message that expires when its late chunk arrives (before the sweep) is remembered the same way.
    let frames = device.seeded_frames(&[9u8; 512]);
    intake.receive(&frames[0], late).unwrap();
    let later = late + Duration::from_secs(61);
    let expired = IntakeError::MessageExpired {
        device_id: 81,
        message_id: frames_message_id(&frames[0]),
        received: 1,
        chunk_count: 4,
    };
    assert_eq!(intake.receive(&frames[1], later).unwrap_err(), expired);
    assert_eq!(intake.receive(&frames[2], later).unwrap_err(), expired);
    assert_eq!(intake.receive(&frames[3], later).unwrap_err(), expired);
    assert_eq!(intake.open_messages(), 0);
}

#[test]
fn expired_messages_are_remembered_within_a_bound() {
    use tfhe_sbc_adapter::reassembly::EXPIRED_REMEMBERED_PER_DEVICE;
    let mut device = Device::new(18, 82);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let mut now = Instant::now();
    let mut messages = Vec::new();
    for _ in 0..EXPIRED_REMEMBERED_PER_DEVICE + 1 {
        let frames = device.seeded_frames(&[1u8; 200]);
        intake.receive(&frames[0], now).unwrap();
        now += Duration::from_secs(61);
        assert_eq!(intake.evict_expired(now).len(), 1);
        messages.push(frames);
    }
    assert_eq!(intake.expired_remembered(), EXPIRED_REMEMBERED_PER_DEVICE);
    // The most recent 16 are remembered; the oldest was forgotten, and its late chunk opens a message
    // again (which expires in turn).
    for frames in &messages[1..] {
        assert!(matches!(
            intake.receive(&frames[1], now).unwrap_err(),
            IntakeError::MessageExpired { .. }
        ));
    }
    assert!(matches!(
        intake.receive(&messages[0][1], now).unwrap(),
        Received::Pending { .. }
    ));
    assert_eq!(intake.evict_expired(now + Duration::from_secs(61)).len(), 1);
    assert_eq!(intake.expired_remembered(), EXPIRED_REMEMBERED_PER_DEVICE);
}

#[test]
fn a_message_id_that_comes_back_with_another_first_sequence_is_a_new_message() {
    let mut device = Device::new(19, 83);
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let t0 = Instant::now();
    let frames = device.seeded_frames(&[2u8; 200]);
    intake.receive(&frames[0], t0).unwrap();
    let late = t0 + Duration::from_secs(61);
    assert_eq!(intake.evict_expired(late).len(), 1);
    // The same message id, 2^32 sequence numbers later.
    device.counter = FrameCounter::new(1 << 32);
    let again = device.seeded_frames(&[3u8; 200]);
    assert_eq!(frames_message_id(&again[0]), frames_message_id(&frames[0]));
    let message = receive_message(&mut intake, &again, late);
    assert_eq!(device.decrypt_message(&message), [3u8; 200]);
}

/// The message id in a frame's header.
fn frames_message_id(frame: &[u8]) -> u32 {
    header_of(frame).message_id
}

#[test]
fn length_delimited_stream() {
    let mut device = Device::new(16, 90);
    let frames = device.seeded_frames(&[0xAB; 200]);
    let mut wire = Vec::new();
    for f in &frames {
        write_frame(&mut wire, f).unwrap();
    }
    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let mut reader = FrameReader::new(&wire[..]);
    let mut complete = None;
    while let Some(bytes) = reader.next_frame().unwrap() {
        complete = intake.receive(bytes, Instant::now()).unwrap().into_message();
    }
    assert_eq!(device.decrypt_message(&complete.unwrap()), [0xAB; 200]);
    // Truncated in the middle of a frame.
    let mut reader = FrameReader::new(&wire[..wire.len() - 10]);
    reader.next_frame().unwrap();
    assert_eq!(reader.next_frame().unwrap_err(), IntakeError::TruncatedStream);
    // A forged 4 GiB length is refused before anything is read or allocated.
    let mut reader = FrameReader::with_limit(&[0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3][..], 8192);
    assert_eq!(
        reader.next_frame().unwrap_err(),
        IntakeError::FrameTooLarge {
            declared: u32::MAX as u64,
            limit: 8192
        }
    );
    // Truncated length prefix.
    assert_eq!(
        FrameReader::new(&[1u8, 0][..]).next_frame().unwrap_err(),
        IntakeError::TruncatedStream
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..96)) {
        let _ = parse_frame(&bytes, &IntakeConfig::default());
        let mut intake = tfhe_sbc_adapter::fuzzing::fuzz_intake(true);
        let _ = intake.receive(&bytes, Instant::now());
    }

    #[test]
    fn arbitrary_headers_never_panic(
        fields in prop::collection::vec(any::<u8>(), 42),
        tail in prop::sample::select(vec![0usize, 4128 + 16, 8192 + 16, 10]),
    ) {
        let mut bytes = b"TSBC\x02".to_vec();
        bytes.extend(fields);
        bytes.extend(std::iter::repeat_n(0x5A, tail));
        let _ = parse_frame(&bytes, &IntakeConfig::default());
        let mut fixed = bytes.clone();
        tfhe_sbc_adapter::fuzzing::fix_up_mac(&mut fixed);
        let mut intake = tfhe_sbc_adapter::fuzzing::fuzz_intake(true);
        let _ = intake.receive(&fixed, Instant::now());
    }
}

#[test]
fn mutated_valid_frames_never_panic() {
    let mut device = Device::new(17, tfhe_sbc_adapter::fuzzing::FUZZ_DEVICE_ID);
    let frame = device.seeded_frames(&[1, 2, 3]).remove(0);
    for position in 0..HEADER_BYTES {
        for value in [0u8, 1, 0x7F, 0x80, 0xFF] {
            let mut bytes = frame.clone();
            bytes[position] = value;
            tfhe_sbc_adapter::fuzzing::intake(&bytes);
            tfhe_sbc_adapter::fuzzing::intake(&bytes[..position]);
        }
    }
}

#[test]
fn late_chunks_of_a_message_started_before_a_restart_are_refused_as_expired() {
    use tfhe_sbc_adapter::registry::DeviceEncryption;
    let mut device = Device::new(23, 91);
    let mut before = intake(IntakeConfig::default(), &[&device]);
    let now = Instant::now();
    // Four chunks: the first two are taken, then the server restarts; only its replay window survives.
    let frames = device.seeded_frames(&[5u8; 512]);
    assert_eq!(frames.len(), 4);
    for frame in &frames[..2] {
        assert!(matches!(before.receive(frame, now).unwrap(), Received::Pending { .. }));
    }
    let window = before.replay_window(91).unwrap().resumed();
    drop(before);
    let mut after = tfhe_sbc_adapter::intake::Intake::new(IntakeConfig::default(), DeviceRegistry::new());
    after
        .register_device_with_window(device.server_credentials(), DeviceEncryption::SecretKey, window)
        .unwrap();
    // The late chunks can never complete their message: "expired", never a new entry taken as "accepted".
    let expired = IntakeError::MessageExpired {
        device_id: 91,
        message_id: frames_message_id(&frames[0]),
        received: 0,
        chunk_count: 4,
    };
    for frame in frames[2..].iter().chain(&frames[2..]) {
        assert_eq!(after.receive(frame, now).unwrap_err(), expired);
        assert_eq!(after.open_messages(), 0);
    }
    // The earlier chunks sent again are too old (taken before the restart, or lost: the server cannot say).
    assert!(matches!(
        after.receive(&frames[1], now).unwrap_err(),
        IntakeError::TooOld { .. }
    ));
    // Nothing was consumed: the device's next message, one chunk or several, goes through.
    assert_eq!(after.highest_sequence(91), None);
    let next = device.seeded_frames(&[6u8; 512]);
    let message = receive_message(&mut after, &next, now);
    assert_eq!(device.decrypt_message(&message), [6u8; 512]);
    let single = device.seeded_frames(&[7u8; 100]);
    let message = receive_message(&mut after, &single, now);
    assert_eq!(device.decrypt_message(&message), [7u8; 100]);

    // A device registered with a floor alone (no window) is refused the same way below the floor.
    let mut device = Device::new(24, 92);
    let old = device.seeded_frames(&[1u8; 512]);
    let mut registry = DeviceRegistry::new();
    registry.register_with_floor(device.server_credentials(), 2).unwrap();
    let mut fresh = tfhe_sbc_adapter::intake::Intake::new(IntakeConfig::default(), registry);
    assert!(matches!(
        fresh.receive(&old[2], now).unwrap_err(),
        IntakeError::MessageExpired {
            device_id: 92,
            received: 0,
            chunk_count: 4,
            ..
        }
    ));
    assert_eq!(fresh.open_messages(), 0);
}
