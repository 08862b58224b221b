//! Public-key encryption: round trips for every named set, the public-key file, the measured noise against
//! the derived variance, and the frame size.
//!
//! Noise threshold: over >= 10^5 coefficients the measured mean square of `phase - plaintext` must be within
//! 5% of the derived `E[(e * u)^2] + Var(e2) + |s| Var(e1)`, where `e` is the public key's actual noise, `u`
//! is Bernoulli(1/2) (so `E[(e * u)^2]` is about `N Var(e) / 2`; the test computes it exactly for this `e`)
//! and `|s|` the key's number of ones (about `kN / 2`). At 10^5 samples the relative standard error of a
//! mean square is about 0.5%, so 5% is 10 standard errors.
#![allow(clippy::unwrap_used)]

mod common;

use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::{
    DEFAULT_KS_PBS_GLWE_512_K3, ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, GlweParameters, TFHE_LIB_GLWE_1024,
};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::GlweDecryptor;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::public_key_encryption::{PublicKeyBody, generate_seeded_glwe_public_key};
use tfhe_sbc_device::files::public_key::{
    decode_public_key, encode_public_key, public_key_body, public_key_file_bytes,
};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::{chunks, message_bit};
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};
use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;

/// The trusted party: a key of `params`' shape and its public key (seed, body), through the file format.
fn key_and_public_key(params: &GlweParameters, seed: u8) -> (GlweSecretKey<Vec<u8>>, [u8; 32], Vec<u32>) {
    let (n, k) = (params.polynomial_size().0, params.glwe_dimension().0);
    let key = common::secret_key(params, seed);
    let plan = negacyclic_fft::Plan::new(n).unwrap();
    let mut spectrum = vec![0f64; k * n];
    compute_glwe_key_spectrum(&plan, &key, &mut spectrum).unwrap();
    let noise = DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime).unwrap();
    let mut body = vec![0u32; n];
    let mut scratch = vec![0f64; n];
    let mut rng = Blake2bXof::from_seed([seed.wrapping_add(1); 32]);
    let pk_seed = generate_seeded_glwe_public_key(&plan, &spectrum, &noise, &mut body, &mut scratch, &mut rng).unwrap();

    let mut file = vec![0u8; public_key_file_bytes(n)];
    let len = encode_public_key(params.id(), 77, &pk_seed, &body, &mut file).unwrap();
    assert_eq!(len, file.len());
    let mut decoded_body = vec![0u32; n];
    let header = decode_public_key(&file, &mut decoded_body).unwrap();
    assert_eq!((header.parameters, header.key_id, header.seed), (*params, 77, pk_seed));
    assert_eq!(decoded_body, body);
    (key, pk_seed, body)
}

fn round_trip<const N: usize, const K: usize>(params: &GlweParameters) {
    let (key, pk_seed, pk_body) = key_and_public_key(params, 3);
    let mut encryptor =
        Box::new(PublicKeyEncryptor::<N, K>::new(params, &pk_seed, &pk_body, Blake2bXof::from_seed([4; 32])).unwrap());
    let mut decryptor = Box::new(GlweDecryptor::<N, K>::new(&key).unwrap());
    let mut rng = Blake2bXof::from_seed([5; 32]);
    let mut message = vec![0u8; N / 8];
    let (mut mask, mut body) = (vec![0u32; K * N], vec![0u32; N]);
    for _ in 0..8 {
        rng.fill_bytes(&mut message);
        encryptor
            .encrypt_glwe_ciphertext(&message, &mut mask, &mut body)
            .unwrap();
        assert_eq!(common::decrypted(&mut decryptor, &mask, &body), message);
    }
}

/// Every boolean set: `TFHE_LIB_GLWE_1024`, and tfhe-rs's `k = 3, N = 512` and `k = 2, N = 1024`.
#[test]
fn round_trips_on_every_boolean_set() {
    round_trip::<1024, 1>(&TFHE_LIB_GLWE_1024);
    round_trip::<512, 3>(&DEFAULT_KS_PBS_GLWE_512_K3);
    round_trip::<1024, 2>(&ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2);
}

