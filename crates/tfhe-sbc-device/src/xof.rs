//! A BLAKE2b extendable-output function used as a seeded CSPRNG.
//!
//! # Construction (version 1, XOF id 1 on the wire)
//! For a 32-byte seed `s`, the output stream is the concatenation of the 64-byte blocks
//!
//! ```text
//! block_i = BLAKE2b-512(message = s || LE64(i), key = none, salt = none, personalization = "TFHE-SBC XOF v1.")
//! ```
//!
//! for `i = 0, 1, 2, …`. The 40-byte message fits one 128-byte BLAKE2b block, so each 64 output bytes cost
//! exactly one compression. The personalization string separates this use of BLAKE2b from every other.
//! Keyed BLAKE2b (`key = s`, `message = LE64(i)`) would cost two compressions per block (the key block
//! and the message block) for no security gain here, since the seed is secret either way.
//!
//! Integers are read from the stream little-endian: `next_u32` takes the next 4 bytes, `next_u64` the next
//! 8, so the stream is the same however it is consumed (`tests/xof.rs` checks this).
//!
//! # Why BLAKE2b and not BLAKE2s
//! BLAKE2b works on 64-bit words and yields 64 bytes per compression; BLAKE2s works on 32-bit words and
//! yields 32. On the 64-bit cores of Raspberry Pi 3/4/5 class boards and on servers, BLAKE2b gives about
//! twice the bytes per cycle. On a 32-bit Cortex-M, BLAKE2s would be the better choice; the wire format
//! carries an XOF id so that a BLAKE2s variant can be added without ambiguity.
//!
//! # Limits
//! A seed yields `2^64` blocks (`2^70` bytes); the generator panics rather than wrap its counter.

use crate::blake2b_lanes as lanes;
use blake2::Blake2bMac512;
use blake2::digest::{FixedOutput, Update};
use core::convert::Infallible;
use rand_core::{SeedableRng, TryCryptoRng, TryRng};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// The BLAKE2b personalization string of construction version 1.
pub const PERSONALIZATION: &[u8; 16] = b"TFHE-SBC XOF v1.";
/// The bytes of one output block.
pub const BLOCK_BYTES: usize = 64;
/// The bytes of a seed.
pub const SEED_BYTES: usize = 32;

/// The BLAKE2b XOF CSPRNG: construction version 1 (see the module documentation).
///
/// The stream is computed eight blocks at a time by a multi-lane BLAKE2b (`blake2b_lanes`), which is
/// proven bit-identical to the RustCrypto `blake2` crate ([`Blake2bXof::block`]) by the tests.
///
/// Holds the seed (32 bytes), a counter and eight blocks of buffered output (about 560 bytes in all); all
/// of it is zeroized on drop and none of it is shown by `Debug`.
#[derive(Clone)]
pub struct Blake2bXof {
    seed: [u64; 4],
    /// The index of the next block to compute.
    counter: u64,
    buffer: [u8; BUFFER_BYTES],
    /// Bytes of `buffer` already handed out (`BUFFER_BYTES` when empty).
    used: usize,
}

/// The chaining value after the parameter block, computed at compile time.
const H0: [u64; 8] = lanes::initial_state(PERSONALIZATION);
const BUFFER_BYTES: usize = BLOCK_BYTES * lanes::LANES;

impl Blake2bXof {
    /// Block `index` of the stream of `seed`, computed with the RustCrypto `blake2` crate: the reference the
    /// fast multi-lane path is tested against.
    pub fn block(seed: &[u8; SEED_BYTES], index: u64, out: &mut [u8; BLOCK_BYTES]) {
        let mut hasher = Blake2bMac512::new_with_salt_and_personal(None, &[], PERSONALIZATION)
            .unwrap_or_else(|_| unreachable!("a 16-byte personalization is valid"));
        hasher.update(seed);
        hasher.update(&index.to_le_bytes());
        hasher.finalize_into(out.into());
    }

    /// Computes the next `LANES` blocks into `out` and advances the counter.
    #[inline]
    fn next_blocks_into(&mut self, out: &mut [u8; BUFFER_BYTES]) {
        lanes::blocks(&H0, &self.seed, self.counter, out);
        self.advance_counter();
    }

    /// Computes the next block group straight into the buffer.
    fn refill(&mut self) {
        lanes::blocks(&H0, &self.seed, self.counter, &mut self.buffer);
        self.advance_counter();
        self.used = 0;
    }

    fn advance_counter(&mut self) {
        self.counter = self
            .counter
            .checked_add(lanes::LANES as u64)
            .expect("BLAKE2b XOF stream exhausted (2^64 blocks)");
    }

    /// Fills `dst` with the next bytes of the stream.
    fn fill(&mut self, mut dst: &mut [u8]) {
        // Drain what is buffered.
        let available = BUFFER_BYTES - self.used;
        let take = available.min(dst.len());
        dst[..take].copy_from_slice(&self.buffer[self.used..self.used + take]);
        self.used += take;
        dst = &mut dst[take..];
        // Whole block groups straight into the destination.
        let mut groups = dst.chunks_exact_mut(BUFFER_BYTES);
        for group in &mut groups {
            let group: &mut [u8; BUFFER_BYTES] = group.try_into().unwrap_or_else(|_| unreachable!());
            self.next_blocks_into(group);
        }
        let rest = groups.into_remainder();
        if !rest.is_empty() {
            self.refill();
            rest.copy_from_slice(&self.buffer[..rest.len()]);
            self.used = rest.len();
        }
    }
}

impl TryRng for Blake2bXof {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        if self.used + 4 <= BUFFER_BYTES {
            let bytes = [
                self.buffer[self.used],
                self.buffer[self.used + 1],
                self.buffer[self.used + 2],
                self.buffer[self.used + 3],
            ];
            self.used += 4;
            return Ok(u32::from_le_bytes(bytes));
        }
        let mut bytes = [0u8; 4];
        self.fill(&mut bytes);
        Ok(u32::from_le_bytes(bytes))
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut bytes = [0u8; 8];
        self.fill(&mut bytes);
        Ok(u64::from_le_bytes(bytes))
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.fill(dst);
        Ok(())
    }
}

impl TryCryptoRng for Blake2bXof {}

impl SeedableRng for Blake2bXof {
    type Seed = [u8; SEED_BYTES];

    fn from_seed(mut seed: Self::Seed) -> Self {
        let words = core::array::from_fn(|i| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&seed[8 * i..8 * i + 8]);
            u64::from_le_bytes(w)
        });
        seed.zeroize();
        Self {
            seed: words,
            counter: 0,
            buffer: [0; BUFFER_BYTES],
            used: BUFFER_BYTES,
        }
    }
}

impl Drop for Blake2bXof {
    fn drop(&mut self) {
        self.seed.zeroize();
        self.buffer.zeroize();
        self.counter.zeroize();
        self.used.zeroize();
    }
}

impl ZeroizeOnDrop for Blake2bXof {}

impl core::fmt::Debug for Blake2bXof {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Blake2bXof { <redacted> }")
    }
}
