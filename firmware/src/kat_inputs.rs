//! The inputs of the firmware's known-answer run, shared by `build.rs` (which computes the expected digest on
//! the host), the firmware and the host tests: the key and CSPRNG seeds of the device crate's
//! `tests/kat.rs` (`common::key_and_encryptor(0x11, 0x22)`, message `0..128`), plus fixed frame credentials.
//!
//! The run: (1) a seeded encryption of [`MESSAGE`] into a body buffer (exactly the first encryption of the
//! KAT), then (2) a second encryption of [`MESSAGE`] as an authenticated seeded frame. The digest is
//! BLAKE2b-256 over `seed | body (u32 little-endian) | frame`.

/// The KAT's key seed: `GlweSecretKey::generate_binary` draws the key from `Blake2bXof::from_seed(KEY_SEED)`.
pub const KEY_SEED: [u8; 32] = [0x11; 32];
/// The KAT's CSPRNG seed: the encryptor's `Blake2bXof::from_seed(RNG_SEED)`.
pub const RNG_SEED: [u8; 32] = [0x22; 32];
/// The frame's device id.
pub const DEVICE_ID: u64 = 0x0123_4567_89ab_cdef;
/// The frame's key id.
pub const KEY_ID: u32 = 7;
/// The frame MAC key.
pub const MAC_KEY: [u8; 32] = [0x5a; 32];
/// The frame counter's first sequence number.
pub const FIRST_SEQUENCE: u64 = 1000;

/// The KAT's message: bytes `0, 1, ..., 127` (1024 bits).
pub const MESSAGE: [u8; 128] = {
    let mut m = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        m[i] = i as u8;
        i += 1;
    }
    m
};