#[test]
fn corrupted_public_key_files_are_refused() {
    let (_, seed, body) = key_and_public_key(&TFHE_LIB_GLWE_1024, 6);
    let mut file = vec![0u8; public_key_file_bytes(1024)];
    encode_public_key(TFHE_LIB_GLWE_1024.id(), 1, &seed, &body, &mut file).unwrap();
    assert_eq!(file.len(), 4 + 1 + 2 + 4 + 32 + 4096 + 16, "about 4 KiB plus 32 bytes");
    let mut out = vec![0u32; 1024];
    for i in [0, 4, 5, 8, 20, 100, file.len() - 1] {
        let mut bad = file.clone();
        bad[i] ^= 1;
        assert!(decode_public_key(&bad, &mut out).is_err(), "byte {i}");
    }
    assert!(decode_public_key(&file[..file.len() - 1], &mut out).is_err());
    assert!(decode_public_key(&file, &mut out[..512]).is_err());
}

/// The measured noise of >= 10^5 public-key-encrypted coefficients against the derived variance, and 0
/// decoding errors.
#[test]
fn noise_matches_the_derived_variance() {
    const CIPHERTEXTS: usize = 100;
    let params = TFHE_LIB_GLWE_1024;
    let (key, pk_seed, pk_body) = key_and_public_key(&params, 7);
    // The public key's own noise e = b - a*s, exactly.
    let mut decryptor = Box::new(GlweDecryptor::<1024>::new(&key).unwrap());
    let mut e = vec![0u32; 1024];
    decryptor
        .decrypt_seeded_phase_parts(&pk_seed, &pk_body, &mut e)
        .unwrap();
    let e: Vec<f64> = e.iter().map(|&x| f64::from(x as i32)).collect();
    let sum_sq: f64 = e.iter().map(|x| x * x).sum();
    let var_fresh = DeviceNoise::for_parameters(&params, NoiseSampling::ConstantTime)
        .unwrap()
        .std_dev_scaled()
        .powi(2);
    let ones = key.as_bytes().iter().filter(|&&b| b == 1).count() as f64;
    // (e * u)_j = sum_t sign_jt e_t u_(j-t), sign -1 where the product wraps (t > j). Over u ~ Bernoulli(1/2)
    // i.i.d.: E[(e * u)_j^2] = sum_t e_t^2 / 2 + (S_j^2 - sum_t e_t^2) / 4, with S_j = sum_t sign_jt e_t.
    let total: f64 = e.iter().sum();
    let mut prefix = 0.0;
    let mut cross = 0.0;
    for &e_j in &e {
        prefix += e_j;
        let s_j = prefix - (total - prefix);
        cross += (s_j * s_j - sum_sq) / 4.0;
    }
    let e_times_u = sum_sq / 2.0 + cross / e.len() as f64;
    // e2: Var(e2). sum_i e1_i * s_i: fresh e1, fixed s: Var(e1) times the key's number of ones.
    let predicted = e_times_u + var_fresh + ones * var_fresh;

    let mut encryptor =
        Box::new(PublicKeyEncryptor::<1024>::new(&params, &pk_seed, &pk_body, Blake2bXof::from_seed([8; 32])).unwrap());
    let mut rng = Blake2bXof::from_seed([9; 32]);
    let (mut message, mut mask, mut body, mut phase) =
        ([0u8; 128], vec![0u32; 1024], vec![0u32; 1024], vec![0u32; 1024]);
    let (mut mean_sq, mut count, mut errors, mut max_abs) = (0f64, 0usize, 0usize, 0i64);
    for _ in 0..CIPHERTEXTS {
        rng.fill_bytes(&mut message);
        encryptor
            .encrypt_glwe_ciphertext(&message, &mut mask, &mut body)
            .unwrap();
        decryptor.decrypt_phase(&mask, &body, &mut phase).unwrap();
        for (i, &p) in phase.iter().enumerate() {
            let bit = message_bit(&message, i);
            let err = i64::from(p.wrapping_sub(encode_bool::<u32>(bit)) as i32);
            mean_sq += (err * err) as f64;
            max_abs = max_abs.max(err.abs());
            errors += usize::from(tfhe_sbc_core::encoding::decode_bool(p) != bit);
            count += 1;
        }
    }
    mean_sq /= count as f64;
    println!(
        "public-key noise over {count} coefficients: std {:.1} (predicted {:.1}; 2^{:.2} of the torus), max |e| {max_abs}, {errors} decoding errors",
        mean_sq.sqrt(),
        predicted.sqrt(),
        (mean_sq.sqrt() / 2f64.powi(32)).log2()
    );
    assert!(count >= 100_000);
    assert_eq!(errors, 0);
    assert!(
        (mean_sq / predicted - 1.0).abs() < 0.05,
        "mean square {mean_sq} vs {predicted}"
    );
}

