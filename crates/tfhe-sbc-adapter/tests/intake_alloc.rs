//! Intake allocates nothing for a frame rejected before or at the MAC (or by the replay window), and exactly
//! one ciphertext (2N words) plus the one-element frame list for a valid one-chunk message (and, for a
//! device's first frame, its replay window's 1 KiB of tag slots), whatever lengths the input declares. A counting global allocator proves it, counting only the test's own thread (a
//! thread-local flag): the harness's main thread may allocate at any moment on a loaded machine.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Device, reframe};
use std::time::Instant;
use tfhe_sbc_adapter::intake::{Frame, IntakeConfig};
use tfhe_sbc_adapter::replay::{FrameTag, WINDOW};
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_device::counting_alloc::{self, Counting};
use tfhe_sbc_device::frame::mac::MacKey;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// `f`'s result, the bytes it allocated and its largest block.
fn counted<R>(f: impl FnOnce() -> R) -> (R, usize, usize) {
    let (r, counts) = counting_alloc::counted(f);
    (r, counts.bytes, counts.largest)
}

#[test]
fn intake_allocates_only_what_a_valid_ciphertext_needs() {
    let mut device = Device::new(9, 33);
    let key = device.mac_key();
    let valid = device.seeded_frames(b"sensor").remove(0);
    let full = device.full_frames(b"full").remove(0);
    let two_chunks = device.seeded_frames(&[7u8; 200]);
    let mut intake = common::intake(IntakeConfig::default(), &[&device]);
    let now = Instant::now();

    let mut bad_mac = valid.clone();
    bad_mac[60] ^= 1;
    let rejected = [
        // Header fields that would size something if they were trusted.
        reframe(&valid, &key, |h| h.message_length = u32::MAX),
        reframe(&valid, &key, |h| h.chunk_count = u32::MAX),
        reframe(&valid, &key, |h| h.chunk_index = u32::MAX),
        reframe(&valid, &key, |h| h.parameter_set = u16::MAX),
        valid[..valid.len() - 1].to_vec(),
        full,
        // At the MAC.
        reframe(&valid, &key, |h| h.device_id = 34),
        reframe(&valid, &key, |h| h.key_id = 99),
        reframe(&valid, &MacKey::from_bytes([1; 32]), |_| {}),
        bad_mac,
    ];
    for bytes in &rejected {
        let (result, bytes_allocated, _) = counted(|| intake.receive(bytes, now));
        assert!(result.is_err());
        assert_eq!(
            bytes_allocated,
            0,
            "{:?} allocated {bytes_allocated} bytes",
            result.unwrap_err()
        );
    }

    let (result, bytes_allocated, largest) = counted(|| intake.receive(&valid, now).map(|r| r.into_message()));
    let message = result.unwrap().unwrap();
    println!("valid one-chunk frame: {bytes_allocated} bytes allocated, largest block {largest}");
    assert_eq!(largest, 2 * 1024 * 4, "the ciphertext: 2N words");
    // The device's first accepted frame also allocates its replay window's tag slots, once per device
    // (one frame tag per slot: WINDOW x 8 bytes, whatever the input declares).
    let tag_slots = WINDOW as usize * FrameTag::BYTES;
    assert_eq!(
        bytes_allocated,
        2 * 1024 * 4 + size_of::<Frame>() + tag_slots,
        "one ciphertext, the one-frame list and the device's tag slots, nothing else"
    );
    drop(message);

    // A replay is refused by the window: nothing allocated.
    let (result, bytes_allocated, _) = counted(|| intake.receive(&valid, now));
    assert!(result.is_err());
    assert_eq!(bytes_allocated, 0);

    // A multi-chunk message: bounded by the chunk count the parameter set and the limits allow.
    let (result, bytes_allocated, largest) = counted(|| intake.receive(&two_chunks[0], now));
    assert!(result.is_ok());
    println!("first chunk of two: {bytes_allocated} bytes allocated, largest block {largest}");
    assert_eq!(largest, 2 * 1024 * 4);
    assert!(bytes_allocated < 2 * 1024 * 4 + 2048, "{bytes_allocated}");

    // A stream declaring a 4 GiB frame is refused before any buffer grows.
    let (result, bytes_allocated, _) = counted(|| {
        let mut reader = FrameReader::with_limit(&[0xFFu8, 0xFF, 0xFF, 0xFF, 0][..], 1 << 16);
        reader.next_frame().map(|f| f.map(<[u8]>::len))
    });
    assert!(result.is_err());
    assert_eq!(bytes_allocated, 0);

    // Control: the counter sees allocations.
    let (_, bytes_allocated, _) = counted(|| std::hint::black_box(vec![0u8; 100]));
    assert!(bytes_allocated >= 100);
}
