//! The noise of fresh ciphertexts: over 2^20 coefficients (1024 encryptions at N = 1024), the standard
//! deviation of `b - a*s - Delta*m` is within 2% of the sampler's (147.8 for the default TUniform(8), 128 =
//! sigma*q for the opt-in Ziggurat), the mean is within 5 standard errors of 0, and TUniform's bound holds.
#![allow(clippy::unwrap_used)]

use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::decryption::GlweDecryptor;
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::message::message_bit;
use tfhe_sbc_device::noise::NoiseSampling;
use tfhe_sbc_device::xof::Blake2bXof;

#[test]
fn default_noise_is_tuniform_8() {
    let max_abs = measure(NoiseSampling::ConstantTime, 147.8);
    assert!(max_abs <= 256, "TUniform(8) is bounded by 2^8: {max_abs}");
}

#[test]
fn ziggurat_noise_has_the_parameter_sets_sigma() {
    let max_abs = measure(NoiseSampling::Ziggurat, TFHE_LIB_GLWE_1024.noise_std_dev_scaled());
    // Far below the decision distance 2^29 (an 8-sigma event otherwise).
    assert!(max_abs < 128 * 8);
}

/// Encrypts 1024 random messages and checks the noise's moments; returns the largest |e|.
fn measure(sampling: NoiseSampling, expected: f64) -> i64 {
    const CIPHERTEXTS: usize = 1024;
    let params = TFHE_LIB_GLWE_1024;
    let mut rng = Blake2bXof::from_seed([42; 32]);
    let key = GlweSecretKey::generate_binary([0u8; 1024], params.polynomial_size(), &mut rng).unwrap();
    let mut encryptor =
        GlweEncryptor::<1024>::with_noise_sampling(&params, &key, Blake2bXof::from_seed([43; 32]), sampling).unwrap();
    assert!((encryptor.noise().unwrap().std_dev_scaled() - expected).abs() < 0.05);
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
    println!(
        "{sampling:?}: {count} coefficients: noise mean {mean:+.3}, std {std:.3} (expected {expected:.1}), max |e| {max_abs}"
    );
    assert!(count >= 1 << 20);
    assert!((std / expected - 1.0).abs() < 0.02, "std {std}");
    // 5 standard errors of the mean.
    assert!(mean.abs() < 5.0 * expected / n.sqrt(), "mean {mean}");
    max_abs
}

/// The encryptor checks the noise itself, whatever the parameter set let through: a Ziggurat below one unit
/// of `1/q` (rounding would leave most samples 0) and a TUniform bound past `q / 8` (no decryption) are
/// refused, the Ziggurat is refused on a TUniform set, and a TUniform set's own bound is used as it is.
#[test]
fn encryptor_validates_the_noise() {
    use tfhe_sbc_core::dimensions::{GlweDimension, PolynomialSize};
    use tfhe_sbc_core::parameters::{GlweParameters, NoiseDistribution};
    use tfhe_sbc_device::Error;
    use tfhe_sbc_device::noise::DeviceNoise;

    let set = |noise| GlweParameters::new_allow_insecure(32, PolynomialSize(64), GlweDimension(1), noise).unwrap();
    let key =
        GlweSecretKey::generate_binary([0u8; 64], PolynomialSize(64), &mut Blake2bXof::from_seed([1; 32])).unwrap();
    let make = |params: &GlweParameters, sampling| {
        GlweEncryptor::<64>::with_noise_sampling(params, &key, Blake2bXof::from_seed([2; 32]), sampling)
            .map(|e| e.noise().unwrap())
    };
    let tiny = set(NoiseDistribution::Gaussian {
        std_dev: 2f64.powi(-40),
    });
    assert_eq!(make(&tiny, NoiseSampling::Ziggurat).err(), Some(Error::NoiseOutOfRange));
    let huge = set(NoiseDistribution::TUniform { bound_log2: 29 });
    assert_eq!(
        make(&huge, NoiseSampling::ConstantTime).err(),
        Some(Error::NoiseOutOfRange)
    );
    let wide = set(NoiseDistribution::Gaussian { std_dev: 2f64.powi(-5) });
    assert_eq!(make(&wide, NoiseSampling::Ziggurat).err(), Some(Error::NoiseOutOfRange));
    let tuniform = set(NoiseDistribution::TUniform { bound_log2: 10 });
    assert_eq!(
        make(&tuniform, NoiseSampling::Ziggurat).err(),
        Some(Error::ZigguratNeedsGaussianSet)
    );
    assert!(matches!(
        make(&tuniform, NoiseSampling::ConstantTime),
        Ok(DeviceNoise::TUniform(t)) if t.bound_log2() == 10
    ));
    let sigma = set(NoiseDistribution::Gaussian {
        std_dev: 2f64.powi(-25),
    });
    let ok = make(&sigma, NoiseSampling::Ziggurat);
    assert!(matches!(ok, Ok(DeviceNoise::Ziggurat { std_dev_scaled }) if std_dev_scaled == 128.0));
    let substituted = make(&sigma, NoiseSampling::ConstantTime);
    assert!(matches!(substituted, Ok(DeviceNoise::TUniform(t)) if t.bound_log2() == 8));
}