/// A public-key frame carries the mask in full: 8255 bytes at N = 1024, k = 1.
#[test]
fn public_key_frames_have_the_full_size() {
    let (_, pk_seed, pk_body) = key_and_public_key(&TFHE_LIB_GLWE_1024, 10);
    let mut encryptor = Box::new(
        PublicKeyEncryptor::<1024>::new(&TFHE_LIB_GLWE_1024, &pk_seed, &pk_body, Blake2bXof::from_seed([11; 32]))
            .unwrap(),
    );
    let credentials = DeviceCredentials::new(5, 77, MacKey::from_bytes([1; 32]));
    let mut counter = FrameCounter::new(0);
    let message = b"public-key reading";
    let outgoing = counter.begin_message(message.len(), 128).unwrap();
    let chunk = chunks(message, 128).next().unwrap();
    let (mut mask, mut body) = (vec![0u32; 1024], Box::new([0u32; 1024]));
    let mut out = vec![0u8; 9000];
    let len = encryptor
        .encrypt_public_key_frame(&credentials, &outgoing, &chunk, &mut mask, &mut body, &mut out)
        .unwrap();
    assert_eq!(len, frame_bytes(FrameKind::PublicKey, 1, 1024, 32, 32));
    assert_eq!(len, 8255);
}

/// A degenerate public key is refused before anything is encrypted under it: an all-zero body (every
/// "ciphertext" would carry the message in the clear), a low-weight body, a body equal to the mask or its
/// negation; and the encryptor then has no key. A real key of each shape passes. Every other family, on
/// every key form: `tests/public_key_check.rs`.
#[test]
fn degenerate_public_keys_are_refused() {
    use tfhe_sbc_device::csprng::mask::expand_mask_u32;
    use tfhe_sbc_device::{Error, PublicKeyDefect};
    let params = TFHE_LIB_GLWE_1024;
    let (_, seed, body) = key_and_public_key(&params, 21);
    let mut encryptor = Box::new(PublicKeyEncryptor::<1024>::EMPTY);
    encryptor.set_public_key(&params, &seed, &body).unwrap();
    assert!(encryptor.parameter_set() == params.id());

    let mut mask = vec![0u32; 1024];
    expand_mask_u32::<tfhe_sbc_device::csprng::Blake2bCounter>(&seed, &mut mask);
    let mut low_weight = vec![0u32; 1024];
    low_weight[5] = 1 << 29;
    let mut mostly_mask = body.clone();
    mostly_mask[..64].copy_from_slice(&mask[..64]);
    let negated_mask: Vec<u32> = mask.iter().map(|a| a.wrapping_neg()).collect();
    for (what, bad, defect) in [
        ("zero body", vec![0u32; 1024], PublicKeyDefect::ZeroBody),
        ("one non-zero word", low_weight, PublicKeyDefect::LowWeightBody),
        ("all ones", vec![u32::MAX; 1024], PublicKeyDefect::LowWeightBody),
        ("body = mask", mask.clone(), PublicKeyDefect::BodyEqualsMask),
        ("body = -mask", negated_mask, PublicKeyDefect::BodyEqualsMask),
        ("64 words of the mask", mostly_mask, PublicKeyDefect::BodyEqualsMask),
    ] {
        assert_eq!(
            encryptor.set_public_key(&params, &seed, &bad).unwrap_err(),
            Error::DegeneratePublicKey(defect),
            "{what}"
        );
        assert!(!encryptor.is_ready(), "{what}: no key is left set");
        // The same through the file format: the decoder refuses it, and so does the encryptor given its bytes.
        let mut file = vec![0u8; public_key_file_bytes(1024)];
        encode_public_key(params.id(), 77, &seed, &bad, &mut file).unwrap();
        assert_eq!(
            public_key_body(&file, 77).unwrap_err(),
            Error::DegeneratePublicKey(defect),
            "{what} (file)"
        );
        let body_le: Vec<u8> = bad.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(
            encryptor.set_public_key_le_bytes(&params, &seed, &body_le).unwrap_err(),
            Error::DegeneratePublicKey(defect),
            "{what} (bytes)"
        );
    }
    assert!(matches!(
        encryptor.set_public_key(&params, &seed, &body[..512]).unwrap_err(),
        Error::WrongLength { .. }
    ));
    // A real public key of the other shapes passes.
    for params in [DEFAULT_KS_PBS_GLWE_512_K3, ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2] {
        let (_, seed, body) = key_and_public_key(&params, 22);
        let k = params.glwe_dimension().0;
        tfhe_sbc_device::encrypt::public_key_encryption::check_public_key(&seed, k, PublicKeyBody::Words(&body))
            .unwrap();
    }
}

