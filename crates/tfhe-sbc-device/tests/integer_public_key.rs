//! The integer public-key encryptor (`encrypt::integer_public_key`): readings round-trip under the secret key
//! behind the public key, the noise is the model's (the public-key encryption's, term by term), the
//! file's byte form gives the same ciphertexts as words, degenerate or misfitting keys are typed errors, and
//! frames are sealed through the one `FrameEncryptor` trait.
#![allow(clippy::unwrap_used)]

mod common;

use negacyclic_ntt::NttPlan64;
use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::entities::{GlweSecretKey, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::Error;
use tfhe_sbc_device::PublicKeyDefect;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::glwe_encryption::decrypt_glwe_phase;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};
use tfhe_sbc_device::noise::DeviceNoise;
use tfhe_sbc_device::product::NegacyclicProductPlan;
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;

const N: usize = 2048;
const PLAN: NttPlan64 = <NttPlan64 as NegacyclicProductPlan<N>>::PLAN;
type Enc = IntegerPublicKeyEncryptor<N>;

/// The secret key behind the public key, its spectrum, and the seeded public key `(seed, b)`.
struct Keys {
    weight: usize,
    spectrum: Vec<[u32; 3]>,
    seed: [u8; MASK_SEED_BYTES],
    body: Vec<u64>,
}

fn keys(seed: u8) -> Keys {
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    let key = GlweSecretKey::generate_binary(vec![0u8; N], params.polynomial_size(), &mut rng).unwrap();
    let mut spectrum = vec![[0u32; 3]; N];
    compute_glwe_key_spectrum(&PLAN, &key, &mut spectrum).unwrap();
    let noise = DeviceNoise::for_tuniform_parameters(&params).unwrap();
    let (mut body, mut scratch) = (vec![0u64; N], vec![[0u32; 3]; N]);
    let seed = generate_seeded_glwe_public_key(&PLAN, &spectrum, &noise, &mut body, &mut scratch, &mut rng).unwrap();
    let weight = key.as_bytes().iter().filter(|&&b| b == 1).count();
    Keys {
        weight,
        spectrum,
        seed,
        body,
    }
}

fn encryptor(keys: &Keys, rng_seed: u8) -> Box<Enc> {
    let mut e = Box::new(Enc::EMPTY);
    e.set_integer_public_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &keys.seed, &keys.body)
        .unwrap();
    e.seed_from_bytes(&mut [rng_seed; 32]);
    e
}

fn phase(keys: &Keys, mask: &[u64], body: &[u64]) -> Vec<u64> {
    let (mut out, mut scratch) = (vec![0u64; N], vec![[0u32; 3]; N]);
    decrypt_glwe_phase(&PLAN, &keys.spectrum, mask, body, &mut out, &mut scratch).unwrap();
    out
}

use common::decode_readings as decode;

#[test]
fn u8_u16_u32_readings_round_trip() {
    let keys = keys(1);
    let mut enc = encryptor(&keys, 2);
    let mut rng = Blake2bXof::from_seed([3; 32]);
    let (mut mask, mut body) = (vec![0u64; N], vec![0u64; N]);

    let readings8: Vec<u8> = (0..512).map(|_| rng.next_u32() as u8).collect();
    enc.encrypt_u8(&readings8, &mut mask, &mut body).unwrap();
    let got = decode(&phase(&keys, &mask, &body), 8, 512);
    assert_eq!(got, readings8.iter().map(|&v| u64::from(v)).collect::<Vec<_>>());

    let mut readings16: Vec<u16> = (0..200).map(|_| rng.next_u32() as u16).collect();
    readings16[0] = u16::MAX;
    enc.encrypt_u16(&readings16, &mut mask, &mut body).unwrap();
    let got = decode(&phase(&keys, &mask, &body), 16, 256);
    assert_eq!(
        &got[..200],
        readings16.iter().map(|&v| u64::from(v)).collect::<Vec<_>>()
    );
    assert!(got[200..].iter().all(|&v| v == 0), "padding coefficients encrypt 0");

    let readings32: Vec<u32> = (0..128).map(|_| rng.next_u32()).collect();
    enc.encrypt_u32(&readings32, &mut mask, &mut body).unwrap();
    let got = decode(&phase(&keys, &mask, &body), 32, 128);
    assert_eq!(got, readings32.iter().map(|&v| u64::from(v)).collect::<Vec<_>>());

    assert!(matches!(
        enc.encrypt_u32(&[0; 129], &mut mask, &mut body),
        Err(Error::MessageTooLong {
            capacity: 128,
            found: 129
        })
    ));
}

