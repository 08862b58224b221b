//! Keyed BLAKE2b in counter mode: the device's CSPRNG ([`Blake2bXof`]) and the public mask expansion
//! ([`crate::csprng::mask`]) are two domains of one construction.
//!
//! # Construction (version 2)
//! For a 32-byte key `K` and a 16-byte personalization `P`, the stream is the concatenation of the 64-byte
//! blocks
//!
//! ```text
//! block_i = BLAKE2b-512(key = K, message = LE64(i), salt = none, personalization = P)    i = 0, 1, 2, ...
//! ```
//!
//! This is BLAKE2b's keyed mode (RFC 7693 §2.5), a PRF: the stream is indistinguishable from random for
//! anyone without `K`. Keyed BLAKE2b compresses the zero-padded key block first; that compression depends
//! on `K` only, so it is done once per key and each 64 output bytes then cost one compression, as the
//! unkeyed construction v1 did (v1 hashed `seed || LE64(i)` with no key; it is gone with wire format v1).
//!
//! The domains:
//! * [`RNG_PERSONALIZATION`] `"TFHE-SBC rng v2."`: the secret stream (mask seeds and noise). It never
//!   crosses the wire.
//! * [`crate::csprng::mask::MASK_PERSONALIZATION`] `"TFHE-SBC mask v2"`: the expansion of a public mask seed (wire XOF
//!   id [`crate::csprng::mask::MASK_XOF_ID`]).
//!
//! Integers are read from the stream little-endian: `next_u32` takes the next 4 bytes, `next_u64` the next
//! 8, so the stream is the same however it is consumed (`tests/xof.rs` checks this).
//!
//! # Key erasure and reseeding
//! [`Blake2bXof`] keeps only the chaining value after the key block, never the key. [`Blake2bXof::ratchet`]
//! (fast key erasure; the encryptor calls it after every encryption) replaces the key with the first 32
//! bytes of block `2^64 - 1`, a block the stream itself never reaches, and wipes the buffered output: a
//! later compromise of the state does not regenerate any earlier output. [`Blake2bXof::reseed`] mixes new
//! entropy in. With the `getrandom` feature the generator remembers the process id it was seeded in and
//! [`Blake2bXof::reseed_if_forked`] reseeds from the OS in a forked child.
//!
//! # Why BLAKE2b and not BLAKE2s
//! BLAKE2b works on 64-bit words and yields 64 bytes per compression; BLAKE2s works on 32-bit words and
//! yields 32. On the 64-bit cores of Raspberry Pi 3/4/5 class boards and on servers, BLAKE2b gives about
//! twice the bytes per cycle. On a 32-bit Cortex-M, BLAKE2s would be the better choice; the wire format
//! carries an XOF id so that a BLAKE2s variant can be added without ambiguity.
//!
//! # Limits
//! A key yields `2^64 - 1` blocks; the generator panics rather than wrap its counter.
//!
//! # Timing
//! Constant-time: BLAKE2b is additions, rotations and XORs with data-independent indices; which SIMD build
//! runs depends on the CPU only. Checked by the workspace's constant-time check (valgrind memcheck with the
//! secrets marked undefined).

use crate::csprng::lanes;
use blake2::Blake2bMac512;
use blake2::digest::{FixedOutput, Update};
use core::convert::Infallible;
use rand_core::{SeedableRng, TryCryptoRng, TryRng};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// The BLAKE2b personalization of the device's secret stream.
pub const RNG_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC rng v2.";
/// The BLAKE2b personalization of [`Blake2bXof::reseed`]'s key derivation.
pub const RESEED_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC reseed.";
/// The bytes of one output block.
pub const BLOCK_BYTES: usize = 64;
/// The bytes of a seed (the BLAKE2b key).
pub const SEED_BYTES: usize = 32;

