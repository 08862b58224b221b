//! The BLAKE2b XOF: known answers from an independent implementation, stream consistency, no repeats.
#![allow(clippy::unwrap_used)] // Test helpers: a malformed vector file should fail loudly.

use rand_core::{Rng, SeedableRng};
use std::collections::HashSet;
use tfhe_sbc_device::xof::{BLOCK_BYTES, Blake2bXof};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn read(xof: &mut Blake2bXof, offset: usize, length: usize) -> Vec<u8> {
    let mut skip = vec![0u8; offset];
    xof.fill_bytes(&mut skip);
    let mut out = vec![0u8; length];
    xof.fill_bytes(&mut out);
    out
}

/// Vectors from Python's hashlib (the BLAKE2 reference C code); see tests/kat/README.md.
#[test]
fn known_answers_from_hashlib() {
    let vectors = include_str!("kat/blake2b_xof_v1.txt");
    let mut count = 0;
    for line in vectors.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let seed: [u8; 32] = unhex(fields[0]).try_into().unwrap();
        let (offset, length): (usize, usize) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
        let expected = unhex(fields[3]);
        assert_eq!(
            read(&mut Blake2bXof::from_seed(seed), offset, length),
            expected,
            "{line}"
        );
        count += 1;
    }
    assert_eq!(count, 20);
}

/// The stream comes from the multi-lane BLAKE2b; `Blake2bXof::block` from the RustCrypto `blake2` crate.
/// They must agree bit for bit, block after block.
#[test]
fn multi_lane_blake2b_matches_the_blake2_crate() {
    for seed in [[3u8; 32], [0u8; 32], core::array::from_fn(|i| (i * 37 + 11) as u8)] {
        let mut xof = Blake2bXof::from_seed(seed);
        let stream = read(&mut xof, 0, 1024 * BLOCK_BYTES);
        for (i, got) in stream.chunks_exact(BLOCK_BYTES).enumerate() {
            let mut expected = [0u8; BLOCK_BYTES];
            Blake2bXof::block(&seed, i as u64, &mut expected);
            assert_eq!(got, expected, "block {i}");
        }
    }
}

/// Reading in chunks of 1, 7, 64 and 4096 bytes, or as u32/u64 words, gives the same byte stream.
#[test]
fn chunk_size_does_not_change_the_stream() {
    const LEN: usize = 3 * 4096 + 123;
    let seed = [9u8; 32];
    let reference = read(&mut Blake2bXof::from_seed(seed), 0, LEN);
    for chunk in [1, 7, 64, 4096] {
        let mut xof = Blake2bXof::from_seed(seed);
        let mut out = vec![0u8; LEN];
        for piece in out.chunks_mut(chunk) {
            xof.fill_bytes(piece);
        }
        assert_eq!(out, reference, "chunk size {chunk}");
    }
    let mut xof = Blake2bXof::from_seed(seed);
    let words: Vec<u8> = (0..LEN / 4).flat_map(|_| xof.next_u32().to_le_bytes()).collect();
    assert_eq!(words, reference[..words.len()]);
    let mut xof = Blake2bXof::from_seed(seed);
    let words: Vec<u8> = (0..LEN / 8).flat_map(|_| xof.next_u64().to_le_bytes()).collect();
    assert_eq!(words, reference[..words.len()]);
    // Mixed reads across block boundaries.
    let mut xof = Blake2bXof::from_seed(seed);
    let mut mixed = Vec::new();
    while mixed.len() + 13 <= LEN {
        mixed.extend(xof.next_u32().to_le_bytes());
        let mut odd = [0u8; 1];
        xof.fill_bytes(&mut odd);
        mixed.extend(odd);
        mixed.extend(xof.next_u64().to_le_bytes());
    }
    assert_eq!(mixed, reference[..mixed.len()]);
}

/// No 64-byte block repeats in the first 16 MiB (the bug class of a refill at the wrong offset).
#[test]
fn no_block_repeats_in_16_mib() {
    let mut xof = Blake2bXof::from_seed([0u8; 32]);
    let mut buffer = vec![0u8; 1 << 20];
    let mut seen = HashSet::with_capacity((16 << 20) / BLOCK_BYTES);
    for _ in 0..16 {
        xof.fill_bytes(&mut buffer);
        for block in buffer.chunks_exact(BLOCK_BYTES) {
            assert!(
                seen.insert(<[u8; BLOCK_BYTES]>::try_from(block).unwrap()),
                "a block repeated"
            );
        }
    }
    assert_eq!(seen.len(), (16 << 20) / BLOCK_BYTES);
}

#[test]
fn seeds_give_different_streams_and_debug_is_redacted() {
    let a = read(&mut Blake2bXof::from_seed([1u8; 32]), 0, 64);
    let b = read(&mut Blake2bXof::from_seed([2u8; 32]), 0, 64);
    assert_ne!(a, b);
    let xof = Blake2bXof::from_seed([0xAB; 32]);
    let text = format!("{xof:?}");
    assert!(text.contains("redacted") && !text.contains("171"), "{text}");
}
