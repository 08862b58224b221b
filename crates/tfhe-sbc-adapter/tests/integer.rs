//! Integers into tfhe-rs's high-level API: the parameter set against tfhe-rs's
//! constants, fleet intake (extraction and wrapping, no key switch) of `u8`/`u16`/`u32`/`u64` readings into
//! conformant `FheUint`s that tfhe-rs computes on and its `ClientKey` decrypts, the noise of extracted
//! blocks, per-device intake (key switch + identity PBS), and typed errors for every malformed input.
//!
//! The stand-in device is `encrypt_readings_reference` (tfhe-rs's `encrypt_glwe_ciphertext` of our radix
//! encoding, TUniform(17)) until the device encrypts on a 64-bit torus.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

mod common;

use rand_core::{Rng, SeedableRng};
use std::sync::OnceLock;
use std::time::Instant;
use tfhe::conformance::ParameterSetConformant;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, DynamicDistribution, GlweCiphertext as TfheGlweCiphertext, GlweSize as TfheGlweSize,
    LweCiphertext, PolynomialSize as TfhePolynomialSize, decrypt_lwe_ciphertext,
};
use tfhe::integer::IntegerCiphertext;
use tfhe::prelude::*;
use tfhe::shortint::ciphertext::{Degree, NoiseLevel};
use tfhe::shortint::client_key::atomic_pattern::AtomicPatternClientKey;
use tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 as TFHE_DEFAULT;
use tfhe::shortint::{AtomicPatternKind, EncryptionKeyChoice, PBSOrder};
use tfhe::{
    ClientKey, ConfigBuilder, FheBool, FheUint8, FheUint8ConformanceParams, FheUint16, FheUint32, FheUint64, Seed,
    set_server_key,
};
use tfhe_sbc_adapter::interop::InteropError;
use tfhe_sbc_adapter::interop::glwe_ksk::keyswitch_glwe;
use tfhe_sbc_adapter::interop::integer::per_device::{IntegerDeviceKsk, client_key_parameters};
use tfhe_sbc_adapter::interop::integer::{
    IntegerExtractor, MESSAGE_2_CARRY_2_TUNIFORM_2M128, encrypt_readings_reference, glwe_key_from_client_key,
};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::{GlweParameters, NoiseDistribution, ParameterSetId};
use tfhe_sbc_device::csprng::xof::Blake2bXof;

/// One tfhe-rs key set (the high-level default) for the whole file, from a fixed seed.
fn keys() -> &'static common::IntegerKeys {
    static KEYS: OnceLock<common::IntegerKeys> = OnceLock::new();
    common::integer_keys(&KEYS, 0x05ee_d1e6, "default")
}

/// Random readings of `bits` bits from a fixed seed.
fn readings(seed: u8, count: usize, bits: u32) -> Vec<u64> {
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    (0..count).map(|_| rng.next_u64() & (u64::MAX >> (64 - bits))).collect()
}

/// §1: our named set is the GLWE side of tfhe-rs 1.8.2's high-level default, read from tfhe-rs's constants.
#[test]
fn the_set_is_tfhe_rs_high_level_default() {
    let ours = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let glwe = ours.glwe();
    assert_eq!(glwe.id(), ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048);
    assert_eq!(GlweParameters::from_id(glwe.id()), Some(glwe));
    let t = TFHE_DEFAULT;
    assert_eq!(glwe.glwe_dimension().0, t.glwe_dimension.0);
    assert_eq!(glwe.polynomial_size().0, t.polynomial_size.0);
    assert!(t.ciphertext_modulus.is_native_modulus());
    assert_eq!(glwe.torus_bits(), u64::BITS);
    let NoiseDistribution::TUniform { bound_log2 } = glwe.noise_distribution() else {
        panic!("our set names TUniform noise")
    };
    let DynamicDistribution::TUniform(tfhe_noise) = t.glwe_noise_distribution else {
        panic!("tfhe-rs's default names TUniform GLWE noise")
    };
    assert_eq!(bound_log2, tfhe_noise.bound_log2());
    assert_eq!(t.glwe_noise_distribution, DynamicDistribution::new_t_uniform(17));
    assert_eq!(t.encryption_key_choice, EncryptionKeyChoice::Big);
    assert_eq!(ours.message_modulus(), t.message_modulus.0);
    assert_eq!(ours.carry_modulus(), t.carry_modulus.0);
    // shortint's delta: 2^63 / (message_modulus * carry_modulus).
    assert_eq!(ours.delta(), (1u64 << 63) / (t.message_modulus.0 * t.carry_modulus.0));
    assert_eq!(ours.delta(), 1 << 59);
    assert!(glwe.meets_security_floor());
    // The high-level default configuration uses exactly this shortint set.
    let client_key = ClientKey::generate_with_seed(ConfigBuilder::default().build(), Seed(1));
    let parameters = client_key_parameters(&client_key).unwrap();
    assert_eq!(parameters, t);
    eprintln!(
        "tfhe-rs default: n = {}, k = {}, N = {}, LWE noise {:?}, GLWE noise {:?}, PBS {} x {}, KS {} x {}, log2 p_fail {}",
        t.lwe_dimension.0,
        t.glwe_dimension.0,
        t.polynomial_size.0,
        t.lwe_noise_distribution,
        t.glwe_noise_distribution,
        t.pbs_base_log.0,
        t.pbs_level.0,
        t.ks_base_log.0,
        t.ks_level.0,
        t.log2_p_fail
    );
}

