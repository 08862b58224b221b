//! The BLAKE2s XOF (construction v3, the default on 32-bit targets), run on the host: known answers from
//! Python's `hashlib.blake2s` for both domains, after a ratchet and after a reseed; the multi-lane stream
//! against the RustCrypto `blake2` crate; the mask expansions; stream consistency; and the seam's other
//! instance (BLAKE2b) kept apart from it.
#![allow(clippy::unwrap_used)] // Test helpers: a malformed vector file should fail loudly.

use rand_core::{Rng, SeedableRng};
use std::collections::HashSet;
use tfhe_sbc_device::csprng::mask::{
    MaskXof, expand_mask, expand_mask_into_fft_input_at, expand_mask_u32, for_each_mask_run,
};
use tfhe_sbc_device::csprng::{Blake2bCounter, Blake2sCounter, Blake2sXof, XofConstruction};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn read(xof: &mut Blake2sXof, offset: usize, length: usize) -> Vec<u8> {
    let mut skip = vec![0u8; offset];
    xof.fill_bytes(&mut skip);
    let mut out = vec![0u8; length];
    xof.fill_bytes(&mut out);
    out
}

/// The mask stream's bytes `[offset, offset + length)` under `C`.
fn mask_bytes<C: XofConstruction>(seed: &[u8; 32], offset: usize, length: usize) -> Vec<u8> {
    let mut words = vec![0u32; (offset + length).div_ceil(4)];
    expand_mask_u32::<C>(seed, &mut words);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes[offset..offset + length].to_vec()
}

/// Vectors from Python's hashlib (the BLAKE2 reference C code), made by `tests/kat/make_vectors_blake2s.py`:
/// the secret stream, the mask expansion (wire id 3), the stream after one key erasure and after a reseed.
#[test]
fn known_answers_from_hashlib_blake2s() {
    let vectors = include_str!("kat/blake2s_xof_v3.txt");
    let mut count = [0; 4];
    for line in vectors.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let seed: [u8; 32] = unhex(fields[1]).try_into().unwrap();
        let (offset, length): (usize, usize) = (fields[2].parse().unwrap(), fields[3].parse().unwrap());
        let expected = unhex(fields[4]);
        let got = match fields[0] {
            "rng" => {
                count[0] += 1;
                read(&mut Blake2sXof::from_seed(seed), offset, length)
            }
            "mask" => {
                count[1] += 1;
                mask_bytes::<Blake2sCounter>(&seed, offset, length)
            }
            "ratchet" => {
                count[2] += 1;
                let mut xof = Blake2sXof::from_seed(seed);
                xof.ratchet();
                read(&mut xof, offset, length)
            }
            "reseed" => {
                count[3] += 1;
                let mut xof = Blake2sXof::from_seed(seed);
                xof.reseed(b"trng bytes v3");
                read(&mut xof, offset, length)
            }
            other => panic!("unknown domain {other}"),
        };
        assert_eq!(got, expected, "{line}");
    }
    assert_eq!(count, [20, 20, 4, 4]);
}

/// The multi-lane BLAKE2s stream and mask against the RustCrypto `blake2` crate (`Blake2sMac256` with the
/// personalization), block after block, in both domains; the two domains differ.
#[test]
fn multi_lane_blake2s_matches_the_blake2_crate() {
    const BLOCK: usize = Blake2sCounter::BLOCK_BYTES;
    for seed in [[3u8; 32], [0u8; 32], core::array::from_fn(|i| (i * 37 + 11) as u8)] {
        let stream = read(&mut Blake2sXof::from_seed(seed), 0, 1024 * BLOCK);
        let mask = mask_bytes::<Blake2sCounter>(&seed, 0, 1024 * BLOCK);
        for (i, (got, got_mask)) in stream.chunks_exact(BLOCK).zip(mask.chunks_exact(BLOCK)).enumerate() {
            let mut expected = [0u8; BLOCK];
            Blake2sXof::block(&seed, i as u64, &mut expected);
            assert_eq!(got, expected, "block {i}");
            Blake2sCounter::reference_block(true, &seed, i as u64, &mut expected);
            assert_eq!(got_mask, expected, "mask block {i}");
        }
        assert_ne!(stream, mask, "the two domains must differ");
    }
}

