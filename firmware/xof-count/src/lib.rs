//! A keyed BLAKE2s XOF of the same shape as the device's keyed BLAKE2b XOF (docs/xof.md), written only to
//! count its instructions on 32-bit cores against `tfhe_sbc_device::csprng::xof::Blake2bXof`.
//!
//! For a 32-byte key `K` and an 8-byte personalization `P` (BLAKE2s's is 8 bytes, BLAKE2b's 16), the stream
//! is the concatenation of the 32-byte blocks
//!
//! ```text
//! block_i = BLAKE2s-256(key = K, message = LE64(i), salt = none, personalization = P)    i = 0, 1, 2, ...
//! ```
//!
//! BLAKE2s is RFC 7693 §3 with 32-bit words, 10 rounds and rotations 16, 12, 8, 7. As in the device's
//! BLAKE2b XOF, the zero-padded key block is compressed once per key ([`Blake2sXof::from_seed`]); each
//! output block is then one compression of the final block `LE64(i)` (byte counter 64 + 8). The
//! compression is generic over the message and out of line, as the device's is on a microcontroller, and
//! each block's output words are wiped from the stack as the device's are.
#![no_std]

use zeroize::Zeroize;

pub mod blake2b_folded;

/// The personalization of the measured stream.
pub const PERSONALIZATION: &[u8; 8] = b"TSBC-rng";
/// The bytes of one output block.
pub const BLOCK_BYTES: usize = 32;
/// The bytes of a seed (the BLAKE2s key).
pub const SEED_BYTES: usize = 32;

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

/// The message schedule (RFC 7693, 2.7): round `r` of the ten reads `SIGMA[r]`.
const SIGMA: [[usize; 16]; 10] = [
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

/// The chaining value after the parameter block (RFC 7693, 2.5; BLAKE2 paper §2.8): digest length
/// `out_bytes`, key length `key_bytes`, fanout 1, depth 1, no salt, the given personalization.
pub const fn parameter_state(out_bytes: u8, key_bytes: u8, personalization: &[u8; 8]) -> [u32; 8] {
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ ((key_bytes as u32) << 8) ^ out_bytes as u32;
    let p = personalization;
    h[6] ^= u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
    h[7] ^= u32::from_le_bytes([p[4], p[5], p[6], p[7]]);
    h
}

/// The mixing function G (RFC 7693, 3.1) with BLAKE2s's rotations.
#[inline(always)]
fn g(v: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize, x: u32, y: u32) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(12);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(8);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(7);
}

#[inline(always)]
fn round<const R: usize>(v: &mut [u32; 16], m: &[u32; 16]) {
    let s = &SIGMA[R];
    g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
}

/// The BLAKE2s compression F (RFC 7693, 3.2) of message block `m` with byte counter `t` (`last`: the final
/// block). Out of line on a microcontroller, as the device's BLAKE2b compression is.
#[cfg_attr(not(target_os = "none"), inline(always))]
#[cfg_attr(target_os = "none", inline(never))]
pub fn compress(h: &[u32; 8], m: &[u32; 16], t: u64, last: bool) -> [u32; 8] {
    compress_inline(h, m, t, last)
}

