//! The XOF constructions, each named once: the seam every generator ([`crate::csprng::xof::KeyedXof`]), mask
//! expansion ([`crate::csprng::mask`]) and encryptor is written against.
//!
//! Both are keyed BLAKE2 in counter mode (RFC 7693): for a 32-byte key `K` and a personalization `P`,
//! `block_i = BLAKE2(key = K, message = LE64(i), salt = none, personalization = P)`, `i = 0, 1, 2, ...`
//!
//! | construction | wire id (mask) | block | secret stream `P` | mask `P` | reseed `P` | used by |
//! |---|---|---|---|---|---|---|
//! | [`Blake2bCounter`] (v2) | 2 | BLAKE2b-512, 64 B | `"TFHE-SBC rng v2."` | `"TFHE-SBC mask v2"` | `"TFHE-SBC reseed."` | 64-bit targets |
//! | [`Blake2sCounter`] (v3) | 3 | BLAKE2s-256, 32 B | `"TSBCrng3"` | `"TSBCmsk3"` | `"TSBCrsd3"` | 32-bit targets |
//!
//! [`DeviceConstruction`] is the one a target's encryptors use by default: BLAKE2s where
//! `target_pointer_width = "32"` (Cortex-M, RV32, a 32-bit Pi OS), whose 32-bit words cost one register
//! each (the Cortex-M4's encryption draws its stream in 249,461 instructions instead of 465,451: 31.6 % of
//! the encryption, docs/xof.md), BLAKE2b elsewhere (twice BLAKE2s's bytes per cycle on a 64-bit core). Any
//! host can run either: the type parameter of every encryptor names it.

use crate::csprng::{blake2s, lanes};
use zeroize::Zeroize;

/// A keyed BLAKE2 XOF in counter mode, named once: its wire id, its domains' parameter blocks, its block
/// function, its ratchet and its reseed. Implemented by [`Blake2bCounter`] and [`Blake2sCounter`]; the
/// generator, the mask expansion and the encryptors are generic over it.
pub trait XofConstruction: 'static {
    /// The name in panics and `Debug` output: `"BLAKE2b"` or `"BLAKE2s"`.
    const NAME: &'static str;
    /// The wire id of its mask expansion (a seeded frame's header `xof_id`).
    const MASK_XOF_ID: u8;
    /// The bytes of one output block.
    const BLOCK_BYTES: usize;
    /// The chaining value after a key block (as secret as the key).
    type State: Copy + Zeroize;
    /// The chaining value's little-endian bytes ([`crate::csprng::xof::KeyedXof::chaining_value`]).
    type StateBytes: Copy + AsRef<[u8]> + AsMut<[u8]>;
    /// `LANES` output blocks (eight on hosts, one on microcontrollers): what one call of [`Self::blocks`]
    /// computes.
    type Buffer: Copy + Zeroize + AsRef<[u8]> + AsMut<[u8]>;
    /// An all-zero state (an unseeded generator in `.bss`).
    const STATE_ZERO: Self::State;
    /// All-zero state bytes.
    const STATE_BYTES_ZERO: Self::StateBytes;
    /// An all-zero buffer.
    const BUFFER_ZERO: Self::Buffer;
    /// The parameter-block chaining value of the secret stream (digest length, key length 32, its
    /// personalization), computed at compile time.
    const RNG_H0: Self::State;
    /// The parameter-block chaining value of the mask expansion.
    const MASK_H0: Self::State;
    /// The chaining value after the key block of `key` in the domain of `h0`, into `out`; wipes its copies.
    fn keyed_state(h0: &Self::State, key: &[u8; 32], out: &mut Self::State);
    /// The blocks of counters `first .. first + LANES` under the keyed chaining value `h`, into `out` (the
    /// length of [`Self::Buffer`]; any other length is a bug, and panics).
    fn blocks(h: &Self::State, first: u64, out: &mut [u8]);
    /// The first 32 bytes of block `counter` (the ratchet's next key), wiping the rest.
    fn key_from_block(h: &Self::State, counter: u64) -> [u8; 32];
    /// The reseed's next key: the construction's hash, keyed with `ratchet_key`, of `entropy`, under its
    /// reseed personalization.
    fn reseed_key(ratchet_key: &[u8; 32], entropy: &[u8]) -> [u8; 32];
    /// `state`'s little-endian bytes.
    fn state_bytes(state: &Self::State) -> Self::StateBytes;
    /// Block `index` of the stream of `key` in the secret stream (`mask` false) or the mask domain, computed
    /// with the RustCrypto `blake2` crate: the reference the fast paths are tested against. `out` holds
    /// [`Self::BLOCK_BYTES`] bytes.
    fn reference_block(mask: bool, key: &[u8; 32], index: u64, out: &mut [u8]);
}

