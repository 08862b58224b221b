//! Expansion of a seeded mask: the rule the adapter must follow bit for bit.
//!
//! For a 32-byte mask seed `s`, mask coefficient `j` (`0 <= j < N`) of a 32-bit-torus TRLWE ciphertext is
//! the little-endian `u32` at bytes `[4j, 4j + 4)` of the keyed BLAKE2b stream of key `s` under
//! [`MASK_PERSONALIZATION`] (construction v2 of [`crate::xof`], wire XOF id [`MASK_XOF_ID`]). The mask seed
//! is public once the frame is sent; its domain is separate from the device's secret stream.

use crate::blake2b_lanes as lanes;
use crate::xof::{BLOCK_BYTES, KeyedStream, SEED_BYTES, reference_block};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;

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

/// Expands the mask of `seed` into `out` (one `u32` per coefficient).
pub fn expand_mask_u32(seed: &[u8; MASK_SEED_BYTES], out: &mut [u32]) {
    let mut stream = KeyedStream::new(&MASK_H0, seed);
    for a in out {
        *a = stream.next_u32();
    }
}

/// Expands the mask of `seed` straight into an FFT input buffer: coefficient `j` becomes the exact `f64` of
/// its centered value (`a as i32`), as [`negacyclic_fft::Plan::forward_in_place`] expects. No integer copy
/// of the mask is ever made.
pub fn expand_mask_into_fft_input(seed: &[u8; MASK_SEED_BYTES], out: &mut [f64]) {
    let mut stream = KeyedStream::new(&MASK_H0, seed);
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
