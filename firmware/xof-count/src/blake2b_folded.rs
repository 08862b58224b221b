//! The device's keyed BLAKE2b stream (construction v2, docs/xof.md) with the counter block's zero message
//! words folded away at compile time, as [`crate::compress_counter`] does for BLAKE2s: the control that
//! tells what the folding alone would save in the device's XOF, so that the folded BLAKE2s is compared with
//! a folded BLAKE2b. Same stream as `tfhe_sbc_device::csprng::xof::Blake2bXof` (checked by the firmware's
//! Python-made vector); one 64-byte block of buffer.

use zeroize::Zeroize;

/// The device's secret-stream personalization (`tfhe_sbc_device::csprng::xof::RNG_PERSONALIZATION`).
const PERSONALIZATION: &[u8; 16] = b"TFHE-SBC rng v2.";
const BLOCK_BYTES: usize = 64;

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

#[inline(always)]
fn g(v: &mut [u64; 16], a: usize, b: usize, c: usize, d: usize, x: u64, y: u64) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

/// BLAKE2b's twelve rounds read `SIGMA[r % 10]` (RFC 7693, 3.2).
#[inline(always)]
fn round<const R: usize>(v: &mut [u64; 16], m: &[u64; 16]) {
    let s = &crate::SIGMA[R % 10];
    g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
}

#[inline(always)]
fn compress_inline(h: &[u64; 8], m: &[u64; 16], t: u64, last: bool) -> [u64; 8] {
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
        IV[4] ^ t,
        IV[5],
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
    round::<10>(&mut v, m);
    round::<11>(&mut v, m);
    core::array::from_fn(|i| h[i] ^ v[i] ^ v[i + 8])
}

/// The key block's compression (once per key).
#[inline(never)]
fn compress_key(h: &[u64; 8], m: &[u64; 16]) -> [u64; 8] {
    compress_inline(h, m, 128, false)
}

/// The counter block's compression, message words 1-15 folded to zero.
#[cfg_attr(not(target_os = "none"), inline(always))]
#[cfg_attr(target_os = "none", inline(never))]
fn compress_counter(h: &[u64; 8], index: u64) -> [u64; 8] {
    let m = [index, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    compress_inline(h, &m, 128 + 8, true)
}

/// Keyed BLAKE2b in counter mode, the counter block's zero words folded. Zeroized on drop.
pub struct Blake2bFoldedXof {
    state: [u64; 8],
    counter: u64,
    buffer: [u8; BLOCK_BYTES],
    remaining: usize,
}

impl Blake2bFoldedXof {
    /// The stream of `seed`: one compression (the key block).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let mut h0 = IV;
        h0[0] ^= 0x0101_0000 ^ (32 << 8) ^ BLOCK_BYTES as u64;
        let p = PERSONALIZATION;
        h0[6] ^= u64::from_le_bytes([p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]]);
        h0[7] ^= u64::from_le_bytes([p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]]);
        let mut m = [0u64; 16];
        for (word, bytes) in m.iter_mut().zip(seed.chunks_exact(8)) {
            *word = u64::from_le_bytes([
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            ]);
        }
        let state = compress_key(&h0, &m);
        m.zeroize();
        Self {
            state,
            counter: 0,
            buffer: [0; BLOCK_BYTES],
            remaining: 0,
        }
    }

    fn block(&self, index: u64, out: &mut [u8]) {
        let mut w = compress_counter(&self.state, index);
        for (word, eight) in w.iter().zip(out.chunks_exact_mut(8)) {
            eight.copy_from_slice(&word.to_le_bytes());
        }
        w.zeroize();
    }

    fn next_counter(&mut self) -> u64 {
        let c = self.counter;
        self.counter = c
            .checked_add(1)
            .filter(|&n| n < u64::MAX)
            .expect("BLAKE2b XOF stream exhausted");
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

    /// Fast key erasure as the device's `Blake2bXof::ratchet`: the key becomes the first 32 bytes of block
    /// `2^64 - 1`. Two compressions.
    pub fn ratchet(&mut self) {
        let mut block = [0u8; BLOCK_BYTES];
        self.block(u64::MAX, &mut block);
        let mut key = [0u8; 32];
        key.copy_from_slice(&block[..32]);
        *self = Self::from_seed(&key);
        key.zeroize();
        block.zeroize();
    }
}

impl Drop for Blake2bFoldedXof {
    fn drop(&mut self) {
        self.state.zeroize();
        self.buffer.zeroize();
    }
}
