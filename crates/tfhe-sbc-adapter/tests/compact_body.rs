//! Compact bodies: the widths each set sends, recomputed from tfhe-rs's own parameters
//! (the noise budget of `docs/noise-budget.md`), and compact frames through intake into tfhe-rs with no
//! failure: 10,240 boolean key-switched decryptions, 1,024 boolean gates, and 1,024 shortint PBS on the
//! integer set. A control rounds the same ciphertexts to far fewer bits and sees failures, so the checks can
//! fail.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

mod common;

use rand_core::{Rng, SeedableRng};
use rayon::prelude::*;
use std::sync::OnceLock;
use std::time::Instant;
use tfhe::boolean::ciphertext::Ciphertext as BooleanCiphertext;
use tfhe::boolean::client_key::ClientKey as BooleanClientKey;
use tfhe::boolean::parameters::{
    BooleanParameters, DEFAULT_PARAMETERS_KS_PBS, PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS, TFHE_LIB_PARAMETERS,
};
use tfhe::boolean::server_key::BinaryBooleanGates;
use tfhe::core_crypto::prelude::{DynamicDistribution, UnsignedInteger};
use tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 as TFHE_DEFAULT;
use tfhe_sbc_adapter::interop::boolean_set::{self, BooleanSet};
use tfhe_sbc_adapter::interop::integer::{IntegerExtractor, glwe_key_from_client_key};
use tfhe_sbc_adapter::registry::DeviceEncryption;
use tfhe_sbc_core::compact_body::{expand_top_bits, round_to_top_bits};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweCiphertextOwned};
use tfhe_sbc_core::parameters::{
    DEFAULT_KS_PBS_GLWE_512_K3, ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, GlweParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128,
    TFHE_LIB_GLWE_1024,
};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, SEEDED_FRAME_BYTES_1024, frame_bytes};

// ---------------------------------------------------------------------------------------------------------
// The noise budget, from tfhe-rs's parameters (torus units: q = 1).

/// The variance of a noise distribution on a `2^bits` torus, in torus units squared.
fn variance(distribution: DynamicDistribution<impl UnsignedInteger>, torus_bits: i32) -> f64 {
    match distribution {
        DynamicDistribution::Gaussian(g) => g.std * g.std,
        // TUniform(b): uniform on [-2^b, 2^b] with the ends at half weight: (2^(2b+1) + 1) / 6 units of 1/q.
        DynamicDistribution::TUniform(t) => {
            (2f64.powi(2 * t.bound_log2() as i32 + 1) + 1.0) / 6.0 / 2f64.powi(2 * torus_bits)
        }
    }
}

/// The key switch's added variance from a binary key of dimension `big` with base `2^base_log`, `levels`
/// levels and key-switching-key noise `ksk`: the rounding of each of the `big` mask coefficients to `base_log *
/// levels` bits (uniform, variance `2^(-2 base_log levels) / 12`, times E[s^2] = 1/2) plus every
/// key-switching-key sample's noise times its balanced digit (E[d^2] = (B^2 + 2) / 12).
fn key_switch_variance(big: usize, base_log: usize, levels: usize, ksk: f64) -> f64 {
    let b = 2f64.powi(base_log as i32);
    let rounding = big as f64 / 2.0 * 2f64.powi(-2 * (base_log * levels) as i32) / 12.0;
    let keys = big as f64 * levels as f64 * ksk * (b * b + 2.0) / 12.0;
    rounding + keys
}

/// The modulus switch to `2N` before a bootstrap, for a binary key of dimension `n`: each mask coefficient
/// and the body rounded to `1/2N` (variance `(1/2N)^2 / 12`, times E[s^2] = 1/2 for the mask).
fn modulus_switch_variance(n: usize, polynomial_size: usize) -> f64 {
    (n as f64 / 2.0 + 1.0) / 12.0 / (2.0 * polynomial_size as f64).powi(2)
}

/// `log2` of the probability that a centred Gaussian exceeds `z` standard deviations in absolute value
/// (`erfc(z / sqrt 2)`, asymptotic series: exact to far better than 0.01 in log2 at z >= 8).
fn log2_two_sided_tail(z: f64) -> f64 {
    let series = 1.0 - 1.0 / (z * z) + 3.0 / z.powi(4) - 15.0 / z.powi(6);
    ((2.0 / std::f64::consts::PI).sqrt() / z * series).log2() - z * z / 2.0 / std::f64::consts::LN_2
}