const BUFFER_BYTES: usize = BLOCK_BYTES * lanes::LANES;
/// The counter of the block whose first 32 bytes become the next key in [`Blake2bXof::ratchet`]; the
/// stream stops before reaching it.
const RATCHET_COUNTER: u64 = u64::MAX;

/// Block `index` of the keyed stream of `key` under `personalization`, computed with the RustCrypto `blake2`
/// crate: the reference the fast multi-lane path is tested against.
pub fn reference_block(personalization: &[u8; 16], key: &[u8; SEED_BYTES], index: u64, out: &mut [u8; BLOCK_BYTES]) {
    let mut mac = Blake2bMac512::new_with_salt_and_personal(Some(key), &[], personalization)
        .unwrap_or_else(|_| unreachable!("a 32-byte key and a 16-byte personalization are valid"));
    mac.update(&index.to_le_bytes());
    mac.finalize_into(out.into());
}

/// The little-endian words of a 32-byte key.
fn key_words(key: &[u8; SEED_BYTES]) -> [u64; 4] {
    core::array::from_fn(|i| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&key[8 * i..8 * i + 8]);
        u64::from_le_bytes(w)
    })
}

/// A keyed BLAKE2b stream in one domain: the chaining value after the key block, a block counter and
/// [`lanes::LANES`] blocks of buffered output (eight on hosts, one on microcontrollers). Zeroized on drop.
pub(crate) struct KeyedStream {
    /// The chaining value after the key block (a function of the key: as secret as the key).
    state: [u64; 8],
    /// The index of the next block to compute.
    counter: u64,
    buffer: [u8; BUFFER_BYTES],
    /// Bytes of `buffer` not yet handed out (0 when empty: the empty state is all zero bytes, so an
    /// unseeded encryptor in a `static` lands in `.bss`). The next byte is `buffer[BUFFER_BYTES - remaining]`.
    remaining: usize,
}

impl KeyedStream {
    /// A stream with no key: all zero bytes. Never read from it: the encryptor keys it first
    /// ([`Blake2bXof::UNSEEDED`]).
    const UNKEYED: Self = Self {
        state: [0; 8],
        counter: 0,
        buffer: [0; BUFFER_BYTES],
        remaining: 0,
    };

    /// The stream of `key` in the domain whose parameter-block chaining value is `h0`.
    pub(crate) fn new(h0: &[u64; 8], key: &[u8; SEED_BYTES]) -> Self {
        let mut words = key_words(key);
        let mut state = [0u64; 8];
        lanes::keyed_state(h0, &words, &mut state);
        words.zeroize();
        Self {
            state,
            counter: 0,
            buffer: [0; BUFFER_BYTES],
            remaining: 0,
        }
    }

    /// Restarts the stream under a new key (same domain), wiping the buffered output.
    fn rekey(&mut self, h0: &[u64; 8], key: &[u8; SEED_BYTES]) {
        let mut words = key_words(key);
        lanes::keyed_state(h0, &words, &mut self.state);
        words.zeroize();
        self.counter = 0;
        self.buffer.zeroize();
        self.remaining = 0;
    }

    /// The first 32 bytes of the reserved block [`RATCHET_COUNTER`].
    fn ratchet_key(&self) -> [u8; SEED_BYTES] {
        let mut block = lanes::block(&self.state, RATCHET_COUNTER);
        let mut key = [0u8; SEED_BYTES];
        for (bytes, word) in key.chunks_exact_mut(8).zip(&block) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        block.zeroize();
        key
    }

    /// Moves to the start of block `index`, dropping what is buffered.
    pub(crate) fn seek_block(&mut self, index: u64) {
        assert!(
            index < RATCHET_COUNTER - lanes::LANES as u64,
            "block index past the stream"
        );
        self.counter = index;
        self.buffer.zeroize();
        self.remaining = 0;
    }

    fn advance_counter(&mut self) {
        self.counter = self
            .counter
            .checked_add(lanes::LANES as u64)
            .filter(|&c| c <= RATCHET_COUNTER - lanes::LANES as u64)
            .expect("BLAKE2b XOF stream exhausted (2^64 - 1 blocks)");
    }