/// [`compress`] of the XOF's final block `LE64(index)` (message words 2-15 zero, counter 72), with the
/// zero words folded away at compile time: the variant `Blake2sXof<true>` measures what that saves.
#[cfg_attr(not(target_os = "none"), inline(always))]
#[cfg_attr(target_os = "none", inline(never))]
pub fn compress_counter(h: &[u32; 8], index: u64) -> [u32; 8] {
    let m = [
        index as u32,
        (index >> 32) as u32,
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
    compress_inline(h, &m, 64 + 8, true)
}

#[inline(always)]
fn compress_inline(h: &[u32; 8], m: &[u32; 16], t: u64, last: bool) -> [u32; 8] {
    let mut v = [
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
    ];
    round::<0>(&mut v, m);
    round::<1>(&mut v, m);
    round::<2>(&mut v, m);
    round::<3>(&mut v, m);
    round::<4>(&mut v, m);
    round::<5>(&mut v, m);
    round::<6>(&mut v, m);
    round::<7>(&mut v, m);
    round::<8>(&mut v, m);
    round::<9>(&mut v, m);
    core::array::from_fn(|i| h[i] ^ v[i] ^ v[i + 8])
}

/// Keyed BLAKE2s in counter mode (see the crate documentation). Zeroized on drop. `Blake2sXof` (`false`)
/// runs the generic [`compress`], as the device's BLAKE2b XOF does; `Blake2sXof<true>` runs
/// [`compress_counter`] (the same stream).
pub struct Blake2sXof<const ZERO_WORDS_FOLDED: bool = false> {
    /// The chaining value after the key block.
    state: [u32; 8],
    /// The index of the next block to compute.
    counter: u64,
    buffer: [u8; BLOCK_BYTES],
    /// Bytes of `buffer` not yet handed out; the next is `buffer[BLOCK_BYTES - remaining]`.
    remaining: usize,
}

impl<const ZERO_WORDS_FOLDED: bool> Blake2sXof<ZERO_WORDS_FOLDED> {
    /// The stream of `seed` under [`PERSONALIZATION`]: one compression (the key block).
    pub fn from_seed(seed: &[u8; SEED_BYTES]) -> Self {
        let h0 = parameter_state(BLOCK_BYTES as u8, SEED_BYTES as u8, PERSONALIZATION);
        let mut m = [0u32; 16];
        for (word, bytes) in m.iter_mut().zip(seed.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        let state = compress(&h0, &m, 64, false);
        m.zeroize();
        Self {
            state,
            counter: 0,
            buffer: [0; BLOCK_BYTES],
            remaining: 0,
        }
    }

    /// Fast key erasure as the device's `Blake2bXof::ratchet` does it: the key becomes block `2^64 - 1`
    /// (never reached by the stream), the counter restarts, the buffer is wiped. Two compressions.
    pub fn ratchet(&mut self) {
        let mut key = [0u8; SEED_BYTES];
        self.block(u64::MAX, &mut key);
        *self = Self::from_seed(&key);
        key.zeroize();
    }

    /// Block `index` of the stream.
    fn block(&self, index: u64, out: &mut [u8]) {
        let mut w = if ZERO_WORDS_FOLDED {
            compress_counter(&self.state, index)
        } else {
            let m = [
                index as u32,
                (index >> 32) as u32,
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
            compress(&self.state, &m, 64 + 8, true)
        };
        for (word, four) in w.iter().zip(out.chunks_exact_mut(4)) {
            four.copy_from_slice(&word.to_le_bytes());
        }
        w.zeroize();
    }

    fn next_counter(&mut self) -> u64 {
        let c = self.counter;
        self.counter = c
            .checked_add(1)
            .filter(|&n| n < u64::MAX)
            .expect("BLAKE2s XOF stream exhausted");
        c
    }

    /// Fills `dst` with the next bytes of the stream.
    pub fn fill(&mut self, mut dst: &mut [u8]) {
        let take = self.remaining.min(dst.len());
        let used = BLOCK_BYTES - self.remaining;
        dst[..take].copy_from_slice(&self.buffer[used..used + take]);
        self.remaining -= take;
        dst = &mut dst[take..];
        let mut blocks = dst.chunks_exact_mut(BLOCK_BYTES);
        for block in &mut blocks {
            let c = self.next_counter();
            self.block(c, block);
        }
        let rest = blocks.into_remainder();
        if !rest.is_empty() {
            let c = self.next_counter();
            let mut buffer = [0u8; BLOCK_BYTES];
            self.block(c, &mut buffer);
            self.buffer = buffer;
            buffer.zeroize();
            rest.copy_from_slice(&self.buffer[..rest.len()]);
            self.remaining = BLOCK_BYTES - rest.len();
        }
    }
}

impl<const ZERO_WORDS_FOLDED: bool> Drop for Blake2sXof<ZERO_WORDS_FOLDED> {
    fn drop(&mut self) {
        self.state.zeroize();
        self.buffer.zeroize();
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// RFC 7693 Appendix B: BLAKE2s-256("abc"), one unkeyed final block.
    #[test]
    fn compression_matches_rfc_7693_appendix_b() {
        let h0 = parameter_state(32, 0, &[0; 8]);
        let mut m = [0u32; 16];
        m[0] = u32::from_le_bytes(*b"abc\0");
        let h = compress(&h0, &m, 3, true);
        let out: Vec<u8> = h.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(
            out,
            hex("508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982")
        );
    }

    /// Blocks of the keyed, personalized stream against Python's `hashlib.blake2s` (the reference C code):
    /// `hashlib.blake2s(i.to_bytes(8, 'little'), key=bytes(range(32)), person=b"TSBC-rng", digest_size=32)`.
    #[test]
    fn blocks_match_python_hashlib() {
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let xof = Blake2sXof::<false>::from_seed(&key);
        let folded = Blake2sXof::<true>::from_seed(&key);
        for (index, expected) in [
            (0u64, "7e29b9e598e05fa6adb9e8181557b5467c3d4a3517fbc42ef9e495eb6663a0e9"),
            (1, "8db35d71e1f76d6e65a594622db6a0fb6611c74301f7ac26ed088dff8644a0d6"),
            (
                (1 << 32) + 5,
                "b00453ba9178935063f3dca5d0b6ac4da603b27dea221d2dcde96095509378a1",
            ),
        ] {
            let mut out = [0u8; 32];
            xof.block(index, &mut out);
            assert_eq!(out.to_vec(), hex(expected), "block {index}");
            folded.block(index, &mut out);
            assert_eq!(out.to_vec(), hex(expected), "block {index}, zero words folded");
        }
    }

    /// The folded BLAKE2b control against the device's stream (Python's `hashlib.blake2b(LE64(i), key=[7; 32],
    /// person=b"TFHE-SBC rng v2.")`, the firmware's vector), however it is split.
    #[test]
    fn folded_blake2b_matches_the_device_stream() {
        use crate::blake2b_folded::Blake2bFoldedXof;
        let mut whole = [0u8; 4096];
        Blake2bFoldedXof::from_seed(&[7; 32]).fill(&mut whole);
        assert_eq!(whole[..8].to_vec(), hex("16cacf4c54e755fd"));
        assert_eq!(whole[4088..].to_vec(), hex("145a7b646b44a426"));
        let mut split = [0u8; 4096];
        let mut xof = Blake2bFoldedXof::from_seed(&[7; 32]);
        for chunk in split.chunks_mut(100) {
            xof.fill(chunk);
        }
        assert_eq!(split, whole);
    }

    /// The 4096-byte stream the firmware measures (key = 32 bytes of 7): its first and last 8 bytes, from
    /// Python as above, and the same stream however it is split (with the zero words folded).
    #[test]
    fn stream_matches_python_and_split() {
        let mut whole = [0u8; 4096];
        Blake2sXof::<false>::from_seed(&[7; 32]).fill(&mut whole);
        assert_eq!(whole[..8].to_vec(), hex("65bda5de9e0e0b49"));
        assert_eq!(whole[4088..].to_vec(), hex("e2a08f2b04856bb5"));
        let mut split = [0u8; 4096];
        let mut xof = Blake2sXof::<true>::from_seed(&[7; 32]);
        let mut at = 0;
        for len in [1usize, 3, 32, 5, 64, 100, 7].iter().cycle() {
            let end = (at + len).min(4096);
            xof.fill(&mut split[at..end]);
            at = end;
            if at == 4096 {
                break;
            }
        }
        assert_eq!(split, whole);
    }
}
