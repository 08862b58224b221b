//! An independent replay of the device CSPRNG's ratchet chain (`docs/xof.md`): a BLAKE2b compression written
//! from RFC 7693, the keyed chaining value of a 32-byte key, any block of the secret stream from it, and the
//! chain of keys `K_0` = seed, `K_{i+1}` = the first half of block `2^64 - 1` under `K_i`.
//!
//! Shared by the memory-image tests that search a process or a firmware's RAM for every secret the generator
//! ever held: `tests/memory_image.rs` here (a module) and the firmware's RAM-image scanner
//! (`firmware/examples/ram_image_scan.rs`, by `#[path]`). Checked against the device crate's reference
//! blocks by `memory_image.rs::the_chain_replay_matches_the_device_stream`.

use tfhe_sbc_device::csprng::xof::RNG_PERSONALIZATION;

const IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

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

/// BLAKE2b's compression function F (RFC 7693 §3.2) of chaining value `h` and block `m`, `t` bytes so far.
pub fn compress(h: &[u64; 8], m: &[u64; 16], t: u64, last: bool) -> [u64; 8] {
    let mut v = [0u64; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV);
    v[12] ^= t;
    if last {
        v[14] = !v[14];
    }
    let mut g = |a: usize, b: usize, c: usize, d: usize, x: u64, y: u64| {
        v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
        v[d] = (v[d] ^ v[a]).rotate_right(32);
        v[c] = v[c].wrapping_add(v[d]);
        v[b] = (v[b] ^ v[c]).rotate_right(24);
        v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
        v[d] = (v[d] ^ v[a]).rotate_right(16);
        v[c] = v[c].wrapping_add(v[d]);
        v[b] = (v[b] ^ v[c]).rotate_right(63);
    };
    for r in 0..12 {
        let s = &SIGMA[r % 10];
        g(0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    core::array::from_fn(|i| h[i] ^ v[i] ^ v[i + 8])
}

/// The little-endian 64-bit words of `bytes` (a whole number of words).
pub fn words_le(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(core::array::from_fn(|i| w[i])))
        .collect()
}

/// The little-endian bytes of `words`.
pub fn bytes_le(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The 64 little-endian bytes of a chaining value.
fn state_bytes(h: &[u64; 8]) -> [u8; 64] {
    core::array::from_fn(|i| h[i / 8].to_le_bytes()[i % 8])
}

/// BLAKE2b's chaining value after the block of the 32-byte `key`, for an `out_bytes` digest under
/// `personalization` (no salt): the keyed state every output of that key is computed from.
pub fn keyed_chaining_value(key: &[u8; 32], out_bytes: u64, personalization: &[u8; 16]) -> [u8; 64] {
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ (32 << 8) ^ out_bytes;
    let p = words_le(personalization);
    h[6] ^= p[0];
    h[7] ^= p[1];
    let mut m = [0u64; 16];
    m[..4].copy_from_slice(&words_le(key));
    state_bytes(&compress(&h, &m, 128, false))
}

/// Block `index` of the secret stream from a keyed chaining value (the final block `LE64(index)`).
pub fn stream_block(chaining_value: &[u8; 64], index: u64) -> [u8; 64] {
    let words = words_le(chaining_value);
    let h: [u64; 8] = core::array::from_fn(|i| words[i]);
    let mut m = [0u64; 16];
    m[0] = index;
    state_bytes(&compress(&h, &m, 136, true))
}

/// One step of the generator's ratchet chain: its key, its keyed chaining value and its ratchet block
/// (whose first half is the next key).
pub struct Link {
    /// The key `K_i` (`K_0` is the seed).
    pub key: [u8; 32],
    /// The keyed chaining value of `K_i`: what the generator holds while `K_i` is its key.
    pub chaining_value: [u8; 64],
    /// Block `2^64 - 1` under `K_i`; its first 32 bytes are `K_{i+1}`.
    pub ratchet_block: [u8; 64],
}

/// The first `links` steps of the ratchet chain of `seed`.
pub fn ratchet_chain(seed: &[u8; 32], links: usize) -> Vec<Link> {
    let mut key = *seed;
    (0..links)
        .map(|_| {
            let chaining_value = keyed_chaining_value(&key, 64, RNG_PERSONALIZATION);
            let ratchet_block = stream_block(&chaining_value, u64::MAX);
            let link = Link {
                key,
                chaining_value,
                ratchet_block,
            };
            key.copy_from_slice(&ratchet_block[..32]);
            link
        })
        .collect()
}

/// BLAKE2s's initialization vector (RFC 7693 §2.6).
const IV32: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// BLAKE2s's compression function F (RFC 7693 §3.2: 32-bit words, ten rounds, rotations 16, 12, 8, 7).
pub fn compress32(h: &[u32; 8], m: &[u32; 16], t: u64, last: bool) -> [u32; 8] {
    let mut v = [0u32; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV32);
    v[12] ^= t as u32;
    v[13] ^= (t >> 32) as u32;
    if last {
        v[14] = !v[14];
    }
    let mut g = |a: usize, b: usize, c: usize, d: usize, x: u32, y: u32| {
        v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
        v[d] = (v[d] ^ v[a]).rotate_right(16);
        v[c] = v[c].wrapping_add(v[d]);
        v[b] = (v[b] ^ v[c]).rotate_right(12);
        v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
        v[d] = (v[d] ^ v[a]).rotate_right(8);
        v[c] = v[c].wrapping_add(v[d]);
        v[b] = (v[b] ^ v[c]).rotate_right(7);
    };
    for s in &SIGMA {
        g(0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    core::array::from_fn(|i| h[i] ^ v[i] ^ v[i + 8])
}

/// The 32 little-endian bytes of a BLAKE2s chaining value.
fn state_bytes32(h: &[u32; 8]) -> [u8; 32] {
    core::array::from_fn(|i| h[i / 4].to_le_bytes()[i % 4])
}

/// The little-endian 32-bit words of 32 bytes.
fn words32(bytes: &[u8; 32]) -> [u32; 8] {
    core::array::from_fn(|i| u32::from_le_bytes(core::array::from_fn(|j| bytes[4 * i + j])))
}

/// BLAKE2s-256's chaining value after the block of the 32-byte `key` under the 8-byte `personalization`.
pub fn keyed_chaining_value32(key: &[u8; 32], personalization: &[u8; 8]) -> [u8; 32] {
    let mut h = IV32;
    h[0] ^= 0x0101_0000 ^ (32 << 8) ^ 32;
    h[6] ^= u32::from_le_bytes(core::array::from_fn(|i| personalization[i]));
    h[7] ^= u32::from_le_bytes(core::array::from_fn(|i| personalization[4 + i]));
    let mut m = [0u32; 16];
    m[..8].copy_from_slice(&words32(key));
    state_bytes32(&compress32(&h, &m, 64, false))
}

/// Block `index` of a BLAKE2s secret stream from its keyed chaining value (the final block `LE64(index)`).
pub fn stream_block32(chaining_value: &[u8; 32], index: u64) -> [u8; 32] {
    let mut m = [0u32; 16];
    m[0] = index as u32;
    m[1] = (index >> 32) as u32;
    state_bytes32(&compress32(&words32(chaining_value), &m, 72, true))
}

/// One step of the BLAKE2s generator's ratchet chain (construction v3, the 32-bit targets' default).
pub struct Link32 {
    /// The key `K_i` (`K_0` is the seed).
    pub key: [u8; 32],
    /// The keyed chaining value of `K_i`.
    pub chaining_value: [u8; 32],
    /// Block `2^64 - 1` under `K_i`: all of it is `K_{i+1}`.
    pub ratchet_block: [u8; 32],
}

/// The first `links` steps of the BLAKE2s ratchet chain of `seed` (personalization `"TSBCrng3"`).
pub fn ratchet_chain32(seed: &[u8; 32], links: usize) -> Vec<Link32> {
    let mut key = *seed;
    (0..links)
        .map(|_| {
            let chaining_value = keyed_chaining_value32(&key, b"TSBCrng3");
            let ratchet_block = stream_block32(&chaining_value, u64::MAX);
            let link = Link32 {
                key,
                chaining_value,
                ratchet_block,
            };
            key = ratchet_block;
            link
        })
        .collect()
}
