//! Encrypting 512 `u8` readings (2048 shortint blocks, one `N = 2048` ciphertext) on the device, against
//! tfhe-rs 1.8.2's client paths in the same run (the first table of `docs/benchmarks-integer.md`).
//!
//! * ours: `IntegerEncryptor<2048, NttPlan64>` (u64 torus, the exact integer NTT, constant-time TUniform(17),
//!   keyed BLAKE2b XOF): the seeded ciphertext (`encrypt_u8`: encoding, mask from the seed, noise, product),
//!   and the whole v2 frame (header, seed, body written in the frame buffer, MAC), with the full body and
//!   with the compact body (`set_body_bits(compact_body_bits())`: the top 14 bits of each body word travel);
//! * ours, public key: `IntegerPublicKeyEncryptor<2048, NttPlan64>` under a seeded public key of the client
//!   key's GLWE key (`encrypt_u8`: encoding, `u`, the two products, noise; and the whole public-key frame,
//!   the mask in full);
//! * tfhe-rs `encrypt_glwe_ciphertext` (core_crypto, u64, k = 1, N = 2048, TUniform(17), binary key, its
//!   AES-CTR CSPRNG) of the same encoded blocks, and `encrypt_seeded_glwe_ciphertext` (fresh noise generator
//!   per call, as tfhe-rs seeds it);
//! * tfhe-rs high-level `FheUint8::encrypt` with the `ClientKey`, 512 times;
//! * tfhe-rs `CompactCiphertextList` of the 512 values under a `CompactPublicKey` (the high-level default
//!   with tfhe-rs's dedicated PKE parameters and casting key), unpacked and packed.
//!
//! All keys are one tfhe-rs `ClientKey`'s (ours encrypts under its GLWE key, fleet mode), and every path's
//! output is checked (decrypted, or its length and kinds read back) before anything is timed. After the
//! run it prints a table: time per 512 readings and per value, the ratio to our `encrypt_u8`, and the bytes
//! per `FheUint8` on the wire (our frame) or serialized (tfhe-rs's `safe_serialize`).
//!
//! Run: `cargo bench --bench integer_encrypt` (`cargo test --bench integer_encrypt` runs each once).
#![allow(clippy::unwrap_used)]

mod common;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode};
use rand_core::SeedableRng;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tfhe::core_crypto::commons::math::random::CompressionSeed;
use tfhe::core_crypto::prelude as tfhe_core;
use tfhe::prelude::*;
use tfhe::safe_serialization::safe_serialized_size;
use tfhe::{ClientKey, CompactCiphertextList, CompactPublicKey, FheTypes, FheUint8, FheUint8Id, Seed};
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig};
use tfhe_sbc_adapter::interop::integer::public_key::integer_public_key_from_client_key;
use tfhe_sbc_adapter::interop::integer::{IntegerExtractor, glwe_key_from_client_key, tfhe_glwe_key_u64};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::files::public_key::public_key_body;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;

const N: usize = 2048;
/// `u8` readings per ciphertext: 4 two-bit blocks each.
const VALUES: usize = N / 4;
const GROUP: &str = "integer_encrypt_512_u8";
const GROUP_SLOW: &str = "integer_encrypt_512_u8_slow";

const OURS: &str = "tfhe-sbc IntegerEncryptor, seeded (encrypt_u8)";
const OURS_FRAME: &str = "tfhe-sbc IntegerEncryptor, v2 frame, full body";
const OURS_COMPACT: &str = "tfhe-sbc IntegerEncryptor, v2 frame, compact body";
const OURS_PUBLIC_KEY: &str = "tfhe-sbc IntegerPublicKeyEncryptor (encrypt_u8)";
const OURS_PUBLIC_KEY_FRAME: &str = "tfhe-sbc IntegerPublicKeyEncryptor, v2 frame";
const TFHE_GLWE: &str = "tfhe-rs encrypt_glwe_ciphertext";
const TFHE_SEEDED_GLWE: &str = "tfhe-rs encrypt_seeded_glwe_ciphertext";
const TFHE_FHEUINT8: &str = "tfhe-rs FheUint8::encrypt x 512 (ClientKey)";
const TFHE_COMPACT: &str = "tfhe-rs CompactCiphertextList x 512";
const TFHE_COMPACT_PACKED: &str = "tfhe-rs CompactCiphertextList x 512, packed";

