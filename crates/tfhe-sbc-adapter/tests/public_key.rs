//! Public-key mode end to end on `TFHE_LIB_PARAMETERS`: the trusted party makes a
//! seeded public key under the tfhe-rs `ClientKey`'s GLWE key (`provision_public_key_device`), a
//! `PublicKeyEncryptor::<1024>` reads it from its credential file and sends v2 public-key frames through the
//! `KeyedIntake`, and the bridge extracts and key-switches them with the server key's key-switching key,
//! as it does a fleet device's.
//!
//! Noise and failure probability (`public_key_bits_key_switched_decrypt_with_zero_errors`). For 10 frames
//! of 1024 bits from the public-key device and 10 from a fleet device in the same key set, the test measures
//! the phase noise after extraction (under the GLWE key read flat) and after the key switch (under the
//! small key), as a standard deviation in `log2` of the torus. Expected: after extraction `2^-19.8` for the
//! public key (`(N/2 + 1 + N/2) Var(TUniform(8))`, 4732/q) and `2^-24.8` for the fleet (TUniform(8),
//! 147.8/q); after the key switch about `2^-8.3` for both: the key switch's own noise (`1024 x 8` digits of
//! variance about 1.5 times the key's Gaussian `2^-15`, plus the dropped digits) swamps either input. A
//! gate's failure probability is a function of the variance of its inputs (a NAND input enters with weight
//! 1, an XOR input with weight 2; the margin is 1/8 and 1/4) plus the modulus switch's, so the public-key
//! mode keeps the fleet mode's failure probability if its key-switched variance is the fleet's. Asserted:
//! * 0 decryption errors in 10,240 key-switched public-key bits (and in 10,240 fleet bits);
//! * the public-key extraction variance within 15 % of the derivation above;
//! * the public-key extraction variance at least `2^16` times below the fleet's key-switched variance (its
//!   standard deviation >= 8 bits below the key switch's; measured: 11.6 bits), so it raises the variance a
//!   gate sees by less than `2^-16` of it;
//! * the public-key key-switched variance within 10 % of the fleet's (same key switch, inputs that differ by
//!   that negligible term: at 10^4 samples per side the ratio's standard error is 2 %, so 10 % is 5
//!   standard errors). Measured: 0.976.
//!
//! And the set's own level (`gates_on_public_key_bits_mixed_with_fleet_and_per_device_bits`): tfhe-rs sizes
//! `TFHE_LIB_PARAMETERS` for gates whose inputs are other gates' outputs (bootstrap, then key switch). The
//! key-switched public-key bits must be less noisy than those outputs, measured on the 256 gates' outputs
//! (`2^-8.0` against `2^-8.3`).
//!
//! The noise test prints the figures and, for both modes, the margin of a NAND on two such inputs in
//! standard deviations and its Gaussian failure estimate. `--nocapture` shows them.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

mod common;

use common::key_store::redigest;
use common::noise::{PhaseNoise, Q, device_tuniform_bound, tuniform_variance};
use common::{receive_message, sealed_frames};
use rand_core::{Rng, SeedableRng};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::engine::BooleanEngine;
use tfhe::boolean::parameters::DEFAULT_PARAMETERS_KS_PBS;
use tfhe::boolean::server_key::{BinaryBooleanGates, ServerKey};
use tfhe::core_crypto::commons::generators::DeterministicSeeder;
use tfhe::core_crypto::commons::math::random::Seed;
use tfhe::core_crypto::prelude::{
    DefaultRandomGenerator, LweCiphertextOwned, LweSecretKeyOwned, decrypt_lwe_ciphertext,
};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::{IntakeConfig, Message};
use tfhe_sbc_adapter::interop::big_key::{BooleanSet, generate_keys, glwe_key_from_client_key};
use tfhe_sbc_adapter::interop::{
    BooleanBridge, DeviceKsk, DeviceSecrets, InteropError, PublicKeyDevice, provision_fleet_device,
    provision_per_device, provision_public_key_device, public_key_from_client_key,
};
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, DeviceRecord, KeyMode, KeySetError, KeyStore, KeyedIntake};
use tfhe_sbc_adapter::registry::DeviceEncryption;
use tfhe_sbc_core::parameters::{DEFAULT_KS_PBS_GLWE_512_K3, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::files::credentials::{credentials_file_bytes, decode_credentials};
use tfhe_sbc_device::files::public_key::{decode_public_key, public_key_file_bytes};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};