/// The variance at which a Gaussian error crosses `threshold` with probability `2^log2_p_fail`.
fn variance_for_p_fail(threshold: f64, log2_p_fail: f64) -> f64 {
    let (mut lo, mut hi) = (8.0f64, 40.0f64);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if log2_two_sided_tail(mid) > log2_p_fail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (threshold / lo).powi(2)
}

/// A set's budget and the width it implies.
struct Budget {
    name: &'static str,
    /// Key switch plus modulus switch at the PBS input (analytic), torus units squared.
    ks_ms: f64,
    /// The variance the set's stated failure probability allows at the PBS input, if it states one.
    p_fail_bound: Option<f64>,
    /// The worst linear combination before a bootstrap, 2-norm squared.
    nu_squared: f64,
    torus_bits: u32,
}

impl Budget {
    /// The variance the set budgets at the PBS input: the analytic key switch and modulus switch, or the
    /// stated failure probability's bound if that is lower.
    fn budget(&self) -> f64 {
        self.p_fail_bound.map_or(self.ks_ms, |b| b.min(self.ks_ms))
    }

    /// The variance rounding to `bits` adds at the PBS input: uniform rounding, times the 2-norm squared.
    fn rounding(&self, bits: u32) -> f64 {
        self.nu_squared * 2f64.powi(-2 * bits as i32) / 12.0
    }

    /// The fewest bits whose rounding stays at or below 1% of the budget.
    fn min_bits(&self) -> u32 {
        (1..=self.torus_bits)
            .find(|&b| self.rounding(b) <= 0.01 * self.budget())
            .unwrap()
    }
}

fn boolean_budget(name: &'static str, p: BooleanParameters, log2_p_fail: Option<f64>) -> Budget {
    let big = p.glwe_dimension.0 * p.polynomial_size.0;
    let ks = key_switch_variance(
        big,
        p.ks_base_log.0,
        p.ks_level.0,
        variance(p.lwe_noise_distribution, 32),
    );
    let ms = modulus_switch_variance(p.lwe_dimension.0, p.polynomial_size.0);
    Budget {
        name,
        ks_ms: ks + ms,
        // AND/NAND decide by sign with a margin of 1/8 (a + b - 1/8 with messages at +-1/8).
        p_fail_bound: log2_p_fail.map(|l| variance_for_p_fail(1.0 / 8.0, l)),
        // XOR: 2 (a + b) + 1/4.
        nu_squared: 8.0,
        torus_bits: 32,
    }
}

fn budgets() -> Vec<(GlweParameters, Budget)> {
    let t = TFHE_DEFAULT;
    let integer = Budget {
        name: "MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128",
        ks_ms: key_switch_variance(
            t.glwe_dimension.0 * t.polynomial_size.0,
            t.ks_base_log.0,
            t.ks_level.0,
            variance(t.lwe_noise_distribution, 64),
        ) + modulus_switch_variance(t.lwe_dimension.0, t.polynomial_size.0),
        // Padding bit and 4 bits of message and carry: blocks decide at delta / 2 = 2^-6.
        p_fail_bound: Some(variance_for_p_fail(2f64.powi(-6), t.log2_p_fail)),
        nu_squared: (t.max_noise_level.get() as f64).powi(2),
        torus_bits: 64,
    };
    vec![
        (
            TFHE_LIB_GLWE_1024,
            boolean_budget("TFHE_LIB_PARAMETERS", TFHE_LIB_PARAMETERS, None),
        ),
        (
            DEFAULT_KS_PBS_GLWE_512_K3,
            boolean_budget("DEFAULT_PARAMETERS_KS_PBS", DEFAULT_PARAMETERS_KS_PBS, Some(-64.017)),
        ),
        (
            ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2,
            boolean_budget(
                "PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS",
                PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS,
                Some(-165.434),
            ),
        ),
        (MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe(), integer),
    ]
}

