//! tfhe-rs's 128-bit big-key boolean sets against `TFHE_LIB_PARAMETERS`, in one run:
//!
//! * intake per bit: sample extraction wrapped as a gate input, nothing more, for `DEFAULT_PARAMETERS_KS_PBS`
//!   (`k = 3`, `N = 512`) and `PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS` (`k = 2`, `N = 1024`), against
//!   `TFHE_LIB_PARAMETERS`' extraction plus key switch (`BooleanBridge::to_boolean`) and the key switch alone
//!   (`BooleanBridge::key_switch`); and what a per-device key would cost on a big-key set, a key switch from
//!   the device key into the big key (base 2^10, 2 levels);
//! * the whole intake of 1024 bits on one core: MAC, decode, mask expansion (`Intake::receive`), then every
//!   bit extracted (`BigKeyBridge::frame_to_booleans`); and the same from a per-device device, whose frames
//!   the bridge switches once each, GLWE to GLWE, into the big key before extracting (`Converter::convert`
//!   with the device's `BigKeyDeviceKsk`, transformed once and cached). Each bit is a fresh `k*N + 1`-word tfhe-rs
//!   ciphertext, 6 to 8 MiB per 1024 bits: with glibc's default trimming, the freed output goes back to the
//!   OS after every iteration and first-touch page faults dominate (about 3x the time measured with
//!   `MALLOC_TRIM_THRESHOLD_=4000000000`);
//! * device encryption of 1024 bits: `GlweEncryptor<512, 3>` (two ciphertexts) and `<1024, 2>` against
//!   `<1024, 1>`, seeded; and `PublicKeyEncryptor` for the same shapes;
//! * bytes per 1024 bits (`wire::frame_bytes`), printed.
//!
//! Run: `cargo bench --bench big_key` (key generation for the three sets takes a few seconds first).
#![allow(clippy::unwrap_used)]

mod common;

use criterion::{BatchSize, Criterion, Throughput};
use negacyclic_fft::Plan;
use rand_core::SeedableRng;
use std::hint::black_box;
use std::time::Instant;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::core_crypto::commons::generators::DeterministicSeeder;
use tfhe::core_crypto::commons::math::random::{Seed, Seeder};
use tfhe::core_crypto::prelude::{
    CiphertextModulus, DecompositionBaseLog, DecompositionLevelCount, DefaultRandomGenerator,
    EncryptionRandomGenerator, LweCiphertext, LweKeyswitchKeyOwned, LweSecretKey, LweSize,
    allocate_and_generate_new_lwe_keyswitch_key, keyswitch_lwe_ciphertext,
};
use tfhe_sbc_adapter::interop::BooleanBridge;
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet, generate_keys};
use tfhe_sbc_adapter::interop::big_key_per_device::generate_big_key_device_ksk;
use tfhe_sbc_adapter::interop::{Converter, DeviceKeyMaterial};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};
use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;

const PER_BIT: &str = "big_key_intake_per_bit";
const WHOLE: &str = "big_key_intake_1024_bits_one_core";
const DEVICE: &str = "big_key_device_encrypt_1024_bits";

const K3_EXTRACT: &str = "DEFAULT_PARAMETERS_KS_PBS (k=3, N=512): extract + wrap";
const K2_EXTRACT: &str = "ERROR_PROB_2M165_KS_PBS (k=2, N=1024): extract + wrap";
const LIB_TO_BOOLEAN: &str = "TFHE_LIB: extract + key switch (to_boolean)";
const LIB_KEY_SWITCH: &str = "TFHE_LIB: key switch alone (key_switch)";
const K3_PER_DEVICE: &str = "k=3, N=512 per-device: extract + switch into big key";
const K2_PER_DEVICE: &str = "k=2, N=1024 per-device: extract + switch into big key";

const K3_WHOLE: &str = "DEFAULT_PARAMETERS_KS_PBS: 2 frames, receive + extract";
const K2_WHOLE: &str = "ERROR_PROB_2M165_KS_PBS: 1 frame, receive + extract";
const K3_WHOLE_PER_DEVICE: &str = "k=3, N=512 per-device: 2 frames, receive + switch + extract";
const K2_WHOLE_PER_DEVICE: &str = "k=2, N=1024 per-device: 1 frame, receive + switch + extract";

const LIB_SEEDED: &str = "GlweEncryptor<1024, 1> seeded (TFHE_LIB)";
const K3_SEEDED: &str = "GlweEncryptor<512, 3> seeded x 2";
const K2_SEEDED: &str = "GlweEncryptor<1024, 2> seeded";
const LIB_PK: &str = "PublicKeyEncryptor<1024, 1> (TFHE_LIB)";
const K3_PK: &str = "PublicKeyEncryptor<512, 3> x 2";
const K2_PK: &str = "PublicKeyEncryptor<1024, 2>";

