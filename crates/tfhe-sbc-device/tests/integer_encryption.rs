//! The integer encryptor: round trips of `u8`/`u16`/`u32` readings through a test-side `u64`
//! decryptor (the generic core's phase with `NttPlan64`), a fixed-seed known-answer digest, the noise's
//! standard deviation against TUniform(17), and the firmware-shape properties.
#![allow(clippy::unwrap_used)]

mod common;

use negacyclic_ntt::NttPlan64;
use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::entities::{GlweSecretKey, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::Error;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::glwe_encryption::decrypt_seeded_glwe_phase;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::product::NegacyclicProductPlan;
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;

const N: usize = 2048;

fn key(seed: u8) -> GlweSecretKey<Vec<u8>> {
    common::secret_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe(), seed)
}

fn encryptor(key: &GlweSecretKey<Vec<u8>>, rng_seed: u8) -> Box<IntegerEncryptor> {
    let mut e = Box::new(IntegerEncryptor::<N>::EMPTY);
    e.set_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, key).unwrap();
    e.seed_from_bytes(&mut [rng_seed; 32]);
    e
}

/// The test-side decryptor: the phase `b - a * s` of a seeded `u64` ciphertext.
fn phase(key: &GlweSecretKey<Vec<u8>>, seed: &[u8; MASK_SEED_BYTES], body: &[u64]) -> Vec<u64> {
    let plan = <NttPlan64 as NegacyclicProductPlan<N>>::PLAN;
    let mut spectrum = vec![[0u32; 3]; N];
    compute_glwe_key_spectrum(&plan, key, &mut spectrum).unwrap();
    let mut scratch = vec![[0u32; 3]; N];
    let mut out = vec![0u64; N];
    decrypt_seeded_glwe_phase::<tfhe_sbc_device::csprng::DeviceConstruction, _>(
        &plan,
        &spectrum,
        seed,
        body,
        &mut out,
        &mut scratch,
    )
    .unwrap();
    out
}

use common::decode_readings as decode;

#[test]
fn u8_u16_u32_readings_round_trip() {
    let key = key(3);
    let mut enc = encryptor(&key, 4);
    assert_eq!((enc.capacity(8), enc.capacity(16), enc.capacity(32)), (512, 256, 128));
    let mut rng = Blake2bXof::from_seed([5; 32]);
    let mut body = vec![0u64; N];

    let readings8: Vec<u8> = (0..512).map(|_| rng.next_u32() as u8).collect();
    let seed = enc.encrypt_u8(&readings8, &mut body).unwrap();
    let got = decode(&phase(&key, &seed, &body), 8, 512);
    assert_eq!(got, readings8.iter().map(|&v| u64::from(v)).collect::<Vec<_>>());

    let mut readings16: Vec<u16> = (0..200).map(|_| rng.next_u32() as u16).collect();
    readings16[0] = u16::MAX;
    let seed = enc.encrypt_u16(&readings16, &mut body).unwrap();
    let ph = phase(&key, &seed, &body);
    let got = decode(&ph, 16, 256);
    assert_eq!(
        &got[..200],
        readings16.iter().map(|&v| u64::from(v)).collect::<Vec<_>>()
    );
    assert!(got[200..].iter().all(|&v| v == 0), "padding coefficients encrypt 0");

    let mut readings32: Vec<u32> = (0..128).map(|_| rng.next_u32()).collect();
    readings32[5] = u32::MAX;
    let seed = enc.encrypt_u32(&readings32, &mut body).unwrap();
    let got = decode(&phase(&key, &seed, &body), 32, 128);
    assert_eq!(got, readings32.iter().map(|&v| u64::from(v)).collect::<Vec<_>>());

    assert_eq!(enc.capacity(64), 64);
    let mut readings64: Vec<u64> = (0..64).map(|_| rng.next_u64()).collect();
    readings64[7] = u64::MAX;
    readings64[8] = 0;
    let seed = enc.encrypt_u64(&readings64, &mut body).unwrap();
    assert_eq!(decode(&phase(&key, &seed, &body), 64, 64), readings64);
    assert!(matches!(
        enc.encrypt_u64(&[0; 65], &mut body),
        Err(Error::MessageTooLong {
            capacity: 64,
            found: 65
        })
    ));
}