/// Seconds per iteration (one iteration = 512 readings) of every sample criterion took, per benchmark.
static SAMPLES: Mutex<BTreeMap<&'static str, Vec<f64>>> = Mutex::new(BTreeMap::new());
/// Bytes per `FheUint8` (wire or serialized form), per benchmark.
static BYTES: Mutex<BTreeMap<&'static str, f64>> = Mutex::new(BTreeMap::new());

/// Times `iters` runs of `f`, records the time per run under `name`.
fn timed(name: &'static str, iters: u64, mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    let e = t.elapsed();
    SAMPLES
        .lock()
        .unwrap()
        .entry(name)
        .or_default()
        .push(e.as_secs_f64() / iters as f64);
    e
}

fn median(name: &str) -> Option<f64> {
    let samples = SAMPLES.lock().unwrap();
    let mut v = samples.get(name)?.clone();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Benchmarks `f` as `name` in `group`, each sample also recorded under `name` ([`timed`]).
fn bench_timed(group: &mut BenchmarkGroup<'_, WallTime>, name: &'static str, mut f: impl FnMut()) {
    group.bench_function(name, |b| b.iter_custom(|iters| timed(name, iters, &mut f)));
}

fn set_bytes(name: &'static str, total: u64, values: usize) {
    BYTES.lock().unwrap().insert(name, total as f64 / values as f64);
}

fn credentials() -> DeviceCredentials {
    DeviceCredentials::new(0x1D_0006, 1, MacKey::from_bytes([0x6B; 32]))
}

/// Checks that `frame` goes through `intake` and the extractor and that `client_key` decrypts every one of
/// `readings` from it (`name`: the row, for the failure message).
fn check_frame(intake: &mut Intake, frame: &[u8], client_key: &ClientKey, readings: &[u8], name: &str) {
    let opened = intake.receive_integer(frame).unwrap();
    let fhe = IntegerExtractor::new()
        .extract_readings::<FheUint8Id, _>(&opened.ciphertext, 0, VALUES)
        .unwrap();
    for (i, (ct, &r)) in fhe.iter().zip(readings).enumerate() {
        let d: u8 = ct.decrypt(client_key);
        assert_eq!(d, r, "{name}: reading {i}");
    }
}

fn bench(c: &mut Criterion) {
    let t = Instant::now();
    // The high-level default with tfhe-rs's compact public-key encryption parameters and casting key: the
    // computation set is unchanged, so the client key's GLWE key is our set's key.
    let config = tfhe_sbc_adapter::interop::integer::compact_list::compact_list_config();
    let client_key = ClientKey::generate_with_seed(config, Seed(0x1D_0006));
    let public_key = CompactPublicKey::new(&client_key);
    eprintln!(
        "tfhe-rs client key and compact public key: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let readings: Vec<u8> = (0..VALUES as u32).map(|i| (i * 151 + 17) as u8).collect();

    // Ours, fleet mode: the device holds the client key's GLWE key.
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let device_key = glwe_key_from_client_key(&client_key).unwrap();
    let mut encryptor = Box::new(IntegerEncryptor::<N>::EMPTY);
    encryptor.set_key(&params, &device_key).unwrap();
    encryptor.seed_from_bytes(&mut [2; 32]);
    let sender = credentials();
    let mut counter = FrameCounter::new(0);
    let mut frame = vec![0u8; IntegerEncryptor::<N>::SEEDED_FRAME_BYTES];
    // The same with a compact body: the top `compact_body_bits()` bits of each body word travel.
    let compact_bits = params.glwe().compact_body_bits();
    let mut compact_encryptor = Box::new(IntegerEncryptor::<N>::EMPTY);
    compact_encryptor.set_key(&params, &device_key).unwrap();
    compact_encryptor.set_body_bits(compact_bits).unwrap();
    compact_encryptor.seed_from_bytes(&mut [3; 32]);
    let mut write_frame = |encryptor: &mut IntegerEncryptor<N>, frame: &mut [u8]| -> usize {
        let message = encryptor.begin_message(&mut counter, readings.len()).unwrap();
        let chunk = chunks(&readings, IntegerEncryptor::<N>::MESSAGE_BYTES).next().unwrap();
        encryptor.encrypt_frame_into(&sender, &message, &chunk, frame).unwrap()
    };
    // Check: each frame goes through the intake and the extractor, and the ClientKey decrypts every reading.
    let mut registry = DeviceRegistry::new();
    registry.register(credentials()).unwrap();
    let mut intake = Intake::new(IntakeConfig::default(), registry);
    for (name, enc) in [(OURS_FRAME, &mut encryptor), (OURS_COMPACT, &mut compact_encryptor)] {
        let frame_bytes = write_frame(enc, &mut frame);
        assert_eq!(frame_bytes, enc.seeded_frame_len());
        check_frame(&mut intake, &frame[..frame_bytes], &client_key, &readings, name);
        set_bytes(name, frame_bytes as u64, VALUES);
    }
    set_bytes(OURS, IntegerEncryptor::<N>::SEEDED_FRAME_BYTES as u64, VALUES);

    // Ours, public key: a seeded public key under the client key's GLWE key; nothing that decrypts.
    let mut rng = Blake2bXof::from_seed([4; 32]);
    let public_key_file = integer_public_key_from_client_key(&client_key, 1, &mut rng).unwrap();
    let (pk_header, pk_body) = public_key_body(&public_key_file, 1).unwrap();
    let mut pk_encryptor = Box::new(IntegerPublicKeyEncryptor::<N>::EMPTY);
    pk_encryptor
        .set_integer_public_key_le_bytes(&params, &pk_header.seed, pk_body)
        .unwrap();
    pk_encryptor.seed_from_bytes(&mut [5; 32]);
    let mut pk_registry = DeviceRegistry::new();
    pk_registry.register_public_key(credentials()).unwrap();
    let mut pk_intake = Intake::new(IntakeConfig::default(), pk_registry);
    let mut pk_frame = vec![0u8; IntegerPublicKeyEncryptor::<N>::PUBLIC_KEY_FRAME_BYTES];
    let mut pk_counter = FrameCounter::new(0);
    let mut write_pk_frame = |encryptor: &mut IntegerPublicKeyEncryptor<N>, frame: &mut [u8]| -> usize {
        let message = encryptor.begin_message(&mut pk_counter, readings.len()).unwrap();
        let chunk = chunks(&readings, IntegerPublicKeyEncryptor::<N>::READING_BYTES)
            .next()
            .unwrap();
        encryptor.encrypt_frame_into(&sender, &message, &chunk, frame).unwrap()
    };
    let pk_len = write_pk_frame(&mut pk_encryptor, &mut pk_frame);
    check_frame(
        &mut pk_intake,
        &pk_frame[..pk_len],
        &client_key,
        &readings,
        OURS_PUBLIC_KEY_FRAME,
    );
    set_bytes(OURS_PUBLIC_KEY_FRAME, pk_len as u64, VALUES);
    set_bytes(OURS_PUBLIC_KEY, pk_len as u64, VALUES);

    // tfhe-rs core_crypto: the same key, the same encoded blocks, TUniform(17).
    let tfhe_key = tfhe_glwe_key_u64(&device_key);
    let noise = tfhe_core::DynamicDistribution::<u64>::new_t_uniform(17);
    let encoding = params.encoding();
    let values: Vec<u64> = readings.iter().map(|&r| u64::from(r)).collect();
    let mut encoded = vec![0u64; N];
    encoding.encode_values(&values, 8, &mut encoded).unwrap();
    let plaintexts = tfhe_core::PlaintextList::from_container(encoded);
    let mut seeder = tfhe_core::new_seeder();
    let seeder = seeder.as_mut();
    let mut generator =
        tfhe_core::EncryptionRandomGenerator::<tfhe_core::DefaultRandomGenerator>::new(seeder.seed(), seeder);
    let modulus = tfhe_core::CiphertextModulus::new_native();
    let mut glwe = tfhe_core::GlweCiphertext::new(0u64, tfhe_core::GlweSize(2), tfhe_core::PolynomialSize(N), modulus);
    tfhe_core::encrypt_glwe_ciphertext(&tfhe_key, &mut glwe, &plaintexts, noise, &mut generator);
    // Every reading decrypts (`what`: the ciphertext, for the failure message).
    let check = |glwe: &tfhe_core::GlweCiphertextOwned<u64>, what: &str| {
        let mut decrypted = tfhe_core::PlaintextList::new(0u64, tfhe_core::PlaintextCount(N));
        tfhe_core::decrypt_glwe_ciphertext(&tfhe_key, glwe, &mut decrypted);
        for (i, (blocks, &r)) in decrypted.as_ref().chunks_exact(4).zip(&readings).enumerate() {
            assert_eq!(
                encoding.decode_value(blocks).unwrap(),
                u64::from(r),
                "{what} reading {i}"
            );
        }
    };
    check(&glwe, "tfhe-rs GLWE");
    set_bytes(TFHE_GLWE, (glwe.as_ref().len() * 8) as u64, VALUES);
    let mut seeded_glwe = tfhe_core::SeededGlweCiphertext::new(
        0u64,
        tfhe_core::GlweSize(2),
        tfhe_core::PolynomialSize(N),
        CompressionSeed::from(Seed(0x5EED)),
        modulus,
    );
    tfhe_core::encrypt_seeded_glwe_ciphertext(&tfhe_key, &mut seeded_glwe, &plaintexts, noise, seeder);
    let decompressed = seeded_glwe.clone().decompress_into_glwe_ciphertext();
    check(&decompressed, "tfhe-rs seeded GLWE");
    // The body and a 16-byte seed.
    set_bytes(TFHE_SEEDED_GLWE, (seeded_glwe.as_ref().len() * 8 + 16) as u64, VALUES);

    // tfhe-rs high level: per-value ClientKey encryption, and compact lists under the public key.
    let encrypt_each = || -> Vec<FheUint8> { readings.iter().map(|&r| FheUint8::encrypt(r, &client_key)).collect() };
    let each = encrypt_each();
    for (i, (ct, &r)) in each.iter().zip(&readings).enumerate() {
        let d: u8 = ct.decrypt(&client_key);
        assert_eq!(d, r, "FheUint8::encrypt reading {i}");
    }
    set_bytes(TFHE_FHEUINT8, safe_serialized_size(&each[0]).unwrap(), 1);
    drop(each);
    let compact = |packed: bool| -> CompactCiphertextList {
        let mut builder = CompactCiphertextList::builder(&public_key);
        builder.extend(readings.iter().copied());
        if packed {
            builder.build_packed()
        } else {
            builder.build()
        }
    };
    for (name, packed) in [(TFHE_COMPACT, false), (TFHE_COMPACT_PACKED, true)] {
        let list = compact(packed);
        // Decrypting needs the server key's casting (the adapter bench times that); here the list's shape.
        assert_eq!(list.len(), VALUES);
        assert!((0..VALUES).all(|i| list.get_kind_of(i) == Some(FheTypes::Uint8)));
        set_bytes(name, safe_serialized_size(&list).unwrap(), VALUES);
    }

    let mut group = c.benchmark_group(GROUP);
    let mut body = vec![0u64; N];
    bench_timed(&mut group, OURS, || {
        black_box(encryptor.encrypt_u8(black_box(&readings), &mut body).unwrap());
    });
    bench_timed(&mut group, OURS_FRAME, || {
        black_box(write_frame(&mut encryptor, &mut frame));
    });
    bench_timed(&mut group, OURS_COMPACT, || {
        black_box(write_frame(&mut compact_encryptor, &mut frame));
    });
    let (mut pk_mask, mut pk_out) = (vec![0u64; N], vec![0u64; N]);
    bench_timed(&mut group, OURS_PUBLIC_KEY, || {
        pk_encryptor
            .encrypt_u8(black_box(&readings), &mut pk_mask, &mut pk_out)
            .unwrap();
        black_box((&pk_mask, &pk_out));
    });
    bench_timed(&mut group, OURS_PUBLIC_KEY_FRAME, || {
        black_box(write_pk_frame(&mut pk_encryptor, &mut pk_frame));
    });
    bench_timed(&mut group, TFHE_GLWE, || {
        tfhe_core::encrypt_glwe_ciphertext(&tfhe_key, &mut glwe, &plaintexts, noise, &mut generator);
    });
    bench_timed(&mut group, TFHE_SEEDED_GLWE, || {
        tfhe_core::encrypt_seeded_glwe_ciphertext(&tfhe_key, &mut seeded_glwe, &plaintexts, noise, seeder);
    });
    bench_timed(&mut group, TFHE_COMPACT, || drop(black_box(compact(false))));
    bench_timed(&mut group, TFHE_COMPACT_PACKED, || drop(black_box(compact(true))));
    group.finish();

    // About 0.3 s per iteration: 10 flat samples.
    let mut group = c.benchmark_group(GROUP_SLOW);
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    bench_timed(&mut group, TFHE_FHEUINT8, || drop(black_box(encrypt_each())));
    group.finish();
}

fn human(seconds: f64) -> String {
    if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.2} us", seconds * 1e6)
    }
}