/// The device key-switching key's decomposition: base 2^10, 2 levels (`crates/tfhe-sbc-adapter/tests/parameter_sets/`).
const DEVICE_KS: (usize, usize) = (10, 2);

fn device_key<const N: usize, const K: usize>(seed: u8) -> GlweSecretKeyOwned {
    GlweSecretKey::generate_binary(
        vec![0u8; K * N],
        tfhe_sbc_core::dimensions::PolynomialSize(N),
        &mut Blake2bXof::from_seed([seed; 32]),
    )
    .unwrap()
}

/// A ciphertext of the set's shape (its contents do not matter to extraction or key switching).
fn ciphertext(set: BooleanSet) -> GlweCiphertext<u32, Vec<u32>> {
    let (k, n) = (set.glwe_dimension(), set.polynomial_size());
    let data = (0..((k + 1) * n) as u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
    GlweCiphertext::from_container(data, set.glwe_parameters().polynomial_size()).unwrap()
}

/// A device -> big key KSK for `set`, the big key being a fresh client key's.
fn device_to_big_ksk<const N: usize, const K: usize>(set: BooleanSet) -> LweKeyswitchKeyOwned<u32> {
    let (client_key, _) = generate_keys(set, &mut Blake2bXof::from_seed([7; 32]));
    let device = device_key::<N, K>(8);
    let device_lwe = LweSecretKey::from_container(device.as_bytes().iter().map(|&b| u32::from(b)).collect::<Vec<_>>());
    let mut seeder = DeterministicSeeder::<DefaultRandomGenerator>::new(Seed(9));
    let mut generator = EncryptionRandomGenerator::<DefaultRandomGenerator>::new(seeder.seed(), &mut seeder);
    allocate_and_generate_new_lwe_keyswitch_key(
        &device_lwe,
        &client_key.encryption_key_and_noise().0,
        DecompositionBaseLog(DEVICE_KS.0),
        DecompositionLevelCount(DEVICE_KS.1),
        set.tfhe_parameters().glwe_noise_distribution,
        CiphertextModulus::new_native(),
        &mut generator,
    )
}

fn per_bit(c: &mut Criterion) {
    eprintln!("generating keys: TFHE_LIB server key, two big-key client keys and device KSKs ...");
    let start = Instant::now();
    let (_, lib_server) = generate_keys(BooleanSet::TfheLib, &mut Blake2bXof::from_seed([0x1B; 32]));
    let lib_bridge = BooleanBridge::new(&lib_server).unwrap();
    let k3_ksk = device_to_big_ksk::<512, 3>(BooleanSet::DefaultKsPbs);
    let k2_ksk = device_to_big_ksk::<1024, 2>(BooleanSet::ErrorProb2m165KsPbs);
    eprintln!("keys in {:.1?}", start.elapsed());

    let k3 = BigKeyBridge::new(BooleanSet::DefaultKsPbs).unwrap();
    let k2 = BigKeyBridge::new(BooleanSet::ErrorProb2m165KsPbs).unwrap();
    let (k3_ct, k2_ct, lib_ct) = (
        ciphertext(BooleanSet::DefaultKsPbs),
        ciphertext(BooleanSet::ErrorProb2m165KsPbs),
        ciphertext(BooleanSet::TfheLib),
    );
    let lib_big = BooleanBridge::extract(&lib_ct, 5);

    let mut group = c.benchmark_group(PER_BIT);
    group.throughput(Throughput::Elements(1));
    let mut i = 0usize;
    group.bench_function(K3_EXTRACT, |b| {
        b.iter(|| {
            i = (i + 1) % 512;
            k3.extract(black_box(&k3_ct), i).unwrap()
        })
    });
    group.bench_function(K2_EXTRACT, |b| {
        b.iter(|| {
            i = (i + 1) % 1024;
            k2.extract(black_box(&k2_ct), i).unwrap()
        })
    });
    group.sample_size(20);
    group.bench_function(LIB_TO_BOOLEAN, |b| {
        b.iter(|| {
            i = (i + 1) % 1024;
            lib_bridge.to_boolean(black_box(&lib_ct), i)
        })
    });
    group.bench_function(LIB_KEY_SWITCH, |b| {
        b.iter(|| lib_bridge.key_switch(black_box(&lib_big)))
    });
    for (id, bridge, ct, ksk) in [
        (K3_PER_DEVICE, &k3, &k3_ct, &k3_ksk),
        (K2_PER_DEVICE, &k2, &k2_ct, &k2_ksk),
    ] {
        let size = LweSize(bridge.set().big_lwe_dimension() + 1);
        group.bench_function(id, |b| {
            b.iter(|| {
                i = (i + 1) % bridge.set().polynomial_size();
                let under_device = bridge.extract_lwe(black_box(ct), i).unwrap();
                let mut under_big = LweCiphertext::new(0u32, size, CiphertextModulus::new_native());
                keyswitch_lwe_ciphertext(ksk, &under_device, &mut under_big);
                Ciphertext::Encrypted(under_big)
            })
        });
    }
    group.finish();
}

/// The seeded frames of one 1024-bit message from a `GlweEncryptor<N, K>` (device 1, MAC key [3; 32]).
fn frames<const N: usize, const K: usize>(set: BooleanSet) -> Vec<Vec<u8>> {
    let key = device_key::<N, K>(1);
    let mut encryptor =
        Box::new(GlweEncryptor::<N, K>::new(&set.glwe_parameters(), &key, Blake2bXof::from_seed([2; 32])).unwrap());
    let credentials = DeviceCredentials::new(1, 1, MacKey::from_bytes([3; 32]));
    let message = [0xA5u8; 128];
    let outgoing = encryptor
        .begin_message(&mut FrameCounter::new(0), message.len())
        .unwrap();
    let mut body = [0u32; N];
    chunks(&message, N / 8)
        .map(|chunk| {
            let mut out = vec![0u8; frame_bytes(FrameKind::Seeded, K, N, 32, 32)];
            encryptor
                .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut out)
                .unwrap();
            out
        })
        .collect()
}

