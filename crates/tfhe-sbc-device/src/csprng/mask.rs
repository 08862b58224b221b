//! Expansion of a seeded mask: the rule the adapter must follow bit for bit.
//!
//! For a 32-byte mask seed `s`, coefficient `j` (`0 <= j < N`) of mask polynomial `i` (`0 <= i < k`) of a
//! 32-bit-torus GLWE ciphertext is the little-endian `u32` at bytes `[4(iN + j), 4(iN + j) + 4)` of the keyed
//! stream of key `s` in the mask domain of the construction `C` the frame's `xof_id` names: wire id 2,
//! BLAKE2b under `"TFHE-SBC mask v2"` ([`Blake2bCounter`]); wire id 3, BLAKE2s under `"TSBCmsk3"`
//! ([`crate::csprng::construction::Blake2sCounter`]). The mask seed is public once the frame is sent; its
//! domain is separate from the device's secret stream. A seeded public key's mask is always id 2.

use crate::csprng::construction::{BLAKE2B_MASK_PERSONALIZATION, Blake2bCounter, Blake2sCounter, XofConstruction};
use crate::csprng::xof::{BLOCK_BYTES, KeyedStream};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::torus::UnsignedTorus;

/// The wire id of the BLAKE2b mask expansion (construction v2): a seeded public key's, and a seeded frame's
/// from a 64-bit target. A 32-bit target's frames carry 3 (`Blake2sCounter::MASK_XOF_ID`).
pub const MASK_XOF_ID: u8 = Blake2bCounter::MASK_XOF_ID;
/// The BLAKE2b personalization of mask expansion (wire id 2).
pub const MASK_PERSONALIZATION: &[u8; 16] = BLAKE2B_MASK_PERSONALIZATION;

const _: () = assert!(MASK_SEED_BYTES == crate::csprng::xof::SEED_BYTES);

/// Block `index` of the BLAKE2b mask stream of `seed` (wire id 2), computed with the RustCrypto `blake2`
/// crate (the reference for tests and for other implementations);
/// [`XofConstruction::reference_block`] gives any construction's.
pub fn mask_block(seed: &[u8; MASK_SEED_BYTES], index: u64, out: &mut [u8; BLOCK_BYTES]) {
    Blake2bCounter::reference_block(true, seed, index, out);
}

/// The mask stream of `seed` under construction `C`.
fn mask_stream<C: XofConstruction>(seed: &[u8; MASK_SEED_BYTES]) -> KeyedStream<C> {
    KeyedStream::new(&C::MASK_H0, seed)
}

/// Expands the mask of `seed` under `C` into `out` (one `u32` per coefficient; `k * N` of them).
pub fn expand_mask_u32<C: XofConstruction>(seed: &[u8; MASK_SEED_BYTES], out: &mut [u32]) {
    let mut stream = mask_stream::<C>(seed);
    for a in out {
        *a = stream.next_u32();
    }
}

/// Expands the mask of `seed` under `C` into `out` for any torus: coefficient `j` is the little-endian word
/// of `T::BYTES` bytes at `[j * T::BYTES, (j + 1) * T::BYTES)` of the stream (for `u32`, exactly
/// [`expand_mask_u32`]).
pub fn expand_mask<C: XofConstruction, T: UnsignedTorus>(seed: &[u8; MASK_SEED_BYTES], out: &mut [T]) {
    let mut stream = mask_stream::<C>(seed);
    let mut word = [0u8; 8];
    for a in out {
        let word = &mut word[..T::BYTES];
        stream.fill(word);
        *a = T::from_le_slice(word);
    }
}

/// Expands the mask of `seed` under `C` straight into an FFT input buffer: coefficient `j` becomes the exact
/// `f64` of its centered value (`a as i32`), as [`negacyclic_fft::Plan::forward_in_place`] expects. No
/// integer copy of the mask is ever made. This is mask polynomial 0; [`expand_mask_into_fft_input_at`]
/// gives the others.
pub fn expand_mask_into_fft_input<C: XofConstruction>(seed: &[u8; MASK_SEED_BYTES], out: &mut [f64]) {
    expand_mask_into_fft_input_at::<C>(seed, 0, out);
}

