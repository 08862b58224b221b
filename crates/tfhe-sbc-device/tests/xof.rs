//! The BLAKE2b XOF: known answers from an independent implementation, stream consistency, no repeats.
#![allow(clippy::unwrap_used)] // Test helpers: a malformed vector file should fail loudly.

use rand_core::{Rng, SeedableRng};
use std::collections::HashSet;
use tfhe_sbc_device::csprng::Blake2bCounter;
use tfhe_sbc_device::csprng::mask::{
    expand_mask, expand_mask_into_fft_input, expand_mask_into_fft_input_at, expand_mask_u32, mask_block,
};
use tfhe_sbc_device::csprng::xof::{BLOCK_BYTES, Blake2bXof};

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

/// Vectors from Python's hashlib (the BLAKE2 reference C code); see tests/kat/README.md. Three domains:
/// the secret stream, the mask expansion and the secret stream after one key erasure.
#[test]
fn known_answers_from_hashlib() {
    let vectors = include_str!("kat/blake2b_xof_v2.txt");
    let mut count = [0; 3];
    for line in vectors.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let seed: [u8; 32] = unhex(fields[1]).try_into().unwrap();
        let (offset, length): (usize, usize) = (fields[2].parse().unwrap(), fields[3].parse().unwrap());
        let expected = unhex(fields[4]);
        let got = match fields[0] {
            "rng" => {
                count[0] += 1;
                read(&mut Blake2bXof::from_seed(seed), offset, length)
            }
            "mask" => {
                count[1] += 1;
                let mut words = vec![0u32; (offset + length).div_ceil(4)];
                expand_mask_u32::<Blake2bCounter>(&seed, &mut words);
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                bytes[offset..offset + length].to_vec()
            }
            "ratchet" => {
                count[2] += 1;
                let mut xof = Blake2bXof::from_seed(seed);
                xof.ratchet();
                read(&mut xof, offset, length)
            }
            other => panic!("unknown domain {other}"),
        };
        assert_eq!(got, expected, "{line}");
    }
    assert_eq!(count, [20, 20, 4]);
}

/// The stream comes from the multi-lane BLAKE2b; `Blake2bXof::block` and `mask_block` from the RustCrypto
/// `blake2` crate. They must agree bit for bit, block after block, in both domains.
#[test]
fn multi_lane_blake2b_matches_the_blake2_crate() {
    for seed in [[3u8; 32], [0u8; 32], core::array::from_fn(|i| (i * 37 + 11) as u8)] {
        let mut xof = Blake2bXof::from_seed(seed);
        let stream = read(&mut xof, 0, 1024 * BLOCK_BYTES);
        let mut mask = vec![0u32; 1024 * BLOCK_BYTES / 4];
        expand_mask_u32::<Blake2bCounter>(&seed, &mut mask);
        let mask: Vec<u8> = mask.iter().flat_map(|w| w.to_le_bytes()).collect();
        for (i, (got, got_mask)) in stream
            .chunks_exact(BLOCK_BYTES)
            .zip(mask.chunks_exact(BLOCK_BYTES))
            .enumerate()
        {
            let mut expected = [0u8; BLOCK_BYTES];
            Blake2bXof::block(&seed, i as u64, &mut expected);
            assert_eq!(got, expected, "block {i}");
            mask_block(&seed, i as u64, &mut expected);
            assert_eq!(got_mask, expected, "mask block {i}");
        }
        assert_ne!(stream, mask, "the two domains must differ");
    }
}

/// The FFT-input expansion is the integer expansion, centered, polynomial by polynomial (mask polynomial `i`
/// of a `k > 1` ciphertext is words `[iN, (i + 1)N)` of the stream), and the generic expansion reads the
/// same stream in words of the torus width.
#[test]
fn mask_expansions_agree() {
    let seed = [5u8; 32];
    for n in [64usize, 512, 1024] {
        let mut words = vec![0u32; 3 * n];
        expand_mask_u32::<Blake2bCounter>(&seed, &mut words);
        let mut generic = vec![0u32; 3 * n];
        expand_mask::<Blake2bCounter, _>(&seed, &mut generic);
        assert_eq!(words, generic);
        let mut floats = vec![0f64; n];
        for i in 0..3 {
            expand_mask_into_fft_input_at::<Blake2bCounter>(&seed, i, &mut floats);
            for (w, f) in words[i * n..(i + 1) * n].iter().zip(&floats) {
                assert_eq!(f64::from(*w as i32), *f, "N = {n}, polynomial {i}");
            }
        }
        expand_mask_into_fft_input::<Blake2bCounter>(&seed, &mut floats);
        assert_eq!(floats[0], f64::from(words[0] as i32));
    }
    let mut words = vec![0u32; 64];
    expand_mask_u32::<Blake2bCounter>(&seed, &mut words);
    let mut wide = vec![0u64; 32];
    expand_mask::<Blake2bCounter, _>(&seed, &mut wide);
    for (j, w) in wide.iter().enumerate() {
        assert_eq!(*w, u64::from(words[2 * j]) | (u64::from(words[2 * j + 1]) << 32));
    }
}

/// Key erasure: after `ratchet`, the output is the documented new stream (KAT above), differs from the
/// continuation of the old one, and buffered bytes of the old stream are never handed out.
#[test]
fn ratchet_moves_to_a_new_stream() {
    let seed = [7u8; 32];
    let old = read(&mut Blake2bXof::from_seed(seed), 0, 1024);
    let mut xof = Blake2bXof::from_seed(seed);
    let first = read(&mut xof, 0, 10); // leaves 502 buffered bytes
    assert_eq!(first, old[..10]);
    xof.ratchet();
    let after = read(&mut xof, 0, 1014);
    for window in old.windows(16) {
        assert!(!after.windows(16).any(|w| w == window), "old stream bytes reappeared");
    }
    let mut again = Blake2bXof::from_seed(seed);
    again.ratchet();
    assert_eq!(
        read(&mut again, 0, 1014),
        after,
        "ratchet is deterministic in the state"
    );
}

/// Reseeding mixes the entropy in: different entropy, different stream; the same state and entropy give
/// the same stream; and the result differs from a plain ratchet.
#[test]
fn reseed_mixes_entropy() {
    let seed = [8u8; 32];
    let stream_after = |entropy: Option<&[u8]>| {
        let mut xof = Blake2bXof::from_seed(seed);
        match entropy {
            Some(e) => xof.reseed(e),
            None => xof.ratchet(),
        }
        read(&mut xof, 0, 64)
    };
    let a = stream_after(Some(b"trng bytes A"));
    assert_eq!(a, stream_after(Some(b"trng bytes A")));
    assert_ne!(a, stream_after(Some(b"trng bytes B")));
    assert_ne!(a, stream_after(Some(b"")));
    assert_ne!(a, stream_after(None));
    assert_ne!(a, read(&mut Blake2bXof::from_seed(seed), 0, 64));
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
