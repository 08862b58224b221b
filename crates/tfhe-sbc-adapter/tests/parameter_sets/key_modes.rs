//! The key modes of `docs/security.md`'s table on a big-key set: the fleet key (seeded frames), the public
//! key, and a per-device key switched into the big key; each one's inputs decrypted and their noise measured
//! against its derivation.

use crate::common::noise::{PhaseNoise, Q, device_tuniform_bound, tuniform_variance};
use crate::common::{intake_of, receive_message, sealed_frames};
use crate::gates::{check_inputs, run_gates};
use crate::keys::{Keys, big_phase, bit, tag};
use crate::{
    DEVICE_KS_BASE_LOG, DEVICE_KS_LEVELS, DEVICE_SAMPLES, MESSAGE_BYTES, MODE_GATES, PK_NOISE_SAMPLES, gaussian_std,
};
use rand_core::{Rng, SeedableRng};
use std::time::{Duration, Instant};
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::core_crypto::commons::generators::DeterministicSeeder;
use tfhe::core_crypto::commons::math::random::{Seed, Seeder};
use tfhe::core_crypto::prelude::{
    CiphertextModulus, DecompositionBaseLog, DecompositionLevelCount, DefaultRandomGenerator,
    EncryptionRandomGenerator, LweCiphertext, LweSecretKey, LweSize, allocate_and_generate_new_lwe_keyswitch_key,
    keyswitch_lwe_ciphertext,
};
use tfhe_sbc_adapter::interop::InteropError;
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet};
use tfhe_sbc_adapter::registry::DeviceEncryption;
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::GlweDecryptor;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};
use tfhe_sbc_device::noise::DeviceNoise;

/// Fleet key, seeded frames: the device encrypts under the `ClientKey`'s GLWE key; returns (inputs, bits).
pub fn secret_key_path<const N: usize, const K: usize>(set: BooleanSet, keys: &Keys) -> (Vec<Ciphertext>, Vec<bool>) {
    let params = set.glwe_parameters();
    let mut message = [0u8; MESSAGE_BYTES];
    Blake2bXof::from_seed([60 + tag(set); 32]).fill_bytes(&mut message);
    let bits: Vec<bool> = (0..8 * MESSAGE_BYTES).map(|i| bit(&message, i)).collect();

    // Device.
    let mac_key = [0x5a ^ tag(set); 32];
    let credentials = DeviceCredentials::new(100 + u64::from(tag(set)), 1, MacKey::from_bytes(mac_key));
    let mut encryptor = Box::new(
        GlweEncryptor::<N, K>::new(&params, &keys.glwe_key, Blake2bXof::from_seed([70 + tag(set); 32])).unwrap(),
    );
    let frame_len = frame_bytes(FrameKind::Seeded, K, N, 32, 32);
    let start = Instant::now();
    let frames = sealed_frames(&mut *encryptor, &credentials, &mut FrameCounter::new(0), &message);
    let device_time = start.elapsed();
    assert_eq!(frames.len(), 1024 / N);
    assert!(frames.iter().all(|f| f.len() == frame_len));

    // Adapter: authenticated intake, then extraction only.
    let server_credentials = DeviceCredentials::new(credentials.device_id(), 1, MacKey::from_bytes(mac_key));
    let mut intake = intake_of(server_credentials, DeviceEncryption::SecretKey);
    let start = Instant::now();
    let received = receive_message(&mut intake, &frames, Instant::now());
    let intake_time = start.elapsed();
    let start = Instant::now();
    let inputs = keys.bridge.message_to_booleans(&received).unwrap();
    let extract_time = start.elapsed();
    assert_eq!(inputs.len(), bits.len());
    // A frame of this set handed to the other set's bridge is refused with a typed error.
    let other = BooleanSet::BIG_KEY.into_iter().find(|&s| s != set).unwrap();
    assert!(matches!(
        BigKeyBridge::new(other).unwrap().frame_to_booleans(&received.frames[0]),
        Err(InteropError::WrongParameterSet { .. })
    ));

    let mut noise = PhaseNoise::default();
    let errors = check_inputs(keys, &inputs, &bits, &mut noise);
    let bound = device_tuniform_bound(&params);
    println!(
        "{set} fleet key: {} seeded frame(s) of {frame_len} B = {} B per 1024 bits; device {:.2?} per 1024 bits; \
         intake (MAC, decode, mask) {:.2?}, extraction {:.2?} = {:.2} us per bit (no key switch); \
         {} inputs, {errors} decryption errors, input noise {noise:?} (TUniform({bound}): 2^{:.2})",
        frames.len(),
        frames.len() * frame_len,
        device_time,
        intake_time,
        extract_time,
        (intake_time + extract_time).as_secs_f64() * 1e6 / bits.len() as f64,
        inputs.len(),
        (tuniform_variance(bound).sqrt()).log2() - 32.0,
    );
    assert_eq!(errors, 0);
    // The measured input noise is the device's TUniform (no key switch adds any): within 10 %.
    let ratio = noise.variance() / tuniform_variance(bound);
    assert!((0.8..1.25).contains(&ratio), "input noise variance ratio {ratio}");
    (inputs, bits)
}