/// The expansions of one seed agree with each other under BLAKE2s (words, any torus, FFT input by
/// polynomial, runs), and the two wire ids expand one seed into different masks.
#[test]
fn blake2s_mask_expansions_agree_and_differ_from_blake2b() {
    let seed = [5u8; 32];
    for n in [64usize, 512, 1024] {
        let mut words = vec![0u32; 3 * n];
        expand_mask_u32::<Blake2sCounter>(&seed, &mut words);
        let mut generic = vec![0u32; 3 * n];
        expand_mask::<Blake2sCounter, u32>(&seed, &mut generic);
        assert_eq!(words, generic);
        let mut runtime = vec![0u32; 3 * n];
        MaskXof::Blake2s.expand_mask_u32(&seed, &mut runtime);
        assert_eq!(words, runtime);
        let mut floats = vec![0f64; n];
        for i in 0..3 {
            expand_mask_into_fft_input_at::<Blake2sCounter>(&seed, i, &mut floats);
            for (w, f) in words[i * n..(i + 1) * n].iter().zip(&floats) {
                assert_eq!(f64::from(*w as i32), *f, "N = {n}, polynomial {i}");
            }
            let mut runs = vec![0u32; n];
            for_each_mask_run::<Blake2sCounter, u32>(&seed, i, n, |offset, run| {
                runs[offset..offset + run.len()].copy_from_slice(run)
            });
            assert_eq!(runs, words[i * n..(i + 1) * n], "N = {n}, polynomial {i}");
        }
        let mut v2 = vec![0u32; 3 * n];
        MaskXof::Blake2b.expand_mask_u32(&seed, &mut v2);
        assert_eq!(v2, mask_bytes_words::<Blake2bCounter>(&seed, 3 * n));
        assert_ne!(v2, words, "ids 2 and 3 expand differently");
    }
    let mut wide = vec![0u64; 32];
    MaskXof::Blake2s.expand_mask(&seed, &mut wide);
    let words = mask_bytes_words::<Blake2sCounter>(&seed, 64);
    for (j, w) in wide.iter().enumerate() {
        assert_eq!(*w, u64::from(words[2 * j]) | (u64::from(words[2 * j + 1]) << 32));
    }
    assert_eq!(MaskXof::from_id(2), Some(MaskXof::Blake2b));
    assert_eq!(MaskXof::from_id(3), Some(MaskXof::Blake2s));
    for id in [0u8, 1, 4, 255] {
        assert_eq!(MaskXof::from_id(id), None, "id {id}");
    }
    assert_eq!((MaskXof::Blake2b.id(), MaskXof::Blake2s.id()), (2, 3));
}

fn mask_bytes_words<C: XofConstruction>(seed: &[u8; 32], n: usize) -> Vec<u32> {
    let mut words = vec![0u32; n];
    expand_mask_u32::<C>(seed, &mut words);
    words
}

/// Key erasure: after `ratchet` the old stream never reappears, buffered bytes included, and the result is
/// deterministic in the state; reseeding mixes the entropy in.
#[test]
fn blake2s_ratchet_and_reseed() {
    let seed = [7u8; 32];
    let old = read(&mut Blake2sXof::from_seed(seed), 0, 1024);
    let mut xof = Blake2sXof::from_seed(seed);
    assert_eq!(read(&mut xof, 0, 10), old[..10]); // leaves buffered bytes
    xof.ratchet();
    let after = read(&mut xof, 0, 1014);
    for window in old.windows(16) {
        assert!(!after.windows(16).any(|w| w == window), "old stream bytes reappeared");
    }
    let mut again = Blake2sXof::from_seed(seed);
    again.ratchet();
    assert_eq!(read(&mut again, 0, 1014), after);
    let reseeded = |entropy: &[u8]| {
        let mut xof = Blake2sXof::from_seed(seed);
        xof.reseed(entropy);
        read(&mut xof, 0, 64)
    };
    assert_eq!(reseeded(b"A"), reseeded(b"A"));
    assert_ne!(reseeded(b"A"), reseeded(b"B"));
    assert_ne!(reseeded(b""), after[..64]);
}

/// Reading in chunks of 1, 7, 32 and 4096 bytes, or as u32/u64 words, gives the same byte stream; no
/// 32-byte block repeats in the first 4 MiB; seeds give different streams; `Debug` is redacted.
#[test]
fn blake2s_stream_is_consistent() {
    const LEN: usize = 3 * 4096 + 123;
    let seed = [9u8; 32];
    let reference = read(&mut Blake2sXof::from_seed(seed), 0, LEN);
    for chunk in [1, 7, 32, 4096] {
        let mut xof = Blake2sXof::from_seed(seed);
        let mut out = vec![0u8; LEN];
        for piece in out.chunks_mut(chunk) {
            xof.fill_bytes(piece);
        }
        assert_eq!(out, reference, "chunk size {chunk}");
    }
    let mut xof = Blake2sXof::from_seed(seed);
    let words: Vec<u8> = (0..LEN / 4).flat_map(|_| xof.next_u32().to_le_bytes()).collect();
    assert_eq!(words, reference[..words.len()]);
    let mut xof = Blake2sXof::from_seed(seed);
    let words: Vec<u8> = (0..LEN / 8).flat_map(|_| xof.next_u64().to_le_bytes()).collect();
    assert_eq!(words, reference[..words.len()]);

    let mut xof = Blake2sXof::from_seed([0u8; 32]);
    let mut buffer = vec![0u8; 4 << 20];
    xof.fill_bytes(&mut buffer);
    let blocks: HashSet<&[u8]> = buffer.chunks_exact(32).collect();
    assert_eq!(blocks.len(), (4 << 20) / 32, "a block repeated");

    assert_ne!(
        read(&mut Blake2sXof::from_seed([1; 32]), 0, 32),
        read(&mut Blake2sXof::from_seed([2; 32]), 0, 32)
    );
    let text = format!("{:?}", Blake2sXof::from_seed([0xAB; 32]));
    assert!(
        text.contains("redacted") && text.contains("BLAKE2s") && !text.contains("171"),
        "{text}"
    );
}
