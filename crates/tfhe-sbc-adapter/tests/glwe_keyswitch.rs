//! Per-device integer keys by GLWE key switching (`interop::glwe_ksk`): a frame under a device's own key,
//! switched once to the client key's big GLWE key, is extracted like a fleet frame. Checked against
//! `docs/noise-budget.md` ("Per-device keys by GLWE key switching"): the switched noise against the model,
//! tfhe-rs's own decryption of every block, PBS on the blocks with 0 failures, and the negative controls
//! (another device's key; too few levels) failing as the model predicts. Frames are switched as the adapter
//! does, with the NTT products of `interop::glwe_ksk_spectra`, which equal tfhe-rs's own switch bit for bit.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

mod common;

use rand_core::{Rng, SeedableRng};
use std::sync::OnceLock;
use tfhe::FheUint8;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, DecompositionBaseLog, DecompositionLevelCount, DynamicDistribution,
    GlweCiphertext as TfheGlweCiphertext, GlweCiphertextOwned as TfheGlweCiphertextOwned,
    GlweSecretKeyOwned as TfheGlweSecretKeyOwned, GlweSize, PlaintextList, PolynomialSize as TfhePolynomialSize,
    decrypt_glwe_ciphertext,
};
use tfhe::prelude::*;
use tfhe_sbc_adapter::interop::InteropError;
use tfhe_sbc_adapter::interop::glwe_ksk::{GlweKsShape, SeededGlweKsk, keyswitch_glwe};
use tfhe_sbc_adapter::interop::glwe_ksk_spectra::GlweKskSpectra;
use tfhe_sbc_adapter::interop::integer::{
    IntegerExtractor, MESSAGE_2_CARRY_2_TUNIFORM_2M128, encrypt_readings_reference, glwe_key_from_client_key,
    tfhe_glwe_key_u64,
};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_device::csprng::xof::Blake2bXof;

const N: usize = 2048;

/// One tfhe-rs key set (the high-level default) for the whole file, from a fixed seed.
fn keys() -> &'static common::IntegerKeys {
    static KEYS: OnceLock<common::IntegerKeys> = OnceLock::new();
    common::integer_keys(&KEYS, 0x61e5_ee17, "default")
}

/// A fresh device key and the big key as tfhe-rs keys, and the generator that made the device key (from
/// `seed`), for tests that make key-switching keys of their own shapes.
fn tfhe_device_and_big_keys(seed: u8) -> (TfheGlweSecretKeyOwned<u64>, TfheGlweSecretKeyOwned<u64>, Blake2bXof) {
    let big = glwe_key_from_client_key(&keys().client_key).unwrap();
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    let device = device_key(&mut rng);
    (tfhe_glwe_key_u64(&device), tfhe_glwe_key_u64(&big), rng)
}

/// A fresh binary device key (`k = 1`, `N = 2048`).
fn device_key(rng: &mut Blake2bXof) -> GlweSecretKeyOwned {
    GlweSecretKey::generate_binary(vec![0u8; N], PolynomialSize(N), rng).unwrap()
}

/// The set's GLWE noise, TUniform(17): the key-switching key's too.
fn glwe_noise() -> DynamicDistribution<u64> {
    DynamicDistribution::new_t_uniform(17)
}

/// Encrypts `values` (2-bit blocks: 512 `u8`) under `device`, and switches the frame with `key`.
fn switched_frame(device: &GlweSecretKeyOwned, key: &GlweKskSpectra, values: &[u64], seed: u8) -> Vec<u64> {
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    let input = encrypt_readings_reference(device, values, 8, &mut rng).unwrap();
    let mut output = TfheGlweCiphertextOwned::new(
        0u64,
        GlweSize(2),
        TfhePolynomialSize(N),
        CiphertextModulus::new_native(),
    );
    let input =
        TfheGlweCiphertext::from_container(input.as_slice(), TfhePolynomialSize(N), CiphertextModulus::new_native());
    key.keyswitch(&input, &mut output.as_mut_view()).unwrap();
    output.into_container()
}

