//! Stack scrubbing: overwrite the stack the secret work of a call left behind.
//!
//! Wiping named buffers (`zeroize`) is not enough on a host: the compiler copies values into stack slots of
//! its own (a key's words spilled between BLAKE2b rounds, an array returned by value and copied, the
//! AVX2/AVX-512 registers of the XOF lanes saved around a call), and those slots stay in the memory of a
//! running process until a later call happens to overwrite them. A memory image of the Pi client showed
//! such copies of the OS seed, of ratchet keys, of the previous encryption's chaining value and of the MAC
//! key (`crates/tfhe-sbc-client/tests/memory_image.rs`).
//!
//! The remedy is structural: the secret work runs in a function that is never inlined, and once it has
//! returned, its caller (whose own frame holds no secret) runs [`scrub_stack`], whose frame covers the
//! `WORDS * 8` bytes just below the caller's stack pointer, exactly where the callee's frames were, and
//! overwrites them with zeros through `zeroize`'s volatile writes. No `unsafe`: the region is an ordinary
//! local array.
//!
//! Depth: [`SCRUB_BYTES`] (64 KiB) is far more than any of the crate's calls uses (an encryption needs
//! under 3 KiB on x86_64 and aarch64, `tests/stack.rs`), and costs about 8,192 stores (a few microseconds)
//! per call. The thread must have that much stack left: every host thread has megabytes. Firmware (no
//! `std`) does not scrub 64 KiB: `EncryptorState` scrubs 1 KiB there instead ([`scrub_stack_words`]) (the depth where
//! the firmware's RAM-image check found the ratchet's residue on the M4). Registers are not memory and are
//! not touched.

use zeroize::Zeroize;

/// The bytes [`scrub_stack`] overwrites below its caller's frame.
pub const SCRUB_BYTES: usize = 64 * 1024;

/// The bytes [`scrub_stack_deep`] overwrites: 256 KiB with debug assertions, as unoptimized code (opt-level
/// 0, cargo's default `dev` profile outside this repository) spreads the same work over frames many times
/// larger (a memory image of the client built so held MAC-key words 11 to 101 KiB below its scrubbing
/// frame with 64 KiB); [`SCRUB_BYTES`] in optimized builds.
pub const DEEP_SCRUB_BYTES: usize = if cfg!(debug_assertions) {
    256 * 1024
} else {
    SCRUB_BYTES
};

/// Overwrites the [`SCRUB_BYTES`] bytes of stack below the caller's frame with zeros. Call it right after
/// a never-inlined function that handled secrets returned, from a frame that holds no secret itself.
#[inline(never)]
pub fn scrub_stack() {
    scrub_stack_words::<{ SCRUB_BYTES / 8 }>();
}

/// [`scrub_stack`] over [`DEEP_SCRUB_BYTES`]: for a program's own threads, whose stacks it knows are deep
/// enough (the Pi client's main and uplink threads); the crate's own calls scrub [`SCRUB_BYTES`], which
/// fits a test's or a caller's small thread.
#[inline(never)]
pub fn scrub_stack_deep() {
    scrub_stack_words::<{ DEEP_SCRUB_BYTES / 8 }>();
}

/// [`scrub_stack`] over `WORDS` 8-byte words.
#[inline(never)]
pub fn scrub_stack_words<const WORDS: usize>() {
    let mut area = [0u64; WORDS];
    // Volatile writes of every word and a compiler fence: not optimized away, whatever `area` held.
    area.zeroize();
    core::hint::black_box(&mut area);
}
