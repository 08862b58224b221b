//! Keyed BLAKE2 in counter mode: the device's CSPRNG ([`KeyedXof`]) and the public mask expansion
//! ([`crate::csprng::mask`]) are two domains of one construction, BLAKE2b ([`Blake2bXof`], construction v2)
//! or BLAKE2s ([`Blake2sXof`], construction v3), each named once in [`crate::csprng::construction`].
//!
//! # Construction (versions 2 and 3)
//! For a 32-byte key `K` and a personalization `P`, the stream is the concatenation of the blocks
//!
//! ```text
//! v2: block_i = BLAKE2b-512(key = K, message = LE64(i), salt = none, personalization = P)  (64 bytes, P of 16)
//! v3: block_i = BLAKE2s-256(key = K, message = LE64(i), salt = none, personalization = P)  (32 bytes, P of 8)
//! ```
//!
//! for `i = 0, 1, 2, ...` This is BLAKE2's keyed mode (RFC 7693 §2.5), a PRF: the stream is
//! indistinguishable from random for anyone without `K`. Keyed BLAKE2 compresses the zero-padded key block
//! first; that compression depends on `K` only, so it is done once per key and each output block then costs
//! one compression (v1 hashed `seed || LE64(i)` with no key; it is gone with wire format v1).
//!
//! The domains ([`crate::csprng::construction`] has the table):
//! * the secret stream (mask seeds and noise), `"TFHE-SBC rng v2."` (v2) or `"TSBCrng3"` (v3). It never
//!   crosses the wire.
//! * the expansion of a public mask seed, `"TFHE-SBC mask v2"` (wire XOF id 2) or `"TSBCmsk3"` (wire XOF
//!   id 3).
//!
//! Integers are read from the stream little-endian: `next_u32` takes the next 4 bytes, `next_u64` the next
//! 8, so the stream is the same however it is consumed (`tests/xof.rs` checks this).
//!
//! # Key erasure and reseeding
//! [`KeyedXof`] keeps only the chaining value after the key block, never the key. [`KeyedXof::ratchet`]
//! (fast key erasure; the encryptor calls it after every encryption) replaces the key with the first 32
//! bytes of block `2^64 - 1`, a block the stream itself never reaches, and wipes the buffered output: a
//! later compromise of the state does not regenerate any earlier output. [`KeyedXof::reseed`] mixes new
//! entropy in. With the `getrandom` feature the generator remembers the process id it was seeded in and
//! [`KeyedXof::reseed_if_forked`] reseeds from the OS in a forked child.
//!
//! # BLAKE2b on 64-bit targets, BLAKE2s on 32-bit ones
//! BLAKE2b works on 64-bit words and yields 64 bytes per compression; BLAKE2s works on 32-bit words and
//! yields 32. On the 64-bit cores of Raspberry Pi 3/4/5 class boards and on servers, BLAKE2b gives about
//! twice the bytes per cycle. On a 32-bit core every BLAKE2b word takes two registers and its rotations
//! several instructions: BLAKE2s, with the compression folded for the counter block, draws a Cortex-M4
//! encryption's stream in 54 % of BLAKE2b's instructions. So the encryptors' default
//! ([`crate::csprng::construction::DeviceConstruction`]) is BLAKE2s where `target_pointer_width = "32"`,
//! and a frame names its mask XOF (id 2 or 3) for the server.
//!
//! # Limits
//! A key yields `2^64 - 1` blocks; the generator panics rather than wrap its counter.
//!
//! # Timing
//! Constant-time: BLAKE2 is additions, rotations and XORs with data-independent indices; which SIMD build
//! runs depends on the CPU only. Checked by the workspace's constant-time check (valgrind memcheck with the
//! secrets marked undefined), for both constructions.