/// The phase errors (signed, in units of `2^-64`) of a frame under the big key against its encoded blocks.
fn phase_errors(big: &GlweSecretKeyOwned, frame: &[u64], values: &[u64]) -> Vec<i64> {
    let key = tfhe_glwe_key_u64(big);
    let ct = TfheGlweCiphertext::from_container(frame, TfhePolynomialSize(N), CiphertextModulus::new_native());
    let mut phase = PlaintextList::new(0u64, tfhe::core_crypto::prelude::PlaintextCount(N));
    decrypt_glwe_ciphertext(&key, &ct, &mut phase);
    let mut encoded = vec![0u64; N];
    MESSAGE_2_CARRY_2_TUNIFORM_2M128
        .encoding()
        .encode_values(values, 8, &mut encoded)
        .unwrap();
    phase
        .as_ref()
        .iter()
        .zip(&encoded)
        .map(|(&p, &m)| p.wrapping_sub(m) as i64)
        .collect()
}

/// The standard deviation of `errors`, as `log2`.
fn std_log2(errors: &[i64]) -> f64 {
    let v = errors.iter().map(|&e| (e as f64).powi(2)).sum::<f64>() / errors.len() as f64;
    v.sqrt().log2()
}

/// The model of `docs/noise-budget.md`: the variance (2^64 units) a switch adds, rounding plus key noise,
/// and the device's own TUniform(17).
fn model_variance(shape: GlweKsShape) -> f64 {
    let kept = (shape.base_log.0 * shape.levels.0) as i32;
    let rounding = (N as f64 / 2.0) * 2f64.powi(2 * (64 - kept)) / 12.0;
    let base = 2f64.powi(shape.base_log.0 as i32);
    let tuniform17 = (2f64.powi(35) + 1.0) / 6.0;
    let key_noise = (N * shape.levels.0) as f64 * (base * base + 2.0) / 12.0 * tuniform17;
    rounding + key_noise + tuniform17
}

/// Blocks of `frame` whose direct decryption (nearest multiple of `delta = 2^59`) is wrong.
fn wrong_blocks(errors: &[i64]) -> usize {
    errors.iter().filter(|&&e| e.unsigned_abs() >= 1 << 58).count()
}

fn readings(seed: u8) -> Vec<u64> {
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    (0..512).map(|_| rng.next_u64() & 0xff).collect()
}

/// The device key, the big key and the device's key-switching key (`GlweKsShape::INTEGER`), from `seed`.
fn device_and_ksk(seed: u8) -> (GlweSecretKeyOwned, GlweSecretKeyOwned, SeededGlweKsk<u64>) {
    let big = glwe_key_from_client_key(&keys().client_key).unwrap();
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    let device = device_key(&mut rng);
    let ksk = SeededGlweKsk::generate_from_keys(
        &tfhe_glwe_key_u64(&device).as_view(),
        &tfhe_glwe_key_u64(&big).as_view(),
        GlweKsShape::INTEGER,
        glwe_noise(),
        &mut rng,
    )
    .unwrap();
    (device, big, ksk)
}

/// The switched noise is the model's: over 128 frames (262,144 blocks: the rounding term is a product by
/// the device key, whose mean part puts about half the variance in a few frequencies, so one frame's
/// estimate varies by about 30%; 128 frames bring that to about 3%), within 10% of the modelled variance,
/// and no block is wrong.
#[test]
fn switched_noise_matches_the_model() {
    let (device, big, ksk) = device_and_ksk(1);
    let key = ksk.spectra();
    let mut errors = Vec::new();
    for frame_index in 0..128u8 {
        let values = readings(frame_index);
        let frame = switched_frame(&device, &key, &values, frame_index.wrapping_add(128));
        errors.extend(phase_errors(&big, &frame, &values));
    }
    assert_eq!(wrong_blocks(&errors), 0);
    let shape = GlweKsShape::INTEGER;
    let measured = std_log2(&errors);
    let model = model_variance(shape).sqrt().log2();
    println!(
        "GLWE key switch 2^12 x 2: phase error std 2^{measured:.3} over {} blocks, model 2^{model:.3}",
        errors.len()
    );
    let ratio = 2f64.powf(2.0 * (measured - model));
    assert!(
        (ratio - 1.0).abs() < 0.10,
        "variance ratio {ratio:.3}: measured 2^{measured:.3}, model 2^{model:.3}"
    );
}

/// `log2 erfc(z / sqrt 2)` for a large `z` (a failure probability below 2^-20), from the asymptotic series
/// `erfc(x) = exp(-x^2) / (x sqrt(pi)) (1 - 1 / (2 x^2) + 3 / (4 x^4))`, good to 0.1% there.
fn log2_tail(z: f64) -> f64 {
    let x = z / 2f64.sqrt();
    let series = 1.0 - 1.0 / (2.0 * x * x) + 3.0 / (4.0 * x.powi(4));
    (-x * x) / std::f64::consts::LN_2 - (x * std::f64::consts::PI.sqrt()).log2() + series.log2()
}