    /// Computes the next block group straight into the buffer.
    fn refill(&mut self) {
        lanes::blocks(&self.state, self.counter, &mut self.buffer);
        self.advance_counter();
        self.remaining = BUFFER_BYTES;
    }

    /// Fills `dst` with the next bytes of the stream.
    pub(crate) fn fill(&mut self, mut dst: &mut [u8]) {
        // Drain what is buffered.
        let used = BUFFER_BYTES - self.remaining;
        let take = self.remaining.min(dst.len());
        dst[..take].copy_from_slice(&self.buffer[used..used + take]);
        self.remaining -= take;
        dst = &mut dst[take..];
        // Whole block groups straight into the destination.
        let mut groups = dst.chunks_exact_mut(BUFFER_BYTES);
        for group in &mut groups {
            let group: &mut [u8; BUFFER_BYTES] = group.try_into().unwrap_or_else(|_| unreachable!());
            lanes::blocks(&self.state, self.counter, group);
            self.advance_counter();
        }
        let rest = groups.into_remainder();
        if !rest.is_empty() {
            self.refill();
            rest.copy_from_slice(&self.buffer[..rest.len()]);
            self.remaining = BUFFER_BYTES - rest.len();
        }
    }

    /// The next little-endian `u32` of the stream.
    #[inline]
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.remaining >= 4 {
            let used = BUFFER_BYTES - self.remaining;
            let bytes = [
                self.buffer[used],
                self.buffer[used + 1],
                self.buffer[used + 2],
                self.buffer[used + 3],
            ];
            self.remaining -= 4;
            return u32::from_le_bytes(bytes);
        }
        let mut bytes = [0u8; 4];
        self.fill(&mut bytes);
        u32::from_le_bytes(bytes)
    }
}

impl Drop for KeyedStream {
    fn drop(&mut self) {
        self.state.zeroize();
        self.buffer.zeroize();
        self.counter.zeroize();
        self.remaining.zeroize();
    }
}

/// The parameter-block chaining value of the secret stream, computed at compile time.
const RNG_H0: [u64; 8] = lanes::initial_state(RNG_PERSONALIZATION, SEED_BYTES as u8);

/// The device's CSPRNG: keyed BLAKE2b in counter mode under [`RNG_PERSONALIZATION`] (see the module
/// documentation), with key erasure and reseeding.
///
/// Deliberately not `Clone`: two copies would emit the same mask seeds and the same noise, and the
/// difference of two such ciphertexts reveals the difference of their messages without the key. Tests that
/// need the same stream twice seed two generators.
///
/// Holds the keyed chaining value, a counter and eight blocks of buffered output (about 590 bytes in all; one
/// block on microcontrollers, about 140 bytes);
/// all of it is zeroized on drop and none of it is shown by `Debug`.
pub struct Blake2bXof {
    stream: KeyedStream,
    /// The process the generator was last seeded in, to detect `fork()`.
    #[cfg(feature = "getrandom")]
    pid: u32,
}

impl Blake2bXof {
    /// A generator with no key, all zero bytes, for an encryptor built in a `static`
    /// ([`crate::encrypt::secret_key::GlweEncryptor::EMPTY`]). Its stream is predictable: the encryptor refuses to
    /// encrypt until [`Self::seed_in_place`] has keyed it, which is why this is not public.
    pub(crate) const UNSEEDED: Self = Self {
        stream: KeyedStream::UNKEYED,
        #[cfg(feature = "getrandom")]
        pid: 0,
    };

    /// Keys the generator with `seed` in place (no generator is built on the stack), discarding its state.
    pub(crate) fn seed_in_place(&mut self, seed: &[u8; SEED_BYTES]) {
        self.stream.rekey(&RNG_H0, seed);
        #[cfg(feature = "getrandom")]
        {
            self.pid = std::process::id();
        }
    }

