//! Encrypting 1024 bits on the device, against tfhe-rs in the same run (the paper's Tables 1, 4, 6, 7).
//!
//! * ours: seeded and full TRLWE encryption (keyed BLAKE2b XOF, constant-time TUniform(8) noise, key FFT
//!   reused), the same with the paper's Ziggurat (opt-in, not constant-time), and the on-the-fly variant
//!   that recomputes the key FFT;
//! * tfhe-rs 1.8.2: `encrypt_glwe_ciphertext` (u32, k = 1, N = 1024, Gaussian 2^-25, its default AES-CTR
//!   CSPRNG), and `encrypt_lwe_ciphertext` once per bit, 1024 times (the per-bit TLWE baseline);
//! * the breakdown: uniform sampling, noise sampling (TUniform vs Ziggurat vs polar, same XOF), the polynomial
//!   product (reuse vs on the fly), and the floor: the randomness one encryption consumes plus one forward
//!   and one inverse FFT;
//! * the CSPRNGs' throughput: our XOF vs ChaCha20 vs reading /dev/urandom in 4 KiB chunks.
//!
//! Run: `cargo bench --bench encrypt`
#![allow(clippy::unwrap_used)]

mod common;

use criterion::{Criterion, Throughput};
use negacyclic_fft::Plan;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::hint::black_box;
use std::io::Read;
use tfhe::core_crypto::prelude as tfhe_core;
use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::gaussian::{NormalSampler, Polar, Ziggurat};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_core::tuniform::TUniform;
use tfhe_sbc_device::csprng::mask::expand_mask_into_fft_input;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::noise::NoiseSampling;

use common::N;

const ENCRYPT: &str = "encrypt_1024_bits";
const PER_BIT: &str = "encrypt_1024_bits_per_bit_tlwe";
const BREAKDOWN: &str = "encrypt_breakdown";
const RNG: &str = "csprng_64KiB";

fn ours(c: &mut Criterion) {
    let params = TFHE_LIB_GLWE_1024;
    let key = common::secret_key();
    let mut encryptor = common::encryptor(NoiseSampling::ConstantTime, 2);
    let message = [0xA5u8; N / 8];
    let mut body = [0u32; N];
    let mut full = GlweCiphertext::from_container(vec![0u32; 2 * N], params.polynomial_size()).unwrap();
    let mut group = c.benchmark_group(ENCRYPT);
    common::bench_seeded(&mut group, "tfhe-sbc seeded (seed + 4 KiB)", &mut encryptor);
    common::bench_seeded(
        &mut group,
        "tfhe-sbc seeded, Ziggurat (opt-in, not constant-time)",
        &mut common::encryptor(NoiseSampling::Ziggurat, 5),
    );
    group.bench_function("tfhe-sbc full (8 KiB)", |b| {
        b.iter(|| {
            encryptor
                .encrypt_glwe_ciphertext(black_box(&message), &mut full)
                .unwrap()
        })
    });
    group.bench_function("tfhe-sbc seeded, key FFT on the fly", |b| {
        b.iter(|| {
            encryptor
                .encrypt_seeded_glwe_ciphertext_on_the_fly(&key, black_box(&message), &mut body)
                .unwrap()
        })
    });

    // tfhe-rs, same shape and noise, its default CSPRNG.
    let mut seeder = tfhe_core::new_seeder();
    let seeder = seeder.as_mut();
    let mut generator =
        tfhe_core::EncryptionRandomGenerator::<tfhe_core::DefaultRandomGenerator>::new(seeder.seed(), seeder);
    let mut secret_generator =
        tfhe_core::SecretRandomGenerator::<tfhe_core::DefaultRandomGenerator>::new(seeder.seed());
    let glwe_key = tfhe_core::allocate_and_generate_new_binary_glwe_secret_key::<u32, _>(
        tfhe_core::GlweDimension(1),
        tfhe_core::PolynomialSize(N),
        &mut secret_generator,
    );
    let noise = tfhe_core::DynamicDistribution::<u32>::new_gaussian_from_std_dev(tfhe_core::StandardDev(
        params.noise_std_dev(),
    ));
    let plaintexts = tfhe_core::PlaintextList::new(1u32 << 29, tfhe_core::PlaintextCount(N));
    let mut glwe = tfhe_core::GlweCiphertext::new(
        0u32,
        tfhe_core::GlweSize(2),
        tfhe_core::PolynomialSize(N),
        tfhe_core::CiphertextModulus::new_native(),
    );
    group.bench_function("tfhe-rs encrypt_glwe_ciphertext", |b| {
        b.iter(|| tfhe_core::encrypt_glwe_ciphertext(&glwe_key, &mut glwe, &plaintexts, noise, &mut generator))
    });
    group.finish();

    let lwe_key = glwe_key.as_lwe_secret_key();
    let mut lwe = tfhe_core::LweCiphertext::new(
        0u32,
        tfhe_core::LweSize(N + 1),
        tfhe_core::CiphertextModulus::new_native(),
    );
    let mut group = c.benchmark_group(PER_BIT);
    group.sample_size(10);
    group.bench_function("tfhe-rs encrypt_lwe_ciphertext x 1024", |b| {
        b.iter(|| {
            for _ in 0..N {
                tfhe_core::encrypt_lwe_ciphertext(
                    &lwe_key,
                    &mut lwe,
                    tfhe_core::Plaintext(1u32 << 29),
                    noise,
                    &mut generator,
                );
            }
        })
    });
    group.finish();
}

