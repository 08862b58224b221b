//! Expansion of a seeded mask: the rule the adapter must follow bit for bit.
//!
//! For a 32-byte mask seed `s`, coefficient `j` (`0 <= j < N`) of mask polynomial `i` (`0 <= i < k`) of a
//! 32-bit-torus GLWE ciphertext is the little-endian `u32` at bytes `[4(iN + j), 4(iN + j) + 4)` of the keyed
//! BLAKE2b stream of key `s` under
//! [`MASK_PERSONALIZATION`] (construction v2 of [`crate::csprng::xof`], wire XOF id [`MASK_XOF_ID`]). The mask seed
//! is public once the frame is sent; its domain is separate from the device's secret stream.

use crate::csprng::lanes;
use crate::csprng::xof::{BLOCK_BYTES, KeyedStream, SEED_BYTES, reference_block};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::torus::UnsignedTorus;

/// The wire id of the mask expansion: keyed BLAKE2b construction v2 under [`MASK_PERSONALIZATION`].
pub const MASK_XOF_ID: u8 = 2;
/// The BLAKE2b personalization of mask expansion.
pub const MASK_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC mask v2";

const MASK_H0: [u64; 8] = lanes::initial_state(MASK_PERSONALIZATION, SEED_BYTES as u8);

const _: () = assert!(MASK_SEED_BYTES == SEED_BYTES);

/// Block `index` of the mask stream of `seed`, computed with the RustCrypto `blake2` crate (the reference
/// for tests and for other implementations).
pub fn mask_block(seed: &[u8; MASK_SEED_BYTES], index: u64, out: &mut [u8; BLOCK_BYTES]) {
    reference_block(MASK_PERSONALIZATION, seed, index, out);
}

/// Expands the mask of `seed` into `out` (one `u32` per coefficient; `k * N` of them for `k` polynomials).
pub fn expand_mask_u32(seed: &[u8; MASK_SEED_BYTES], out: &mut [u32]) {
    let mut stream = KeyedStream::new(&MASK_H0, seed);
    for a in out {
        *a = stream.next_u32();
    }
}

/// Expands the mask of `seed` into `out` for any torus: coefficient `j` is the little-endian word of
/// `T::BYTES` bytes at `[j * T::BYTES, (j + 1) * T::BYTES)` of the stream (for `u32`, exactly
/// [`expand_mask_u32`]).
pub fn expand_mask<T: UnsignedTorus>(seed: &[u8; MASK_SEED_BYTES], out: &mut [T]) {
    let mut stream = KeyedStream::new(&MASK_H0, seed);
    let mut word = [0u8; 8];
    for a in out {
        let word = &mut word[..T::BYTES];
        stream.fill(word);
        *a = T::from_le_slice(word);
    }
}

/// Expands the mask of `seed` straight into an FFT input buffer: coefficient `j` becomes the exact `f64` of
/// its centered value (`a as i32`), as [`negacyclic_fft::Plan::forward_in_place`] expects. No integer copy
/// of the mask is ever made. This is mask polynomial 0; [`expand_mask_into_fft_input_at`] gives the others.
pub fn expand_mask_into_fft_input(seed: &[u8; MASK_SEED_BYTES], out: &mut [f64]) {
    expand_mask_into_fft_input_at(seed, 0, out);
}

/// Mask polynomial `polynomial_index` (of `N = out.len()` coefficients) of `seed`, straight into an FFT input
/// buffer. The stream is counter-based, so polynomial `i` starts at block `4iN / 64` with no need to
/// generate the ones before it.
///
/// # Panics
/// If `N` is not a multiple of 16 (a polynomial would not start on a block boundary).
pub fn expand_mask_into_fft_input_at(seed: &[u8; MASK_SEED_BYTES], polynomial_index: usize, out: &mut [f64]) {
    assert!(out.len().is_multiple_of(BLOCK_BYTES / 4), "N must be a multiple of 16");
    let mut stream = KeyedStream::new(&MASK_H0, seed);
    let first_block = (4 * polynomial_index * out.len() / BLOCK_BYTES) as u64;
    if first_block != 0 {
        stream.seek_block(first_block);
    }
    let mut block = [0u8; 4 * BLOCK_BYTES];
    let mut chunks = out.chunks_exact_mut(BLOCK_BYTES);
    for chunk in &mut chunks {
        stream.fill(&mut block);
        for (x, bytes) in chunk.iter_mut().zip(block.chunks_exact(4)) {
            *x = f64::from(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
        }
    }
    for x in chunks.into_remainder() {
        *x = f64::from(stream.next_u32() as i32);
    }
}

/// Mask polynomial `polynomial_index` (of `n` coefficients, torus `T`) of `seed`, handed to `sink` in runs of
/// consecutive coefficients: `sink(offset, words)` for `words` = coefficients `offset..offset + words.len()`.
/// For a product that reduces each coefficient as it arrives (the integer NTT loads every run into its
/// residue planes); no buffer of the whole polynomial is needed. The stream is counter-based, so polynomial
/// `i` starts at block `i n T::BYTES / 64` with no need to generate the ones before it.
///
/// # Panics
/// If `n * T::BYTES` is not a multiple of 64 (a polynomial would not start on a block boundary).
pub fn for_each_mask_run<T: UnsignedTorus>(
    seed: &[u8; MASK_SEED_BYTES],
    polynomial_index: usize,
    n: usize,
    mut sink: impl FnMut(usize, &[T]),
) {
    const RUN_BYTES: usize = 4 * BLOCK_BYTES;
    assert!(
        (n * T::BYTES).is_multiple_of(BLOCK_BYTES),
        "N T::BYTES must be a multiple of 64"
    );
    let mut stream = KeyedStream::new(&MASK_H0, seed);
    let first_block = (polynomial_index * n * T::BYTES / BLOCK_BYTES) as u64;
    if first_block != 0 {
        stream.seek_block(first_block);
    }
    let mut bytes = [0u8; RUN_BYTES];
    let mut words = [T::ZERO; RUN_BYTES / 4];
    let mut offset = 0;
    while offset < n {
        let len = (n - offset).min(RUN_BYTES / T::BYTES);
        let bytes = &mut bytes[..len * T::BYTES];
        stream.fill(bytes);
        for (w, b) in words.iter_mut().zip(bytes.chunks_exact(T::BYTES)) {
            *w = T::from_le_slice(b);
        }
        sink(offset, &words[..len]);
        offset += len;
    }
}