/// The signed error of an LWE block's phase from the nearest multiple of `delta`, under the big key.
fn block_error(client_key: &ClientKey, block: &tfhe::shortint::Ciphertext, expected: u64) -> i64 {
    let integer: &tfhe::integer::ClientKey = client_key.as_ref();
    let shortint: &tfhe::shortint::ClientKey = integer.as_ref();
    let AtomicPatternClientKey::Standard(ap) = &shortint.atomic_pattern else {
        panic!("standard atomic pattern")
    };
    let phase = decrypt_lwe_ciphertext(&ap.large_lwe_secret_key(), &block.ct).0;
    phase.wrapping_sub(expected << 59) as i64
}

/// Fleet mode: 512 `u8`, 256 `u16`, 128 `u32` and 64 `u64` readings, each set in one N = 2048 ciphertext,
/// become conformant `FheUint`s that the `ClientKey` decrypts; every block's noise is TUniform(17)'s.
#[test]
fn fleet_readings_are_conformant_fhe_uints() {
    let k = keys();
    let device_key = glwe_key_from_client_key(&k.client_key).unwrap();
    let extractor = IntegerExtractor::new();
    let mut rng = Blake2bXof::from_seed([40; 32]);

    let values = readings(1, 512, 8);
    let glwe = encrypt_readings_reference(&device_key, &values, 8, &mut rng).unwrap();
    let t = Instant::now();
    let u8s = extractor
        .extract_readings::<tfhe::FheUint8Id, _>(&glwe, 0, 512)
        .unwrap();
    let per_value = t.elapsed().as_secs_f64() * 1e6 / 512.0;
    let params = FheUint8ConformanceParams::from(&k.server_key);
    let params_from_constant = FheUint8ConformanceParams::from(TFHE_DEFAULT);
    let mut errors = Vec::with_capacity(2048);
    for (ct, &v) in u8s.iter().zip(&values) {
        assert!(ct.is_conformant(&params) && ct.is_conformant(&params_from_constant));
        let d: u8 = ct.decrypt(&k.client_key);
        assert_eq!(u64::from(d), v);
        let (radix, ..) = ct.clone().into_raw_parts();
        for (j, block) in radix.blocks().iter().enumerate() {
            assert_eq!(
                (block.degree, block.noise_level()),
                (Degree::new(3), NoiseLevel::NOMINAL)
            );
            assert_eq!(
                block.atomic_pattern,
                AtomicPatternKind::Standard(PBSOrder::KeyswitchBootstrap)
            );
            errors.push(block_error(&k.client_key, block, (v >> (2 * j)) & 3));
        }
    }
    // Same metadata as tfhe-rs's own fresh encryption.
    let fresh = FheUint8::encrypt(7u8, &k.client_key);
    let (fresh_radix, ..) = fresh.into_raw_parts();
    let (ours_radix, ..) = u8s[0].clone().into_raw_parts();
    for (a, b) in fresh_radix.blocks().iter().zip(ours_radix.blocks()) {
        assert_eq!(
            (a.degree, a.noise_level(), a.message_modulus, a.carry_modulus),
            (b.degree, b.noise_level(), b.message_modulus, b.carry_modulus)
        );
        assert_eq!((a.atomic_pattern, a.ct.lwe_size()), (b.atomic_pattern, b.ct.lwe_size()));
    }
    // Extraction adds no noise: the blocks' errors are TUniform(17) samples (|e| <= 2^17, variance
    // (2^35 + 1) / 6).
    assert_eq!(errors.len(), 2048);
    let max = errors.iter().map(|e| e.unsigned_abs()).max().unwrap();
    assert!(max <= 1 << 17, "max |e| = {max}");
    let mean = errors.iter().map(|&e| e as f64).sum::<f64>() / 2048.0;
    let var = errors.iter().map(|&e| (e as f64 - mean).powi(2)).sum::<f64>() / 2047.0;
    let expected_var = ((1u64 << 35) as f64 + 1.0) / 6.0;
    let ratio = var / expected_var;
    // 2048 samples: the sample variance's relative std dev is about sqrt(1.2 * 2 / 2048) = 3.4% (TUniform's
    // kurtosis is 1.8): 6 sigma either way.
    assert!((0.8..1.2).contains(&ratio), "variance ratio {ratio}");
    eprintln!(
        "fleet u8: {per_value:.2} us per FheUint8 (extraction + wrapping, one thread); block error std {:.0} = 2^{:.2} \
         (TUniform(17): {:.0}), max |e| 2^{:.2}, mean {mean:.0}",
        var.sqrt(),
        var.sqrt().log2(),
        expected_var.sqrt(),
        (max as f64).log2()
    );

    check_fleet_readings::<tfhe::FheUint16Id, u16>(k, &device_key, &mut rng, 2, 256, 0..256, true);
    check_fleet_readings::<tfhe::FheUint32Id, u32>(k, &device_key, &mut rng, 3, 128, 0..128, false);
    // A sub-range: readings 10..30.
    check_fleet_readings::<tfhe::FheUint64Id, u64>(k, &device_key, &mut rng, 4, 64, 10..30, false);
}