/// The public-key device.
const PK: u64 = 0x9;
/// A fleet device (the `ClientKey`'s GLWE key).
const FLEET: u64 = 0xF;
/// A per-device device.
const OWN: u64 = 0xD;
/// Frames of 1024 bits per device in the noise test.
const FRAMES: usize = 10;

struct Fixture {
    client_key: ClientKey,
    server_key: ServerKey,
    /// The small LWE key (630): gate inputs, i.e. key-switched bits.
    small_key: LweSecretKeyOwned<u32>,
    /// The GLWE key read flat (1024): extracted bits.
    big_key: LweSecretKeyOwned<u32>,
}

/// One tfhe-rs key set for the whole file, from a fixed seed: server-key generation takes seconds.
fn fixture() -> &'static Fixture {
    static KEYS: OnceLock<Fixture> = OnceLock::new();
    KEYS.get_or_init(|| {
        let (client_key, server_key) = generate_keys(BooleanSet::TfheLib, &mut Blake2bXof::from_seed([0x7E; 32]));
        let (small_key, glwe_key, _) = client_key.clone().into_raw_parts();
        Fixture {
            client_key,
            server_key,
            small_key,
            big_key: glwe_key.into_lwe_secret_key(),
        }
    })
}

/// The public-key device, a fleet device and a per-device device, and the store the trusted party writes.
fn provision(seed: u8) -> (PublicKeyDevice, DeviceSecrets, DeviceSecrets, KeyStore) {
    let f = fixture();
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    let t = Instant::now();
    let (pk, pk_record) = provision_public_key_device(&f.client_key, PK, 3, &mut rng).unwrap();
    println!(
        "public-key device provisioned (seeded public key, MAC key) in {:.1?}",
        t.elapsed()
    );
    assert_eq!(pk_record.mode(), KeyMode::PublicKey);
    assert_eq!(pk_record.key().encryption(), DeviceEncryption::PublicKey);
    let (fleet, fleet_record) = provision_fleet_device(&f.client_key, FLEET, 1, &mut rng).unwrap();
    let (own, own_record) = provision_per_device(&f.client_key, OWN, 2, &mut rng).unwrap();
    let mut store = KeyStore::new(&f.server_key);
    for record in [pk_record, fleet_record, own_record] {
        store.insert(record).unwrap();
    }
    (pk, fleet, own, store)
}

fn keyed_intake(store: KeyStore) -> KeyedIntake<BooleanBridge> {
    let bridge = BooleanBridge::new(&fixture().server_key).unwrap();
    KeyedIntake::new(IntakeConfig::default(), store, bridge).unwrap()
}

/// Device side, as firmware boots: the credential file (mode, credentials, public-key file) decoded, the
/// public key read from it, the encryptor built from it. Returns the encryptor and the credentials.
fn public_key_encryptor(device: &PublicKeyDevice, seed: u8) -> (Box<PublicKeyEncryptor<1024>>, DeviceCredentials) {
    let file = device.credentials_file().unwrap();
    assert_eq!(
        file.len(),
        credentials_file_bytes(KeyMode::PublicKey, &TFHE_LIB_GLWE_1024)
    );
    let credentials = decode_credentials(&file).unwrap();
    assert_eq!(credentials.mode, KeyMode::PublicKey);
    assert_eq!(credentials.key_material, &device.public_key[..]);
    let mut body = vec![0u32; 1024];
    let header = decode_public_key(credentials.key_material, &mut body).unwrap();
    assert_eq!(header.parameters, TFHE_LIB_GLWE_1024);
    assert_eq!(header.key_id, device.credentials.key_id());
    let encryptor = Box::new(
        PublicKeyEncryptor::<1024>::new(
            &header.parameters,
            &header.seed,
            &body,
            Blake2bXof::from_seed([seed; 32]),
        )
        .unwrap(),
    );
    (encryptor, credentials.credentials)
}

