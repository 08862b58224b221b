//! Intake: valid frames decode to ciphertexts that decrypt; every malformed frame gets its typed error.
#![allow(clippy::unwrap_used)]

mod common;

use proptest::prelude::*;
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::{decode_frame, decode_header};
use tfhe_sbc_adapter::stream::{FrameReader, write_frame};
use tfhe_sbc_device::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::wire::{FrameHeader, FrameKind};

fn decrypt(key: &tfhe_sbc_core::entities::GlweSecretKeyOwned, frame: &tfhe_sbc_adapter::intake::Frame) -> Vec<u8> {
    let mut decryptor = Box::new(GlweDecryptor::<1024>::new(key).unwrap());
    let mut phase = [0u32; 1024];
    decryptor
        .decrypt_phase(frame.ciphertext.mask(), frame.ciphertext.body(), &mut phase)
        .unwrap();
    let mut bytes = vec![0u8; 128];
    decode_bits(&phase, &mut bytes).unwrap();
    bytes.truncate(frame.chunk_message_bytes());
    bytes
}

#[test]
fn valid_seeded_and_full_frames_decode_and_decrypt() {
    let (key, mut encryptor) = common::device(1);
    let message: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    let mut recovered = Vec::new();
    for frame in common::seeded_frames(&mut encryptor, &message) {
        let decoded = decode_frame(&frame).unwrap();
        assert_eq!(decoded.header.kind, FrameKind::Seeded);
        recovered.extend(decrypt(&key, &decoded));
    }
    assert_eq!(recovered, message);
    let full = common::full_frame(&mut encryptor, b"full frame");
    let decoded = decode_frame(&full).unwrap();
    assert_eq!(decoded.header.kind, FrameKind::Full);
    assert_eq!(decrypt(&key, &decoded), b"full frame");
}

/// Re-encodes a valid frame's header with one field changed, keeping its payload.
fn with_header(frame: &[u8], edit: impl FnOnce(&mut FrameHeader)) -> Vec<u8> {
    let (mut header, payload): (FrameHeader, &[u8]) = postcard::take_from_bytes(frame).unwrap();
    edit(&mut header);
    let mut out = postcard::to_allocvec(&header).unwrap();
    out.extend_from_slice(payload);
    out
}

#[test]
fn every_malformed_header_gets_its_error() {
    let (_, mut encryptor) = common::device(2);
    let frame = common::seeded_frames(&mut encryptor, b"hello").remove(0);
    let cases: Vec<(Vec<u8>, IntakeError)> = vec![
        (
            with_header(&frame, |h| h.magic = *b"XXXX"),
            IntakeError::BadMagic(*b"XXXX"),
        ),
        (
            with_header(&frame, |h| h.version = 2),
            IntakeError::UnsupportedVersion(2),
        ),
        (
            with_header(&frame, |h| h.parameter_set = 0),
            IntakeError::UnknownParameterSet(0),
        ),
        (
            with_header(&frame, |h| h.parameter_set = 999),
            IntakeError::UnknownParameterSet(999),
        ),
        (with_header(&frame, |h| h.xof_id = 9), IntakeError::UnsupportedXof(9)),
        (with_header(&frame, |h| h.chunk_count = 0), IntakeError::ZeroChunkCount),
        (
            with_header(&frame, |h| h.chunk_index = 1),
            IntakeError::ChunkIndexOutOfRange { index: 1, count: 1 },
        ),
        (
            with_header(&frame, |h| h.message_length = 129),
            IntakeError::InconsistentMessageLength {
                message_length: 129,
                chunk_count: 1,
                chunk_bytes: 128,
            },
        ),
        (
            with_header(&frame, |h| h.chunk_count = 3),
            IntakeError::InconsistentMessageLength {
                message_length: 5,
                chunk_count: 3,
                chunk_bytes: 128,
            },
        ),
        (
            // A forged length must not size anything: it is just inconsistent.
            with_header(&frame, |h| h.message_length = u32::MAX),
            IntakeError::InconsistentMessageLength {
                message_length: u32::MAX,
                chunk_count: 1,
                chunk_bytes: 128,
            },
        ),
        (
            with_header(&frame, |h| h.kind = FrameKind::Full),
            IntakeError::WrongPayloadLength {
                expected: 8192,
                found: 4128,
            },
        ),
        (
            frame[..frame.len() - 1].to_vec(),
            IntakeError::WrongPayloadLength {
                expected: 4128,
                found: 4127,
            },
        ),
        (
            [&frame[..], &[0u8]].concat(),
            IntakeError::WrongPayloadLength {
                expected: 4128,
                found: 4129,
            },
        ),
        (
            frame[..3].to_vec(),
            IntakeError::MalformedHeader(postcard::Error::DeserializeUnexpectedEnd),
        ),
        (
            Vec::new(),
            IntakeError::MalformedHeader(postcard::Error::DeserializeUnexpectedEnd),
        ),
        (b"GET / HTTP/1.1\r\n".to_vec(), IntakeError::BadMagic(*b"GET ")),
    ];
    for (bytes, expected) in cases {
        let err = decode_frame(&bytes).unwrap_err();
        assert_eq!(err, expected);
        assert!(!err.to_string().is_empty());
    }
    // A varint that never ends in the chunk-index field.
    let mut bad_varint = frame[..7].to_vec();
    bad_varint.extend([0xFF; 8]);
    assert!(matches!(
        decode_frame(&bad_varint),
        Err(IntakeError::MalformedHeader(_))
    ));
}

#[test]
fn length_delimited_stream() {
    let (key, mut encryptor) = common::device(3);
    let frames = common::seeded_frames(&mut encryptor, &[0xAB; 200]);
    let mut wire = Vec::new();
    for f in &frames {
        write_frame(&mut wire, f).unwrap();
    }
    let mut reader = FrameReader::new(&wire[..]);
    let mut count = 0;
    while let Some(bytes) = reader.next_frame().unwrap() {
        let frame = decode_frame(bytes).unwrap();
        assert!(decrypt(&key, &frame).iter().all(|&b| b == 0xAB));
        count += 1;
    }
    assert_eq!(count, 2);
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
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode_frame(&bytes);
        let _ = decode_header(&bytes);
    }

    #[test]
    fn arbitrary_headers_never_panic(
        prefix in prop::collection::vec(any::<u8>(), 0..24),
        tail in prop::sample::select(vec![0usize, 4128, 8192, 10]),
    ) {
        let mut bytes = b"TSBC".to_vec();
        bytes.extend(prefix);
        bytes.extend(std::iter::repeat_n(0x5A, tail));
        let _ = decode_frame(&bytes);
    }
}

#[test]
fn mutated_valid_frames_never_panic() {
    let (_, mut encryptor) = common::device(4);
    let frame = common::seeded_frames(&mut encryptor, &[1, 2, 3]).remove(0);
    for position in 0..24 {
        for value in [0u8, 1, 0x7F, 0x80, 0xFF] {
            let mut bytes = frame.clone();
            bytes[position] = value;
            let _ = decode_frame(&bytes);
            let _ = decode_frame(&bytes[..position]);
        }
    }
}