/// The first block of mask polynomial `polynomial_index` of `bytes_per_polynomial` bytes, after checking
/// that it starts on a block boundary.
fn first_block<C: XofConstruction>(polynomial_index: usize, bytes_per_polynomial: usize) -> u64 {
    assert!(
        bytes_per_polynomial.is_multiple_of(C::BLOCK_BYTES),
        "a mask polynomial must start on a block boundary"
    );
    (polynomial_index * bytes_per_polynomial / C::BLOCK_BYTES) as u64
}

/// Mask polynomial `polynomial_index` (of `N = out.len()` coefficients) of `seed` under `C`, straight into
/// an FFT input buffer. The stream is counter-based, so polynomial `i` starts at block `4iN / BLOCK_BYTES`
/// with no need to generate the ones before it.
///
/// # Panics
/// If `4N` is not a multiple of the block (`N` a multiple of 16 for BLAKE2b, of 8 for BLAKE2s).
pub fn expand_mask_into_fft_input_at<C: XofConstruction>(
    seed: &[u8; MASK_SEED_BYTES],
    polynomial_index: usize,
    out: &mut [f64],
) {
    let first_block = first_block::<C>(polynomial_index, 4 * out.len());
    let mut stream = mask_stream::<C>(seed);
    if first_block != 0 {
        stream.seek_block(first_block);
    }
    let mut bytes = [0u8; 256];
    let mut chunks = out.chunks_exact_mut(64);
    for chunk in &mut chunks {
        stream.fill(&mut bytes);
        for (x, four) in chunk.iter_mut().zip(bytes.chunks_exact(4)) {
            *x = f64::from(i32::from_le_bytes([four[0], four[1], four[2], four[3]]));
        }
    }
    for x in chunks.into_remainder() {
        *x = f64::from(stream.next_u32() as i32);
    }
}

/// Mask polynomial `polynomial_index` (of `n` coefficients, torus `T`) of `seed` under `C`, handed to `sink`
/// in runs of consecutive coefficients: `sink(offset, words)` for `words` = coefficients
/// `offset..offset + words.len()`. For a product that reduces each coefficient as it arrives (the integer
/// NTT loads every run into its residue planes); no buffer of the whole polynomial is needed. The stream is
/// counter-based, so polynomial `i` starts at block `i n T::BYTES / BLOCK_BYTES`.
///
/// # Panics
/// If `n * T::BYTES` is not a multiple of the block (a polynomial would not start on a block boundary).
pub fn for_each_mask_run<C: XofConstruction, T: UnsignedTorus>(
    seed: &[u8; MASK_SEED_BYTES],
    polynomial_index: usize,
    n: usize,
    mut sink: impl FnMut(usize, &[T]),
) {
    const RUN_BYTES: usize = 256;
    let first_block = first_block::<C>(polynomial_index, n * T::BYTES);
    let mut stream = mask_stream::<C>(seed);
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

/// The mask XOF a seeded frame names: the run-time face of the constructions, for the server, which
/// expands whichever id a frame carries ([`expand_mask_u32`] and friends are generic).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaskXof {
    /// Wire id 2: [`Blake2bCounter`].
    Blake2b,
    /// Wire id 3: [`Blake2sCounter`].
    Blake2s,
}

impl MaskXof {
    /// The mask XOF of wire id `id`, if it is one (2 or 3).
    pub const fn from_id(id: u8) -> Option<Self> {
        match id {
            Blake2bCounter::MASK_XOF_ID => Some(Self::Blake2b),
            Blake2sCounter::MASK_XOF_ID => Some(Self::Blake2s),
            _ => None,
        }
    }

    /// Its wire id.
    pub const fn id(self) -> u8 {
        match self {
            Self::Blake2b => Blake2bCounter::MASK_XOF_ID,
            Self::Blake2s => Blake2sCounter::MASK_XOF_ID,
        }
    }

    /// Expands the mask of `seed` into `out` ([`expand_mask_u32`] of its construction).
    pub fn expand_mask_u32(self, seed: &[u8; 32], out: &mut [u32]) {
        match self {
            Self::Blake2b => expand_mask_u32::<Blake2bCounter>(seed, out),
            Self::Blake2s => expand_mask_u32::<Blake2sCounter>(seed, out),
        }
    }

    /// Expands the mask of `seed` into `out` for any torus ([`expand_mask`]).
    pub fn expand_mask<T: UnsignedTorus>(self, seed: &[u8; 32], out: &mut [T]) {
        match self {
            Self::Blake2b => expand_mask::<Blake2bCounter, T>(seed, out),
            Self::Blake2s => expand_mask::<Blake2sCounter, T>(seed, out),
        }
    }
}