/// `message` (a multiple of 128 bytes) as public-key frames, one per 1024 bits.
fn public_key_frames(
    encryptor: &mut PublicKeyEncryptor<1024>,
    credentials: &DeviceCredentials,
    message: &[u8],
    counter: &mut FrameCounter,
) -> Vec<Vec<u8>> {
    let frames = sealed_frames(encryptor, credentials, counter, message);
    assert!(
        frames
            .iter()
            .all(|f| f.len() == frame_bytes(FrameKind::PublicKey, 1, 1024, 32, 32))
    );
    frames
}

/// `message` as seeded frames under a secret key.
fn seeded_frames(
    key: &DeviceSecrets,
    credentials: &DeviceCredentials,
    message: &[u8],
    seed: u8,
    counter: &mut FrameCounter,
) -> Vec<Vec<u8>> {
    let mut encryptor =
        Box::new(GlweEncryptor::<1024>::new(&TFHE_LIB_GLWE_1024, &key.key, Blake2bXof::from_seed([seed; 32])).unwrap());
    sealed_frames(&mut *encryptor, credentials, counter, message)
}

fn random_message(rng: &mut Blake2bXof, bytes: usize) -> Vec<u8> {
    let mut out = vec![0u8; bytes];
    rng.fill_bytes(&mut out);
    out
}

fn bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

/// What one device's frames measured.
struct Measured {
    errors: usize,
    extracted: PhaseNoise,
    switched: PhaseNoise,
    key_switch_time: Duration,
}

/// Extracts and key-switches every bit of `message` (through the bridge, with the device's key), decrypts
/// every key-switched bit with the `ClientKey`, and measures the phase noise after extraction (GLWE key
/// read flat) and after the key switch (small key).
fn measure(bridge: &BooleanBridge, message: &Message, bits: &[u8]) -> Measured {
    let f = fixture();
    let start = Instant::now();
    let switched = bridge.message_to_booleans(message).unwrap();
    let key_switch_time = start.elapsed();
    assert_eq!(switched.len(), 8 * bits.len());
    let mut m = Measured {
        errors: 0,
        extracted: PhaseNoise::default(),
        switched: PhaseNoise::default(),
        key_switch_time,
    };
    for (i, ct) in switched.iter().enumerate() {
        let expected = bit(bits, i);
        m.errors += usize::from(f.client_key.decrypt(ct) != expected);
        let Ciphertext::Encrypted(lwe) = ct else {
            panic!("a key-switched bit is never trivial");
        };
        m.switched
            .add_phase(decrypt_lwe_ciphertext(&f.small_key, lwe).0, expected);
        let big: LweCiphertextOwned<u32> = BooleanBridge::extract(&message.frames[i / 1024].ciphertext, i % 1024);
        m.extracted
            .add_phase(decrypt_lwe_ciphertext(&f.big_key, &big).0, expected);
    }
    m
}

/// A NAND on two inputs of variance `var` (units of `1/q^2`): its margin in standard deviations and `-log2`
/// of the Gaussian estimate of its failure probability. NAND computes `-a - b + 1/8`, so the phase at the
/// bootstrap has variance `2 var` plus the modulus switch's (`n/2 + 1` rounding errors of variance
/// `(q / 2N)^2 / 12`, `n = 630`, `2N = 2048`), and the gate fails when it passes `1/8`.
/// `P(|Z| > z) ~ 2 phi(z) / z` is accurate to 1 % for `z > 10`.
fn nand_margin(var: f64) -> (f64, f64) {
    let modulus_switch = (630.0 / 2.0 + 1.0) * (Q / 2048.0).powi(2) / 12.0;
    let z = (Q / 8.0) / (2.0 * var + modulus_switch).sqrt();
    let tail_log2 = (-z * z / 2.0) / std::f64::consts::LN_2 + (2.0 / ((2.0 * std::f64::consts::PI).sqrt() * z)).log2();
    (z, -tail_log2)
}

