//! Expansion of a seeded mask: the rule the adapter must follow bit for bit.
//!
//! For a 32-byte mask seed `s`, mask coefficient `j` (`0 <= j < N`) of a 32-bit-torus TRLWE ciphertext is
//! the little-endian `u32` at bytes `[4j, 4j + 4)` of the [`Blake2bXof`] stream of `s` (construction v1,
//! XOF id [`MASK_XOF_ID`]). In other words: `Blake2bXof::from_seed(s)`, then `next_u32()` `N` times.

use crate::xof::{BLOCK_BYTES, Blake2bXof};
use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;

/// The wire id of the BLAKE2b XOF construction v1 used to expand masks.
pub const MASK_XOF_ID: u8 = 1;

/// Expands the mask of `seed` into `out` (one `u32` per coefficient).
pub fn expand_mask_u32(seed: &[u8; MASK_SEED_BYTES], out: &mut [u32]) {
    let mut xof = Blake2bXof::from_seed(*seed);
    for a in out {
        *a = xof.next_u32();
    }
}

/// Expands the mask of `seed` straight into an FFT input buffer: coefficient `j` becomes the exact `f64` of
/// its centered value (`a as i32`), as [`negacyclic_fft::Plan::forward_in_place`] expects. No integer copy
/// of the mask is ever made.
pub fn expand_mask_into_fft_input(seed: &[u8; MASK_SEED_BYTES], out: &mut [f64]) {
    let mut xof = Blake2bXof::from_seed(*seed);
    let mut block = [0u8; 4 * BLOCK_BYTES];
    let mut chunks = out.chunks_exact_mut(BLOCK_BYTES);
    for chunk in &mut chunks {
        xof.fill_bytes(&mut block);
        for (x, bytes) in chunk.iter_mut().zip(block.chunks_exact(4)) {
            *x = f64::from(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
        }
    }
    for x in chunks.into_remainder() {
        *x = f64::from(xof.next_u32() as i32);
    }
}