/// The widths in `GlweParameters::compact_body_bits` are the smallest that keep the rounding at or below 1%
/// of each set's budget at the PBS input; the table is `docs/noise-budget.md`'s.
#[test]
fn compact_widths_come_from_the_noise_budget() {
    println!(
        "{:<46} {:>9} {:>9} {:>9} {:>5} {:>5} {:>10} {:>8}",
        "set", "KS+MS", "p-fail", "budget", "nu^2", "bits", "rounding", "share"
    );
    let mut mismatches = Vec::new();
    for (ours, budget) in budgets() {
        let bits = budget.min_bits();
        let fmt = |v: f64| format!("2^{:.2}", v.sqrt().log2());
        println!(
            "{:<46} {:>9} {:>9} {:>9} {:>5} {:>5} {:>10} {:>7.2}%",
            budget.name,
            fmt(budget.ks_ms),
            budget.p_fail_bound.map_or("-".into(), fmt),
            fmt(budget.budget()),
            budget.nu_squared,
            bits,
            fmt(budget.rounding(bits)),
            100.0 * budget.rounding(bits) / budget.budget(),
        );
        if ours.compact_body_bits() != bits {
            mismatches.push((budget.name, ours.compact_body_bits(), bits));
        }
        assert!(budget.rounding(bits) <= 0.01 * budget.budget());
        assert!(budget.rounding(bits - 1) > 0.01 * budget.budget());
        // The fresh noise is far below the rounding's: the rounding, not the device's noise, is what the
        // compact body adds.
        assert_eq!(ours.torus_bits(), budget.torus_bits);
    }
    assert!(
        mismatches.is_empty(),
        "GlweParameters::compact_body_bits != budget: {mismatches:?}"
    );
}

/// The wire goals: at most 2.2 KiB per 1024 boolean bits, seed and header included, and at most 32 bytes per
/// `FheUint8` with the seed and header amortized over a full frame.
#[test]
fn wire_goals() {
    for (set, frames_per_1024_bits) in [
        (TFHE_LIB_GLWE_1024, 1),
        (DEFAULT_KS_PBS_GLWE_512_K3, 2),
        (ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, 1),
    ] {
        let (k, n) = (set.glwe_dimension().0, set.polynomial_size().0);
        let compact = frames_per_1024_bits * frame_bytes(FrameKind::Seeded, k, n, 32, set.compact_body_bits());
        let full = frames_per_1024_bits * frame_bytes(FrameKind::Seeded, k, n, 32, 32);
        println!("set {}: {compact} bytes per 1024 bits compact, {full} full", set.id().0);
        assert!(compact as f64 <= 2.2 * 1024.0);
    }
    let integer = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
    let compact = frame_bytes(FrameKind::Seeded, 1, 2048, 64, integer.compact_body_bits());
    let per_u8 = compact as f64 / 512.0;
    println!(
        "integer set: {compact} bytes per frame of 512 u8 readings, {per_u8:.2} bytes per FheUint8 ({:.2} full)",
        frame_bytes(FrameKind::Seeded, 1, 2048, 64, 64) as f64 / 512.0
    );
    assert!(per_u8 <= 32.0);
}

// ---------------------------------------------------------------------------------------------------------
// Boolean: compact frames through intake, key switch, tfhe-rs gates.

/// The `TFHE_LIB_PARAMETERS` keys for the whole file: server-key generation takes seconds.
fn boolean_keys() -> &'static common::BooleanKeys {
    static KEYS: OnceLock<common::BooleanKeys> = OnceLock::new();
    common::boolean_keys(&KEYS, BooleanSet::TfheLib, [0x1B; 32])
}

