//! The compact-list run's fixed test key, expanded from a 32-byte seed (`COMPACT_KEY_SEED`) by build.rs and
//! by the host tests: a binary secret `s` and its raw tfhe-rs compact public key `[a | b]`,
//! `b = a * rev(s) + e` with `e` TUniform(17) (tfhe-rs `generate_lwe_compact_public_key`), by a schoolbook
//! product written here (independent of the device crate's encryption). Host only: the firmware includes
//! the key's 32 KiB as build.rs wrote them, not this code.

use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::tuniform::TUniform;
use tfhe_sbc_device::csprng::xof::Blake2bXof;

/// The set's `N`.
const N: usize = 2048;

/// `(s, [a | b])` from `seed`: `s` as `N` words 0 or 1, the key as `2 N` words.
pub fn compact_key_pair(seed: [u8; 32]) -> (Vec<u64>, Vec<u64>) {
    let mut rng = Blake2bXof::from_seed(seed);
    let s: Vec<u64> = (0..N).map(|_| u64::from(rng.next_u32() & 1)).collect();
    let a: Vec<u64> = (0..N).map(|_| rng.next_u64()).collect();
    let noise = TUniform::new(17).expect("TUniform(17)");
    let mut b: Vec<u64> = (0..N).map(|_| noise.sample_torus::<u64, _>(&mut rng)).collect();
    // (a * rev(s))_k: rev(s)_m = s_{N-1-m}; X^(i+m) wraps around with a minus sign.
    for (i, &ai) in a.iter().enumerate() {
        for m in 0..N {
            let term = ai & s[N - 1 - m].wrapping_neg();
            let k = i + m;
            if k < N {
                b[k] = b[k].wrapping_add(term);
            } else {
                b[k - N] = b[k - N].wrapping_sub(term);
            }
        }
    }
    (s, a.into_iter().chain(b).collect())
}