#[test]
fn public_key_bits_key_switched_decrypt_with_zero_errors() {
    let (pk, fleet, _, store) = provision(1);
    let mut intake = keyed_intake(store);
    let bridge = Arc::clone(intake.converter());
    assert_eq!(bridge.key_mode(PK), Some(KeyMode::PublicKey));
    assert_eq!(bridge.key_mode(FLEET), Some(KeyMode::FleetSecretKey));
    let mut rng = Blake2bXof::from_seed([2; 32]);

    // Public-key device: 10 frames of 1024 bits, one message.
    let pk_bits = random_message(&mut rng, 128 * FRAMES);
    let (mut encryptor, credentials) = public_key_encryptor(&pk, 3);
    let start = Instant::now();
    let frames = public_key_frames(&mut encryptor, &credentials, &pk_bits, &mut FrameCounter::new(0));
    let pk_device_time = start.elapsed();
    let pk_bytes: usize = frames.iter().map(Vec::len).sum();
    let pk_message = receive_message(&mut intake, &frames, Instant::now());
    assert!(pk_message.frames.iter().all(|frame| frame.kind == FrameKind::PublicKey));
    let pk_measured = measure(&bridge, &pk_message, &pk_bits);

    // Fleet device, same key set: 10 seeded frames.
    let fleet_bits = random_message(&mut rng, 128 * FRAMES);
    let frames = seeded_frames(&fleet, &fleet.credentials, &fleet_bits, 4, &mut FrameCounter::new(0));
    let fleet_message = receive_message(&mut intake, &frames, Instant::now());
    let fleet_measured = measure(&bridge, &fleet_message, &fleet_bits);

    let derived = 1025.0 * tuniform_variance(device_tuniform_bound(&TFHE_LIB_GLWE_1024));
    for (name, m) in [("public key", &pk_measured), ("fleet", &fleet_measured)] {
        let (z, bits) = nand_margin(m.switched.variance());
        println!(
            "{name}: {} key-switched bits in {:.2?}, {} decryption errors; noise std after extraction 2^{:.2} \
             ({:.1}/q), after the key switch 2^{:.2}; NAND margin {z:.2} std, failure estimate 2^-{bits:.0}",
            m.switched.count,
            m.key_switch_time,
            m.errors,
            m.extracted.log2_torus_std(),
            m.extracted.variance().sqrt(),
            m.switched.log2_torus_std(),
        );
    }
    // The model: the fleet's measured key switch plus the public key's measured input noise.
    let (z, bits) = nand_margin(fleet_measured.switched.variance() + pk_measured.extracted.variance());
    println!(
        "public key, modelled as the fleet's key switch plus its own input noise: NAND margin {z:.2} std, \
         failure estimate 2^-{bits:.0} (the measured figures differ by the 2 % sampling error of a variance)"
    );
    let input_ratio = pk_measured.extracted.variance() / fleet_measured.switched.variance();
    let switched_ratio = pk_measured.switched.variance() / fleet_measured.switched.variance();
    println!(
        "public key: {FRAMES} frames, {pk_bytes} bytes ({} per 1024 bits), device {:.2?} per 1024 bits; \
         extraction noise derived 2^{:.2} ({:.1}/q); public-key input variance / key switch variance = 2^{:.1}; \
         key-switched variance public key / fleet = {switched_ratio:.4}",
        pk_bytes / FRAMES,
        pk_device_time / FRAMES as u32,
        derived.sqrt().log2() - 32.0,
        derived.sqrt(),
        input_ratio.log2(),
    );
    assert!(pk_measured.switched.count >= 10_000);
    assert_eq!(pk_measured.errors, 0, "public-key bits that decrypt wrong");
    assert_eq!(fleet_measured.errors, 0, "fleet bits that decrypt wrong");
    let ratio = pk_measured.extracted.variance() / derived;
    assert!((0.85..1.15).contains(&ratio), "extraction variance / derived = {ratio}");
    assert!(
        input_ratio < 2f64.powi(-16),
        "public-key input variance / key switch variance = {input_ratio}"
    );
    assert!(
        (0.9..1.1).contains(&switched_ratio),
        "key-switched variance, public key / fleet = {switched_ratio}"
    );
}

