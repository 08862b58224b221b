//! Encrypts 1024 bits as one TRLWE ciphertext with the core pieces (parameter set, binary key, the paper's
//! Ziggurat noise, exact negacyclic FFT with the key's spectrum computed once), decrypts them, and reports the
//! noise. The device crate's `GlweEncryptor` packages this path, with constant-time TUniform noise by default
//! (the Ziggurat only as an opt-in, feature `ziggurat`); this example shows the pieces it stands on.
//!
//! Run: `cargo run --release --example encrypt_decrypt`
#![allow(clippy::unwrap_used)]

use negacyclic_fft::Plan;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::time::Instant;
use tfhe_sbc_core::encoding::{decode_bool, encode_bool};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey};
use tfhe_sbc_core::gaussian::{NormalSampler, Ziggurat};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;

const N: usize = 1024;

fn main() {
    let params = TFHE_LIB_GLWE_1024;
    let sigma_q = params.noise_std_dev_scaled();
    println!(
        "parameter set {:?}: N = {N}, k = 1, q = 2^32, sigma = 2^-25 (sigma*q = {sigma_q})",
        params.id()
    );

    let mut rng = ChaCha20Rng::from_seed(*b"tfhe-sbc example seed, not prod!");
    let key = GlweSecretKey::generate_binary([0u8; N], params.polynomial_size(), &mut rng).unwrap();
    println!("key: {key:?}");

    // The key's spectrum: computed once, reused for every encryption.
    let plan = Plan::new(N).unwrap();
    let mut key_spectrum = [0.0f64; N];
    plan.forward(key.as_bytes(), &mut key_spectrum);

    let mut bits = [false; N];
    for b in bits.iter_mut() {
        *b = rng.next_u32() & 1 == 1;
    }

    // Encrypt: a uniform, b = a*s + Delta*m + e.
    let start = Instant::now();
    let mut data = [0u32; 2 * N];
    let (mask, body) = data.split_at_mut(N);
    for a in mask.iter_mut() {
        *a = rng.next_u32();
    }
    let mut spectrum = [0.0f64; N];
    plan.forward(mask, &mut spectrum);
    plan.mul_assign(&mut spectrum, &key_spectrum);
    plan.inverse_wrapping(&mut spectrum, body);
    for (b, &bit) in body.iter_mut().zip(&bits) {
        *b = b
            .wrapping_add(encode_bool::<u32>(bit))
            .wrapping_add(Ziggurat.sample_torus::<u32, _>(&mut rng, sigma_q));
    }
    let encrypt_time = start.elapsed();
    let ciphertext = GlweCiphertext::from_container(data, params.polynomial_size()).unwrap();

    // Decrypt: b - a*s, then decode; also measure the noise.
    let mut spectrum = [0.0f64; N];
    plan.forward(ciphertext.mask(), &mut spectrum);
    plan.mul_assign(&mut spectrum, &key_spectrum);
    let mut a_times_s = [0u32; N];
    plan.inverse_wrapping(&mut spectrum, &mut a_times_s);
    let mut errors = 0;
    let mut noise_sq = 0.0;
    for i in 0..N {
        let phase = ciphertext.body()[i].wrapping_sub(a_times_s[i]);
        errors += usize::from(decode_bool(phase) != bits[i]);
        let noise = phase.wrapping_sub(encode_bool::<u32>(bits[i])) as i32 as f64;
        noise_sq += noise * noise;
    }
    let noise_std = (noise_sq / N as f64).sqrt();
    println!(
        "encrypted {N} bits in {encrypt_time:?} (one TRLWE: {} bytes)",
        2 * N * 4
    );
    println!("decrypted: {} of {N} bits correct", N - errors);
    println!("noise std: {noise_std:.1} / q (expected {sigma_q}); decision threshold 2^29");
    assert_eq!(errors, 0, "decryption failed");
}
