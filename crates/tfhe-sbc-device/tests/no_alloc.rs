//! A counting global allocator proves that encrypting allocates 0 bytes (seeded, full, and into a frame).
//! Only the test's own thread is counted (a thread-local flag): the harness's main thread may allocate at any
//! moment (a loaded machine made it do so while the test counted), and no other test shares this file.
#![allow(clippy::unwrap_used)]

mod common;

use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::counting_alloc::{Counting, counted};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, SEEDED_FRAME_BYTES_1024};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn encrypting_allocates_nothing() {
    let params = TFHE_LIB_GLWE_1024;
    // Boxed only so the test thread's stack stays small; the encryptor itself never allocates.
    let (_key, mut encryptor) = common::key_and_encryptor(1, 2);
    let mut body = Box::new([0u32; 1024]);
    let mut full_storage = vec![0u32; 2048];
    let mut full = GlweCiphertext::from_container(&mut full_storage[..], params.polynomial_size()).unwrap();
    let mut frame = Box::new([0u8; SEEDED_FRAME_BYTES_1024]);
    let credentials = DeviceCredentials::new(1, 1, MacKey::from_bytes([7; 32]));
    let mut counter = FrameCounter::new(0);
    let message = [0x5Au8; 300];

    let ((), counts) = counted(|| {
        for _ in 0..10 {
            encryptor
                .encrypt_seeded_glwe_ciphertext(&message[..128], &mut body[..])
                .unwrap();
            encryptor.encrypt_glwe_ciphertext(&message[..128], &mut full).unwrap();
            let outgoing = encryptor.begin_message(&mut counter, message.len()).unwrap();
            for chunk in chunks(&message, 128) {
                encryptor
                    .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut frame[..])
                    .unwrap();
            }
        }
    });
    println!(
        "allocations while encrypting: {} ({} bytes)",
        counts.allocations, counts.bytes
    );
    assert_eq!((counts.allocations, counts.bytes), (0, 0));

    // Control: the counter does see an allocation made while counting.
    let (probe, counts) = counted(|| std::hint::black_box(vec![1u8; 10]));
    drop(probe);
    assert!(counts.allocations >= 1, "the counting allocator counts nothing");
}
