//! 1024 Gaussian samples (one TRLWE encryption's noise at N = 1024): our Ziggurat vs the polar method
//! (the tfhe-rs and TFHEpp baseline) vs `rand_distr`'s `StandardNormal` (also a Ziggurat), all on the same
//! RNG (ChaCha20), all scaled by sigma * q = 128 and rounded onto the 32-bit torus.
//!
//! Run: `cargo bench --bench gaussian` (prints a ratio table at the end).
#![allow(clippy::unwrap_used)]

mod common;

use criterion::Criterion;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use std::hint::black_box;
use tfhe_sbc_core::gaussian::{NormalSampler, Polar, Ziggurat};

const GROUP: &str = "gaussian_1024";
const SIGMA_Q: f64 = 128.0;

fn bench(c: &mut Criterion) {
    let mut out = [0u32; 1024];
    let mut group = c.benchmark_group(GROUP);
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    group.bench_function("ziggurat (ours)", |b| {
        b.iter(|| {
            for x in out.iter_mut() {
                *x = Ziggurat.sample_torus(&mut rng, SIGMA_Q);
            }
            black_box(&out);
        })
    });
    let mut polar = Polar::new();
    group.bench_function("polar (ours, tfhe-rs/TFHEpp method)", |b| {
        b.iter(|| {
            for x in out.iter_mut() {
                *x = polar.sample_torus(&mut rng, SIGMA_Q);
            }
            black_box(&out);
        })
    });
    group.bench_function("rand_distr StandardNormal", |b| {
        b.iter(|| {
            for x in out.iter_mut() {
                let z: f64 = StandardNormal.sample(&mut rng);
                *x = (z * SIGMA_Q).round() as i64 as u32;
            }
            black_box(&out);
        })
    });
    group.bench_function("uniform u32 only (the RNG's share)", |b| {
        b.iter(|| {
            for x in out.iter_mut() {
                *x = rand_core::Rng::next_u32(&mut rng);
            }
            black_box(&out);
        })
    });
    group.finish();
}

fn main() {
    common::run(bench);
    common::print_ratio_table(
        "1024 Gaussian samples at sigma*q = 128, ChaCha20 RNG (ratio = time / ziggurat time)",
        GROUP,
        &[
            "ziggurat (ours)",
            "polar (ours, tfhe-rs/TFHEpp method)",
            "rand_distr StandardNormal",
            "uniform u32 only (the RNG's share)",
        ],
        "ziggurat (ours)",
    );
}
