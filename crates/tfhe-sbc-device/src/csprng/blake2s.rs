//! A multi-lane keyed BLAKE2s compression specialized to the XOF's messages: the 32-bit construction
//! ([`crate::csprng::construction::Blake2sCounter`], construction v3 of [`crate::csprng::xof`]).
//!
//! BLAKE2s is RFC 7693 §3 with 32-bit words, ten rounds, rotations 16, 12, 8, 7, a 64-byte message block and
//! a 32-byte chaining value. Every XOF block is keyed BLAKE2s-256 of the 8-byte message `LE64(i)` under a
//! fixed parameter block (digest length 32, key length 32, an 8-byte personalization): the key block's
//! compression depends on the key only ([`keyed_state`], once per key); each output block is then one
//! compression of a final block whose message words 2–15 are zero ([`block`]), and those zero words are
//! folded away at compile time (the "folded" compression `firmware/xof-count` measured: 31.6 % of a
//! Cortex-M4 encryption saved against BLAKE2b). As in [`crate::csprng::lanes`], [`LANES`] consecutive
//! counters are computed per call, in a loop LLVM widens into SIMD registers on hosts.
//!
//! `tests/xof.rs` checks it bit for bit against the RustCrypto `blake2` crate and Python's `hashlib`.
//! [`blake2s`] is the general keyed, personalized BLAKE2s over the same compression, for the reseed.
//! Constant-time: additions, rotations and XORs, schedule indices public.

use crate::csprng::lanes::LANES;
use zeroize::Zeroize;

/// The bytes of one output block (a BLAKE2s-256 digest).
pub(crate) const BLOCK_BYTES: usize = 32;

const IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// The message schedule (RFC 7693, 2.7): round `r` of the ten reads `SIGMA[r]`. Bytes: the rolled
/// compression on microcontrollers reads it at run time (public indices).
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

/// The chaining value after the parameter block (RFC 7693 §2.5, BLAKE2 paper §2.8): digest length
/// `out_bytes`, key length `key_bytes`, fanout 1, depth 1, no salt, the given 8-byte personalization.
pub(crate) const fn parameter_state(out_bytes: u8, key_bytes: u8, personalization: &[u8; 8]) -> [u32; 8] {
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ ((key_bytes as u32) << 8) ^ out_bytes as u32;
    let p = personalization;
    h[6] ^= u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
    h[7] ^= u32::from_le_bytes([p[4], p[5], p[6], p[7]]);
    h
}

/// `a + m[i]`, where the message words from `WORDS` on are zero: with `i` a constant (the unrolled rounds)
/// the addition of a zero word is dropped at compile time. `i` is a schedule index: public, never secret.
#[inline(always)]
fn add_word<const WORDS: usize>(a: u32, m: &[u32; 16], i: u8) -> u32 {
    let i = usize::from(i);
    if WORDS >= 16 || i < WORDS {
        a.wrapping_add(m[i % 16])
    } else {
        a
    }
}

/// The mixing function G (RFC 7693, 3.1) with BLAKE2s's rotations.
#[inline(always)]
fn g<const WORDS: usize>(v: &mut [u32; 16], [a, b, c, d]: [usize; 4], m: &[u32; 16], x: u8, y: u8) {
    v[a] = add_word::<WORDS>(v[a].wrapping_add(v[b]), m, x);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(12);
    v[a] = add_word::<WORDS>(v[a].wrapping_add(v[b]), m, y);
    v[d] = (v[d] ^ v[a]).rotate_right(8);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(7);
}

/// One round with the schedule row `s`, for a message whose words from `WORDS` on are zero.
#[inline(always)]
fn round<const WORDS: usize>(v: &mut [u32; 16], m: &[u32; 16], s: &[u8; 16]) {
    g::<WORDS>(v, [0, 4, 8, 12], m, s[0], s[1]);
    g::<WORDS>(v, [1, 5, 9, 13], m, s[2], s[3]);
    g::<WORDS>(v, [2, 6, 10, 14], m, s[4], s[5]);
    g::<WORDS>(v, [3, 7, 11, 15], m, s[6], s[7]);
    g::<WORDS>(v, [0, 5, 10, 15], m, s[8], s[9]);
    g::<WORDS>(v, [1, 6, 11, 12], m, s[10], s[11]);
    g::<WORDS>(v, [2, 7, 8, 13], m, s[12], s[13]);
    g::<WORDS>(v, [3, 4, 9, 14], m, s[14], s[15]);
}

/// The ten rounds, unrolled: every schedule index is a constant.
#[cfg(not(all(target_os = "none", debug_assertions)))]
#[inline(always)]
fn rounds_unrolled<const WORDS: usize>(v: &mut [u32; 16], m: &[u32; 16]) {
    macro_rules! rounds {
        ($($r:literal)*) => { $(round::<WORDS>(v, m, &SIGMA[$r]);)* };
    }
    rounds!(0 1 2 3 4 5 6 7 8 9);
}