#[test]
fn gates_on_public_key_bits_mixed_with_fleet_and_per_device_bits() {
    let f = fixture();
    let (pk, fleet, own, store) = provision(5);
    let mut intake = keyed_intake(store);
    let bridge = Arc::clone(intake.converter());
    let mut rng = Blake2bXof::from_seed([6; 32]);
    let (mp, mf, mo) = (
        random_message(&mut rng, 128),
        random_message(&mut rng, 128),
        random_message(&mut rng, 128),
    );
    let (mut encryptor, credentials) = public_key_encryptor(&pk, 7);
    let frames = public_key_frames(&mut encryptor, &credentials, &mp, &mut FrameCounter::new(0));
    let cp = bridge
        .message_to_booleans(&receive_message(&mut intake, &frames, Instant::now()))
        .unwrap();
    let frames = seeded_frames(&fleet, &fleet.credentials, &mf, 8, &mut FrameCounter::new(0));
    let cf = bridge
        .message_to_booleans(&receive_message(&mut intake, &frames, Instant::now()))
        .unwrap();
    let frames = seeded_frames(&own, &own.credentials, &mo, 9, &mut FrameCounter::new(0));
    let co = bridge
        .message_to_booleans(&receive_message(&mut intake, &frames, Instant::now()))
        .unwrap();

    // 64 bit positions x 4 gates = 256 gates, every one with a public-key input, mixed with the fleet
    // device's and the per-device device's bits; the XOR takes two public-key bits.
    let sk = &f.server_key;
    let (mut gates, mut failures) = (0, 0);
    let mut outputs = PhaseNoise::default();
    let mut check = |ct: Ciphertext, expected: bool| {
        failures += usize::from(f.client_key.decrypt(&ct) != expected);
        if let Ciphertext::Encrypted(lwe) = &ct {
            outputs.add_phase(decrypt_lwe_ciphertext(&f.small_key, lwe).0, expected);
        }
        gates += 1;
    };
    let start = Instant::now();
    for i in 0..64 {
        let j = 16 * i + 5;
        let (p, p2, x, y) = (bit(&mp, j), bit(&mp, j + 1), bit(&mf, j), bit(&mo, j));
        check(sk.nand(&cp[j], &co[j]), !(p && y));
        check(sk.and(&cf[j], &cp[j]), x && p);
        check(sk.xor(&cp[j], &cp[j + 1]), p ^ p2);
        check(sk.mux(&cp[j], &cf[j], &co[j]), if p { x } else { y });
    }
    let elapsed = start.elapsed();
    // The public-key inputs' noise (all 1024 key-switched bits) against the gate outputs' (the inputs the
    // set is sized for).
    let mut inputs = PhaseNoise::default();
    for (i, ct) in cp.iter().enumerate() {
        let Ciphertext::Encrypted(lwe) = ct else {
            panic!("a key-switched bit is never trivial");
        };
        inputs.add_phase(decrypt_lwe_ciphertext(&f.small_key, lwe).0, bit(&mp, i));
    }
    println!(
        "{gates} tfhe-rs gates (NAND, AND, XOR, MUX) on public-key bits mixed with fleet and per-device bits in \
         {elapsed:.2?}: {failures} failures; noise std of the public-key inputs 2^{:.2}, of the gate outputs 2^{:.2}",
        inputs.log2_torus_std(),
        outputs.log2_torus_std()
    );
    assert!(gates >= 256);
    assert_eq!(failures, 0);
    assert!(
        inputs.variance() < outputs.variance(),
        "public-key inputs noisier than gate outputs: 2^{:.2} against 2^{:.2}",
        inputs.log2_torus_std(),
        outputs.log2_torus_std()
    );
}