/// The set's failure probability with the switch, and with the integer public key: tfhe-rs states p-fail
/// 2^-129.58 per PBS at the decision threshold `delta / 2 = 2^58`, which fixes the variance it budgets at the
/// PBS input; each path adds its variance times `nu^2 = 25` (the set's `max_noise_level` 5). The p-fail that
/// leaves changes by less than 0.01 in its log2 (`docs/noise-budget.md`).
#[test]
fn the_switch_leaves_the_sets_failure_probability() {
    let stated = tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128.log2_p_fail;
    // Solve log2_tail(z) = stated by bisection: the budget's standard deviation is 2^58 / z.
    let (mut lo, mut hi) = (5.0f64, 30.0f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if log2_tail(mid) > stated { lo = mid } else { hi = mid }
    }
    let z = (lo + hi) / 2.0;
    let budget = (2f64.powi(58) / z).powi(2);
    let added = 25.0 * model_variance(GlweKsShape::INTEGER);
    let z_after = 2f64.powi(58) / (budget + added).sqrt();
    let after = log2_tail(z_after);
    println!(
        "p-fail per PBS: tfhe-rs 2^{stated:.3} (z = {z:.3}, budget std 2^{:.2}), with the GLWE switch 2^{after:.3}; the switch is {:.5}% of the budget",
        budget.sqrt().log2(),
        100.0 * added / budget
    );
    assert!((after - stated).abs() < 0.01, "2^{after:.3} against 2^{stated:.3}");

    // The integer public key: a frame's phase error has variance 2049 V_TU(17) (`docs/noise-budget.md`,
    // "Integer public key") instead of V_TU(17).
    let v = (2f64.powi(35) + 1.0) / 6.0;
    let public_key = 25.0 * 2049.0 * v;
    let after_public_key = log2_tail(2f64.powi(58) / (budget + public_key).sqrt());
    println!(
        "p-fail per PBS with the integer public key's noise: 2^{after_public_key:.3}; it is {:.1e} of the budget",
        public_key / budget
    );
    assert!(
        (after_public_key - stated).abs() < 0.01,
        "2^{after_public_key:.3} against 2^{stated:.3}"
    );
}

/// The key round-trips through its stored form, and tfhe-rs's `ClientKey` decrypts every `FheUint8`
/// extracted from switched frames (4 frames, 2,048 readings).
#[test]
fn switched_frames_decrypt_with_tfhe_rs() {
    let k = keys();
    let (device, _, ksk) = device_and_ksk(4);
    assert_eq!(ksk.bodies().len(), 2 * N);
    let stored = SeededGlweKsk::from_raw_parts(
        GlweKsShape::INTEGER,
        1,
        GlweSize(2),
        TfhePolynomialSize(N),
        ksk.mask_seed(),
        ksk.bodies().to_vec(),
    )
    .unwrap();
    assert!(stored.decompress() == ksk.decompress());
    let key = stored.spectra();
    let extractor = IntegerExtractor::new();
    let mut checked = 0;
    for frame_index in 0..4u8 {
        let values = readings(10 + frame_index);
        let frame = switched_frame(&device, &key, &values, 20 + frame_index);
        let glwe = GlweCiphertext::from_container(frame, PolynomialSize(N)).unwrap();
        let cts: Vec<FheUint8> = extractor.extract_readings(&glwe, 0, 512).unwrap();
        for (ct, &v) in cts.iter().zip(&values) {
            let d: u8 = ct.decrypt(&k.client_key);
            assert_eq!(u64::from(d), v);
            checked += 1;
        }
    }
    assert_eq!(checked, 2048);
}

