//! Sample extraction of all 1024 TLWE from one TRLWE: ours (into one contiguous buffer) vs a plain copy of
//! the same number of output bytes (the physical floor) vs tfhe-rs's
//! `extract_lwe_sample_from_glwe_ciphertext` x 1024; and the rayon batch over many ciphertexts on this
//! machine's cores.
//!
//! Run: `cargo bench --bench extract`
#![allow(clippy::unwrap_used)]

mod common;

use criterion::{Criterion, Throughput};
use std::hint::black_box;
use tfhe::core_crypto::prelude as tfhe_core;
use tfhe_core::ContiguousEntityContainerMut;
use tfhe_sbc_adapter::extraction::{extract_all_lwe_samples, extract_all_lwe_samples_par};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::GlweCiphertext;

const N: usize = 1024;
const GROUP: &str = "extract_all_1024";
const BATCH: &str = "extract_batch_16_ciphertexts";

fn glwe(seed: u32) -> GlweCiphertext<u32, Vec<u32>> {
    let data = (0..2 * N as u32)
        .map(|i| i.wrapping_mul(0x9E37_79B9).wrapping_add(seed))
        .collect();
    GlweCiphertext::from_container(data, PolynomialSize(N)).unwrap()
}

fn bench(c: &mut Criterion) {
    let ct = glwe(1);
    let mut out = vec![0u32; N * (N + 1)];
    let source = vec![7u32; N * (N + 1)];
    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Bytes((N * (N + 1) * 4) as u64));
    group.bench_function("tfhe-sbc extract_all_lwe_samples", |b| {
        b.iter(|| extract_all_lwe_samples(black_box(&ct), &mut out))
    });
    group.bench_function("memcpy of the same 4 MiB", |b| {
        b.iter(|| out.copy_from_slice(black_box(&source)))
    });
    let tfhe_glwe = tfhe_core::GlweCiphertext::from_container(
        ct.as_slice().to_vec(),
        tfhe_core::PolynomialSize(N),
        tfhe_core::CiphertextModulus::new_native(),
    );
    let mut list = tfhe_core::LweCiphertextList::new(
        0u32,
        tfhe_core::LweSize(N + 1),
        tfhe_core::LweCiphertextCount(N),
        tfhe_core::CiphertextModulus::new_native(),
    );
    group.bench_function("tfhe-rs extract_lwe_sample_from_glwe_ciphertext x 1024", |b| {
        b.iter(|| {
            for (i, mut lwe) in list.iter_mut().enumerate() {
                tfhe_core::extract_lwe_sample_from_glwe_ciphertext(
                    black_box(&tfhe_glwe),
                    &mut lwe,
                    tfhe_core::MonomialDegree(i),
                );
            }
        })
    });
    // Same output words as ours (both are tfhe-rs's layout).
    extract_all_lwe_samples(&ct, &mut out);
    assert_eq!(list.as_ref(), &out[..]);
    group.finish();

    let cts: Vec<_> = (0..16).map(glwe).collect();
    let mut outs = vec![vec![0u32; N * (N + 1)]; cts.len()];
    let mut group = c.benchmark_group(BATCH);
    group.sample_size(20);
    group.bench_function("serial", |b| {
        b.iter(|| {
            for (ct, out) in cts.iter().zip(outs.iter_mut()) {
                extract_all_lwe_samples(ct, out);
            }
        })
    });
    group.bench_function("rayon", |b| {
        b.iter(|| extract_all_lwe_samples_par(black_box(&cts), &mut outs))
    });
    group.finish();
}

fn main() {
    common::run(bench);
    common::print_ratio_table(
        "Extracting all 1024 TLWE from one TRLWE, 4 MiB out (ratio = time / memcpy)",
        GROUP,
        &[
            "tfhe-sbc extract_all_lwe_samples",
            "memcpy of the same 4 MiB",
            "tfhe-rs extract_lwe_sample_from_glwe_ciphertext x 1024",
        ],
        "memcpy of the same 4 MiB",
    );
    common::print_ratio_table(
        &format!(
            "Batch of 16 ciphertexts on {} threads (ratio = time / serial)",
            rayon_threads()
        ),
        BATCH,
        &["serial", "rayon"],
        "serial",
    );
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
