//! A counting global allocator for the tests that prove a path allocates nothing (or only what it must).
//!
//! It forwards every call to the system allocator and counts the allocations, their bytes and the largest
//! block made by the counting thread only (a thread-local flag): the harness's main thread may allocate at
//! any moment (a loaded machine made it do so while a test counted). A test binary installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;` and counts with [`counted`]; no other test may
//! share that binary. This crate's allocation tests (`no_alloc`, `compact_list`) and `tfhe-sbc-adapter`'s
//! `intake_alloc` use it (feature `test-utils`: test scaffolding, not for production).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread_local;

/// The counting allocator.
pub struct Counting;

thread_local! {
    /// Whether this thread's allocations are counted (const-initialized: reading it never allocates).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; the counters are atomics.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
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

/// What the counting thread allocated while [`counted`] ran its closure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// The number of allocations.
    pub allocations: usize,
    /// Their bytes in all.
    pub bytes: usize,
    /// The largest one's bytes.
    pub largest: usize,
}

/// Runs `f` with this thread's allocations counted (from zero), and returns its result with the counts.
pub fn counted<R>(f: impl FnOnce() -> R) -> (R, Counts) {
    for counter in [&ALLOCATIONS, &BYTES, &LARGEST] {
        counter.store(0, Ordering::SeqCst);
    }
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    let load = |counter: &AtomicUsize| counter.load(Ordering::SeqCst);
    let counts = Counts {
        allocations: load(&ALLOCATIONS),
        bytes: load(&BYTES),
        largest: load(&LARGEST),
    };
    (r, counts)
}
