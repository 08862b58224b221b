//! The inputs of the firmware's known-answer run, shared by `build.rs` (which computes the expected digest on
//! the host), the firmware and the host tests: the key and CSPRNG seeds of the device crate's
//! `tests/kat.rs` (`common::key_and_encryptor(0x11, 0x22)`, message `0..128`), plus fixed frame credentials.
//!
//! The run encrypts [`MESSAGE`] twice, as two authenticated seeded frames (sequence numbers
//! [`FIRST_SEQUENCE`] and the next); the first frame's payload is exactly the KAT's first encryption (its
//! mask seed and body). The digest is the two frames' keyed BLAKE2b-128 under [`DIGEST_KEY`], 32 bytes.

/// The KAT's key seed: `GlweSecretKey::generate_binary` draws the key from `Blake2bXof::from_seed(KEY_SEED)`.
/// build.rs packs that key into the firmware's flash (`PACKED_KEY`); the firmware itself does not use the seed.
#[allow(dead_code)] // Read by build.rs and the host tests, not by the firmware.
pub const KEY_SEED: [u8; 32] = [0x11; 32];
/// The KAT's CSPRNG seed: the encryptor's `Blake2bXof::from_seed(RNG_SEED)`.
pub const RNG_SEED: [u8; 32] = [0x22; 32];
/// The frame's device id.
pub const DEVICE_ID: u64 = 0x0123_4567_89ab_cdef;
/// The frame's key id.
pub const KEY_ID: u32 = 7;
/// The frame MAC key.
pub const MAC_KEY: [u8; 32] = [0x5a; 32];
/// The (public) key of the run's digest: each frame's digest is its BLAKE2b-128 under this key, computed by
/// the device crate's frame MAC code (`probe::frame_digest`).
pub const DIGEST_KEY: [u8; 32] = *b"tfhe-sbc firmware KAT digest key";
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

/// The bitwise complement of `bytes`.
const fn complement<const N: usize>(bytes: [u8; N]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = !bytes[i];
        i += 1;
    }
    out
}

/// `N` bytes from a fixed 64-bit LCG (Knuth's MMIX constants) started at `start`: arbitrary-looking secrets.
const fn lcg_bytes<const N: usize>(start: u64) -> [u8; N] {
    let mut out = [0u8; N];
    let mut x = start;
    let mut i = 0;
    while i < N {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out[i] = (x >> 56) as u8;
        i += 1;
    }
    out
}

// The constant-time trace's other secret sets (firmware built with `TSBC_FIRMWARE_SECRETS=alt` or `=third`:
// build.rs computes their key and digest, `scripts/firmware-ct-trace.sh` compares the builds' traces). The
// second set is the KAT's bitwise complement: every bit of the CSPRNG seed, the MAC key, the message and the
// key's coefficients differs, so a branch or an index on any one of those bits changes the trace. The mask and
// the noise come from the seed through the XOF, so they differ like independent random values (each bit
// with probability 1/2); the third set, arbitrary bytes, lowers the chance that a leak on one such bit is
// missed to 1/4.

/// The second set's CSPRNG seed: `RNG_SEED` complemented.
#[allow(dead_code)] // Firmware with `TSBC_FIRMWARE_SECRETS=alt` and build.rs only.
pub const ALT_RNG_SEED: [u8; 32] = complement(RNG_SEED);
/// The second set's frame MAC key: `MAC_KEY` complemented.
#[allow(dead_code)] // Firmware with `TSBC_FIRMWARE_SECRETS=alt` and build.rs only.
pub const ALT_MAC_KEY: [u8; 32] = complement(MAC_KEY);
/// The second set's message: `MESSAGE` complemented (bytes `255, 254, ..., 128`).
#[allow(dead_code)] // Firmware with `TSBC_FIRMWARE_SECRETS=alt` and build.rs only.
pub const ALT_MESSAGE: [u8; 128] = complement(MESSAGE);
// (The second set's key is the KAT key with every coefficient flipped: build.rs.)

/// The third set's key seed (build.rs draws the key from it as from `KEY_SEED`).
#[allow(dead_code)] // Read by build.rs, not by the firmware.
pub const THIRD_KEY_SEED: [u8; 32] = lcg_bytes(1);
/// The third set's CSPRNG seed.
#[allow(dead_code)] // Firmware with `TSBC_FIRMWARE_SECRETS=third` and build.rs only.
pub const THIRD_RNG_SEED: [u8; 32] = lcg_bytes(2);
/// The third set's frame MAC key.
#[allow(dead_code)] // Firmware with `TSBC_FIRMWARE_SECRETS=third` and build.rs only.
pub const THIRD_MAC_KEY: [u8; 32] = lcg_bytes(3);
/// The third set's message.
#[allow(dead_code)] // Firmware with `TSBC_FIRMWARE_SECRETS=third` and build.rs only.
pub const THIRD_MESSAGE: [u8; 128] = lcg_bytes(4);

/// The integer run's key seed: build.rs draws the `N = 2048` integer key with
/// `GlweSecretKey::generate_binary` from `Blake2bXof::from_seed(INTEGER_KEY_SEED)` and packs it into the
/// firmware's flash (`INTEGER_PACKED_KEY`, 256 bytes).
#[allow(dead_code)] // Read by build.rs and the host tests, not by the firmware.
pub const INTEGER_KEY_SEED: [u8; 32] = [0x33; 32];
/// The integer run's CSPRNG seed (`seed_from_bytes`, exactly as `Blake2bXof::from_seed`); the integer
/// public-key run's too.
pub const INTEGER_RNG_SEED: [u8; 32] = [0x44; 32];

/// The integer public-key run's key seed: build.rs draws the public key of the integer KAT key (the secret
/// key of [`INTEGER_KEY_SEED`]) with `generate_seeded_glwe_public_key` from
/// `Blake2bXof::from_seed(INTEGER_PUBLIC_KEY_SEED)` (its mask seed, then its noise) and writes it as a
/// public-key file under [`KEY_ID`] (16,443 bytes, in the firmware's flash: `INTEGER_PUBLIC_KEY_FILE`).
#[allow(dead_code)] // Read by build.rs, not by the firmware.
pub const INTEGER_PUBLIC_KEY_SEED: [u8; 32] = [0x55; 32];

/// The integer run's readings: 512 `u8` readings, one full `N = 2048` frame (four two-bit blocks each),
/// every byte value twice, in an order that is not the blocks' natural one.
pub const INTEGER_READINGS: [u8; 512] = {
    let mut m = [0u8; 512];
    let mut i = 0;
    while i < 512 {
        m[i] = (i * 167 + 13) as u8;
        i += 1;
    }
    m
};

/// The compact-list run's key seed: build.rs expands it (`compact_key::compact_key_pair`) into a binary
/// secret and its raw tfhe-rs compact public key `[a | b]` (32 KiB, in the firmware's flash:
/// `COMPACT_PUBLIC_KEY`).
#[allow(dead_code)] // Read by build.rs and the host tests, not by the firmware.
pub const COMPACT_KEY_SEED: [u8; 32] = [0x66; 32];
/// The compact-list run's CSPRNG seed (`seed_from_bytes`, exactly as `Blake2bXof::from_seed`).
pub const COMPACT_RNG_SEED: [u8; 32] = [0x77; 32];
/// The compact-list run's short list: the first 64 of [`INTEGER_READINGS`].
pub const COMPACT_SHORT_READINGS: usize = 64;