/// 2,048 shortint PBS (`x -> 3x + 1 mod 4`; 10,240 with `TSBC_FULL_STATISTICS=1`) on the blocks of
/// switched frames, under tfhe-rs's own server key, decrypted by tfhe-rs's client key: 0 failures.
#[test]
fn pbs_on_switched_blocks_do_not_fail() {
    let k = keys();
    let (device, _, ksk) = device_and_ksk(5);
    let key = ksk.spectra();
    let mut pbs = 0;
    let mut failures = 0;
    for frame_index in 0..common::pbs_frames() as u8 {
        let values = readings(40 + frame_index);
        let frame = switched_frame(&device, &key, &values, 50 + frame_index);
        let glwe = GlweCiphertext::from_container(frame, PolynomialSize(N)).unwrap();
        failures += common::failed_pbs(k, &glwe, |i| (values[i / 4] >> (2 * (i % 4))) & 3);
        pbs += N;
    }
    common::assert_pbs_without_failure(pbs, failures, "switched blocks");
}

#[test]
fn another_devices_key_and_too_few_levels_fail_as_modelled() {
    let k = keys();
    let big = glwe_key_from_client_key(&k.client_key).unwrap();
    let mut rng = Blake2bXof::from_seed([2; 32]);
    let device = device_key(&mut rng);
    let other = device_key(&mut rng);
    let values = readings(30);
    let big_view = tfhe_glwe_key_u64(&big);

    // Another device's key: the frame is switched with a key of the wrong input key, so the phase is noise.
    let others_ksk = SeededGlweKsk::generate_from_keys(
        &tfhe_glwe_key_u64(&other).as_view(),
        &big_view.as_view(),
        GlweKsShape::INTEGER,
        glwe_noise(),
        &mut rng,
    )
    .unwrap();
    let frame = switched_frame(&device, &others_ksk.spectra(), &values, 31);
    let wrong = wrong_blocks(&phase_errors(&big, &frame, &values));
    // A uniform phase decodes right with probability 2^59 / 2^64 = 1/32.
    println!("another device's key: {wrong}/{N} blocks wrong (uniform phase: 96.9%)");
    assert!(wrong > N * 9 / 10, "{wrong}/{N}");

    // One level of base 2^8 keeps 8 bits: the rounding std is 2^59.2 > delta / 2 = 2^58.
    let shape = GlweKsShape {
        base_log: DecompositionBaseLog(8),
        levels: DecompositionLevelCount(1),
    };
    let thin = SeededGlweKsk::generate_from_keys(
        &tfhe_glwe_key_u64(&device).as_view(),
        &big_view.as_view(),
        shape,
        glwe_noise(),
        &mut rng,
    )
    .unwrap();
    let frame = switched_frame(&device, &thin.spectra(), &values, 32);
    let wrong = wrong_blocks(&phase_errors(&big, &frame, &values));
    let sigma = model_variance(shape).sqrt();
    let model = libm_erfc(2f64.powi(58) / sigma / 2f64.sqrt());
    let rate = wrong as f64 / N as f64;
    println!("base 2^8 x 1: {wrong}/{N} blocks wrong, model {:.1}%", 100.0 * model);
    assert!((rate - model).abs() < 0.05, "rate {rate:.3}, model {model:.3}");
}

