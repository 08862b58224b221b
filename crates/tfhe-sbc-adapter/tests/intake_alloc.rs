//! Intake allocates nothing for a rejected frame, and exactly one ciphertext (2N words) for a valid one,
//! whatever lengths the input declares. A counting global allocator proves it; this file holds one test,
//! so no other test thread allocates while it counts.
#![allow(clippy::unwrap_used)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tfhe_sbc_adapter::intake::decode_frame;
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_device::wire::FrameHeader;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the counters are atomics.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::SeqCst) {
            BYTES.fetch_add(layout.size(), Ordering::SeqCst);
            LARGEST.fetch_max(layout.size(), Ordering::SeqCst);
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn counted<R>(f: impl FnOnce() -> R) -> (R, usize, usize) {
    BYTES.store(0, Ordering::SeqCst);
    LARGEST.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let r = f();
    COUNTING.store(false, Ordering::SeqCst);
    (r, BYTES.load(Ordering::SeqCst), LARGEST.load(Ordering::SeqCst))
}

#[test]
fn intake_allocates_only_what_a_valid_ciphertext_needs() {
    let (_, mut encryptor) = common::device(9);
    let valid = common::seeded_frames(&mut encryptor, b"sensor").remove(0);
    let forge = |edit: fn(&mut FrameHeader)| {
        let (mut header, payload): (FrameHeader, &[u8]) = postcard::take_from_bytes(&valid).unwrap();
        edit(&mut header);
        let mut out = postcard::to_allocvec(&header).unwrap();
        out.extend_from_slice(payload);
        out
    };
    let forged = [
        forge(|h| h.message_length = u32::MAX),
        forge(|h| h.chunk_count = u32::MAX),
        forge(|h| h.chunk_index = u32::MAX),
        forge(|h| h.parameter_set = u16::MAX),
        valid[..valid.len() - 1].to_vec(),
    ];
    for bytes in &forged {
        let (result, bytes_allocated, _) = counted(|| decode_frame(bytes));
        assert!(result.is_err());
        assert_eq!(bytes_allocated, 0, "a rejected frame allocated {bytes_allocated} bytes");
    }
    let (result, bytes_allocated, largest) = counted(|| decode_frame(&valid));
    assert!(result.is_ok());
    println!("valid frame: {bytes_allocated} bytes allocated, largest block {largest}");
    assert_eq!(
        bytes_allocated,
        2 * 1024 * 4,
        "one ciphertext of 2N words, nothing else"
    );

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