fn breakdown(c: &mut Criterion) {
    let params = TFHE_LIB_GLWE_1024;
    let sigma_q = params.noise_std_dev_scaled();
    let plan = Plan::new(N).unwrap();
    let mut xof = Blake2bXof::from_seed([3; 32]);
    let mut key_spectrum = vec![0.0; N];
    let key_bits: Vec<u8> = (0..N).map(|i| (i % 3 == 0) as u8).collect();
    plan.forward(&key_bits, &mut key_spectrum);
    let mut scratch = vec![0.0; N];
    let mut out = vec![0u32; N];
    let mut group = c.benchmark_group(BREAKDOWN);
    group.bench_function("uniform: 1024 mask words from a seed", |b| {
        b.iter(|| {
            expand_mask_into_fft_input::<tfhe_sbc_device::csprng::DeviceConstruction>(black_box(&[7; 32]), &mut scratch)
        })
    });
    let tuniform = TUniform::new(8).unwrap();
    group.bench_function("tuniform: 1024 TUniform(8) samples", |b| {
        b.iter(|| tuniform.add_noise_torus(&mut xof, black_box(&mut out)))
    });
    group.bench_function("gaussian: 1024 Ziggurat samples", |b| {
        b.iter(|| Ziggurat.add_noise_torus(&mut xof, sigma_q, black_box(&mut out)))
    });
    let mut polar = Polar::new();
    group.bench_function("gaussian: 1024 polar samples", |b| {
        b.iter(|| polar.add_noise_torus(&mut xof, sigma_q, black_box(&mut out)))
    });
    let mask: Vec<u32> = (0..N).map(|_| xof.next_u32()).collect();
    group.bench_function("polymul: reuse (forward + product + inverse)", |b| {
        b.iter(|| {
            plan.forward(black_box(&mask), &mut scratch);
            plan.mul_assign(&mut scratch, &key_spectrum);
            plan.inverse_wrapping(&mut scratch, &mut out);
        })
    });
    let mut fresh_key_spectrum = vec![0.0; N];
    group.bench_function("polymul: on the fly (+ key forward)", |b| {
        b.iter(|| {
            plan.forward(black_box(&key_bits), &mut fresh_key_spectrum);
            plan.forward(black_box(&mask), &mut scratch);
            plan.mul_assign(&mut scratch, &fresh_key_spectrum);
            plan.inverse_wrapping(&mut scratch, &mut out);
        })
    });
    // The floor: the bytes one encryption draws (32-byte seed, 4 KiB mask, 2 KiB of TUniform(8) noise at 2
    // bytes per sample) plus one forward and one inverse FFT.
    let mut bytes = vec![0u8; 32 + 4 * N + 2 * N];
    group.bench_function("floor: randomness + forward + inverse FFT", |b| {
        b.iter(|| {
            xof.fill_bytes(&mut bytes);
            plan.forward(black_box(&mask), &mut scratch);
            plan.inverse_wrapping(&mut scratch, &mut out);
        })
    });
    group.finish();
}

