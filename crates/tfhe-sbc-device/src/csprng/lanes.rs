//! A multi-lane keyed BLAKE2b compression specialized to the XOF's messages.
//!
//! Every XOF block is keyed BLAKE2b-512 of the 8-byte message `LE64(i)` under a fixed parameter block
//! (digest length 64, key length 32, personalization). The key block's compression depends on the key only
//! ([`keyed_state`], once per key); each output block is then one compression of a final block whose
//! message words 1–15 are zero ([`block`]). This module computes [`LANES`] consecutive counters at once: the compression is written as
//! plain scalar code inside a loop over the lanes, with no dependency between iterations, which LLVM's loop
//! vectorizer widens into SIMD registers (SSE2/AVX2 on x86_64, NEON on aarch64) in portable code.
//!
//! It is the BLAKE2b specification (RFC 7693) and nothing more; `tests/xof.rs` checks it bit for bit
//! against the RustCrypto `blake2` crate. [`blake2b`] is the general keyed and personalized BLAKE2b over the
//! same compression, for the frame MAC and the key files' checks.

use zeroize::Zeroize;

/// Counters computed per call: eight on hosts, where the lanes are vectorized.
#[cfg(not(target_os = "none"))]
pub(crate) const LANES: usize = 8;
/// Counters computed per call: one on microcontrollers, where there is no SIMD to widen the lanes into. A
/// group of one block is computed only when a byte of it is drawn: with eight, the stream computed blocks that
/// the ratchet after each encryption wiped unread (seven of the secret stream's 40 per encryption, 31 k
/// instructions on the Cortex-M4 model), and every stream carried a 512-byte buffer (the encryptor's, and the
/// mask expansion's on the stack) instead of a 64-byte one. The stream is the same: block `i` is block `i`
/// whatever the grouping.
#[cfg(target_os = "none")]
pub(crate) const LANES: usize = 1;

const IV: [u64; 8] = [
    0x6a09_e667_f3bc_c908,
    0xbb67_ae85_84ca_a73b,
    0x3c6e_f372_fe94_f82b,
    0xa54f_f53a_5f1d_36f1,
    0x510e_527f_ade6_82d1,
    0x9b05_688c_2b3e_6c1f,
    0x1f83_d9ab_fb41_bd6b,
    0x5be0_cd19_137e_2179,
];