/// The phase error is `e * u + e2 - e1 * s` with `e`, `e1`, `e2` TUniform(17) (variance `V = (2^35 + 1) / 6`)
/// and `u`, `s` binary: `(N / 2 + 1 + N / 2) V = 2049 V`, a standard deviation of `2^21.71` on the 2^64
/// torus, averaged over keys. For one key the `e * u` term has a fixed part, `(e * 1) / 2` (`u`'s mean
/// 1/2), which lies in a few low frequencies of `e`: one key's variance can be 20% off the average. So the
/// test draws 32 key pairs, 4 ciphertexts each (262,144 coefficients), and checks the pooled variance
/// (a) against the model given each key's own `e` and `s` (`sum e_i^2 / 4 + mean_j ((e * 1)_j / 2)^2 + V +
/// wt(s) V`), within 3%, and (b) against the average model `2049 V`, within 10%; and that no error comes near
/// `delta / 2 = 2^58`.
#[test]
fn the_noise_is_the_models() {
    let v = (2f64.powi(35) + 1.0) / 6.0;
    let encoding = MESSAGE_2_CARRY_2_TUNIFORM_2M128.encoding();
    let mut rng = Blake2bXof::from_seed([6; 32]);
    let (mut mask, mut body, mut expected) = (vec![0u64; N], vec![0u64; N], vec![0u64; N]);
    let (mut sum_sq, mut conditional, mut count, mut max_abs) = (0f64, 0f64, 0usize, 0i64);
    for key_index in 0..32u8 {
        let keys = keys(100 + key_index);
        // The public key's own noise e = b - a * s, and the model given e and s.
        let (mut e, mut scratch) = (vec![0u64; N], vec![[0u32; 3]; N]);
        tfhe_sbc_device::encrypt::glwe_encryption::decrypt_seeded_glwe_phase::<
            tfhe_sbc_device::csprng::Blake2bCounter,
            _,
        >(&PLAN, &keys.spectrum, &keys.seed, &keys.body, &mut e, &mut scratch)
        .unwrap();
        let e: Vec<f64> = e.iter().map(|&x| x as i64 as f64).collect();
        let total: f64 = e.iter().sum();
        let mut prefix = 0.0;
        let mut mean_sq = 0.0;
        for &x in &e {
            prefix += x;
            // (e * 1)_j = sum_{i <= j} e_i - sum_{i > j} e_i.
            mean_sq += ((2.0 * prefix - total) / 2.0).powi(2);
        }
        let model_given_key =
            e.iter().map(|x| x * x).sum::<f64>() / 4.0 + mean_sq / N as f64 + v + keys.weight as f64 * v;
        let mut enc = encryptor(&keys, key_index);
        for _ in 0..4 {
            let readings: Vec<u8> = (0..512).map(|_| rng.next_u32() as u8).collect();
            enc.encrypt_u8(&readings, &mut mask, &mut body).unwrap();
            let values: Vec<u64> = readings.iter().map(|&v| u64::from(v)).collect();
            encoding.encode_values(&values, 8, &mut expected).unwrap();
            for (p, m) in phase(&keys, &mask, &body).iter().zip(&expected) {
                let err = p.wrapping_sub(*m) as i64;
                max_abs = max_abs.max(err.abs());
                sum_sq += (err as f64) * (err as f64);
                conditional += model_given_key;
                count += 1;
            }
        }
    }
    let measured = sum_sq / count as f64;
    let (conditional, average) = (conditional / count as f64, 2049.0 * v);
    println!(
        "integer public key: phase error std 2^{:.3} over {count} coefficients, 32 keys; model given the keys \
         2^{:.3}, average model 2^{:.3}; max |e| 2^{:.2}",
        measured.sqrt().log2(),
        conditional.sqrt().log2(),
        average.sqrt().log2(),
        (max_abs as f64).log2()
    );
    assert!(
        (measured / conditional - 1.0).abs() < 0.03,
        "variance {measured} vs {conditional}"
    );
    assert!(
        (measured / average - 1.0).abs() < 0.10,
        "variance {measured} vs {average}"
    );
    assert!(max_abs < 1 << 40);
}

/// The file's byte form of the body gives the same spectra, so the same ciphertexts for the same CSPRNG seed.
#[test]
fn the_byte_form_of_the_key_is_the_word_form() {
    let keys = keys(7);
    let mut words = encryptor(&keys, 8);
    let mut bytes = Box::new(Enc::EMPTY);
    let le: Vec<u8> = keys.body.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes
        .set_integer_public_key_le_bytes(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &keys.seed, &le)
        .unwrap();
    bytes.seed_from_bytes(&mut [8; 32]);
    let readings: Vec<u8> = (0..=255).collect();
    let mut out = [(vec![0u64; N], vec![0u64; N]), (vec![0u64; N], vec![0u64; N])];
    let [(m0, b0), (m1, b1)] = &mut out;
    words.encrypt_u8(&readings, m0, b0).unwrap();
    bytes.encrypt_u8(&readings, m1, b1).unwrap();
    assert_eq!(out[0], out[1]);
    assert!(matches!(
        bytes.set_integer_public_key_le_bytes(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &keys.seed, &le[1..]),
        Err(Error::WrongLength { .. })
    ));
    assert!(!bytes.is_ready(), "a refused key leaves no key");
}