#[test]
fn frames_of_the_wrong_kind_are_refused() {
    let (pk, fleet, own, store) = provision(10);
    let mut intake = keyed_intake(store);
    let message = [0x3C; 128];

    // A seeded frame claiming to come from the public-key device, MAC'd with its key (its thief, say,
    // encrypting under some secret key of its choice).
    let frames = seeded_frames(&fleet, &pk.credentials, &message, 11, &mut FrameCounter::new(0));
    assert_eq!(
        intake.receive(&frames[0], Instant::now()).unwrap_err(),
        IntakeError::FrameKindNotAllowed {
            device_id: PK,
            kind: FrameKind::Seeded
        }
    );
    // Public-key frames from the fleet and the per-device devices, under their own MAC keys.
    let (mut encryptor, _) = public_key_encryptor(&pk, 12);
    for (device, id) in [(&fleet, FLEET), (&own, OWN)] {
        let frames = public_key_frames(&mut encryptor, &device.credentials, &message, &mut FrameCounter::new(0));
        assert_eq!(
            intake.receive(&frames[0], Instant::now()).unwrap_err(),
            IntakeError::FrameKindNotAllowed {
                device_id: id,
                kind: FrameKind::PublicKey
            }
        );
    }
    // The refusals consumed no sequence number: the genuine frames with the same sequence numbers pass.
    let frames = public_key_frames(&mut encryptor, &pk.credentials, &message, &mut FrameCounter::new(0));
    assert_eq!(receive_message(&mut intake, &frames, Instant::now()).device_id, PK);
    let frames = seeded_frames(&fleet, &fleet.credentials, &message, 13, &mut FrameCounter::new(0));
    assert_eq!(receive_message(&mut intake, &frames, Instant::now()).device_id, FLEET);

    // A public-key device added later through `KeyedIntake::register` gets the same rule.
    let mut rng = Blake2bXof::from_seed([14; 32]);
    let (late, record) = provision_public_key_device(&fixture().client_key, 0x1A, 4, &mut rng).unwrap();
    intake.register(record, 0).unwrap();
    assert_eq!(intake.converter().key_mode(0x1A), Some(KeyMode::PublicKey));
    let frames = seeded_frames(&fleet, &late.credentials, &message, 15, &mut FrameCounter::new(0));
    assert_eq!(
        intake.receive(&frames[0], Instant::now()).unwrap_err(),
        IntakeError::FrameKindNotAllowed {
            device_id: 0x1A,
            kind: FrameKind::Seeded
        }
    );
    let (mut encryptor, credentials) = public_key_encryptor(&late, 16);
    let frames = public_key_frames(&mut encryptor, &credentials, &message, &mut FrameCounter::new(0));
    let received = receive_message(&mut intake, &frames, Instant::now());
    let bits = intake.converter().message_to_booleans(&received).unwrap();
    let wrong = (0..1024)
        .filter(|&i| fixture().client_key.decrypt(&bits[i]) != bit(&message, i))
        .count();
    assert_eq!(wrong, 0);
}

/// A public-key record round-trips through the key store file as mode 2 with no key-switching key, and a
/// record whose mode disagrees with its key material is refused. No tfhe-rs key generation: the decoder
/// checks shapes only.
#[test]
fn public_key_records_in_the_key_store_file() {
    assert_eq!(
        (
            KeyMode::FleetSecretKey.to_u8(),
            KeyMode::PerDeviceSecretKey.to_u8(),
            KeyMode::PublicKey.to_u8()
        ),
        (0, 1, 2),
        "the key store's mode ids are the credential file's"
    );
    let mut store = KeyStore::with_fingerprint([5; 32]);
    store
        .insert(DeviceRecord::new(
            DeviceCredentials::new(1, 2, MacKey::from_bytes([6; 32])),
            DeviceKeyMaterial::PublicKey,
        ))
        .unwrap();
    let ksk = DeviceKsk::from_parts(7, (0..8192u32).collect()).unwrap();
    store
        .insert(DeviceRecord::new(
            DeviceCredentials::new(3, 4, MacKey::from_bytes([8; 32])),
            DeviceKeyMaterial::PerDevice(ksk),
        ))
        .unwrap();
    let file = store.encode().to_vec();
    let back = KeyStore::decode(&file).unwrap();
    assert_eq!(back.get(1).unwrap().mode(), KeyMode::PublicKey);
    assert!(matches!(back.get(1).unwrap().key(), DeviceKeyMaterial::PublicKey));
    assert_eq!(back.get(3).unwrap().mode(), KeyMode::PerDeviceSecretKey);
    assert_eq!(back.encode().to_vec(), file);

    // Record 1 starts after the prefix (9), fingerprint (1 + 32) and device count (1): device id (1), key id
    // (1), parameter set (1), MAC key (1 + 32), mode, no key-switching key (1), then record 3.
    let first_mode = 9 + 33 + 1 + 1 + 1 + 1 + 33;
    let second_mode = first_mode + 1 + 1 + 1 + 1 + 1 + 33;
    assert_eq!(file[first_mode], 2);
    assert_eq!(file[second_mode], 1);
    let mut as_per_device = file.clone();
    as_per_device[first_mode] = 1;
    assert!(matches!(
        KeyStore::decode(&redigest(as_per_device)).unwrap_err(),
        KeySetError::KeyMaterialMismatch {
            device_id: 1,
            mode: KeyMode::PerDeviceSecretKey
        }
    ));
    let mut as_public_key = file.clone();
    as_public_key[second_mode] = 2;
    let error = KeyStore::decode(&redigest(as_public_key)).unwrap_err();
    assert!(matches!(
        error,
        KeySetError::KeyMaterialMismatch {
            device_id: 3,
            mode: KeyMode::PublicKey
        }
    ));
    assert_eq!(
        error.to_string(),
        "device 3: public-key record with a key-switching key"
    );
    let mut unknown = file;
    unknown[first_mode] = 3;
    assert!(matches!(
        KeyStore::decode(&redigest(unknown)).unwrap_err(),
        KeySetError::UnknownKeyMode { device_id: 1, mode: 3 }
    ));
}