    /// Block `index` of the stream of `seed`, computed with the RustCrypto `blake2` crate: the reference the
    /// multi-lane path is tested against.
    pub fn block(seed: &[u8; SEED_BYTES], index: u64, out: &mut [u8; BLOCK_BYTES]) {
        reference_block(RNG_PERSONALIZATION, seed, index, out);
    }

    /// The keyed chaining value, as little-endian bytes: the generator's key state (feature `hazmat`). For
    /// tests that look for copies of it in memory; anyone who reads it predicts the whole stream.
    #[cfg(feature = "hazmat")]
    #[cfg_attr(docsrs, doc(cfg(feature = "hazmat")))]
    pub fn chaining_value(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        for (bytes, word) in out.chunks_exact_mut(8).zip(&self.stream.state) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        out
    }

    /// Fast key erasure: the key becomes the first 32 bytes of the reserved block `2^64 - 1` of the
    /// current key, the counter restarts and the buffered output is wiped. Nothing produced before the call
    /// can be recomputed from the state after it. Costs two compressions.
    pub fn ratchet(&mut self) {
        let mut key = self.stream.ratchet_key();
        self.stream.rekey(&RNG_H0, &key);
        key.zeroize();
    }

    /// Mixes `entropy` (e.g. bytes from a hardware TRNG or the OS) into the key:
    /// `key' = BLAKE2b-256(key = ratchet key, message = entropy, personalization = "TFHE-SBC reseed.")`.
    /// The new stream is unpredictable if either the old state or `entropy` is.
    pub fn reseed(&mut self, entropy: &[u8]) {
        let mut ratchet = self.stream.ratchet_key();
        // The XOF's own BLAKE2b (one compression linked on a microcontroller, not the blake2 crate's too).
        let mut key = lanes::blake2b::<SEED_BYTES>(RESEED_PERSONALIZATION, &ratchet, entropy);
        self.stream.rekey(&RNG_H0, &key);
        key.zeroize();
        ratchet.zeroize();
    }

    /// In a process other than the one the generator was seeded in (a `fork()` child, which inherited a
    /// copy of the state), reseeds from the OS and returns `Ok(true)`; otherwise `Ok(false)`. One
    /// `getpid()` per call: the encryptor calls it once per encryption.
    #[cfg(feature = "getrandom")]
    pub fn reseed_if_forked(&mut self) -> crate::Result<bool> {
        let pid = std::process::id();
        if pid == self.pid {
            return Ok(false);
        }
        let mut entropy = [0u8; SEED_BYTES];
        getrandom::fill(&mut entropy).map_err(|_| crate::Error::Entropy)?;
        self.reseed(&entropy);
        entropy.zeroize();
        self.pid = pid;
        Ok(true)
    }

    /// Without the `getrandom` feature there is no process to compare: always `Ok(false)`.
    #[cfg(not(feature = "getrandom"))]
    pub fn reseed_if_forked(&mut self) -> crate::Result<bool> {
        Ok(false)
    }
}

impl TryRng for Blake2bXof {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.stream.next_u32())
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut bytes = [0u8; 8];
        self.stream.fill(&mut bytes);
        Ok(u64::from_le_bytes(bytes))
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.stream.fill(dst);
        Ok(())
    }
}

impl TryCryptoRng for Blake2bXof {}

impl SeedableRng for Blake2bXof {
    type Seed = [u8; SEED_BYTES];

    fn from_seed(mut seed: Self::Seed) -> Self {
        let stream = KeyedStream::new(&RNG_H0, &seed);
        seed.zeroize();
        Self {
            stream,
            #[cfg(feature = "getrandom")]
            pid: std::process::id(),
        }
    }
}

impl ZeroizeOnDrop for Blake2bXof {}

impl core::fmt::Debug for Blake2bXof {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Blake2bXof { <redacted> }")
    }
}