use crate::csprng::construction::{
    BLAKE2B_RESEED_PERSONALIZATION, BLAKE2B_RNG_PERSONALIZATION, Blake2bCounter, Blake2sCounter, DeviceConstruction,
    XofConstruction,
};
use crate::csprng::lanes;
use core::convert::Infallible;
use rand_core::{SeedableRng, TryCryptoRng, TryRng};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// The BLAKE2b personalization of the device's secret stream (construction v2).
pub const RNG_PERSONALIZATION: &[u8; 16] = BLAKE2B_RNG_PERSONALIZATION;
/// The BLAKE2b personalization of [`KeyedXof::reseed`]'s key derivation (construction v2).
pub const RESEED_PERSONALIZATION: &[u8; 16] = BLAKE2B_RESEED_PERSONALIZATION;
/// The bytes of one BLAKE2b output block (construction v2; [`XofConstruction::BLOCK_BYTES`] in general).
pub const BLOCK_BYTES: usize = 64;
/// The bytes of a seed (the BLAKE2 key).
pub const SEED_BYTES: usize = 32;

/// The counter of the block whose first 32 bytes become the next key in [`KeyedXof::ratchet`]; the
/// stream stops before reaching it.
const RATCHET_COUNTER: u64 = u64::MAX;

/// Block `index` of the keyed BLAKE2b stream of `key` under `personalization`, computed with the RustCrypto
/// `blake2` crate: the reference the fast multi-lane path is tested against.
pub fn reference_block(personalization: &[u8; 16], key: &[u8; SEED_BYTES], index: u64, out: &mut [u8; BLOCK_BYTES]) {
    use blake2::Blake2bMac512;
    use blake2::digest::{FixedOutput, Update};
    let mut mac = Blake2bMac512::new_with_salt_and_personal(Some(key), &[], personalization)
        .unwrap_or_else(|_| unreachable!("a 32-byte key and a 16-byte personalization are valid"));
    mac.update(&index.to_le_bytes());
    mac.finalize_into(out.into());
}

/// A keyed stream of construction `C` in one domain: the chaining value after the key block, a block
/// counter and [`lanes::LANES`] blocks of buffered output (eight on hosts, one on microcontrollers).
/// Zeroized on drop.
pub(crate) struct KeyedStream<C: XofConstruction> {
    /// The chaining value after the key block (a function of the key: as secret as the key).
    state: C::State,
    /// The index of the next block to compute.
    counter: u64,
    buffer: C::Buffer,
    /// Bytes of `buffer` not yet handed out (0 when empty: the empty state is all zero bytes, so an
    /// unseeded encryptor in a `static` lands in `.bss`). The next byte is `buffer[buffer_len - remaining]`.
    remaining: usize,
}

impl<C: XofConstruction> KeyedStream<C> {
    /// A stream with no key: all zero bytes. Never read from it: the encryptor keys it first
    /// ([`KeyedXof::UNSEEDED`]).
    const UNKEYED: Self = Self {
        state: C::STATE_ZERO,
        counter: 0,
        buffer: C::BUFFER_ZERO,
        remaining: 0,
    };

    /// The buffer's bytes: `LANES` blocks.
    const BUFFER_BYTES: usize = C::BLOCK_BYTES * lanes::LANES;
    /// The blocks one refill computes.
    const GROUP: u64 = lanes::LANES as u64;

    /// The stream of `key` in the domain whose parameter-block chaining value is `h0`.
    pub(crate) fn new(h0: &C::State, key: &[u8; SEED_BYTES]) -> Self {
        let mut stream = Self::UNKEYED;
        C::keyed_state(h0, key, &mut stream.state);
        stream
    }

    /// Restarts the stream under a new key (same domain), wiping the buffered output.
    fn rekey(&mut self, h0: &C::State, key: &[u8; SEED_BYTES]) {
        C::keyed_state(h0, key, &mut self.state);
        self.counter = 0;
        self.buffer.zeroize();
        self.remaining = 0;
    }

    /// The first 32 bytes of the reserved block [`RATCHET_COUNTER`].
    fn ratchet_key(&self) -> [u8; SEED_BYTES] {
        C::key_from_block(&self.state, RATCHET_COUNTER)
    }