fn print_table(compact_bits: u32) {
    let Some(reference) = median(OURS) else {
        println!("(no samples of {OURS}: filtered out?)");
        return;
    };
    println!(
        "\nEncrypting 512 u8 readings (2048 blocks, N = 2048, q = 2^64, TUniform(17)); medians of criterion's \
         samples; ratio = time / {OURS}"
    );
    println!(
        "| {:<50} | {:>12} | {:>11} | {:>8} | {:>16} |",
        "encryption", "per 512 u8", "per value", "ratio", "bytes / FheUint8"
    );
    println!("|{:-<52}|{:->14}|{:->13}|{:->10}|{:->18}|", "", "", "", "", "");
    let bytes = BYTES.lock().unwrap();
    for name in [
        OURS,
        OURS_FRAME,
        OURS_COMPACT,
        OURS_PUBLIC_KEY,
        OURS_PUBLIC_KEY_FRAME,
        TFHE_GLWE,
        TFHE_SEEDED_GLWE,
        TFHE_FHEUINT8,
        TFHE_COMPACT,
        TFHE_COMPACT_PACKED,
    ] {
        let Some(m) = median(name) else { continue };
        let b = bytes.get(name).map_or("-".to_string(), |b| format!("{b:.2}"));
        println!(
            "| {name:<50} | {:>12} | {:>11} | {:>8.2} | {b:>16} |",
            human(m),
            human(m / VALUES as f64),
            m / reference
        );
    }
    println!(
        "Compact body: the top {compact_bits} bits of each body word (the set's compact_body_bits()). Bytes: ours and tfhe-rs's GLWE rows are the v2 frame (header, seed, MAC included) or the raw ciphertext \
         (+ 16-byte seed) / 512; tfhe-rs's high-level rows are safe_serialize sizes (one FheUint8; the list / 512)."
    );
}

fn main() {
    common::run(bench);
    print_table(MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().compact_body_bits());
}