/// The ten rounds as a loop, the schedule row read at run time (public indices): one round of code.
#[cfg(target_os = "none")]
#[inline(always)]
fn rounds_rolled(v: &mut [u32; 16], m: &[u32; 16]) {
    for s in &SIGMA {
        round::<16>(v, m, s);
    }
}

/// The working vector before the rounds: chaining value `h`, byte counter `t`, `last`: the final block.
#[inline(always)]
fn working_vector(h: &[u32; 8], t: u64, last: bool) -> [u32; 16] {
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
        IV[4] ^ t as u32,
        IV[5] ^ (t >> 32) as u32,
        if last { !IV[6] } else { IV[6] },
        IV[7],
    ]
}

/// One BLAKE2s compression F (RFC 7693, 3.2) of message block `m` with byte counter `t` (`last`: the final
/// block): the key block and [`blake2s`]. On microcontrollers out of line with rolled rounds (one round of
/// code): the XOF's blocks, almost all of the compressions, run [`compress_counter`].
#[cfg_attr(not(target_os = "none"), inline(always))]
#[cfg_attr(target_os = "none", inline(never))]
fn compress(h: &[u32; 8], m: &[u32; 16], t: u64, last: bool) -> [u32; 8] {
    let mut v = working_vector(h, t, last);
    #[cfg(target_os = "none")]
    rounds_rolled(&mut v, m);
    #[cfg(not(target_os = "none"))]
    rounds_unrolled::<16>(&mut v, m);
    core::array::from_fn(|i| h[i] ^ v[i] ^ v[i + 8])
}

/// [`compress`] of the XOF's output block: the final block `LE64(counter)` (message words 2–15 zero, byte
/// counter 64 + 8), with only the G calls that read words 0 and 1 adding them (`rounds_unrolled::<2>`).
#[cfg_attr(not(target_os = "none"), inline(always))]
#[cfg_attr(target_os = "none", inline(never))]
fn compress_counter(h: &[u32; 8], counter: u64) -> [u32; 8] {
    let mut m = [0u32; 16];
    m[0] = counter as u32;
    m[1] = (counter >> 32) as u32;
    let mut v = working_vector(h, 64 + 8, true);
    // Unoptimized firmware keeps the one rolled round (same result: the words beyond the first two are zero).
    #[cfg(all(target_os = "none", debug_assertions))]
    rounds_rolled(&mut v, &m);
    #[cfg(not(all(target_os = "none", debug_assertions)))]
    rounds_unrolled::<2>(&mut v, &m);
    core::array::from_fn(|i| h[i] ^ v[i] ^ v[i + 8])
}

/// The chaining value after the key block: `h0` compressed with the 32-byte key zero-padded to 64 bytes.
/// Computed once per key; the key words and the intermediate value are wiped.
pub(crate) fn keyed_state(h0: &[u32; 8], key: &[u8; 32], out: &mut [u32; 8]) {
    let mut m = [0u32; 16];
    load_block(key, &mut m);
    let mut state = compress(h0, &m, 64, false);
    *out = state;
    m.zeroize();
    state.zeroize();
}

/// One output block: the final 8-byte message block `LE64(counter)` after the key block.
#[inline(always)]
pub(crate) fn block(h: &[u32; 8], counter: u64) -> [u32; 8] {
    compress_counter(h, counter)
}

/// BLAKE2s (RFC 7693) of `message` with a 32-byte digest, the key `key` (1 to 32 bytes), no salt and the
/// given 8-byte personalization: RustCrypto's `Blake2sMac256::new_with_salt_and_personal(key, &[], p)`.
/// Lengths are public; contents flow through the compression only; the message words and chaining values
/// are wiped.
pub(crate) fn blake2s(personalization: &[u8; 8], key: &[u8], message: &[u8]) -> [u8; 32] {
    assert!(
        !key.is_empty() && key.len() <= 32,
        "a BLAKE2s key here has 1 to 32 bytes"
    );
    let mut h = parameter_state(32, key.len() as u8, personalization);
    let mut m = [0u32; 16];
    load_block(key, &mut m);
    let mut t = 64u64;
    h = compress(&h, &m, t, message.is_empty());
    let blocks = message.len().div_ceil(64);
    for (i, chunk) in message.chunks(64).enumerate() {
        load_block(chunk, &mut m);
        t += chunk.len() as u64;
        h = compress(&h, &m, t, i + 1 == blocks);
    }
    let mut out = [0u8; 32];
    for (four, word) in out.chunks_exact_mut(4).zip(&h) {
        four.copy_from_slice(&word.to_le_bytes());
    }
    m.zeroize();
    h.zeroize();
    out
}