/// `messages.len()` messages of 128 bytes, each encrypted by a device with the client key's GLWE key as one
/// compact seeded frame, received by the intake.
fn compact_boolean_ciphertexts(client_key: &BooleanClientKey, messages: &[[u8; 128]]) -> Vec<GlweCiphertextOwned<u32>> {
    let device_key = boolean_set::glwe_key_from_client_key(BooleanSet::TfheLib, client_key).unwrap();
    let mut encryptor = Box::new(
        GlweEncryptor::<1024>::new(&TFHE_LIB_GLWE_1024, &device_key, Blake2bXof::from_seed([21; 32])).unwrap(),
    );
    encryptor.set_body_bits(TFHE_LIB_GLWE_1024.compact_body_bits()).unwrap();
    let credentials = DeviceCredentials::new(5, 1, MacKey::from_bytes([5; 32]));
    let mut intake = common::intake_of(
        DeviceCredentials::new(5, 1, MacKey::from_bytes([5; 32])),
        DeviceEncryption::SecretKey,
    );
    let mut counter = FrameCounter::new(0);
    let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    messages
        .iter()
        .map(|bits| {
            let outgoing = encryptor.begin_message(&mut counter, bits.len()).unwrap();
            let chunk = chunks(bits, 128).next().unwrap();
            let len = encryptor
                .encrypt_frame_into(&credentials, &outgoing, &chunk, &mut frame)
                .unwrap();
            assert_eq!(len, 1503);
            let message = intake
                .receive(&frame[..len], Instant::now())
                .unwrap()
                .into_message()
                .unwrap();
            message.frames.into_iter().next().unwrap().ciphertext
        })
        .collect()
}

fn bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

/// Rounds a ciphertext's body to `bits` bits, as a frame of that width would carry it.
fn rounded_u32(glwe: &GlweCiphertextOwned<u32>, bits: u32) -> GlweCiphertextOwned<u32> {
    let mut words = glwe.as_slice().to_vec();
    let n = glwe.polynomial_size().0;
    let len = words.len();
    for w in &mut words[len - n..] {
        *w = expand_top_bits(round_to_top_bits(*w, bits), bits);
    }
    GlweCiphertext::from_container(words, glwe.polynomial_size()).unwrap()
}

/// At least 10^4 key-switched decryptions and 256 gates on compact boolean frames, 0 failures; and a control at
/// 2 bits where AND fails.
#[test]
fn boolean_compact_frames_decrypt_and_compute() {
    let keys = boolean_keys();
    let (client_key, server_key, bridge) = (&keys.client_key, &keys.server_key, &keys.bridge);
    let mut rng = Blake2bXof::from_seed([17; 32]);
    let messages: Vec<[u8; 128]> = (0..10)
        .map(|_| {
            let mut m = [0u8; 128];
            rng.fill_bytes(&mut m);
            m
        })
        .collect();
    let glwes = compact_boolean_ciphertexts(client_key, &messages);
    // 10 x 1024 key-switched decryptions with the tfhe-rs client key.
    let mut decryptions = 0;
    for (m, glwe) in messages.iter().zip(&glwes) {
        let switched: Vec<BooleanCiphertext> = (0..1024usize)
            .into_par_iter()
            .map(|i| bridge.to_boolean(glwe, i))
            .collect();
        for (i, ct) in switched.iter().enumerate() {
            assert_eq!(client_key.decrypt(ct), bit(m, i), "bit {i}");
            decryptions += 1;
        }
    }
    println!("{decryptions} key-switched decryptions of compact (11-bit) boolean frames: 0 failures");
    assert!(decryptions >= 10_000);

    // 256 bit pairs, four gates each, from the first three messages.
    let to_boolean = |g: usize, i: usize| -> BooleanCiphertext { bridge.to_boolean(&glwes[g], i) };
    let gates: usize = (0..256usize)
        .into_par_iter()
        .map(|i| {
            let (a, b, c) = (bit(&messages[0], i), bit(&messages[1], i), bit(&messages[2], i));
            let (ca, cb, cc) = (to_boolean(0, i), to_boolean(1, i), to_boolean(2, i));
            keys.check_gates([&ca, &cb, &cc], [a, b, c], &format!("pair {i}"))
        })
        .sum();
    println!("{gates} gates on compact boolean ciphertexts: 0 failures");
    assert_eq!(gates, 1024);

    // The control: the same ciphertexts rounded to 2 bits (an error up to 1/8, the gates' margin) make AND
    // fail.
    let coarse: Vec<_> = glwes[..2].iter().map(|g| rounded_u32(g, 2)).collect();
    let failures = (0..256usize)
        .into_par_iter()
        .filter(|&i| {
            let (ca, cb) = (bridge.to_boolean(&coarse[0], i), bridge.to_boolean(&coarse[1], i));
            client_key.decrypt(&server_key.and(&ca, &cb)) != (bit(&messages[0], i) && bit(&messages[1], i))
        })
        .count();
    println!("control: AND on 2-bit bodies fails {failures} times in 256");
    assert!(failures >= 10, "{failures}");
}