fn whole(c: &mut Criterion) {
    let mut group = c.benchmark_group(WHOLE);
    group.throughput(Throughput::Elements(1024));
    group.sample_size(30);
    let now = Instant::now();
    for (id, set, frames) in [
        (
            K3_WHOLE,
            BooleanSet::DefaultKsPbs,
            frames::<512, 3>(BooleanSet::DefaultKsPbs),
        ),
        (
            K2_WHOLE,
            BooleanSet::ErrorProb2m165KsPbs,
            frames::<1024, 2>(BooleanSet::ErrorProb2m165KsPbs),
        ),
    ] {
        // The same device id 1 (MAC key [3; 32]) registered as a fleet device with one bridge, and with its
        // own key-switching key with the other: the frames are the same bytes, only the conversion differs.
        let (client_key, _) = generate_keys(set, &mut Blake2bXof::from_seed([7; 32]));
        let device = match set {
            BooleanSet::DefaultKsPbs => device_key::<512, 3>(1),
            BooleanSet::TfheLib | BooleanSet::ErrorProb2m165KsPbs => device_key::<1024, 2>(1),
        };
        let ksk = generate_big_key_device_ksk(set, &device, &client_key, &mut Blake2bXof::from_seed([11; 32])).unwrap();
        let per_device_id = if set == BooleanSet::DefaultKsPbs {
            K3_WHOLE_PER_DEVICE
        } else {
            K2_WHOLE_PER_DEVICE
        };
        for (name, material) in [
            (id, DeviceKeyMaterial::Fleet),
            (per_device_id, DeviceKeyMaterial::BigKeyPerDevice(ksk)),
        ] {
            let bridge = BigKeyBridge::new(set).unwrap();
            bridge.register(1, 1, set.glwe_parameters().id(), material).unwrap();
            group.bench_function(name, |b| {
                b.iter_batched(
                    common::one_device_intake,
                    |mut intake| {
                        let mut inputs = Vec::with_capacity(1024);
                        for frame in &frames {
                            if let Some(message) = intake.receive(black_box(frame), now).unwrap().into_message() {
                                inputs.extend(bridge.convert(&message).unwrap());
                            }
                        }
                        assert_eq!(inputs.len(), 1024);
                        (intake, inputs)
                    },
                    BatchSize::SmallInput,
                )
            });
        }
    }
    group.finish();
}

/// A secret-key encryptor under a fresh key of the set (the key of [`device_key`] seed 1, XOF seed 2).
fn encryptor<const N: usize, const K: usize>(set: BooleanSet) -> Box<GlweEncryptor<N, K>> {
    let rng = Blake2bXof::from_seed([2; 32]);
    Box::new(GlweEncryptor::<N, K>::new(&set.glwe_parameters(), &device_key::<N, K>(1), rng).unwrap())
}

/// A seeded public key under a fresh key of the set, made by the device core.
fn public_key<const N: usize, const K: usize>(set: BooleanSet) -> PublicKeyEncryptor<N, K> {
    let params = set.glwe_parameters();
    let key = device_key::<N, K>(4);
    let plan = Plan::new(N).unwrap();
    let mut spectrum = vec![0f64; K * N];
    compute_glwe_key_spectrum(&plan, &key, &mut spectrum).unwrap();
    let noise = DeviceNoise::for_parameters(&params, NoiseSampling::ConstantTime).unwrap();
    let mut body = vec![0u32; N];
    let mut scratch = vec![0f64; N];
    let seed = generate_seeded_glwe_public_key(
        &plan,
        &spectrum,
        &noise,
        &mut body,
        &mut scratch,
        &mut Blake2bXof::from_seed([5; 32]),
    )
    .unwrap();
    PublicKeyEncryptor::<N, K>::new(&params, &seed, &body, Blake2bXof::from_seed([6; 32])).unwrap()
}