fn rng_throughput(c: &mut Criterion) {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut group = c.benchmark_group(RNG);
    group.throughput(Throughput::Bytes(buffer.len() as u64));
    let mut xof = Blake2bXof::from_seed([4; 32]);
    group.bench_function("BLAKE2b XOF (ours)", |b| {
        b.iter(|| xof.fill_bytes(black_box(&mut buffer)))
    });
    let mut chacha = ChaCha20Rng::seed_from_u64(4);
    group.bench_function("ChaCha20 (rand_chacha)", |b| {
        b.iter(|| chacha.fill_bytes(black_box(&mut buffer)))
    });
    let mut urandom = std::fs::File::open("/dev/urandom").unwrap();
    group.bench_function("/dev/urandom, 4 KiB reads", |b| {
        b.iter(|| {
            for chunk in buffer.chunks_mut(4096) {
                urandom.read_exact(chunk).unwrap();
            }
        })
    });
    group.finish();
}

fn main() {
    common::run(|c| {
        ours(c);
        breakdown(c);
        rng_throughput(c);
    });
    let seeded = (ENCRYPT, "tfhe-sbc seeded (seed + 4 KiB)");
    common::print_ratio_table_across(
        "Encrypting 1024 bits, N = 1024, TFHE_LIB_GLWE_1024 (ratio = time / tfhe-sbc seeded, constant-time TUniform(8))",
        &[
            seeded,
            (ENCRYPT, "tfhe-sbc seeded, Ziggurat (opt-in, not constant-time)"),
            (ENCRYPT, "tfhe-sbc full (8 KiB)"),
            (ENCRYPT, "tfhe-sbc seeded, key FFT on the fly"),
            (ENCRYPT, "tfhe-rs encrypt_glwe_ciphertext"),
            (PER_BIT, "tfhe-rs encrypt_lwe_ciphertext x 1024"),
            (BREAKDOWN, "floor: randomness + forward + inverse FFT"),
        ],
        seeded,
    );
    common::print_ratio_table(
        "Breakdown (ratio = time / Ziggurat)",
        BREAKDOWN,
        &[
            "uniform: 1024 mask words from a seed",
            "tuniform: 1024 TUniform(8) samples",
            "gaussian: 1024 Ziggurat samples",
            "gaussian: 1024 polar samples",
            "polymul: reuse (forward + product + inverse)",
            "polymul: on the fly (+ key forward)",
            "floor: randomness + forward + inverse FFT",
        ],
        "gaussian: 1024 Ziggurat samples",
    );
    common::print_ratio_table(
        "CSPRNG, 64 KiB (ratio = time / ours; bytes/s = 65536 / time)",
        RNG,
        &[
            "BLAKE2b XOF (ours)",
            "ChaCha20 (rand_chacha)",
            "/dev/urandom, 4 KiB reads",
        ],
        "BLAKE2b XOF (ours)",
    );
    let size = size_of::<GlweEncryptor<N>>();
    println!(
        "\nGlweEncryptor<1024>: {size} bytes of state ({:.1} KiB), key FFT included",
        size as f64 / 1024.0
    );
}
