//! Stack budget: the whole encryption path (seeded encryption plus frame encoding) runs on a thread whose
//! stack is 16 KiB, the smallest glibc allows. A stack overflow would hit the guard page and kill the test.
//! The encryptor's own state (about 16.6 KiB, `size_of`) lives wherever the caller puts it: a `static` on a
//! microcontroller, a `Box` here.
#![allow(clippy::unwrap_used)]

mod common;

use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::frame_mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::message::chunks;
use tfhe_sbc_device::wire::{FrameCounter, SEEDED_FRAME_BYTES_1024};

const STACK_BYTES: usize = 16 * 1024;

#[test]
fn encryption_runs_in_a_16_kib_stack() {
    let (_key, mut encryptor) = common::key_and_encryptor(1, 2);
    let size = size_of::<GlweEncryptor<1024>>();
    println!("GlweEncryptor<1024>: {size} bytes of state");
    assert!(size <= 17 * 1024, "encryptor state grew to {size} bytes");
    let handle = std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let mut body = Box::new([0u32; 1024]);
            let mut frame = Box::new([0u8; SEEDED_FRAME_BYTES_1024]);
            let credentials = DeviceCredentials::new(1, 1, MacKey::from_bytes([7; 32]));
            let mut counter = FrameCounter::new(0);
            let message = [0x3Cu8; 300];
            let outgoing = encryptor.begin_message(&mut counter, message.len()).unwrap();
            let mut total = 0;
            for chunk in chunks(&message, 128) {
                total += encryptor
                    .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut frame[..])
                    .unwrap();
            }
            total
        })
        .unwrap();
    assert_eq!(handle.join().unwrap(), 3 * SEEDED_FRAME_BYTES_1024);
}