/// `m` = `bytes` (at most 64) as little-endian words, zero-padded.
fn load_block(bytes: &[u8], m: &mut [u32; 16]) {
    *m = [0; 16];
    for (word, four) in m.iter_mut().zip(bytes.chunks(4)) {
        let mut le = [0u8; 4];
        le[..four.len()].copy_from_slice(four);
        *word = u32::from_le_bytes(le);
    }
}

crate::csprng::dispatch::dispatch! {
    /// Computes the BLAKE2s blocks of counters `first .. first + LANES` from the keyed chaining value `h`,
    /// writing `32 * LANES` bytes to `out`, with the widest SIMD the CPU offers (as
    /// [`crate::csprng::lanes::blocks`]).
    pub(crate) fn blocks(h: &[u32; 8], first: u64, out: &mut [u8; BLOCK_BYTES * LANES]) => blocks_portable;
}

/// On a microcontroller, one block at a time straight into `out`.
#[cfg(target_os = "none")]
#[inline(always)]
fn blocks_portable(h: &[u32; 8], first: u64, out: &mut [u8; BLOCK_BYTES * LANES]) {
    for (lane, bytes) in out.chunks_exact_mut(BLOCK_BYTES).enumerate() {
        let mut w = block(h, first.wrapping_add(lane as u64));
        for (word, four) in w.iter().zip(bytes.chunks_exact_mut(4)) {
            four.copy_from_slice(&word.to_le_bytes());
        }
        // Secret stream output: leave none of it behind on the stack.
        w.zeroize();
    }
}

#[cfg(not(target_os = "none"))]
#[inline(always)]
fn blocks_portable(h: &[u32; 8], first: u64, out: &mut [u8; BLOCK_BYTES * LANES]) {
    // words[i][lane]: lane-contiguous, so the vectorized loop stores whole vectors.
    let mut words = [[0u32; LANES]; 8];
    #[allow(clippy::needless_range_loop)] // The index loop is the shape LLVM's loop vectorizer widens.
    for lane in 0..LANES {
        let w = block(h, first.wrapping_add(lane as u64));
        for (i, word) in w.into_iter().enumerate() {
            words[i][lane] = word;
        }
    }
    for (lane, block) in out.chunks_exact_mut(BLOCK_BYTES).enumerate() {
        for (i, bytes) in block.chunks_exact_mut(4).enumerate() {
            bytes.copy_from_slice(&words[i][lane].to_le_bytes());
        }
    }
    // The words are secret stream output: leave none of them behind on the stack.
    words.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use blake2::Blake2sMac256;
    use blake2::digest::{FixedOutput, Update};

    /// RFC 7693 Appendix B: BLAKE2s-256("abc"), one unkeyed final block.
    #[test]
    fn compression_matches_rfc_7693_appendix_b() {
        let h0 = parameter_state(32, 0, &[0; 8]);
        let mut m = [0u32; 16];
        m[0] = u32::from_le_bytes(*b"abc\0");
        let h = compress(&h0, &m, 3, true);
        let expected: [u32; 8] = [
            0x8c5e_8c50,
            0xe214_7c32,
            0xa32b_a7e1,
            0x2f45_eb4e,
            0x208b_4537,
            0x293a_d69e,
            0x4c9b_994d,
            0x8259_6786,
        ];
        // 508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982, as little-endian words.
        assert_eq!(h, expected);
    }

    /// [`blake2s`] is RustCrypto's keyed, personalized BLAKE2s-256 (the reseed's derivation), with a 32-byte
    /// and a 1-byte key, at every block boundary; the folded counter block is the generic compression's.
    #[test]
    fn blake2s_is_rustcrypto_blake2s_mac() {
        let message: [u8; 200] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        let all_keys: [u8; 32] = core::array::from_fn(|i| (i * 3 + 1) as u8);
        let p = b"TSBCtest";
        for key_len in [1usize, 32] {
            let key = &all_keys[..key_len];
            for len in [0, 1, 63, 64, 65, 128, 129, 200] {
                let m = &message[..len];
                let mut mac = Blake2sMac256::new_with_salt_and_personal(Some(key), &[], p).unwrap();
                mac.update(m);
                assert_eq!(blake2s(p, key, m)[..], mac.finalize_fixed()[..], "{key_len}, {len}");
            }
        }
        let h: [u32; 8] = core::array::from_fn(|i| (i as u32).wrapping_mul(0x9e37_79b9));
        for counter in [0u64, 1, (1 << 32) + 5, u64::MAX] {
            let m = [
                counter as u32,
                (counter >> 32) as u32,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
            ];
            assert_eq!(block(&h, counter), compress(&h, &m, 72, true), "counter {counter}");
        }
    }
}