/// A public-key file is bound to the key set: the encryptor takes it only with the credential file's key
/// id, and a credential file whose public key names another key id (a key from elsewhere) is refused.
#[test]
fn public_keys_of_another_key_set_are_refused() {
    use tfhe_sbc_device::Error;
    use tfhe_sbc_device::files::credentials::{
        KeyMode, credentials_file_bytes, decode_credentials, encode_credentials,
    };
    let params = TFHE_LIB_GLWE_1024;
    let (_, seed, body) = key_and_public_key(&params, 23);
    let mut file = vec![0u8; public_key_file_bytes(1024)];
    encode_public_key(params.id(), 77, &seed, &body, &mut file).unwrap();

    let (header, body_le) = public_key_body(&file, 77).unwrap();
    let mut encryptor = Box::new(PublicKeyEncryptor::<1024>::EMPTY);
    encryptor
        .set_public_key_le_bytes(&header.parameters, &header.seed, body_le)
        .unwrap();
    assert_eq!(
        public_key_body(&file, 78).unwrap_err(),
        Error::PublicKeyOfAnotherKeySet {
            expected_key_id: 78,
            found_key_id: 77
        }
    );

    for (key_id, ok) in [(77, true), (0x1234_5678, false)] {
        let credentials = DeviceCredentials::new(3, key_id, MacKey::from_bytes([4; 32]));
        let mut credential_file = vec![0u8; credentials_file_bytes(KeyMode::PublicKey, &params)];
        encode_credentials(KeyMode::PublicKey, &params, &credentials, &file, &mut credential_file).unwrap();
        let decoded = decode_credentials(&credential_file);
        if ok {
            decoded.unwrap();
        } else {
            assert_eq!(
                decoded.unwrap_err(),
                Error::PublicKeyOfAnotherKeySet {
                    expected_key_id: key_id,
                    found_key_id: 77
                }
            );
        }
    }
}