/// The trusted-party helper serves the big-key sets too: a `k = 3`, `N = 512` public key under a
/// `DEFAULT_PARAMETERS_KS_PBS` client key round-trips through `PublicKeyEncryptor::<512, 3>`; a client key
/// of another set is refused.
#[test]
fn public_keys_for_other_sets_and_mismatched_client_keys() {
    let mut engine = BooleanEngine::new_from_seeder(&mut DeterministicSeeder::<DefaultRandomGenerator>::new(Seed(17)));
    let client_key = engine.create_client_key(DEFAULT_PARAMETERS_KS_PBS);
    let mut rng = Blake2bXof::from_seed([18; 32]);
    let file = public_key_from_client_key(BooleanSet::DefaultKsPbs, &client_key, 9, &mut rng).unwrap();
    assert_eq!(file.len(), public_key_file_bytes(512));
    let mut body = vec![0u32; 512];
    let header = decode_public_key(&file, &mut body).unwrap();
    assert_eq!((header.parameters, header.key_id), (DEFAULT_KS_PBS_GLWE_512_K3, 9));
    let mut encryptor = Box::new(
        PublicKeyEncryptor::<512, 3>::new(&header.parameters, &header.seed, &body, Blake2bXof::from_seed([19; 32]))
            .unwrap(),
    );
    let key = glwe_key_from_client_key(BooleanSet::DefaultKsPbs, &client_key).unwrap();
    let mut decryptor = Box::new(GlweDecryptor::<512, 3>::new(&key).unwrap());
    let (mut mask, mut ct_body, mut phase) = (vec![0u32; 3 * 512], vec![0u32; 512], vec![0u32; 512]);
    let mut decoded = [0u8; 64];
    for _ in 0..4 {
        let message = random_message(&mut rng, 64);
        encryptor
            .encrypt_glwe_ciphertext(&message, &mut mask, &mut ct_body)
            .unwrap();
        decryptor.decrypt_phase(&mask, &ct_body, &mut phase).unwrap();
        decode_bits(&phase, &mut decoded).unwrap();
        assert_eq!(&decoded[..], &message[..]);
    }
    assert_eq!(
        public_key_from_client_key(BooleanSet::TfheLib, &client_key, 9, &mut rng).unwrap_err(),
        InteropError::ParameterMismatch
    );
    assert_eq!(
        provision_public_key_device(&client_key, 1, 9, &mut rng).unwrap_err(),
        InteropError::ParameterMismatch
    );
    // A public-key device whose file is corrupt gets an error, not a credential file.
    let (mut device, _) = provision_public_key_device(&fixture().client_key, 1, 9, &mut rng).unwrap();
    device.public_key[100] ^= 1;
    assert!(device.credentials_file().is_err());
    device.public_key.truncate(5);
    assert!(device.credentials_file().is_err());
}