/// `count` readings of `Id`'s width from `seed`, encrypted as one fleet GLWE ciphertext under `device_key`;
/// readings `range` extracted (in parallel or on one thread) as `FheUint`s that are conformant to the server
/// key's parameters and decrypt to the readings.
fn check_fleet_readings<Id, Clear>(
    k: &common::IntegerKeys,
    device_key: &GlweSecretKeyOwned,
    rng: &mut Blake2bXof,
    seed: u8,
    count: usize,
    range: std::ops::Range<usize>,
    parallel: bool,
) where
    Id: tfhe::FheUintId + Send,
    Clear: Into<u64>,
    tfhe::FheUint<Id>: FheDecrypt<Clear> + ParameterSetConformant + Send,
    <tfhe::FheUint<Id> as ParameterSetConformant>::ParameterSet: for<'a> From<&'a tfhe::ServerKey>,
{
    let bits = 8 * size_of::<Clear>() as u32;
    let values = readings(seed, count, bits);
    let glwe = encrypt_readings_reference(device_key, &values, bits, rng).unwrap();
    let (extractor, first, n) = (IntegerExtractor::new(), range.start, range.len());
    let cts = if parallel {
        extractor.extract_readings_par::<Id, _>(&glwe, first, n)
    } else {
        extractor.extract_readings::<Id, _>(&glwe, first, n)
    }
    .unwrap();
    let params = <tfhe::FheUint<Id> as ParameterSetConformant>::ParameterSet::from(&k.server_key);
    assert_eq!(cts.len(), range.len());
    for (ct, &v) in cts.iter().zip(&values[range]) {
        assert!(ct.is_conformant(&params));
        let d: Clear = ct.decrypt(&k.client_key);
        assert_eq!(d.into(), v);
    }
}

