//! The noise of fresh ciphertexts: over 2^20 coefficients (1024 encryptions at N = 1024), the standard
//! deviation of `b - a*s - Delta*m` is within 2% of the sampler's (147.8 for the default TUniform(8), 128 =
//! sigma*q for the opt-in Ziggurat), the mean is within 5 standard errors of 0, and TUniform's bound holds.
#![allow(clippy::unwrap_used)]

use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::GlweDecryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::message::message_bit;
use tfhe_sbc_device::noise::NoiseSampling;

#[test]
fn default_noise_is_tuniform_8() {
    let max_abs = measure(NoiseSampling::ConstantTime, 147.8);
    assert!(max_abs <= 256, "TUniform(8) is bounded by 2^8: {max_abs}");
}

#[cfg(feature = "ziggurat")]
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

/// An encryptor for `noise` at N = 64 (a custom, insecure set: only the noise checks matter here).
fn make(
    noise: tfhe_sbc_core::parameters::NoiseDistribution,
    sampling: NoiseSampling,
) -> Result<tfhe_sbc_device::noise::DeviceNoise, tfhe_sbc_device::Error> {
    use tfhe_sbc_core::dimensions::{GlweDimension, PolynomialSize};
    use tfhe_sbc_core::parameters::GlweParameters;

    let params = GlweParameters::new_allow_insecure(32, PolynomialSize(64), GlweDimension(1), noise).unwrap();
    let key =
        GlweSecretKey::generate_binary([0u8; 64], PolynomialSize(64), &mut Blake2bXof::from_seed([1; 32])).unwrap();
    GlweEncryptor::<64>::with_noise_sampling(&params, &key, Blake2bXof::from_seed([2; 32]), sampling)
        .map(|e| e.noise().unwrap())
}

/// The encryptor checks the noise itself, whatever the parameter set let through: a TUniform bound past
/// `q / 8` (no decryption) is refused, a TUniform set's own bound is used as it is, and a Gaussian set gets
/// the smallest TUniform with at least its standard deviation.
#[test]
fn encryptor_validates_the_noise() {
    use tfhe_sbc_core::parameters::NoiseDistribution;
    use tfhe_sbc_device::Error;
    use tfhe_sbc_device::noise::DeviceNoise;

    assert_eq!(
        make(
            NoiseDistribution::TUniform { bound_log2: 29 },
            NoiseSampling::ConstantTime
        )
        .err(),
        Some(Error::NoiseOutOfRange)
    );
    assert!(matches!(
        make(NoiseDistribution::TUniform { bound_log2: 10 }, NoiseSampling::ConstantTime),
        Ok(DeviceNoise::TUniform(t)) if t.bound_log2() == 10
    ));
    let sigma = NoiseDistribution::Gaussian {
        std_dev: 2f64.powi(-25),
    };
    assert!(matches!(
        make(sigma, NoiseSampling::ConstantTime),
        Ok(DeviceNoise::TUniform(t)) if t.bound_log2() == 8
    ));
}

/// The opt-in Ziggurat's checks: below one unit of `1/q` (rounding would leave most samples 0) or with 8
/// standard deviations past `q / 8` it is refused, on a TUniform set too, and at sigma = 2^-25 it runs at
/// sigma * q = 128.
#[cfg(feature = "ziggurat")]
#[test]
fn encryptor_validates_the_ziggurat_noise() {
    use tfhe_sbc_core::parameters::NoiseDistribution;
    use tfhe_sbc_device::Error;
    use tfhe_sbc_device::noise::DeviceNoise;

    let gaussian = |log2: i32| NoiseDistribution::Gaussian {
        std_dev: 2f64.powi(log2),
    };
    assert_eq!(
        make(gaussian(-40), NoiseSampling::Ziggurat).err(),
        Some(Error::NoiseOutOfRange)
    );
    assert_eq!(
        make(gaussian(-5), NoiseSampling::Ziggurat).err(),
        Some(Error::NoiseOutOfRange)
    );
    assert_eq!(
        make(NoiseDistribution::TUniform { bound_log2: 10 }, NoiseSampling::Ziggurat).err(),
        Some(Error::ZigguratNeedsGaussianSet)
    );
    assert!(matches!(
        make(gaussian(-25), NoiseSampling::Ziggurat),
        Ok(DeviceNoise::Ziggurat { std_dev_scaled }) if std_dev_scaled == 128.0
    ));
}