#[test]
fn degenerate_and_misfitting_keys_are_typed_errors() {
    let keys = keys(9);
    let mut enc = Box::new(Enc::EMPTY);
    let params = &MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    assert!(matches!(
        enc.set_integer_public_key(params, &keys.seed, &vec![0u64; N]),
        Err(Error::DegeneratePublicKey(PublicKeyDefect::ZeroBody))
    ));
    assert!(matches!(
        enc.set_integer_public_key(params, &keys.seed, &vec![1u64; N]),
        Err(Error::DegeneratePublicKey(PublicKeyDefect::LowWeightBody))
    ));
    // b = a: the "ciphertexts" would carry the readings in the clear.
    let mut a = vec![0u64; N];
    tfhe_sbc_device::csprng::mask::for_each_mask_run::<tfhe_sbc_device::csprng::Blake2bCounter, u64>(
        &keys.seed,
        0,
        N,
        |offset, words| a[offset..offset + words.len()].copy_from_slice(words),
    );
    assert!(matches!(
        enc.set_integer_public_key(params, &keys.seed, &a),
        Err(Error::DegeneratePublicKey(PublicKeyDefect::BodyEqualsMask))
    ));
    assert!(matches!(
        enc.set_integer_public_key(params, &keys.seed, &keys.body[..N - 1]),
        Err(Error::WrongLength { .. })
    ));
    assert!(!enc.is_ready());
    let (mut mask, mut body) = (vec![0u64; N], vec![0u64; N]);
    assert!(matches!(
        enc.encrypt_u8(&[1], &mut mask, &mut body),
        Err(Error::KeyNotSet)
    ));
    // The integer set as seen by a boolean encryptor, and a boolean set here, do not fit.
    let boolean = tfhe_sbc_core::parameters::IntegerParameters::from_id(TFHE_LIB_GLWE_1024.id());
    assert!(boolean.is_none());
    enc.set_integer_public_key(params, &keys.seed, &keys.body).unwrap();
    assert!(matches!(
        enc.encrypt_u8(&[1], &mut mask, &mut body),
        Err(Error::NotSeeded)
    ));
    enc.seed_from_bytes(&mut [1; 32]);
    assert!(enc.is_ready());
    enc.forget_key();
    assert!(!enc.is_ready());
}

#[test]
fn frames_are_public_key_frames_of_u64_words() {
    let keys = keys(10);
    let mut enc = encryptor(&keys, 11);
    assert_eq!(Enc::PUBLIC_KEY_FRAME_BYTES, 47 + 2 * 16384 + 16);
    assert_eq!(enc.frame_len(), frame_bytes(FrameKind::PublicKey, 1, N, 64, 64));
    assert_eq!((enc.chunk_bytes(), enc.frame_kind()), (512, FrameKind::PublicKey));
    let credentials = DeviceCredentials::new(0xD2, 9, MacKey::from_bytes([5; 32]));
    let readings: Vec<u16> = (0..300u16).map(|i| i.wrapping_mul(40_503)).collect();
    let bytes: Vec<u8> = readings.iter().flat_map(|r| r.to_le_bytes()).collect();
    let outgoing = enc.begin_message(&mut FrameCounter::new(20), bytes.len()).unwrap();
    let mut decoded = Vec::new();
    let mut buffer = vec![0u8; Enc::PUBLIC_KEY_FRAME_BYTES + 1];
    for (i, chunk) in chunks(&bytes, Enc::READING_BYTES).enumerate() {
        let out = &mut buffer[1..];
        let len = enc.encrypt_frame_into(&credentials, &outgoing, &chunk, out).unwrap();
        assert_eq!(len, Enc::PUBLIC_KEY_FRAME_BYTES);
        let words = common::integer_frame_words(&out[..len], &credentials, FrameKind::PublicKey, 20 + i as u64, 0);
        let (mask, body) = words.split_at(N);
        decoded.extend(decode(&phase(&keys, mask, body), 16, 256));
    }
    assert_eq!(
        &decoded[..300],
        readings.iter().map(|&v| u64::from(v)).collect::<Vec<_>>()
    );
    assert!(decoded[300..].iter().all(|&v| v == 0));
    let _: &dyn FrameEncryptor = &*enc;
}