/// tfhe-rs computes on extracted readings with the high-level API: sum, max, comparison, multiplication
/// (`FheUint8`), a sum of `FheUint16` readings and a comparison of `FheUint32` readings; the `ClientKey`
/// decrypts each.
#[test]
fn tfhe_rs_computes_on_device_readings() {
    let k = keys();
    set_server_key(k.server_key.clone());
    let device_key = glwe_key_from_client_key(&k.client_key).unwrap();
    let extractor = IntegerExtractor::new();
    let mut rng = Blake2bXof::from_seed([41; 32]);

    let values = readings(5, 512, 8);
    let glwe = encrypt_readings_reference(&device_key, &values, 8, &mut rng).unwrap();
    let x = extractor.extract_readings::<tfhe::FheUint8Id, _>(&glwe, 0, 4).unwrap();
    let t = Instant::now();
    for pair in [(0, 1), (2, 3)] {
        let (a, b) = (&x[pair.0], &x[pair.1]);
        let (va, vb) = (values[pair.0] as u8, values[pair.1] as u8);
        let sum: u8 = (a + b).decrypt(&k.client_key);
        assert_eq!(sum, va.wrapping_add(vb));
        let max: u8 = a.max(b).decrypt(&k.client_key);
        assert_eq!(max, va.max(vb));
        let gt: FheBool = a.gt(b);
        assert_eq!(gt.decrypt(&k.client_key), va > vb);
        let product: u8 = (a * b).decrypt(&k.client_key);
        assert_eq!(product, va.wrapping_mul(vb));
    }
    eprintln!(
        "FheUint8 sum, max, gt, mul on 2 pairs: {:.2} s",
        t.elapsed().as_secs_f64()
    );

    let values = readings(6, 256, 16);
    let glwe = encrypt_readings_reference(&device_key, &values, 16, &mut rng).unwrap();
    let y: Vec<FheUint16> = extractor.extract_readings_par(&glwe, 0, 4).unwrap();
    let total = y[1..].iter().fold(y[0].clone(), |acc, v| acc + v);
    let sum: u16 = total.decrypt(&k.client_key);
    assert_eq!(u64::from(sum), values[..4].iter().sum::<u64>() & 0xffff);

    let values = readings(7, 128, 32);
    let glwe = encrypt_readings_reference(&device_key, &values, 32, &mut rng).unwrap();
    let z: Vec<FheUint32> = extractor.extract_readings(&glwe, 0, 2).unwrap();
    assert_eq!(z[0].le(&z[1]).decrypt(&k.client_key), values[0] <= values[1]);
    let sum: u32 = (&z[0] + &z[1]).decrypt(&k.client_key);
    assert_eq!(sum, (values[0] as u32).wrapping_add(values[1] as u32));
    // Readings mix with tfhe-rs's own encryptions.
    let own = FheUint32::encrypt(12345u32, &k.client_key);
    let mixed: u32 = (&z[0] + &own).decrypt(&k.client_key);
    assert_eq!(mixed, (values[0] as u32).wrapping_add(12345));
    let _: FheUint64 = FheUint64::encrypt(1u64, &k.client_key);
}

