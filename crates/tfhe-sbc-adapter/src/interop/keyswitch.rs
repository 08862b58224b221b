//! Key switching of a batch of LWE ciphertexts: tfhe-rs's algorithm, with the loops over the key and over
//! the ciphertexts exchanged.
//!
//! `keyswitch_lwe_ciphertext` walks the whole key (`1024 * 8` rows of 631 words, 19.7 MiB) once per
//! ciphertext. [`keyswitch_block`] walks it once per block of ciphertexts: each row is loaded once and
//! applied to every ciphertext of the block while it is in L1. The arithmetic is the same wrapping
//! arithmetic modulo `2^32` in another order, so the outputs are **bit for bit** those of
//! `keyswitch_lwe_ciphertext` (a test checks it).

use tfhe::core_crypto::prelude::{LweKeyswitchKeyOwned, SignedDecomposer};

/// Ciphertexts per block in [`keyswitch_block`]: the outputs of a block (`16 * 631 * 4` bytes = 40 KiB)
/// stay in L1 and L2 while the key streams past once.
pub const KEYSWITCH_BLOCK: usize = 16;

/// Key-switches `inputs` (each `n_in + 1` words, under the key's input key) into `outputs` (each
/// `n_out + 1` words), reading each row of `ksk` once for the whole block. `digits` is scratch space,
/// resized as needed.
///
/// # Panics
/// If the lengths do not match the key's dimensions: the callers size them from the key.
pub(crate) fn keyswitch_block(
    ksk: &LweKeyswitchKeyOwned<u32>,
    inputs: &[&[u32]],
    outputs: &mut [&mut [u32]],
    digits: &mut Vec<u32>,
) {
    let levels = ksk.decomposition_level_count().0;
    let n_in = ksk.input_key_lwe_dimension().0;
    let out_size = ksk.output_lwe_size().0;
    assert_eq!(inputs.len(), outputs.len(), "one output per input");
    let rows = n_in * levels;
    let decomposer = SignedDecomposer::<u32>::new(ksk.decomposition_base_log(), ksk.decomposition_level_count());
    digits.clear();
    digits.resize(rows * inputs.len(), 0);
    // The signed digits of every mask word, in the order of the key's rows (input bit, then level as
    // tfhe-rs zips them).
    for (input, d) in inputs.iter().zip(digits.chunks_exact_mut(rows)) {
        assert_eq!(input.len(), n_in + 1, "input LWE size");
        for (&mask_word, slots) in input[..n_in].iter().zip(d.chunks_exact_mut(levels)) {
            for (slot, term) in slots.iter_mut().zip(decomposer.decompose(mask_word)) {
                *slot = term.value();
            }
        }
    }
    for (out, input) in outputs.iter_mut().zip(inputs) {
        assert_eq!(out.len(), out_size, "output LWE size");
        out.fill(0);
        out[out_size - 1] = input[n_in];
    }
    for (row_index, row) in ksk.as_ref().chunks_exact(out_size).enumerate() {
        for (out, d) in outputs.iter_mut().zip(digits.chunks_exact(rows)) {
            let digit = d[row_index];
            if digit != 0 {
                sub_scalar_mul(out, row, digit);
            }
        }
    }
}

/// `out[j] -= row[j] * digit`, wrapping.
#[inline]
fn sub_scalar_mul(out: &mut [u32], row: &[u32], digit: u32) {
    for (o, &r) in out.iter_mut().zip(row) {
        *o = o.wrapping_sub(r.wrapping_mul(digit));
    }
}