/// Construction v2: keyed BLAKE2b-512 in counter mode, 64-byte blocks (`csprng/lanes.rs`), mask wire id 2.
#[derive(Clone, Copy, Debug)]
pub enum Blake2bCounter {}

/// Construction v3: keyed BLAKE2s-256 in counter mode, 32-byte blocks (`csprng/blake2s.rs`), mask wire id 3.
#[derive(Clone, Copy, Debug)]
pub enum Blake2sCounter {}

/// The construction a target's encryptors use by default: BLAKE2s on 32-bit targets.
#[cfg(target_pointer_width = "32")]
pub type DeviceConstruction = Blake2sCounter;
/// The construction a target's encryptors use by default: BLAKE2b on 64-bit targets.
#[cfg(not(target_pointer_width = "32"))]
pub type DeviceConstruction = Blake2bCounter;

/// BLAKE2b's personalization of the secret stream.
pub const BLAKE2B_RNG_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC rng v2.";
/// BLAKE2b's personalization of mask expansion (wire id 2).
pub const BLAKE2B_MASK_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC mask v2";
/// BLAKE2b's personalization of the reseed's key derivation.
pub const BLAKE2B_RESEED_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC reseed.";
/// BLAKE2s's personalization of the secret stream (BLAKE2s personalizations have 8 bytes).
pub const BLAKE2S_RNG_PERSONALIZATION: &[u8; 8] = b"TSBCrng3";
/// BLAKE2s's personalization of mask expansion (wire id 3).
pub const BLAKE2S_MASK_PERSONALIZATION: &[u8; 8] = b"TSBCmsk3";
/// BLAKE2s's personalization of the reseed's key derivation.
pub const BLAKE2S_RESEED_PERSONALIZATION: &[u8; 8] = b"TSBCrsd3";

/// The little-endian words of 32 key bytes.
fn words64(key: &[u8; 32]) -> [u64; 4] {
    core::array::from_fn(|i| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&key[8 * i..8 * i + 8]);
        u64::from_le_bytes(w)
    })
}

impl XofConstruction for Blake2bCounter {
    const NAME: &'static str = "BLAKE2b";
    const MASK_XOF_ID: u8 = 2;
    const BLOCK_BYTES: usize = 64;
    type State = [u64; 8];
    type StateBytes = [u8; 64];
    type Buffer = [u8; 64 * lanes::LANES];
    const STATE_ZERO: [u64; 8] = [0; 8];
    const STATE_BYTES_ZERO: [u8; 64] = [0; 64];
    const BUFFER_ZERO: Self::Buffer = [0; 64 * lanes::LANES];
    const RNG_H0: [u64; 8] = lanes::initial_state(BLAKE2B_RNG_PERSONALIZATION, 32);
    const MASK_H0: [u64; 8] = lanes::initial_state(BLAKE2B_MASK_PERSONALIZATION, 32);