// ---------------------------------------------------------------------------------------------------------
// Integers: compact frames through intake, extraction, shortint PBS.

/// The integer keys (tfhe-rs's default configuration) for the whole file.
fn integer_keys() -> &'static common::IntegerKeys {
    static KEYS: OnceLock<common::IntegerKeys> = OnceLock::new();
    common::integer_keys(&KEYS, 0xC0_4AC7, "integer")
}

/// At least 1000 shortint PBS on blocks of a compact (14-bit) integer frame with 0 failures, and a control: the same
/// blocks rounded to 4 bits (an error up to delta) fail.
#[test]
fn integer_compact_frames_bootstrap() {
    let common::KeyPair { client_key, server_key } = integer_keys();
    let glwe_key = glwe_key_from_client_key(client_key).unwrap();
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let bits = params.glwe().compact_body_bits();
    let mut encryptor = Box::new(IntegerEncryptor::<2048>::EMPTY);
    encryptor.set_key(&params, &glwe_key).unwrap();
    encryptor.seed_from_bytes(&mut [33; 32]);
    encryptor.set_body_bits(bits).unwrap();
    let credentials = DeviceCredentials::new(9, 1, MacKey::from_bytes([9; 32]));
    let mut intake = common::intake_of(
        DeviceCredentials::new(9, 1, MacKey::from_bytes([9; 32])),
        DeviceEncryption::SecretKey,
    );
    let mut rng = Blake2bXof::from_seed([44; 32]);
    let mut readings = vec![0u8; 512];
    rng.fill_bytes(&mut readings);
    let mut counter = FrameCounter::new(0);
    let outgoing = encryptor.begin_message(&mut counter, readings.len()).unwrap();
    let mut frame = vec![0u8; IntegerEncryptor::<2048>::SEEDED_FRAME_BYTES];
    let mut glwes = Vec::new();
    for chunk in chunks(&readings, IntegerEncryptor::<2048>::MESSAGE_BYTES) {
        let len = encryptor
            .encrypt_frame_into(&credentials, &outgoing, &chunk, &mut frame)
            .unwrap();
        assert_eq!(len, 3679);
        glwes.push(intake.receive_integer(&frame[..len]).unwrap().ciphertext);
    }

    let (integer_server_key, ..) = server_key.clone().into_raw_parts();
    let shortint_server_key = integer_server_key.into_raw_parts();
    let (integer_client_key, ..) = client_key.clone().into_raw_parts();
    let shortint_client_key = integer_client_key.into_raw_parts();
    let extractor = IntegerExtractor::new();
    // A non-trivial table: x -> 3x + 1 mod 4 (tfhe-rs keeps the message modulus).
    let table = shortint_server_key.generate_lookup_table(|x| (3 * x + 1) % 4);
    let expected = |index: usize| (3 * (u64::from(readings[index / 4] >> (2 * (index % 4))) & 3) + 1) % 4;
    let t = Instant::now();
    let results: Vec<u64> = (0..1024usize)
        .into_par_iter()
        .map(|index| {
            let block = extractor.extract_block(&glwes[0], index).unwrap();
            shortint_client_key.decrypt(&shortint_server_key.apply_lookup_table(&block, &table))
        })
        .collect();
    let bootstraps = results.len();
    for (index, &result) in results.iter().enumerate() {
        assert_eq!(result, expected(index), "block {index}");
    }
    println!(
        "{bootstraps} shortint PBS on compact (14-bit) integer blocks: 0 failures ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
    let coarse = {
        let mut words = glwes[0].as_slice().to_vec();
        for w in &mut words[2048..] {
            *w = expand_top_bits(round_to_top_bits(*w, 4), 4);
        }
        GlweCiphertext::from_container(words, glwes[0].polynomial_size()).unwrap()
    };
    let failures = (0..64usize)
        .into_par_iter()
        .filter(|&index| {
            let block = extractor.extract_block(&coarse, index).unwrap();
            shortint_client_key.decrypt(&shortint_server_key.apply_lookup_table(&block, &table)) != expected(index)
        })
        .count();
    println!("control: PBS on 4-bit bodies fails {failures} times in 64");
    assert!(failures >= 8, "{failures}");
    assert!(bootstraps >= 1000);
}