#[test]
fn keys_of_the_wrong_shape_are_refused() {
    let (d, b, mut rng) = tfhe_device_and_big_keys(3);
    let too_many_bits = GlweKsShape {
        base_log: DecompositionBaseLog(33),
        levels: DecompositionLevelCount(2),
    };
    assert_eq!(
        SeededGlweKsk::generate_from_keys(&d.as_view(), &b.as_view(), too_many_bits, glwe_noise(), &mut rng)
            .unwrap_err(),
        InteropError::ParameterMismatch
    );
    assert_eq!(
        SeededGlweKsk::<u64>::from_raw_parts(
            GlweKsShape::INTEGER,
            1,
            GlweSize(2),
            TfhePolynomialSize(N),
            7,
            vec![0; 2 * N - 1]
        )
        .unwrap_err(),
        InteropError::BadKeySwitchingKey {
            expected: 2 * N,
            found: 2 * N - 1
        }
    );
    // A frame of another shape (N = 1024) is a typed error, not tfhe-rs's assertion.
    let ksk =
        SeededGlweKsk::generate_from_keys(&d.as_view(), &b.as_view(), GlweKsShape::INTEGER, glwe_noise(), &mut rng)
            .unwrap();
    let input = TfheGlweCiphertextOwned::new(
        0u64,
        GlweSize(2),
        TfhePolynomialSize(1024),
        CiphertextModulus::new_native(),
    );
    let mut output = TfheGlweCiphertextOwned::new(
        0u64,
        GlweSize(2),
        TfhePolynomialSize(N),
        CiphertextModulus::new_native(),
    );
    assert_eq!(
        keyswitch_glwe(&ksk.decompress(), &input.as_view(), &mut output.as_mut_view()).unwrap_err(),
        InteropError::WrongGlweShape {
            expected: (1, N),
            found: (1, 1024)
        }
    );
    // The NTT switch: a shape whose summed products could leave its exact range is refused when the key
    // is made or read, and a frame of another shape is a typed error.
    // 2^12 terms (1 polynomial, 2 levels, N = 2048) of 2^14 * 2^63: 2^89 > 2^88.
    let too_wide = GlweKsShape {
        base_log: DecompositionBaseLog(15),
        levels: DecompositionLevelCount(2),
    };
    assert_eq!(
        SeededGlweKsk::generate_from_keys(&d.as_view(), &b.as_view(), too_wide, glwe_noise(), &mut rng).unwrap_err(),
        InteropError::ParameterMismatch
    );
    assert_eq!(
        SeededGlweKsk::<u64>::from_raw_parts(too_wide, 1, GlweSize(2), TfhePolynomialSize(N), 7, vec![0; 2 * N])
            .unwrap_err(),
        InteropError::ParameterMismatch
    );
    let spectra =
        SeededGlweKsk::generate_from_keys(&d.as_view(), &b.as_view(), GlweKsShape::INTEGER, glwe_noise(), &mut rng)
            .unwrap()
            .spectra();
    // An input of another N, an output of another k: (input shape, output shape, the shape reported).
    let native = CiphertextModulus::new_native();
    for ((input_n, output_k), found) in [((1024, 1), (1, 1024)), ((N, 2), (2, N))] {
        let input = TfheGlweCiphertextOwned::new(0u64, GlweSize(2), TfhePolynomialSize(input_n), native);
        let mut output = TfheGlweCiphertextOwned::new(0u64, GlweSize(output_k + 1), TfhePolynomialSize(N), native);
        assert_eq!(
            spectra
                .keyswitch(&input.as_view(), &mut output.as_mut_view())
                .unwrap_err(),
            InteropError::WrongGlweShape {
                expected: (1, N),
                found
            }
        );
    }
}

/// The NTT switch equals tfhe-rs's `keyswitch_glwe_ciphertext` bit for bit: for three decompositions
/// (the integer set's, base 2^8 x 3, and one level of 2^14, the widest the exact range allows at N = 2048), on random ciphertexts and on the extreme ones (every
/// word `2^63`, `2^63 - 1`, `2^64 - 1`, where the centred reading and the digits are largest).
#[test]
fn the_ntt_switch_equals_tfhe_rs_switch_bit_for_bit() {
    let (d, b, mut rng) = tfhe_device_and_big_keys(9);
    let shapes = [
        GlweKsShape::INTEGER,
        GlweKsShape {
            base_log: DecompositionBaseLog(8),
            levels: DecompositionLevelCount(3),
        },
        GlweKsShape {
            base_log: DecompositionBaseLog(14),
            levels: DecompositionLevelCount(1),
        },
    ];
    let native = CiphertextModulus::new_native();
    for shape in shapes {
        let ksk = SeededGlweKsk::generate_from_keys(&d.as_view(), &b.as_view(), shape, glwe_noise(), &mut rng).unwrap();
        let (reference, spectra) = (ksk.decompress(), ksk.spectra());
        let mut inputs: Vec<Vec<u64>> = (0..3).map(|_| (0..2 * N).map(|_| rng.next_u64()).collect()).collect();
        inputs.extend([1u64 << 63, (1u64 << 63) - 1, u64::MAX].map(|w| vec![w; 2 * N]));
        for words in &inputs {
            let input = TfheGlweCiphertext::from_container(words.as_slice(), TfhePolynomialSize(N), native);
            let mut expected = TfheGlweCiphertextOwned::new(0u64, GlweSize(2), TfhePolynomialSize(N), native);
            let mut found = expected.clone();
            keyswitch_glwe(&reference, &input, &mut expected.as_mut_view()).unwrap();
            spectra.keyswitch(&input, &mut found.as_mut_view()).unwrap();
            assert!(
                expected == found,
                "shape {shape:?}: the NTT switch differs from tfhe-rs's"
            );
        }
    }
}

/// `erfc(x)` (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7): enough for a rate model.
fn libm_erfc(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    poly * (-x * x).exp()
}