/// Per-device mode: a frame under the device's own key, switched once (GLWE to GLWE) with its seeded key,
/// gives `FheUint8`s that the client key decrypts, conformant, with block errors of the switch's size (far
/// below `delta / 2 = 2^58`), that compute with fleet readings; without the switch they do not decrypt.
#[test]
fn per_device_frames_are_switched_into_the_client_key() {
    let k = keys();
    let mut rng = Blake2bXof::from_seed([42; 32]);
    let device_key: GlweSecretKeyOwned =
        GlweSecretKey::generate_binary(vec![0u8; 2048], PolynomialSize(2048), &mut rng).unwrap();
    let t = Instant::now();
    let ksk = IntegerDeviceKsk::generate(&device_key, &k.client_key, &mut rng).unwrap();
    let generated = t.elapsed();
    assert_eq!(ksk.bodies().len(), IntegerDeviceKsk::body_words());
    assert_eq!(ksk.stored_bytes(), 2 * 2048 * 8 + 16);
    // Stored and read back: the same key.
    let stored = IntegerDeviceKsk::from_parts(ksk.mask_seed(), ksk.bodies().to_vec()).unwrap();
    let t = Instant::now();
    let decompressed = ksk.decompress();
    let decompress_time = t.elapsed();
    assert!(stored.decompress() == decompressed);

    let values = readings(8, 512, 8);
    let glwe = encrypt_readings_reference(&device_key, &values, 8, &mut rng).unwrap();
    let native = CiphertextModulus::new_native();
    let input = TfheGlweCiphertext::from_container(glwe.as_slice(), TfhePolynomialSize(2048), native);
    let mut output = TfheGlweCiphertext::new(0u64, TfheGlweSize(2), TfhePolynomialSize(2048), native);
    let t = Instant::now();
    keyswitch_glwe(&decompressed, &input, &mut output.as_mut_view()).unwrap();
    let switch_time = t.elapsed();
    let switched = GlweCiphertext::from_container(output.into_container(), PolynomialSize(2048)).unwrap();
    let cts: Vec<FheUint8> = IntegerExtractor::new().extract_readings(&switched, 0, 512).unwrap();
    let params = FheUint8ConformanceParams::from(&k.server_key);
    let mut errors = Vec::new();
    for (ct, &v) in cts.iter().zip(&values) {
        assert!(ct.is_conformant(&params));
        let d: u8 = ct.decrypt(&k.client_key);
        assert_eq!(u64::from(d), v);
        let (radix, ..) = ct.clone().into_raw_parts();
        for (j, block) in radix.blocks().iter().enumerate() {
            let e = block_error(&k.client_key, block, (v >> (2 * j)) & 3);
            assert!(
                e.unsigned_abs() < 1 << 50,
                "error 2^{:.1}",
                (e.unsigned_abs() as f64).log2()
            );
            errors.push(e as f64);
        }
    }
    let std = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
    // The switch's rounding (docs/noise-budget.md: std 2^43.2); one frame's estimate is good to about 0.3 in log2.
    assert!((std.log2() - 43.2).abs() < 0.5, "block error std 2^{:.2}", std.log2());
    // The fleet key's extraction would not decrypt the unswitched frame: the device key is not the client key's.
    let count = 64;
    let wrong = IntegerExtractor::new()
        .extract_readings::<tfhe::FheUint8Id, _>(&glwe, 0, count)
        .unwrap();
    let matches = wrong
        .iter()
        .zip(&values)
        .filter(|(ct, v)| {
            let d: u8 = ct.decrypt(&k.client_key);
            u64::from(d) == **v
        })
        .count();
    assert!(
        matches < count / 2,
        "{matches} of {count} decrypt without the key switch"
    );
    // They compute with fleet readings.
    set_server_key(k.server_key.clone());
    let fleet_key = glwe_key_from_client_key(&k.client_key).unwrap();
    let fleet_values = readings(9, 512, 8);
    let fleet_glwe = encrypt_readings_reference(&fleet_key, &fleet_values, 8, &mut rng).unwrap();
    let f: Vec<FheUint8> = IntegerExtractor::new().extract_readings(&fleet_glwe, 0, 1).unwrap();
    let sum: u8 = (&cts[0] + &f[0]).decrypt(&k.client_key);
    assert_eq!(sum, (values[0] as u8).wrapping_add(fleet_values[0] as u8));
    eprintln!(
        "per-device: key generation {:.3} s, stored {} B, decompressed in {:.2} ms; one switch {:.2} ms per frame of \
         512 FheUint8; block error std 2^{:.2}",
        generated.as_secs_f64(),
        ksk.stored_bytes(),
        decompress_time.as_secs_f64() * 1e3,
        switch_time.as_secs_f64() * 1e3,
        std.log2()
    );
}

