//! Wire format v2 on the device: exact frame sizes, the header fields, consecutive sequence numbers within a
//! message, and a tag that every bit of the frame changes.
#![allow(clippy::unwrap_used)]

mod common;

use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::Error;
use tfhe_sbc_device::csprng::mask::MASK_XOF_ID;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey, TAG_BYTES};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{
    FORMAT_VERSION, FULL_FRAME_BYTES_1024, FrameCounter, FrameHeader, FrameKind, HEADER_BYTES, MAGIC,
    SEEDED_FRAME_BYTES_1024, frame_bytes, full_frame_bytes, payload_bytes, seeded_frame_bytes,
};

fn credentials() -> DeviceCredentials {
    DeviceCredentials::new(0xDE71CE, 4, MacKey::from_bytes([9; 32]))
}

fn header_of(frame: &[u8]) -> FrameHeader {
    FrameHeader::read(frame).unwrap()
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn sizes_are_exact_and_documented() {
    assert_eq!(HEADER_BYTES, 47);
    assert_eq!(SEEDED_FRAME_BYTES_1024, 47 + 32 + 4096 + 16);
    assert_eq!(FULL_FRAME_BYTES_1024, 47 + 8192 + 16);
    for n in [256, 512, 1024, 2048, 4096] {
        assert_eq!(seeded_frame_bytes(n), HEADER_BYTES + 32 + 4 * n + TAG_BYTES);
        assert_eq!(full_frame_bytes(n), HEADER_BYTES + 8 * n + TAG_BYTES);
    }
    // Room for k > 1, public-key frames, the 64-bit torus and compact bodies without a v3.
    assert_eq!(payload_bytes(FrameKind::Full, 2, 1024, 32, 32), 2 * 4096 + 4096);
    assert_eq!(
        payload_bytes(FrameKind::PublicKey, 1, 2048, 64, 64),
        8 * 2048 + 8 * 2048
    );
    assert_eq!(payload_bytes(FrameKind::Seeded, 1, 2048, 64, 64), 32 + 8 * 2048);
    assert_eq!(payload_bytes(FrameKind::Seeded, 1, 1024, 32, 12), 32 + 1536);
    assert_eq!(payload_bytes(FrameKind::Seeded, 1, 1024, 64, 5), 32 + 640);
    assert_eq!(frame_bytes(FrameKind::Seeded, 1, 1024, 32, 32), SEEDED_FRAME_BYTES_1024);
}

#[test]
fn seeded_frames_carry_the_header_body_and_tag() {
    let (_key, mut encryptor) = common::key_and_encryptor(3, 4);
    let credentials = credentials();
    let mut counter = FrameCounter::new(1000);
    let message = [7u8; 300];
    let outgoing = encryptor.begin_message(&mut counter, message.len()).unwrap();
    let mut body = [0u32; 1024];
    let mut out = [0u8; SEEDED_FRAME_BYTES_1024];
    for chunk in chunks(&message, 128) {
        let len = encryptor
            .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut out)
            .unwrap();
        assert_eq!(len, SEEDED_FRAME_BYTES_1024, "chunk {}", chunk.index);
        assert_eq!((&out[..4], out[4]), (&MAGIC[..], FORMAT_VERSION));
        let header = header_of(&out);
        assert_eq!(
            header,
            FrameHeader {
                kind: FrameKind::Seeded.to_u8(),
                parameter_set: TFHE_LIB_GLWE_1024.id().0,
                xof_id: MASK_XOF_ID,
                body_bits: 32,
                reading_format: 0,
                device_id: 0xDE71CE,
                key_id: 4,
                sequence: 1000 + u64::from(chunk.index),
                message_id: 1000,
                chunk_index: chunk.index,
                chunk_count: 3,
                message_length: 300,
            }
        );
        // The body's little-endian words sit between the seed and the tag.
        assert_eq!(words(&out[HEADER_BYTES + 32..len - TAG_BYTES]), body);
        // The tag is the MAC of everything before it.
        let tag = credentials.mac_key().tag(&out[..len - TAG_BYTES]);
        assert_eq!(&out[len - TAG_BYTES..len], &tag);
    }
    // The next message continues the sequence with a new message id.
    let next = encryptor.begin_message(&mut counter, 1).unwrap();
    assert_eq!((next.first_sequence(), next.message_id()), (1003, 1003));
}

