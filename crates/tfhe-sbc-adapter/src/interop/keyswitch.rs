//! Key switching of a batch of LWE ciphertexts: tfhe-rs's algorithm, with the loops over the key and over
//! the ciphertexts exchanged.
//!
//! `keyswitch_lwe_ciphertext` walks the whole key (`1024 * 8` rows of 631 words, 19.7 MiB) once per
//! ciphertext. [`keyswitch_block`] walks it once per block of ciphertexts: each row is loaded once and
//! applied to every ciphertext of the block while it is in L1. The arithmetic is the same wrapping
//! arithmetic modulo `2^32` in another order, so the outputs are **bit for bit** those of
//! `keyswitch_lwe_ciphertext` (a test checks it).
//!
//! On this machine the key switch is bound by the multiplications, not by memory (the key fits in L3):
//! the `u32` multiply-subtract loop compiled for the x86-64 baseline (SSE2, which has no 32-bit vector
//! multiply) is what costs. So the block is compiled three times, for the baseline, AVX2 and AVX-512F, and
//! the widest the CPU supports is picked at run time (`cargo bench --bench intake` has the figures). The
//! digits of base 4 (`-2..=2`) are applied with additions and shifts, which was 6% faster than multiplying.

use tfhe::core_crypto::prelude::{LweKeyswitchKeyOwned, SignedDecomposer};

/// Ciphertexts per block of the bridge's blocked key switch (`KeySwitchStrategy::Blocked`): the outputs of
/// a block (`8 * 631 * 4` bytes = 20 KiB) stay in L1 while the key streams past once. 4, 8 and 16 were
/// within 7% of each other here; 8 was the fastest.
pub const KEYSWITCH_BLOCK: usize = 8;

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
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, checked just above; the function only needs that feature.
            #[allow(unsafe_code)]
            unsafe {
                keyswitch_block_avx512(ksk, inputs, outputs, digits)
            };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above; the function only needs that feature.
            #[allow(unsafe_code)]
            unsafe {
                keyswitch_block_avx2(ksk, inputs, outputs, digits)
            };
            return;
        }
    }
    keyswitch_block_generic(ksk, inputs, outputs, digits);
}

/// Defines `$name`, [`keyswitch_block_generic`] compiled with the target feature `$feature`.
macro_rules! compiled_with {
    ($feature:literal, $name:ident) => {
        #[doc = concat!("[`keyswitch_block_generic`] compiled with `", $feature, "`.")]
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        fn $name(
            ksk: &LweKeyswitchKeyOwned<u32>,
            inputs: &[&[u32]],
            outputs: &mut [&mut [u32]],
            digits: &mut Vec<u32>,
        ) {
            keyswitch_block_generic(ksk, inputs, outputs, digits);
        }
    };
}
compiled_with!("avx512f", keyswitch_block_avx512);
compiled_with!("avx2", keyswitch_block_avx2);

/// The algorithm, inlined into each of the feature-specific versions above.
#[inline(always)]
fn keyswitch_block_generic(
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
            // Small signed digits (base 4 here: -2..=2) need no multiplication. The digits come from the
            // ciphertext's public mask, so branching on them leaks nothing secret.
            match d[row_index] as i32 {
                0 => {}
                1 => sub_digit_times::<1>(out, row),
                -1 => sub_digit_times::<-1>(out, row),
                2 => sub_digit_times::<2>(out, row),
                -2 => sub_digit_times::<-2>(out, row),
                _ => sub_scalar_mul(out, row, d[row_index]),
            }
        }
    }
}

/// `out[j] -= row[j] * D`, wrapping, for a constant digit `D`: the multiplication folds away (a negation
/// for -1, a shift for 2), so that the loop is a plain wrapping add or subtract.
#[inline(always)]
fn sub_digit_times<const D: i32>(out: &mut [u32], row: &[u32]) {
    sub_scalar_mul(out, row, D as u32);
}

/// `out[j] -= row[j] * digit`, wrapping.
#[inline(always)]
fn sub_scalar_mul(out: &mut [u32], row: &[u32], digit: u32) {
    for (o, &r) in out.iter_mut().zip(row) {
        *o = o.wrapping_sub(r.wrapping_mul(digit));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfhe::core_crypto::prelude::{
        CiphertextModulus, DecompositionBaseLog, DecompositionLevelCount, LweCiphertext, LweDimension,
        keyswitch_lwe_ciphertext,
    };

    /// Pseudo-random words (the arithmetic is checked, not the cryptography: any key contents will do).
    fn words(seed: u32, len: usize) -> Vec<u32> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x
            })
            .collect()
    }

    /// Every compiled version of the block (baseline, and AVX2 / AVX-512F where the CPU has them) against
    /// tfhe-rs's `keyswitch_lwe_ciphertext`, bit for bit, for blocks of 1 to 9 ciphertexts; base 4 (the
    /// boolean set's, digits in `-2..=2`, no multiplication) and base 8 (the multiplying fallback).
    #[test]
    fn every_kernel_matches_tfhe_rs() {
        for (base_log, levels) in [(2, 8), (3, 5)] {
            kernels_match_tfhe_rs(base_log, levels);
        }
    }

    fn kernels_match_tfhe_rs(base_log: usize, levels: usize) {
        let (n_in, n_out) = (64, 37);
        let mut ksk = LweKeyswitchKeyOwned::new(
            0u32,
            DecompositionBaseLog(base_log),
            DecompositionLevelCount(levels),
            LweDimension(n_in),
            LweDimension(n_out),
            CiphertextModulus::new_native(),
        );
        ksk.as_mut().copy_from_slice(&words(7, n_in * levels * (n_out + 1)));
        type Kernel = fn(&LweKeyswitchKeyOwned<u32>, &[&[u32]], &mut [&mut [u32]], &mut Vec<u32>);
        let mut kernels: Vec<(&str, Kernel)> =
            vec![("baseline", keyswitch_block_generic), ("dispatch", keyswitch_block)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: only called when the CPU has AVX2 (checked above).
                #[allow(unsafe_code)]
                kernels.push(("avx2", |k, i, o, d| unsafe { keyswitch_block_avx2(k, i, o, d) }));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: only called when the CPU has AVX-512F (checked above).
                #[allow(unsafe_code)]
                kernels.push(("avx512f", |k, i, o, d| unsafe { keyswitch_block_avx512(k, i, o, d) }));
            }
        }
        for count in 1..=9 {
            let inputs: Vec<Vec<u32>> = (0..count).map(|c| words(100 + c as u32, n_in + 1)).collect();
            let expected: Vec<Vec<u32>> = inputs
                .iter()
                .map(|input| {
                    let big = LweCiphertext::from_container(input.as_slice(), CiphertextModulus::new_native());
                    let mut small = LweCiphertext::new(0u32, ksk.output_lwe_size(), CiphertextModulus::new_native());
                    keyswitch_lwe_ciphertext(&ksk, &big, &mut small);
                    small.into_container()
                })
                .collect();
            for (name, kernel) in &kernels {
                let refs: Vec<&[u32]> = inputs.iter().map(Vec::as_slice).collect();
                let mut outs = vec![vec![1u32; n_out + 1]; count];
                let mut out_refs: Vec<&mut [u32]> = outs.iter_mut().map(Vec::as_mut_slice).collect();
                kernel(&ksk, &refs, &mut out_refs, &mut Vec::new());
                assert_eq!(outs, expected, "{name}, {count} ciphertexts, base log {base_log}");
            }
        }
    }
}