#[test]
fn the_noise_is_tuniform_17() {
    // TUniform(b): uniform on [-2^b, 2^b] with half weight on the two ends; variance (2^(2b+1) + 1) / 6.
    let expected_std = ((2f64.powi(35) + 1.0) / 6.0).sqrt(); // 75,674.4: 2^16.21
    let key = key(7);
    let mut enc = encryptor(&key, 8);
    assert!((enc.noise().unwrap().std_dev_scaled() - expected_std).abs() < 1e-6 * expected_std);
    let encoding = MESSAGE_2_CARRY_2_TUNIFORM_2M128.encoding();
    let mut rng = Blake2bXof::from_seed([9; 32]);
    let mut body = vec![0u64; N];
    let mut expected = vec![0u64; N];
    let (mut sum, mut sum_sq, mut count, mut max_abs) = (0f64, 0f64, 0usize, 0i64);
    for _ in 0..128 {
        let readings: Vec<u8> = (0..512).map(|_| rng.next_u32() as u8).collect();
        let seed = enc.encrypt_u8(&readings, &mut body).unwrap();
        let values: Vec<u64> = readings.iter().map(|&v| u64::from(v)).collect();
        encoding.encode_values(&values, 8, &mut expected).unwrap();
        for (p, m) in phase(&key, &seed, &body).iter().zip(&expected) {
            let e = p.wrapping_sub(*m) as i64;
            max_abs = max_abs.max(e.abs());
            sum += e as f64;
            sum_sq += (e as f64) * (e as f64);
            count += 1;
        }
    }
    assert!(count >= 1 << 18);
    let mean = sum / count as f64;
    let std = (sum_sq / count as f64 - mean * mean).sqrt();
    println!(
        "noise over {count} coefficients: mean {mean:.1}, std {std:.1} (expected {expected_std:.1}), max |e| {max_abs}"
    );
    assert!(max_abs <= 1 << 17, "TUniform(17) is bounded by 2^17");
    assert!((std / expected_std - 1.0).abs() < 0.02, "std {std} vs {expected_std}");
    assert!(mean.abs() < 5.0 * expected_std / (count as f64).sqrt(), "mean {mean}");
}

#[test]
fn fixed_seeds_give_a_fixed_ciphertext() {
    let key = key(0x11);
    let mut enc = encryptor(&key, 0x22);
    let readings: Vec<u32> = (0..128u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
    let mut body = vec![0u64; N];
    let seed = enc.encrypt_u32(&readings, &mut body).unwrap();
    let digest = common::kat_digest(&seed, body.iter().copied(), u64::to_le_bytes);
    println!("integer ciphertext digest: {digest}");
    assert_eq!(
        digest,
        "525377e3374704f12a1cfc87717d10ef80ef86632444f478121637ec60e4c907"
    );
}

#[test]
fn firmware_shape_and_errors() {
    let key = key(1);
    let mut body = vec![0u64; N];
    let mut enc = Box::new(IntegerEncryptor::<N>::EMPTY);
    assert!(matches!(enc.encrypt_u8(&[1], &mut body), Err(Error::KeyNotSet)));
    assert_eq!(enc.capacity(8), 0);
    enc.set_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &key).unwrap();
    assert!(matches!(enc.encrypt_u8(&[1], &mut body), Err(Error::NotSeeded)));
    enc.seed(&mut Blake2bXof::from_seed([2; 32])).unwrap();
    assert!(enc.is_ready());
    assert!(matches!(
        enc.encrypt_u8(&[0; 513], &mut body),
        Err(Error::MessageTooLong {
            capacity: 512,
            found: 513
        })
    ));
    assert!(matches!(
        enc.encrypt_u32(&[0; 1], &mut body[..N - 1]),
        Err(Error::WrongLength { expected: N, .. })
    ));
    // The packed key gives the same ciphertexts as the unpacked one.
    let packed: Vec<u8> = key
        .as_bytes()
        .chunks(8)
        .map(|c| c.iter().rev().fold(0, |a, &b| (a << 1) | b))
        .collect();
    let mut a = encryptor(&key, 6);
    let mut b = Box::new(IntegerEncryptor::<N>::EMPTY);
    b.set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &packed).unwrap();
    b.seed_from_bytes(&mut [6; 32]);
    let mut body_b = vec![0u64; N];
    assert_eq!(
        a.encrypt_u16(&[7, 8, 9], &mut body).unwrap(),
        b.encrypt_u16(&[7, 8, 9], &mut body_b).unwrap()
    );
    assert_eq!(body, body_b);
    assert!(matches!(
        b.set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &packed[1..]),
        Err(Error::WrongLength { .. })
    ));
    assert!(!b.is_ready(), "a failed set_key leaves no key");
    // RAM: two `[u32; 3]` spectra of N (key and scratch, 24 KiB each), the CSPRNG and a few bytes.
    let size = size_of::<IntegerEncryptor<N>>();
    let spectra = 2 * N * size_of::<[u32; 3]>();
    println!("size_of::<IntegerEncryptor<2048>>() = {size} bytes ({spectra} of spectra)");
    assert!(size >= spectra && size - spectra <= 1024, "{size}");
    // Redacted Debug: no key material.
    let debug = format!("{a:?}");
    assert!(
        debug.contains("IntegerEncryptor") && !debug.contains("key:") && debug.len() < 200,
        "{debug}"
    );
    // A 32-bit boolean set is refused at the type level (IntegerParameters), and a 1024 key by shape.
    let small = common::secret_key(&TFHE_LIB_GLWE_1024, 1);
    assert!(matches!(
        a.set_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &small),
        Err(Error::PolynomialSizeMismatch {
            expected: N,
            found: 1024
        })
    ));
}