    /// Moves to the start of block `index`, dropping what is buffered.
    pub(crate) fn seek_block(&mut self, index: u64) {
        assert!(index < RATCHET_COUNTER - Self::GROUP, "block index past the stream");
        self.counter = index;
        self.buffer.zeroize();
        self.remaining = 0;
    }

    fn advance_counter(&mut self) {
        self.counter = self
            .counter
            .checked_add(Self::GROUP)
            .filter(|&c| c <= RATCHET_COUNTER - Self::GROUP)
            .unwrap_or_else(|| panic!("{} XOF stream exhausted (2^64 - 1 blocks)", C::NAME));
    }

    /// Computes the next block group straight into the buffer.
    fn refill(&mut self) {
        C::blocks(&self.state, self.counter, self.buffer.as_mut());
        self.advance_counter();
        self.remaining = Self::BUFFER_BYTES;
    }

    /// Fills `dst` with the next bytes of the stream.
    pub(crate) fn fill(&mut self, mut dst: &mut [u8]) {
        // Drain what is buffered.
        let used = Self::BUFFER_BYTES - self.remaining;
        let take = self.remaining.min(dst.len());
        dst[..take].copy_from_slice(&self.buffer.as_ref()[used..used + take]);
        self.remaining -= take;
        dst = &mut dst[take..];
        // Whole block groups straight into the destination.
        let mut groups = dst.chunks_exact_mut(Self::BUFFER_BYTES);
        for group in &mut groups {
            C::blocks(&self.state, self.counter, group);
            self.advance_counter();
        }
        let rest = groups.into_remainder();
        if !rest.is_empty() {
            self.refill();
            rest.copy_from_slice(&self.buffer.as_ref()[..rest.len()]);
            self.remaining = Self::BUFFER_BYTES - rest.len();
        }
    }

    /// The next little-endian `u32` of the stream.
    #[inline]
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.remaining >= 4 {
            let used = Self::BUFFER_BYTES - self.remaining;
            let b = self.buffer.as_ref();
            let bytes = [b[used], b[used + 1], b[used + 2], b[used + 3]];
            self.remaining -= 4;
            return u32::from_le_bytes(bytes);
        }
        let mut bytes = [0u8; 4];
        self.fill(&mut bytes);
        u32::from_le_bytes(bytes)
    }
}

impl<C: XofConstruction> Drop for KeyedStream<C> {
    fn drop(&mut self) {
        self.state.zeroize();
        self.buffer.zeroize();
        self.counter.zeroize();
        self.remaining.zeroize();
    }
}

/// The device's CSPRNG: keyed BLAKE2 in counter mode (construction `C`) in its secret-stream domain (see
/// the module documentation), with key erasure and reseeding. [`Blake2bXof`] and [`Blake2sXof`] are its
/// two instances; [`DeviceXof`] the one a target's encryptors use by default.
///
/// Deliberately not `Clone`: two copies would emit the same mask seeds and the same noise, and the
/// difference of two such ciphertexts reveals the difference of their messages without the key. Tests that
/// need the same stream twice seed two generators.
///
/// Holds the keyed chaining value, a counter and eight blocks of buffered output (about 590 bytes for
/// BLAKE2b, 300 for BLAKE2s; one block on microcontrollers, 144 and 80 bytes); all of it is zeroized on
/// drop and none of it is shown by `Debug`.
pub struct KeyedXof<C: XofConstruction> {
    stream: KeyedStream<C>,
    /// The process the generator was last seeded in, to detect `fork()`.
    #[cfg(feature = "getrandom")]
    pid: u32,
}

/// The BLAKE2b generator (construction v2): the default on 64-bit targets.
pub type Blake2bXof = KeyedXof<Blake2bCounter>;
/// The BLAKE2s generator (construction v3): the default on 32-bit targets.
pub type Blake2sXof = KeyedXof<Blake2sCounter>;
/// The generator of [`DeviceConstruction`]: what a target's encryptors use by default.
pub type DeviceXof = KeyedXof<DeviceConstruction>;