/// The message schedule: round `r` of the twelve reads the permutation `SIGMA[r % 10]` (RFC 7693, 3.2).
/// Bytes: the rolled compression on microcontrollers reads it at run time (public indices, 160 B of flash).
const SIGMA: [[u8; 16]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

/// The chaining value after the parameter block: digest length 64, key length `key_bytes`, fanout 1,
/// depth 1, no salt, the given personalization.
pub(crate) const fn initial_state(personalization: &[u8; 16], key_bytes: u8) -> [u64; 8] {
    parameter_state(64, key_bytes, personalization)
}

/// The chaining value after the parameter block: digest length `out_bytes`, key length `key_bytes`,
/// fanout 1, depth 1, no salt, the given personalization.
const fn parameter_state(out_bytes: u8, key_bytes: u8, personalization: &[u8; 16]) -> [u64; 8] {
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ ((key_bytes as u64) << 8) ^ out_bytes as u64;
    let mut p0 = [0u8; 8];
    let mut p1 = [0u8; 8];
    let mut i = 0;
    while i < 8 {
        p0[i] = personalization[i];
        p1[i] = personalization[8 + i];
        i += 1;
    }
    h[6] ^= u64::from_le_bytes(p0);
    h[7] ^= u64::from_le_bytes(p1);
    h
}

/// `a + m[i]`, where the message words from `WORDS` on are zero: with `i` a constant (the unrolled rounds)
/// the addition of a zero word is dropped at compile time. `i` is a schedule index: public, never secret.
#[inline(always)]
fn add_word<const WORDS: usize>(a: u64, m: &[u64; 16], i: u8) -> u64 {
    let i = usize::from(i);
    if WORDS >= 16 || i < WORDS {
        a.wrapping_add(m[i % 16])
    } else {
        a
    }
}

/// The mixing function G on the state words `a, b, c, d`, with the message words `m[x]` and `m[y]`.
#[inline(always)]
fn g<const WORDS: usize>(v: &mut [u64; 16], [a, b, c, d]: [usize; 4], m: &[u64; 16], x: u8, y: u8) {
    v[a] = add_word::<WORDS>(v[a].wrapping_add(v[b]), m, x);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = add_word::<WORDS>(v[a].wrapping_add(v[b]), m, y);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

/// One round with the schedule row `s`, for a message whose words from `WORDS` on are zero.
#[inline(always)]
fn round<const WORDS: usize>(v: &mut [u64; 16], m: &[u64; 16], s: &[u8; 16]) {
    g::<WORDS>(v, [0, 4, 8, 12], m, s[0], s[1]);
    g::<WORDS>(v, [1, 5, 9, 13], m, s[2], s[3]);
    g::<WORDS>(v, [2, 6, 10, 14], m, s[4], s[5]);
    g::<WORDS>(v, [3, 7, 11, 15], m, s[6], s[7]);
    g::<WORDS>(v, [0, 5, 10, 15], m, s[8], s[9]);
    g::<WORDS>(v, [1, 6, 11, 12], m, s[10], s[11]);
    g::<WORDS>(v, [2, 7, 8, 13], m, s[12], s[13]);
    g::<WORDS>(v, [3, 4, 9, 14], m, s[14], s[15]);
}

/// The twelve rounds, unrolled: every schedule index is a constant, so a message whose words from `WORDS`
/// on are zero adds only its first `WORDS` words.
#[cfg(not(all(target_os = "none", any(debug_assertions, target_pointer_width = "32"))))]
#[inline(always)]
fn rounds_unrolled<const WORDS: usize>(v: &mut [u64; 16], m: &[u64; 16]) {
    macro_rules! rounds {
        ($($r:literal)*) => { $(round::<WORDS>(v, m, &SIGMA[$r % 10]);)* };
    }
    rounds!(0 1 2 3 4 5 6 7 8 9 10 11);
}

/// The twelve rounds as a loop, the schedule row read at run time (public indices): one round of code.
#[cfg(target_os = "none")]
#[inline(always)]
fn rounds_rolled(v: &mut [u64; 16], m: &[u64; 16]) {
    for r in 0..12 {
        round::<16>(v, m, &SIGMA[r % 10]);
    }
}

/// The working vector before the rounds: chaining value `h`, byte counter `t`, `last`: the final block.
#[inline(always)]
fn working_vector(h: &[u64; 8], t: u64, last: bool) -> [u64; 16] {
    [
        h[0],
        h[1],
        h[2],
        h[3],
        h[4],
        h[5],
        h[6],
        h[7],
        IV[0],
        IV[1],
        IV[2],
        IV[3],
        IV[4] ^ t,
        IV[5],
        if last { !IV[6] } else { IV[6] },
        IV[7],
    ]
}

/// One BLAKE2b compression of message block `m` with byte counter `t` (`last`: the final block): the key
/// block and [`blake2b`] (the frame MAC, the key files' checks, the reseed).
///
/// Inlined everywhere on hosts. On microcontrollers it is out of line and its rounds are a loop
/// ([`rounds_rolled`]): the XOF's blocks, almost all of the compressions, run [`compress_counter`], so this
/// one gives up a few percent of its own speed to keep one round of code instead of twelve (about 11 KB of
/// flash on the Cortex-M4 firmware, which holds the unrolled [`compress_counter`] as well).
#[cfg_attr(not(target_os = "none"), inline(always))]
#[cfg_attr(target_os = "none", inline(never))]
fn compress(h: &[u64; 8], m: &[u64; 16], t: u64, last: bool) -> [u64; 8] {
    let mut v = working_vector(h, t, last);
    #[cfg(target_os = "none")]
    rounds_rolled(&mut v, m);
    #[cfg(not(target_os = "none"))]
    rounds_unrolled::<16>(&mut v, m);
    core::array::from_fn(|i| h[i] ^ v[i] ^ v[i + 8])
}

/// [`compress`] of the XOF's output block: the final block `LE64(counter)` (message words 1-15 zero, byte
/// counter 136), from the same G and schedule with only the G calls that read word 0 adding the counter
/// (`rounds_unrolled::<1>`): 15 of the 16 message additions of each round are dropped at compile time.
///
/// On hosts this is what inlining [`compress`] with a constant message already gave LLVM (the vectorized
/// lanes are unchanged); on microcontrollers, where the compression is out of line, it is the difference
/// between loading and adding 192 message words per block and adding 12.
#[cfg_attr(not(target_os = "none"), inline(always))]
#[cfg_attr(target_os = "none", inline(never))]
fn compress_counter(h: &[u64; 8], counter: u64) -> [u64; 8] {
    let m = [counter, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut v = working_vector(h, 128 + 8, true);
    // Unoptimized firmware (opt-level 0) keeps the one rolled round: twelve unrolled ones do not fit the
    // flash of a small part without the optimizer. Same result: the words it adds beyond the first are zero.
    // So does a 32-bit microcontroller, whose stream is BLAKE2s (`DeviceConstruction`): BLAKE2b blocks there
    // only expand a seeded public key's mask, once when the key is set, and the unrolled rounds were 4.3 KB
    // of flash more in the integer public-key firmware (over its 80 KiB budget).
    #[cfg(all(target_os = "none", any(debug_assertions, target_pointer_width = "32")))]
    rounds_rolled(&mut v, &m);
    #[cfg(not(all(target_os = "none", any(debug_assertions, target_pointer_width = "32"))))]
    rounds_unrolled::<1>(&mut v, &m);
    core::array::from_fn(|i| h[i] ^ v[i] ^ v[i + 8])
}

/// The chaining value after the key block: `h0` (from [`initial_state`] with `key_bytes = 32`) compressed
/// with the 32-byte key zero-padded to 128 bytes. It depends on the key only, so it is computed once per key
/// and every output block then costs one compression.
pub(crate) fn keyed_state(h0: &[u64; 8], key: &[u64; 4], out: &mut [u64; 8]) {
    let mut m = [key[0], key[1], key[2], key[3], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut state = compress(h0, &m, 128, false);
    *out = state;
    // The key block and the chaining value are the generator's key: no copy stays on the stack.
    m.zeroize();
    state.zeroize();
}

/// BLAKE2b (RFC 7693) of `message` with an `OUT`-byte digest, the key `key` (empty: unkeyed; at most 64
/// bytes), no salt and the given personalization: what the RustCrypto `blake2` crate's
/// `Blake2bMac::<OUT>::new_with_salt_and_personal(key, &[], personalization)` computes (the frame MAC's and
/// the key files' tests check it against that crate). It runs the same [`compress`] as the XOF, so a
/// microcontroller links one BLAKE2b compression for everything (the crate's own compression
/// was another 14 KB of flash). Constant-time: lengths are public, contents only flow through the
/// compression; the message words and the chaining values (secret under a key) are wiped.
pub(crate) fn blake2b<const OUT: usize>(personalization: &[u8; 16], key: &[u8], message: &[u8]) -> [u8; OUT] {
    const { assert!(OUT >= 1 && OUT <= 64) };
    assert!(key.len() <= 64, "a BLAKE2b key has at most 64 bytes");
    let mut h = parameter_state(OUT as u8, key.len() as u8, personalization);
    let mut m = [0u64; 16];
    let mut t = 0u64;
    if !key.is_empty() {
        load_block(key, &mut m);
        t = 128;
        h = compress(&h, &m, t, message.is_empty());
    }
    if key.is_empty() || !message.is_empty() {
        // At least one block: the empty unkeyed message is one final block of zeros with counter 0.
        let blocks = message.len().div_ceil(128).max(1);
        for (i, chunk) in message
            .chunks(128)
            .chain((message.is_empty()).then_some(&[][..]))
            .enumerate()
        {
            load_block(chunk, &mut m);
            t += chunk.len() as u64;
            h = compress(&h, &m, t, i + 1 == blocks);
        }
    }
    let mut out = [0u8; OUT];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = h[i / 8].to_le_bytes()[i % 8];
    }
    m.zeroize();
    h.zeroize();
    out
}

/// `m` = `bytes` (at most 128) as little-endian words, zero-padded.
fn load_block(bytes: &[u8], m: &mut [u64; 16]) {
    *m = [0; 16];
    for (word, eight) in m.iter_mut().zip(bytes.chunks(8)) {
        let mut le = [0u8; 8];
        le[..eight.len()].copy_from_slice(eight);
        *word = u64::from_le_bytes(le);
    }
}

/// One output block: the final 8-byte message block `LE64(counter)` after the key block (byte counter 136).
#[inline(always)]
pub(crate) fn block(h: &[u64; 8], counter: u64) -> [u64; 8] {
    compress_counter(h, counter)
}

crate::csprng::dispatch::dispatch! {
    /// Computes the blocks of counters `first .. first + LANES` from the keyed chaining value `h`, writing
    /// `64 * LANES` bytes to `out`, with the widest SIMD the CPU offers.
    ///
    /// On x86_64 the same portable code is compiled twice more, with AVX-512F (8 lanes in one register, and a
    /// native 64-bit rotate) and with AVX2 (8 lanes in two registers), and the widest the CPU has is chosen at
    /// run time ([`crate::csprng::dispatch`]; `--cfg tfhe_sbc_backend="soft"` keeps the portable build only, `"avx2"` drops AVX-512F). Measured
    /// on this project's x86_64 machines with `benches/encrypt.rs` (group `csprng_64KiB`): about 0.5 GB/s
    /// portable (SSE2), 1.0 GB/s AVX2, 1.8 GB/s AVX-512. Other targets use the portable build (NEON is
    /// baseline on aarch64).
    pub(crate) fn blocks(h: &[u64; 8], first: u64, out: &mut [u8; 64 * LANES]) => blocks_portable;
}

/// On a microcontroller (no SIMD to widen the lanes into), one block at a time straight into `out`: the
/// lane-contiguous `words` below would be 512 more bytes of stack in every encryption (the firmware's 24 KiB
/// RAM budget; the firmware test checks the stream through its known-answer digest).
#[cfg(target_os = "none")]
#[inline(always)]
fn blocks_portable(h: &[u64; 8], first: u64, out: &mut [u8; 64 * LANES]) {
    for (lane, bytes) in out.chunks_exact_mut(64).enumerate() {
        let mut w = block(h, first.wrapping_add(lane as u64));
        for (word, eight) in w.iter().zip(bytes.chunks_exact_mut(8)) {
            eight.copy_from_slice(&word.to_le_bytes());
        }
        // Secret stream output: leave none of it behind on the stack.
        w.zeroize();
    }
}

#[cfg(not(target_os = "none"))]
#[inline(always)]
fn blocks_portable(h: &[u64; 8], first: u64, out: &mut [u8; 64 * LANES]) {
    // words[i][lane]: lane-contiguous, so the vectorized loop stores whole vectors.
    let mut words = [[0u64; LANES]; 8];
    #[allow(clippy::needless_range_loop)] // The index loop is the shape LLVM's loop vectorizer widens.
    for lane in 0..LANES {
        let w = block(h, first.wrapping_add(lane as u64));
        for (i, word) in w.into_iter().enumerate() {
            words[i][lane] = word;
        }
    }
    for (lane, block) in out.chunks_exact_mut(64).enumerate() {
        for (i, bytes) in block.chunks_exact_mut(8).enumerate() {
            bytes.copy_from_slice(&words[i][lane].to_le_bytes());
        }
    }
    // The words are secret stream output: leave none of them behind on the stack.
    words.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use blake2::Blake2bMac;
    use blake2::digest::consts::{U16, U32, U64};
    use blake2::digest::{FixedOutput, Update};

    /// RustCrypto's `Blake2bMac::<$out>::new_with_salt_and_personal(key, &[], personalization)` of `message`.
    macro_rules! reference {
        ($out:ty, $key:expr, $personalization:expr, $message:expr) => {{
            let key: &[u8] = $key;
            let mut mac =
                Blake2bMac::<$out>::new_with_salt_and_personal((!key.is_empty()).then_some(key), &[], $personalization)
                    .unwrap();
            mac.update($message);
            mac.finalize_fixed()
        }};
    }

    /// [`blake2b`] is RustCrypto's keyed, personalized BLAKE2b for the digest lengths the device uses (16:
    /// frame MAC and key-file checks; 32: `Blake2bXof::reseed`; 64), with no key, a 32-byte and a 64-byte key,
    /// at every block boundary.
    #[test]
    fn blake2b_is_rustcrypto_blake2b_mac() {
        let message: [u8; 400] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        let all_keys: [u8; 64] = core::array::from_fn(|i| (i * 3 + 1) as u8);
        let p = b"TFHE-SBC test v2";
        for key_len in [0usize, 32, 64] {
            let key = &all_keys[..key_len];
            for len in [0, 1, 127, 128, 129, 256, 257, 400] {
                let m = &message[..len];
                assert_eq!(
                    blake2b::<16>(p, key, m)[..],
                    reference!(U16, key, p, m)[..],
                    "16, {key_len}, {len}"
                );
                assert_eq!(
                    blake2b::<32>(p, key, m)[..],
                    reference!(U32, key, p, m)[..],
                    "32, {key_len}, {len}"
                );
                assert_eq!(
                    blake2b::<64>(p, key, m)[..],
                    reference!(U64, key, p, m)[..],
                    "64, {key_len}, {len}"
                );
            }
        }
    }
}