#[test]
fn frames_carry_u64_words_little_endian() {
    use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
    use tfhe_sbc_device::frame::message::chunks;
    use tfhe_sbc_device::frame::{FrameCounter, FrameKind, HEADER_BYTES, frame_bytes};

    type Enc = IntegerEncryptor<N>;
    assert_eq!(Enc::SEEDED_FRAME_BYTES, 47 + 32 + 16384 + 16);
    assert_eq!(Enc::SEEDED_FRAME_BYTES, frame_bytes(FrameKind::Seeded, 1, 2048, 64, 64));
    let key = key(12);
    let mut enc = encryptor(&key, 13);
    let credentials = DeviceCredentials::new(0xD1, 7, MacKey::from_bytes([4; 32]));
    // 300 u16 readings: 600 bytes, two frames (512 + 88 bytes).
    let readings: Vec<u16> = (0..300u16).map(|i| i.wrapping_mul(40_503)).collect();
    let bytes: Vec<u8> = readings.iter().flat_map(|r| r.to_le_bytes()).collect();
    let outgoing = enc.begin_message(&mut FrameCounter::new(10), bytes.len()).unwrap();
    assert_eq!(outgoing.chunk_count(), 2);
    let mut decoded = Vec::new();
    // An odd offset in the buffer: the in-place writer must not depend on the buffer's alignment.
    let mut buffer = vec![0u8; Enc::SEEDED_FRAME_BYTES + 3];
    for (i, chunk) in chunks(&bytes, Enc::MESSAGE_BYTES).enumerate() {
        let out = &mut buffer[1 + i..];
        let len = enc.encrypt_frame_into(&credentials, &outgoing, &chunk, out).unwrap();
        assert_eq!(len, Enc::SEEDED_FRAME_BYTES);
        let body = common::integer_frame_words(&out[..len], &credentials, FrameKind::Seeded, 10 + i as u64, 32);
        let seed: [u8; 32] = out[HEADER_BYTES..HEADER_BYTES + 32].try_into().unwrap();
        decoded.extend(decode(&phase(&key, &seed, &body), 16, 256));
    }
    // The blocks of the little-endian bytes are the blocks of the u16 readings.
    assert_eq!(
        &decoded[..300],
        readings.iter().map(|&v| u64::from(v)).collect::<Vec<_>>()
    );
    assert!(decoded[300..].iter().all(|&v| v == 0));
    let short = &mut buffer[..Enc::SEEDED_FRAME_BYTES - 1];
    let chunk = chunks(&bytes, Enc::MESSAGE_BYTES).next().unwrap();
    assert!(matches!(
        enc.encrypt_frame_into(&credentials, &outgoing, &chunk, short),
        Err(Error::BufferTooSmall)
    ));
}