impl<C: XofConstruction> KeyedXof<C> {
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
        self.stream.rekey(&C::RNG_H0, seed);
        #[cfg(feature = "getrandom")]
        {
            self.pid = std::process::id();
        }
    }

    /// Block `index` of the stream of `seed` ([`XofConstruction::BLOCK_BYTES`] bytes into `out`), computed
    /// with the RustCrypto `blake2` crate: the reference the multi-lane path is tested against.
    pub fn block(seed: &[u8; SEED_BYTES], index: u64, out: &mut [u8]) {
        C::reference_block(false, seed, index, out);
    }

    /// The keyed chaining value, as little-endian bytes: the generator's key state (feature `hazmat`). For
    /// tests that look for copies of it in memory; anyone who reads it predicts the whole stream.
    #[cfg(feature = "hazmat")]
    #[cfg_attr(docsrs, doc(cfg(feature = "hazmat")))]
    pub fn chaining_value(&self) -> C::StateBytes {
        C::state_bytes(&self.stream.state)
    }

    /// Fast key erasure: the key becomes the first 32 bytes of the reserved block `2^64 - 1` of the
    /// current key, the counter restarts and the buffered output is wiped. Nothing produced before the call
    /// can be recomputed from the state after it. Costs two compressions.
    pub fn ratchet(&mut self) {
        let mut key = self.stream.ratchet_key();
        self.stream.rekey(&C::RNG_H0, &key);
        key.zeroize();
    }

    /// Mixes `entropy` (e.g. bytes from a hardware TRNG or the OS) into the key:
    /// `key' = BLAKE2b-256(key = ratchet key, message = entropy, personalization = "TFHE-SBC reseed.")`
    /// (v2), `BLAKE2s-256(..., personalization = "TSBCrsd3")` (v3). The new stream is unpredictable if either
    /// the old state or `entropy` is.
    pub fn reseed(&mut self, entropy: &[u8]) {
        let mut ratchet = self.stream.ratchet_key();
        let mut key = C::reseed_key(&ratchet, entropy);
        self.stream.rekey(&C::RNG_H0, &key);
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

impl<C: XofConstruction> TryRng for KeyedXof<C> {
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

impl<C: XofConstruction> TryCryptoRng for KeyedXof<C> {}

impl<C: XofConstruction> SeedableRng for KeyedXof<C> {
    type Seed = [u8; SEED_BYTES];

    fn from_seed(mut seed: Self::Seed) -> Self {
        let stream = KeyedStream::new(&C::RNG_H0, &seed);
        seed.zeroize();
        Self {
            stream,
            #[cfg(feature = "getrandom")]
            pid: std::process::id(),
        }
    }
}

impl<C: XofConstruction> ZeroizeOnDrop for KeyedXof<C> {}

impl<C: XofConstruction> core::fmt::Debug for KeyedXof<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "KeyedXof<{}> {{ <redacted> }}", C::NAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads past the last block group a key may yield (the block before [`RATCHET_COUNTER`]).
    fn read_past_the_limit<C: XofConstruction>() {
        let mut stream = KeyedStream::<C>::new(&C::RNG_H0, &[1; SEED_BYTES]);
        stream.seek_block(RATCHET_COUNTER - KeyedStream::<C>::GROUP - 1);
        let mut out = [0u8; 2 * BLOCK_BYTES * lanes::LANES];
        stream.fill(&mut out);
    }

    #[test]
    #[should_panic(expected = "BLAKE2b XOF stream exhausted")]
    fn blake2b_stream_panics_at_its_block_limit() {
        read_past_the_limit::<Blake2bCounter>();
    }

    #[test]
    #[should_panic(expected = "BLAKE2s XOF stream exhausted")]
    fn blake2s_stream_panics_at_its_block_limit() {
        read_past_the_limit::<Blake2sCounter>();
    }
}
