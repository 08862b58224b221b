//! GLWE dimension `k > 1`: tfhe-rs's 128-bit boolean sets (`k = 3, N = 512` and `k = 2, N = 1024`) through
//! the firmware wrapper, and the generic core over `Vec` storage against a schoolbook reference.
#![allow(clippy::unwrap_used)]

mod common;

use proptest::prelude::*;
use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey};
use tfhe_sbc_core::parameters::{DEFAULT_KS_PBS_GLWE_512_K3, ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, GlweParameters};
use tfhe_sbc_device::csprng::mask::expand_mask_u32;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::encrypt::glwe_encryption::{
    decrypt_seeded_glwe_phase, encrypt_seeded_glwe_ciphertext_with_randomness_assign,
};
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::noise::DeviceNoise;
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;

/// Seeded and full encryptions of random messages decrypt back, and the noise is TUniform(3) (std 4.64 >=
/// sigma * q = 4.0).
fn round_trip<const N: usize, const K: usize>(params: &GlweParameters) {
    let mut rng = Blake2bXof::from_seed([9; 32]);
    let key = GlweSecretKey::generate_binary(vec![0u8; K * N], params.polynomial_size(), &mut rng).unwrap();
    let mut encryptor = Box::new(GlweEncryptor::<N, K>::new(params, &key, Blake2bXof::from_seed([10; 32])).unwrap());
    assert!(matches!(encryptor.noise(), Some(DeviceNoise::TUniform(t)) if t.bound_log2() == 3));
    let mut decryptor = Box::new(GlweDecryptor::<N, K>::new(&key).unwrap());
    let mut message = vec![0u8; N / 8];
    let mut body = vec![0u32; N];
    let mut phase = vec![0u32; N];
    let mut decoded = vec![0u8; N / 8];
    for _ in 0..8 {
        rng.fill_bytes(&mut message);
        let seed = encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body).unwrap();
        decryptor.decrypt_seeded_phase_parts(&seed, &body, &mut phase).unwrap();
        decode_bits(&phase, &mut decoded).unwrap();
        assert_eq!(decoded, message);
        let mut full = GlweCiphertext::from_container(vec![0u32; (K + 1) * N], params.polynomial_size()).unwrap();
        encryptor.encrypt_glwe_ciphertext(&message, &mut full).unwrap();
        assert_eq!(common::decrypted(&mut decryptor, full.mask(), full.body()), message);
    }
}

/// tfhe-rs's 128-bit boolean sets with `k > 1`: `k = 3, N = 512` and `k = 2, N = 1024`.
#[test]
fn round_trips_with_k_above_1() {
    round_trip::<512, 3>(&DEFAULT_KS_PBS_GLWE_512_K3);
    round_trip::<1024, 2>(&ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2);
}

#[test]
fn the_wrapper_refuses_a_mismatched_k() {
    let key = GlweSecretKey::generate_binary(
        vec![0u8; 1024],
        DEFAULT_KS_PBS_GLWE_512_K3.polynomial_size(),
        &mut Blake2bXof::from_seed([1; 32]),
    )
    .unwrap();
    // A k = 2 key for a k = 3 set.
    assert!(GlweEncryptor::<512, 3>::new(&DEFAULT_KS_PBS_GLWE_512_K3, &key, Blake2bXof::from_seed([2; 32])).is_err());
    // A k = 3 set for a k = 1 wrapper.
    assert!(GlweEncryptor::<512>::new(&DEFAULT_KS_PBS_GLWE_512_K3, &key, Blake2bXof::from_seed([2; 32])).is_err());
}

/// `sum_i a_i * s_i` by the schoolbook negacyclic convolution, in wrapping integers.
fn schoolbook(mask: &[u32], key: &[u8], n: usize) -> Vec<u32> {
    let mut out = vec![0u32; n];
    for (a, s) in mask.chunks_exact(n).zip(key.chunks_exact(n)) {
        for (j, o) in out.iter_mut().enumerate() {
            for (i, &si) in s.iter().enumerate() {
                let term = if i <= j { a[j - i] } else { a[n + j - i].wrapping_neg() };
                *o = o.wrapping_add(term.wrapping_mul(u32::from(si)));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The generic core over `Vec` storage, for k in 1..=3 and N in {64, 256}: body = plaintexts + noise +
    /// sum_i a_i * s_i exactly (mask polynomials from one seed, polynomial after polynomial), and the phase
    /// gives back plaintexts + noise exactly.
    #[test]
    fn generic_core_matches_the_schoolbook(
        k in 1usize..=3,
        log_n in prop::sample::select(vec![6u32, 8]),
        key_seed in any::<[u8; 32]>(),
        mask_seed in any::<[u8; 32]>(),
        plain_seed in any::<[u8; 32]>(),
    ) {
        let n = 1usize << log_n;
        let plan = negacyclic_fft::Plan::new(n).unwrap();
        let mut key_rng = Blake2bXof::from_seed(key_seed);
        let key = GlweSecretKey::generate_binary(vec![0u8; k * n], tfhe_sbc_core::dimensions::PolynomialSize(n), &mut key_rng).unwrap();
        let mut spectrum = vec![0f64; k * n];
        compute_glwe_key_spectrum(&plan, &key, &mut spectrum).unwrap();
        let mut plain_rng = Blake2bXof::from_seed(plain_seed);
        let plaintexts: Vec<u32> = (0..n).map(|i| encode_bool::<u32>(plain_rng.next_u32() & (1 << (i % 32)) != 0)).collect();
        let noise: Vec<u32> = (0..n).map(|_| ((plain_rng.next_u32() % 513) as i32 - 256) as u32).collect();
        let mut body = plaintexts.clone();
        let mut scratch = vec![0f64; n];
        encrypt_seeded_glwe_ciphertext_with_randomness_assign::<tfhe_sbc_device::csprng::Blake2bCounter, _>(&plan, &spectrum, &mask_seed, &noise, &mut body, &mut scratch).unwrap();
        prop_assert!(scratch.iter().all(|&x| x == 0.0), "scratch wiped");

        let mut mask = vec![0u32; k * n];
        expand_mask_u32::<tfhe_sbc_device::csprng::Blake2bCounter>(&mask_seed, &mut mask);
        let products = schoolbook(&mask, key.as_bytes(), n);
        for j in 0..n {
            prop_assert_eq!(body[j], plaintexts[j].wrapping_add(noise[j]).wrapping_add(products[j]), "coefficient {}", j);
        }
        let mut phase = vec![0u32; n];
        decrypt_seeded_glwe_phase::<tfhe_sbc_device::csprng::Blake2bCounter, _>(&plan, &spectrum, &mask_seed, &body, &mut phase, &mut scratch).unwrap();
        for j in 0..n {
            prop_assert_eq!(phase[j], plaintexts[j].wrapping_add(noise[j]));
        }
    }
}
