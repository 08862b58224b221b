//! [`KeySwitchStrategy`]: how a batch of key switches is spread over rayon's threads, and the batch
//! itself ([`switch_all`]).

use super::keyswitch::{KEYSWITCH_BLOCK, keyswitch_block};
use rayon::prelude::*;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, LweCiphertext, LweCiphertextOwned, LweKeyswitchKeyOwned, keyswitch_lwe_ciphertext,
    par_keyswitch_lwe_ciphertext,
};

/// How [`BooleanBridge`](super::BooleanBridge) spreads a slice of key switches over rayon's threads. Every strategy gives the same
/// bits. Measured by `cargo bench --bench intake` (whole intake of a 1024-bit frame, 2-core x86_64 with
/// AVX-512): tfhe-rs's serial key switch 621 ms; `ParIter` 302 ms and `ParKeyswitch` 335 ms on 2 threads;
/// `Blocked` 344 ms on 1 thread and 176 ms on 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeySwitchStrategy {
    /// One ciphertext after another on the calling thread (tfhe-rs's `keyswitch_lwe_ciphertext`).
    Serial,
    /// rayon over the ciphertexts, each switched by tfhe-rs's `keyswitch_lwe_ciphertext`.
    ParIter,
    /// One ciphertext after another, each split over rayon's threads (`par_keyswitch_lwe_ciphertext`): a
    /// reduction per ciphertext, so it scales a little worse than `ParIter`.
    ParKeyswitch,
    /// rayon over blocks of [`KEYSWITCH_BLOCK`] ciphertexts, each block reading the key once, with a kernel
    /// compiled for AVX-512F, AVX2 and the baseline and picked at run time. The fastest here (1.8x tfhe-rs's
    /// key switch per core, and 1.95x to 2x on 2 threads), hence the default.
    #[default]
    Blocked,
}

/// Key-switches `count` big-key ciphertexts, the `i`-th written by `fill(i, buffer)`, with `key`.
pub(crate) fn switch_all<F>(
    key: &LweKeyswitchKeyOwned<u32>,
    strategy: KeySwitchStrategy,
    count: usize,
    fill: F,
) -> Vec<Ciphertext>
where
    F: Fn(usize, &mut [u32]) + Sync,
{
    let big_size = key.input_key_lwe_dimension().to_lwe_size().0;
    let small_size = key.output_lwe_size();
    let modulus = CiphertextModulus::new_native();
    let one = |i: usize, big: &mut LweCiphertextOwned<u32>| {
        fill(i, big.as_mut());
        let mut small = LweCiphertext::new(0u32, small_size, modulus);
        keyswitch_lwe_ciphertext(key, &*big, &mut small);
        Ciphertext::Encrypted(small)
    };
    let scratch = || LweCiphertext::new(0u32, key.input_key_lwe_dimension().to_lwe_size(), modulus);
    match strategy {
        KeySwitchStrategy::Serial => {
            let mut big = scratch();
            (0..count).map(|i| one(i, &mut big)).collect()
        }
        KeySwitchStrategy::ParIter => (0..count)
            .into_par_iter()
            .map_init(scratch, |big, i| one(i, big))
            .collect(),
        KeySwitchStrategy::ParKeyswitch => {
            let mut big = scratch();
            (0..count)
                .map(|i| {
                    fill(i, big.as_mut());
                    let mut small = LweCiphertext::new(0u32, small_size, modulus);
                    par_keyswitch_lwe_ciphertext(key, &big, &mut small);
                    Ciphertext::Encrypted(small)
                })
                .collect()
        }
        KeySwitchStrategy::Blocked => {
            let blocks: Vec<Vec<Ciphertext>> = (0..count.div_ceil(KEYSWITCH_BLOCK))
                .into_par_iter()
                .map_init(
                    || (vec![0u32; KEYSWITCH_BLOCK * big_size], Vec::new()),
                    |(bigs, digits), block| {
                        let range = block * KEYSWITCH_BLOCK..count.min((block + 1) * KEYSWITCH_BLOCK);
                        let len = range.len();
                        for (i, big) in range.zip(bigs.chunks_exact_mut(big_size)) {
                            fill(i, big);
                        }
                        let inputs: Vec<&[u32]> = bigs.chunks_exact(big_size).take(len).collect();
                        let mut smalls: Vec<Vec<u32>> = vec![vec![0u32; small_size.0]; len];
                        let mut outputs: Vec<&mut [u32]> = smalls.iter_mut().map(Vec::as_mut_slice).collect();
                        keyswitch_block(key, &inputs, &mut outputs, digits);
                        smalls
                            .into_iter()
                            .map(|words| Ciphertext::Encrypted(LweCiphertext::from_container(words, modulus)))
                            .collect()
                    },
                )
                .collect();
            blocks.into_iter().flatten().collect()
        }
    }
}