#[test]
fn full_frames_carry_mask_and_body() {
    let (_key, mut encryptor) = common::key_and_encryptor(5, 6);
    let credentials = credentials();
    let outgoing = encryptor.begin_message(&mut FrameCounter::new(0), 3).unwrap();
    let chunk = chunks(&[1, 2, 3], 128).next().unwrap();
    let mut ct = GlweCiphertext::from_container(vec![0u32; 2048], TFHE_LIB_GLWE_1024.polynomial_size()).unwrap();
    let mut out = vec![0u8; FULL_FRAME_BYTES_1024];
    let len = encryptor
        .encrypt_full_frame(&credentials, &outgoing, &chunk, &mut ct, &mut out)
        .unwrap();
    assert_eq!(len, FULL_FRAME_BYTES_1024);
    let header = header_of(&out);
    assert_eq!((header.frame_kind(), header.xof_id), (Some(FrameKind::Full), 0));
    assert_eq!(words(&out[HEADER_BYTES..HEADER_BYTES + 4096]), ct.mask());
    assert_eq!(words(&out[HEADER_BYTES + 4096..len - TAG_BYTES]), ct.body());
    assert!(
        credentials
            .mac_key()
            .verify(&out[..len - TAG_BYTES], &out[len - TAG_BYTES..])
    );
}

/// Every bit of the frame, header and payload, is covered by the tag.
#[test]
fn the_tag_changes_with_every_bit() {
    let (_key, mut encryptor) = common::key_and_encryptor(7, 8);
    let credentials = credentials();
    let outgoing = encryptor.begin_message(&mut FrameCounter::new(0), 5).unwrap();
    let chunk = chunks(b"hello", 128).next().unwrap();
    let mut body = [0u32; 1024];
    let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    encryptor
        .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut frame)
        .unwrap();
    let (authenticated, tag) = frame.split_at(SEEDED_FRAME_BYTES_1024 - TAG_BYTES);
    let key = credentials.mac_key();
    assert!(key.verify(authenticated, tag));
    let mut flipped = authenticated.to_vec();
    for byte in 0..flipped.len() {
        for bit in 0..8 {
            flipped[byte] ^= 1 << bit;
            assert!(!key.verify(&flipped, tag), "byte {byte}, bit {bit}");
            flipped[byte] ^= 1 << bit;
        }
    }
    for byte in 0..TAG_BYTES {
        let mut bad = tag.to_vec();
        bad[byte] ^= 0x10;
        assert!(!key.verify(authenticated, &bad));
    }
    // Another device's key does not verify it.
    assert!(!MacKey::from_bytes([10; 32]).verify(authenticated, tag));
}

#[test]
fn misuse_is_a_typed_error() {
    let (_key, mut encryptor) = common::key_and_encryptor(9, 10);
    let credentials = credentials();
    let mut counter = FrameCounter::with_limit(0, 3);
    let message = [1u8; 300];
    let outgoing = encryptor.begin_message(&mut counter, message.len()).unwrap();
    let mut body = [0u32; 1024];
    let mut out = vec![0u8; SEEDED_FRAME_BYTES_1024];
    let chunk = chunks(&message, 128).next().unwrap();
    assert_eq!(
        encryptor.encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut out[..4190]),
        Err(Error::BufferTooSmall)
    );
    // A chunk of another cut of the message, or of another message.
    let other = chunks(&message[..200], 128).next().unwrap();
    assert_eq!(
        encryptor.encrypt_seeded_frame(&credentials, &outgoing, &other, &mut body, &mut out),
        Err(Error::ChunkNotInMessage { index: 0, count: 2 })
    );
    let short_last = chunks(&message[..299], 128).nth(2).unwrap();
    assert_eq!(
        encryptor.encrypt_seeded_frame(&credentials, &outgoing, &short_last, &mut body, &mut out),
        Err(Error::ChunkNotInMessage { index: 2, count: 3 })
    );
    // The counter is spent: a limit, not a wrap.
    assert_eq!(encryptor.begin_message(&mut counter, 1), Err(Error::SequenceExhausted));
    counter.extend_limit(4);
    assert!(encryptor.begin_message(&mut counter, 1).is_ok());
    assert!(!format!("{credentials:?}").contains("9, 9"));
}