/// Public-key mode: a seeded public key under the `ClientKey`'s GLWE key, a `PublicKeyEncryptor::<N, K>`,
/// public-key frames through the intake, gates; and the phase noise over >= 10^5 coefficients.
pub fn public_key_path<const N: usize, const K: usize>(set: BooleanSet, keys: &Keys) -> (PhaseNoise, f64) {
    let params = set.glwe_parameters();
    // The trusted party's public key: a seeded encryption of zero under the GLWE key. The device's own
    // seeded encryption core makes it (as `public_key::generate_seeded_glwe_public_key` does, which needs an
    // FFT plan this crate's tests cannot name): encrypt all-false bits, then remove their encoding.
    let mut trusted = Box::new(
        GlweEncryptor::<N, K>::new(&params, &keys.glwe_key, Blake2bXof::from_seed([80 + tag(set); 32])).unwrap(),
    );
    let mut pk_body = [0u32; N];
    let pk_seed = trusted.encrypt_seeded_glwe_ciphertext(&[0u8; 0], &mut pk_body).unwrap();
    pk_body
        .iter_mut()
        .for_each(|b| *b = b.wrapping_sub(encode_bool::<u32>(false)));
    drop(trusted);

    let mut device = Box::new(
        PublicKeyEncryptor::<N, K>::new(&params, &pk_seed, &pk_body, Blake2bXof::from_seed([90 + tag(set); 32]))
            .unwrap(),
    );
    let bound = device_tuniform_bound(&params);
    assert!(matches!(device.noise(), Some(DeviceNoise::TUniform(t)) if t.bound_log2() == bound));

    // Frames through the intake, then gates.
    let mut message = [0u8; MESSAGE_BYTES];
    Blake2bXof::from_seed([100 + tag(set); 32]).fill_bytes(&mut message);
    let bits: Vec<bool> = (0..8 * MESSAGE_BYTES).map(|i| bit(&message, i)).collect();
    let mac_key = [0xa5 ^ tag(set); 32];
    let credentials = DeviceCredentials::new(200 + u64::from(tag(set)), 1, MacKey::from_bytes(mac_key));
    let frame_len = frame_bytes(FrameKind::PublicKey, K, N, 32, 32);
    let start = Instant::now();
    let frames = sealed_frames(&mut *device, &credentials, &mut FrameCounter::new(0), &message);
    let device_time = start.elapsed();
    assert!(frames.iter().all(|f| f.len() == frame_len));
    let mut intake = intake_of(
        DeviceCredentials::new(credentials.device_id(), 1, MacKey::from_bytes(mac_key)),
        DeviceEncryption::PublicKey,
    );
    let received = receive_message(&mut intake, &frames, Instant::now());
    let (mut mask, mut body) = (vec![0u32; K * N], [0u32; N]);
    let inputs = keys.bridge.message_to_booleans(&received).unwrap();
    let mut input_noise = PhaseNoise::default();
    let errors = check_inputs(keys, &inputs, &bits, &mut input_noise);
    let gates = run_gates(keys, &inputs, &bits, MODE_GATES);

    // The phase noise over >= 10^5 coefficients, with the device's decryptor.
    let mut decryptor = Box::new(GlweDecryptor::<N, K>::new(&keys.glwe_key).unwrap());
    let mut rng = Blake2bXof::from_seed([110 + tag(set); 32]);
    let mut plain = [0u8; 128];
    let plain = &mut plain[..N / 8];
    let mut phase = [0u32; N];
    let mut noise = PhaseNoise::default();
    while noise.count < PK_NOISE_SAMPLES {
        rng.fill_bytes(plain);
        device.encrypt_glwe_ciphertext(plain, &mut mask, &mut body).unwrap();
        decryptor.decrypt_phase(&mask, &body, &mut phase).unwrap();
        for (i, &p) in phase.iter().enumerate() {
            noise.add_phase(p, bit(plain, i));
        }
    }
    // N Var(e)/2 + Var(e2) + kN Var(e1)/2, every term TUniform(bound) (the public key's e too: it was made
    // with the device's sampler).
    let derived = (N as f64 / 2.0 + 1.0 + (K * N) as f64 / 2.0) * tuniform_variance(bound);
    // The same given this key s and this public key's noise e (both fixed for every sample). u is binary,
    // so E[u] = 1/2 and e * u has a fixed part per coefficient j, (e * (1 + X + ... + X^(N-1)))_j / 2 =
    // S_j / 2 with S_j = sum_{i <= j} e_i - sum_{i > j} e_i, around which it varies by |e|^2 / 4; e1 * s
    // has weight(s) Var(e1). Averaged over keys, mean_j S_j^2 is |e|^2 and this is the formula above.
    let mut e = [0u32; N];
    decryptor
        .decrypt_seeded_phase_parts(&pk_seed, &pk_body, &mut e)
        .unwrap();
    let e: Vec<f64> = e.iter().map(|&p| f64::from(p as i32)).collect();
    let e_norm2: f64 = e.iter().map(|x| x * x).sum();
    let total: f64 = e.iter().sum();
    let mut prefix = 0.0;
    let mut mean_s2 = 0.0;
    for x in &e {
        prefix += x;
        let s_j = 2.0 * prefix - total;
        mean_s2 += s_j * s_j / N as f64;
    }
    let weight = keys.glwe_key.as_bytes().iter().filter(|&&b| b == 1).count() as f64;
    let conditional = e_norm2 / 4.0 + mean_s2 / 4.0 + (1.0 + weight) * tuniform_variance(bound);
    println!(
        "{set} public key: {} frame(s) of {frame_len} B = {} B per 1024 bits (mask in full); device {device_time:.2?} \
         per 1024 bits; {} inputs, {errors} decryption errors; {} gates ({} NAND, {} AND, {} XOR, {} MUX), {} \
         failures; phase noise over {} coefficients: std {:.1}/q = 2^{:.2} (derived {:.1}/q = 2^{:.2}; given this key \
         and public key {:.1}/q), max |e| {}/q",
        frames.len(),
        frames.len() * frame_len,
        inputs.len(),
        gates.total(),
        gates.nand,
        gates.and,
        gates.xor,
        gates.mux,
        gates.failures,
        noise.count,
        noise.std(),
        noise.log2_torus_std(),
        derived.sqrt(),
        derived.sqrt().log2() - 32.0,
        conditional.sqrt(),
        noise.max_abs,
    );
    assert_eq!(errors, 0);
    assert_eq!(gates.failures, 0);
    let ratio = noise.variance() / derived;
    assert!((0.85..1.15).contains(&ratio), "public-key noise variance ratio {ratio}");
    let ratio = noise.variance() / conditional;
    assert!(
        (0.95..1.05).contains(&ratio),
        "public-key noise variance ratio given the keys {ratio}"
    );
    (noise, derived)
}