    fn keyed_state(h0: &[u64; 8], key: &[u8; 32], out: &mut [u64; 8]) {
        let mut words = words64(key);
        lanes::keyed_state(h0, &words, out);
        words.zeroize();
    }
    fn blocks(h: &[u64; 8], first: u64, out: &mut [u8]) {
        lanes::blocks(h, first, out.try_into().expect("one block group"));
    }
    fn key_from_block(h: &[u64; 8], counter: u64) -> [u8; 32] {
        let mut block = lanes::block(h, counter);
        let mut key = [0u8; 32];
        for (bytes, word) in key.chunks_exact_mut(8).zip(&block) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        block.zeroize();
        key
    }
    fn reseed_key(ratchet_key: &[u8; 32], entropy: &[u8]) -> [u8; 32] {
        // The XOF's own BLAKE2b (one compression linked on a microcontroller, not the blake2 crate's too).
        lanes::blake2b::<32>(BLAKE2B_RESEED_PERSONALIZATION, ratchet_key, entropy)
    }
    fn state_bytes(state: &[u64; 8]) -> [u8; 64] {
        let mut out = [0u8; 64];
        for (bytes, word) in out.chunks_exact_mut(8).zip(state) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        out
    }
    fn reference_block(mask: bool, key: &[u8; 32], index: u64, out: &mut [u8]) {
        use blake2::Blake2bMac512;
        use blake2::digest::{FixedOutput, Update};
        let p = if mask {
            BLAKE2B_MASK_PERSONALIZATION
        } else {
            BLAKE2B_RNG_PERSONALIZATION
        };
        let mut mac = Blake2bMac512::new_with_salt_and_personal(Some(key), &[], p)
            .unwrap_or_else(|_| unreachable!("a 32-byte key and a 16-byte personalization are valid"));
        mac.update(&index.to_le_bytes());
        out.copy_from_slice(&mac.finalize_fixed());
    }
}

impl XofConstruction for Blake2sCounter {
    const NAME: &'static str = "BLAKE2s";
    const MASK_XOF_ID: u8 = 3;
    const BLOCK_BYTES: usize = blake2s::BLOCK_BYTES;
    type State = [u32; 8];
    type StateBytes = [u8; 32];
    type Buffer = [u8; blake2s::BLOCK_BYTES * lanes::LANES];
    const STATE_ZERO: [u32; 8] = [0; 8];
    const STATE_BYTES_ZERO: [u8; 32] = [0; 32];
    const BUFFER_ZERO: Self::Buffer = [0; blake2s::BLOCK_BYTES * lanes::LANES];
    const RNG_H0: [u32; 8] = blake2s::parameter_state(32, 32, BLAKE2S_RNG_PERSONALIZATION);
    const MASK_H0: [u32; 8] = blake2s::parameter_state(32, 32, BLAKE2S_MASK_PERSONALIZATION);

    fn keyed_state(h0: &[u32; 8], key: &[u8; 32], out: &mut [u32; 8]) {
        blake2s::keyed_state(h0, key, out);
    }
    fn blocks(h: &[u32; 8], first: u64, out: &mut [u8]) {
        blake2s::blocks(h, first, out.try_into().expect("one block group"));
    }
    fn key_from_block(h: &[u32; 8], counter: u64) -> [u8; 32] {
        let mut block = blake2s::block(h, counter);
        let key = Self::state_bytes(&block);
        block.zeroize();
        key
    }
    fn reseed_key(ratchet_key: &[u8; 32], entropy: &[u8]) -> [u8; 32] {
        blake2s::blake2s(BLAKE2S_RESEED_PERSONALIZATION, ratchet_key, entropy)
    }
    fn state_bytes(state: &[u32; 8]) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        out
    }
    fn reference_block(mask: bool, key: &[u8; 32], index: u64, out: &mut [u8]) {
        use blake2::Blake2sMac256;
        use blake2::digest::{FixedOutput, Update};
        let p = if mask {
            BLAKE2S_MASK_PERSONALIZATION
        } else {
            BLAKE2S_RNG_PERSONALIZATION
        };
        let mut mac = Blake2sMac256::new_with_salt_and_personal(Some(key), &[], p)
            .unwrap_or_else(|_| unreachable!("a 32-byte key and an 8-byte personalization are valid"));
        mac.update(&index.to_le_bytes());
        out.copy_from_slice(&mac.finalize_fixed());
    }
}