fn device(c: &mut Criterion) {
    let message = [0xA5u8; 128];
    let mut group = c.benchmark_group(DEVICE);
    group.throughput(Throughput::Elements(1024));

    let mut lib = encryptor::<1024, 1>(BooleanSet::TfheLib);
    let mut k3 = encryptor::<512, 3>(BooleanSet::DefaultKsPbs);
    let mut k2 = encryptor::<1024, 2>(BooleanSet::ErrorProb2m165KsPbs);
    let mut body_1024 = [0u32; 1024];
    let mut body_512 = [0u32; 512];
    group.bench_function(LIB_SEEDED, |b| {
        b.iter(|| {
            lib.encrypt_seeded_glwe_ciphertext(black_box(&message), &mut body_1024)
                .unwrap()
        })
    });
    group.bench_function(K3_SEEDED, |b| {
        b.iter(|| {
            for half in message.chunks(64) {
                black_box(
                    k3.encrypt_seeded_glwe_ciphertext(black_box(half), &mut body_512)
                        .unwrap(),
                );
            }
        })
    });
    group.bench_function(K2_SEEDED, |b| {
        b.iter(|| {
            k2.encrypt_seeded_glwe_ciphertext(black_box(&message), &mut body_1024)
                .unwrap()
        })
    });

    let mut lib_pk = Box::new(public_key::<1024, 1>(BooleanSet::TfheLib));
    let mut k3_pk = Box::new(public_key::<512, 3>(BooleanSet::DefaultKsPbs));
    let mut k2_pk = Box::new(public_key::<1024, 2>(BooleanSet::ErrorProb2m165KsPbs));
    let mut mask = vec![0u32; 3 * 512];
    group.bench_function(LIB_PK, |b| {
        b.iter(|| {
            lib_pk
                .encrypt_glwe_ciphertext(black_box(&message), &mut mask[..1024], &mut body_1024)
                .unwrap()
        })
    });
    group.bench_function(K3_PK, |b| {
        b.iter(|| {
            for half in message.chunks(64) {
                k3_pk
                    .encrypt_glwe_ciphertext(black_box(half), &mut mask, &mut body_512)
                    .unwrap();
            }
        })
    });
    let mut mask_2048 = vec![0u32; 2048];
    group.bench_function(K2_PK, |b| {
        b.iter(|| {
            k2_pk
                .encrypt_glwe_ciphertext(black_box(&message), &mut mask_2048, &mut body_1024)
                .unwrap()
        })
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    device(c);
    whole(c);
    per_bit(c);
}

fn main() {
    common::run(bench);
    common::print_ratio_table(
        "Intake per bit (ratio = time / k = 2 extract + wrap)",
        PER_BIT,
        &[
            K3_EXTRACT,
            K2_EXTRACT,
            LIB_TO_BOOLEAN,
            LIB_KEY_SWITCH,
            K3_PER_DEVICE,
            K2_PER_DEVICE,
        ],
        K2_EXTRACT,
    );
    common::print_ratio_table(
        "Whole intake of 1024 bits on one core: MAC, decode, mask expansion, extraction (ratio to k = 2)",
        WHOLE,
        &[K3_WHOLE, K2_WHOLE, K3_WHOLE_PER_DEVICE, K2_WHOLE_PER_DEVICE],
        K2_WHOLE,
    );
    common::print_ratio_table(
        "Device encryption of 1024 bits (ratio = time / GlweEncryptor<1024, 1>)",
        DEVICE,
        &[LIB_SEEDED, K3_SEEDED, K2_SEEDED, LIB_PK, K3_PK, K2_PK],
        LIB_SEEDED,
    );
    println!("\nBytes per 1024 bits (wire::frame_bytes, v2 frames with header and tag)");
    println!("| set | k | N | seeded frames | public-key frames |");
    println!("|---|---|---|---|---|");
    for set in BooleanSet::ALL {
        let (k, n) = (set.glwe_dimension(), set.polynomial_size());
        let per = 1024 / n;
        println!(
            "| {set} | {k} | {n} | {} | {} |",
            per * frame_bytes(FrameKind::Seeded, k, n, 32, 32),
            per * frame_bytes(FrameKind::PublicKey, k, n, 32, 32)
        );
    }
}