/// Per-device key on a big-key set: the device has its own binary GLWE key; the only way into a gate is a
/// key switch from it into the **big** key (the gate then key-switches again, big -> small). Measures that
/// switch's noise against its derivation and returns (measured noise, derived variance in 1/q^2).
pub fn per_device_path<const N: usize, const K: usize>(set: BooleanSet, keys: &Keys) -> (PhaseNoise, f64, Duration) {
    let params = set.glwe_parameters();
    let tfhe = set.tfhe_parameters();
    let kn = K * N;
    let device_key = GlweSecretKey::generate_binary(
        vec![0u8; kn],
        PolynomialSize(N),
        &mut Blake2bXof::from_seed([120 + tag(set); 32]),
    )
    .unwrap();
    let device_lwe_key = LweSecretKey::from_container(
        device_key
            .as_bytes()
            .iter()
            .map(|&b| u32::from(b))
            .collect::<Vec<u32>>(),
    );
    // The trusted party's KSK: device key (k*N) -> big key (k*N), at the set's GLWE noise (the big key's).
    let mut seeder = DeterministicSeeder::<DefaultRandomGenerator>::new(Seed(130 + u128::from(tag(set))));
    let mut generator = EncryptionRandomGenerator::<DefaultRandomGenerator>::new(seeder.seed(), &mut seeder);
    let ksk = allocate_and_generate_new_lwe_keyswitch_key(
        &device_lwe_key,
        &keys.big_key(),
        DecompositionBaseLog(DEVICE_KS_BASE_LOG),
        DecompositionLevelCount(DEVICE_KS_LEVELS),
        tfhe.glwe_noise_distribution,
        CiphertextModulus::new_native(),
        &mut generator,
    );

    let mut encryptor = Box::new(
        GlweEncryptor::<N, K>::new(&params, &device_key, Blake2bXof::from_seed([140 + tag(set); 32])).unwrap(),
    );
    let mut rng = Blake2bXof::from_seed([150 + tag(set); 32]);
    let count = DEVICE_SAMPLES.max(3 * MODE_GATES);
    let mut inputs = Vec::with_capacity(count);
    let mut bits = Vec::with_capacity(count);
    let mut noise = PhaseNoise::default();
    let mut switch_time = Duration::ZERO;
    let mut errors = 0;
    let mut plain = [0u8; 128];
    while inputs.len() < count {
        let plain = &mut plain[..N / 8];
        rng.fill_bytes(plain);
        let mut ct = GlweCiphertext::from_container(vec![0u32; (K + 1) * N], PolynomialSize(N)).unwrap();
        encryptor.encrypt_glwe_ciphertext(plain, &mut ct).unwrap();
        for i in 0..N.min(count - inputs.len()) {
            let under_device = keys.bridge.extract_lwe(&ct, i).unwrap();
            let mut under_big = LweCiphertext::new(0u32, LweSize(kn + 1), CiphertextModulus::new_native());
            let start = Instant::now();
            keyswitch_lwe_ciphertext(&ksk, &under_device, &mut under_big);
            switch_time += start.elapsed();
            noise.add_phase(big_phase(keys, &under_big), bit(plain, i));
            let ct = Ciphertext::Encrypted(under_big);
            errors += usize::from(keys.client.decrypt(&ct) != bit(plain, i));
            inputs.push(ct);
            bits.push(bit(plain, i));
        }
    }
    let gates = run_gates(keys, &inputs, &bits, MODE_GATES);
    // Key switch kN -> kN, base B = 2^b, l levels, KSK noise sigma (1/q units), binary keys:
    //   l kN sigma^2 (B^2/12 + 1/6)     (the KSK's noise times the digits)
    // + kN (q^2 B^(-2l) / 24 + 1/48)    (the dropped low digits times key bits, E[s^2] = 1/2)
    // + the device's fresh TUniform noise.
    let b = 2f64.powi(DEVICE_KS_BASE_LOG as i32);
    let l = DEVICE_KS_LEVELS as f64;
    let sigma = gaussian_std(tfhe.glwe_noise_distribution) * Q;
    let derived = l * kn as f64 * sigma * sigma * (b * b / 12.0 + 1.0 / 6.0)
        + kn as f64 * (Q * Q * b.powf(-2.0 * l) / 24.0 + 1.0 / 48.0)
        + tuniform_variance(device_tuniform_bound(&params));
    println!(
        "{set} per-device key via a KSK device -> big key (base 2^{DEVICE_KS_BASE_LOG}, {DEVICE_KS_LEVELS} levels, \
         {} words = {:.1} MiB, seeded {} KiB): key switch {:.2} ms per bit; {} inputs, {errors} decryption errors, \
         noise {noise:?} (derived 2^{:.2}); {} gates, {} failures; gate outputs' noise {:?}",
        ksk.as_ref().len(),
        (ksk.as_ref().len() * 4) as f64 / (1 << 20) as f64,
        kn * DEVICE_KS_LEVELS * 4 / 1024,
        switch_time.as_secs_f64() * 1e3 / count as f64,
        inputs.len(),
        derived.sqrt().log2() - 32.0,
        gates.total(),
        gates.failures,
        gates.output_noise,
    );
    assert_eq!(errors, 0);
    assert_eq!(gates.failures, 0);
    let ratio = noise.variance() / derived;
    assert!(
        (0.7..1.4).contains(&ratio),
        "per-device switch noise variance ratio {ratio}"
    );
    (noise, derived, switch_time / count as u32)
}
