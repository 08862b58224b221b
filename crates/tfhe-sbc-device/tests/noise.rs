//! The noise of fresh ciphertexts: over 2^20 coefficients (1024 encryptions at N = 1024), the standard
//! deviation of `b - a*s - Delta*m` is within 2% of sigma*q = 128 and the mean is about 0.
#![allow(clippy::unwrap_used)]

use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::decryption::GlweDecryptor;
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::message::message_bit;
use tfhe_sbc_device::xof::Blake2bXof;

#[test]
fn fresh_noise_has_the_parameter_sets_sigma() {
    const CIPHERTEXTS: usize = 1024;
    let params = TFHE_LIB_GLWE_1024;
    let mut rng = Blake2bXof::from_seed([42; 32]);
    let key = GlweSecretKey::generate_binary([0u8; 1024], params.polynomial_size(), &mut rng).unwrap();
    let mut encryptor = GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([43; 32])).unwrap();
    let mut decryptor = GlweDecryptor::<1024>::new(&key).unwrap();
    let (mut sum, mut sum_sq, mut count, mut max_abs) = (0.0f64, 0.0f64, 0usize, 0i64);
    let mut message = [0u8; 128];
    let mut body = [0u32; 1024];
    let mut phase = [0u32; 1024];
    for _ in 0..CIPHERTEXTS {
        rng.fill_bytes(&mut message);
        let seed = encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body).unwrap();
        decryptor.decrypt_seeded_phase_parts(&seed, &body, &mut phase).unwrap();
        for (i, &p) in phase.iter().enumerate() {
            let e = i64::from(p.wrapping_sub(encode_bool::<u32>(message_bit(&message, i))) as i32);
            sum += e as f64;
            sum_sq += (e * e) as f64;
            max_abs = max_abs.max(e.abs());
            count += 1;
        }
    }
    let n = count as f64;
    let mean = sum / n;
    let std = (sum_sq / n - mean * mean).sqrt();
    let expected = params.noise_std_dev_scaled();
    println!("{count} coefficients: noise mean {mean:+.3}, std {std:.3} (sigma*q = {expected}), max |e| {max_abs}");
    assert!(count >= 1 << 20);
    assert!((std / expected - 1.0).abs() < 0.02, "std {std}");
    // 5 standard errors of the mean.
    assert!(mean.abs() < 5.0 * expected / n.sqrt(), "mean {mean}");
    // Far below the decision distance 2^29 (a 2^22-sigma event otherwise).
    assert!(max_abs < 128 * 8);
}