/// Malformed input gets a typed error, never a panic; `NoiseLevel::ZERO` would not pass conformance.
#[test]
fn malformed_input_is_refused_with_typed_errors() {
    let k = keys();
    let device_key = glwe_key_from_client_key(&k.client_key).unwrap();
    let extractor = IntegerExtractor::new();
    let mut rng = Blake2bXof::from_seed([43; 32]);
    let glwe = encrypt_readings_reference(&device_key, &[1, 2, 3], 8, &mut rng).unwrap();

    // Another shape: N = 1024 (or k = 2).
    let small = GlweCiphertext::from_container(vec![0u64; 2 * 1024], PolynomialSize(1024)).unwrap();
    assert_eq!(
        extractor
            .extract_readings::<tfhe::FheUint8Id, _>(&small, 0, 1)
            .err()
            .unwrap(),
        InteropError::WrongGlweShape {
            expected: (1, 2048),
            found: (1, 1024)
        }
    );
    let wide = GlweCiphertext::from_container(vec![0u64; 3 * 2048], PolynomialSize(2048)).unwrap();
    assert!(matches!(
        extractor.extract_block(&wide, 0),
        Err(InteropError::WrongGlweShape { .. })
    ));
    // Past the end, overflowing ranges, a coefficient past N.
    for (first, count) in [(0, 513), (512, 1), (500, 13), (usize::MAX, 2)] {
        assert_eq!(
            extractor
                .extract_readings::<tfhe::FheUint8Id, _>(&glwe, first, count)
                .err()
                .unwrap(),
            InteropError::ReadingsOutOfRange {
                first,
                count,
                capacity: 512
            }
        );
    }
    assert!(
        extractor
            .extract_readings::<tfhe::FheUint8Id, _>(&glwe, 512, 0)
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        extractor.extract_block(&glwe, 2048),
        Err(InteropError::ReadingsOutOfRange { .. })
    ));
    assert!(matches!(
        extractor.extract_radix(&glwe, 7, 0),
        Err(InteropError::Encoding(_))
    ));
    assert_eq!(extractor.capacity(32), Ok(128));
    // An LWE of the wrong size.
    let lwe = LweCiphertext::new(
        0u64,
        tfhe::core_crypto::prelude::LweSize(1025),
        CiphertextModulus::new_native(),
    );
    assert_eq!(
        extractor.wrap_block(lwe).unwrap_err(),
        InteropError::WrongLweSize {
            expected: 2049,
            found: 1025
        }
    );
    // The stand-in device refuses what the encoding refuses.
    assert!(matches!(
        encrypt_readings_reference(&device_key, &[256], 8, &mut rng),
        Err(InteropError::Encoding(tfhe_sbc_core::Error::ValueOutOfRange {
            value: 256,
            value_bits: 8
        }))
    ));
    assert!(matches!(
        encrypt_readings_reference(&device_key, &[0; 513], 8, &mut rng),
        Err(InteropError::Encoding(tfhe_sbc_core::Error::CapacityExceeded { .. }))
    ));
    let key_1024: GlweSecretKeyOwned =
        GlweSecretKey::generate_binary(vec![0u8; 1024], PolynomialSize(1024), &mut rng).unwrap();
    assert_eq!(
        encrypt_readings_reference(&key_1024, &[1], 8, &mut rng).unwrap_err(),
        InteropError::BadDeviceKey
    );
    assert_eq!(
        IntegerDeviceKsk::generate(&key_1024, &k.client_key, &mut rng).unwrap_err(),
        InteropError::BadDeviceKey
    );
    assert_eq!(
        IntegerDeviceKsk::from_parts(1, vec![0; 100]).unwrap_err(),
        InteropError::BadKeySwitchingKey {
            expected: 4096,
            found: 100
        }
    );
    // A key of another shortint set is refused.
    let other_set = tfhe::shortint::ClassicPBSParameters {
        polynomial_size: tfhe::core_crypto::prelude::PolynomialSize(1024),
        ..TFHE_DEFAULT
    };
    let other = ClientKey::generate_with_seed(ConfigBuilder::with_custom_parameters(other_set).build(), Seed(2));
    assert_eq!(
        glwe_key_from_client_key(&other).unwrap_err(),
        InteropError::ParameterMismatch
    );

    // Why never NoiseLevel::ZERO: tfhe-rs's conformance check refuses it (and a zero mask would make it a
    // trivial ciphertext whose body a lookup table reads in the clear).
    let good = extractor.extract_block(&glwe, 0).unwrap();
    let zero = tfhe::shortint::Ciphertext::new(
        good.ct.clone(),
        good.degree,
        NoiseLevel::ZERO,
        good.message_modulus,
        good.carry_modulus,
        good.atomic_pattern,
    );
    let shortint_params = FheUint8ConformanceParams::from(TFHE_DEFAULT);
    let radix = |b: &tfhe::shortint::Ciphertext| {
        FheUint8::from_raw_parts(
            tfhe::integer::RadixCiphertext::from(vec![b.clone(); 4]),
            tfhe::FheUint8Id,
            tfhe::Tag::default(),
            tfhe::ReRandomizationMetadata::default(),
        )
    };
    assert!(radix(&good).is_conformant(&shortint_params));
    assert!(!radix(&zero).is_conformant(&shortint_params));
    // The error messages name what was wrong.
    let message = InteropError::ReadingsOutOfRange {
        first: 500,
        count: 13,
        capacity: 512,
    }
    .to_string();
    assert!(message.contains("512"), "{message}");
}
