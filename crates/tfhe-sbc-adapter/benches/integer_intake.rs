//! Integer intake per `FheUint8`, in one run (issue [G] sections 3 and 6): fleet mode (extraction and
//! wrapping), per-device mode (key switch + identity PBS per block), against tfhe-rs 1.8.2's
//! `CompactCiphertextList::expand` (unpacked and packed) with a `CompactPublicKey`, all with the high-level
//! default parameters. Prints a table of the medians per value and per block, and the ratios.
//!
//! `cargo bench -p tfhe-sbc-adapter --features tfhe --bench integer_intake`
#![allow(clippy::unwrap_used, missing_docs)]

use criterion::{Criterion, SamplingMode, criterion_group};
use rand_core::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tfhe::prelude::*;
use tfhe::{
    ClientKey, CompactCiphertextList, CompactPublicKey, ConfigBuilder, FheUint8, FheUint8Id, Seed, set_server_key,
};
use tfhe_sbc_adapter::interop::integer::per_device::{IntegerDeviceKsk, IntegerRefresher};
use tfhe_sbc_adapter::interop::integer::{IntegerExtractor, encrypt_readings_reference, glwe_key_from_client_key};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_device::xof::Blake2bXof;

/// Values per iteration of the slow modes (a PBS per block): 8 `FheUint8` = 32 blocks.
const SLOW_VALUES: usize = 8;
/// Rounds of the paired comparison.
const PAIRED_ROUNDS: usize = 5;
/// Values per iteration of fleet mode: a full N = 2048 ciphertext.
const FLEET_VALUES: usize = 512;

/// Per-iteration times (seconds per value) recorded by each benchmark, for the summary.
static SAMPLES: Mutex<BTreeMap<&'static str, Vec<f64>>> = Mutex::new(BTreeMap::new());

fn record(name: &'static str, elapsed: Duration, iters: u64, values: usize) {
    let per_value = elapsed.as_secs_f64() / iters as f64 / values as f64;
    SAMPLES.lock().unwrap().entry(name).or_default().push(per_value);
}

fn median(name: &str) -> Option<f64> {
    let samples = SAMPLES.lock().unwrap();
    let mut v = samples.get(name)?.clone();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

fn intake(c: &mut Criterion) {
    let t = Instant::now();
    let client_key = ClientKey::generate_with_seed(ConfigBuilder::default().build(), Seed(7));
    let server_key = client_key.generate_server_key();
    set_server_key(server_key.clone());
    eprintln!("keys: {:.1} s", t.elapsed().as_secs_f64());
    let mut rng = Blake2bXof::from_seed([7; 32]);
    let values: Vec<u64> = (0..FLEET_VALUES).map(|_| rng.next_u64() & 0xff).collect();

    // Fleet: the client key's GLWE key on the device.
    let fleet_key = glwe_key_from_client_key(&client_key).unwrap();
    let fleet_glwe = encrypt_readings_reference(&fleet_key, &values, 8, &mut rng).unwrap();
    let extractor = IntegerExtractor::new();
    // Per-device: the device's own key and its seeded key-switching key.
    let device_key: GlweSecretKeyOwned =
        GlweSecretKey::generate_binary(vec![0u8; 2048], PolynomialSize(2048), &mut rng).unwrap();
    let device_glwe = encrypt_readings_reference(&device_key, &values, 8, &mut rng).unwrap();
    let ksk = IntegerDeviceKsk::generate(&device_key, &client_key, &mut rng)
        .unwrap()
        .decompress();
    let refresher = IntegerRefresher::new(&server_key).unwrap();
    // tfhe-rs: a compact public key and lists of the same values.
    let public_key = CompactPublicKey::new(&client_key);
    let slow: Vec<u8> = values[..SLOW_VALUES].iter().map(|&v| v as u8).collect();
    let list = CompactCiphertextList::builder(&public_key)
        .extend(slow.iter().copied())
        .build();
    let packed = CompactCiphertextList::builder(&public_key)
        .extend(slow.iter().copied())
        .build_packed();
    // Everything decrypts before it is timed.
    let check = |cts: Vec<FheUint8>| {
        for (ct, &v) in cts.iter().zip(&slow) {
            let d: u8 = ct.decrypt(&client_key);
            assert_eq!(d, v);
        }
    };
    check(
        extractor
            .extract_readings::<FheUint8Id, _>(&fleet_glwe, 0, SLOW_VALUES)
            .unwrap(),
    );
    check(
        refresher
            .extract_readings_par(&ksk, &device_glwe, 0, SLOW_VALUES)
            .unwrap(),
    );
    let expand = |l: &CompactCiphertextList| -> Vec<FheUint8> {
        let expander = l.expand().unwrap();
        (0..SLOW_VALUES)
            .map(|i| expander.get::<FheUint8>(i).unwrap().unwrap())
            .collect()
    };
    check(expand(&list));
    check(expand(&packed));

    let mut group = c.benchmark_group("integer_intake_per_fheuint8");
    // Flat sampling: the slow modes run 10 iterations, not criterion's 55 of linear sampling.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("fleet_extract_wrap_1_thread_x8", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(
                    extractor
                        .extract_readings::<FheUint8Id, _>(&fleet_glwe, 0, SLOW_VALUES)
                        .unwrap(),
                );
            }
            let e = t.elapsed();
            record("fleet x8, 1 thread", e, iters, SLOW_VALUES);
            e
        })
    });
    group.bench_function("fleet_extract_wrap_1_thread_x512", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(
                    extractor
                        .extract_readings::<FheUint8Id, _>(&fleet_glwe, 0, FLEET_VALUES)
                        .unwrap(),
                );
            }
            let e = t.elapsed();
            record("fleet x512, 1 thread", e, iters, FLEET_VALUES);
            e
        })
    });
    group.bench_function("fleet_extract_wrap_rayon_x512", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(
                    extractor
                        .extract_readings_par::<FheUint8Id, _>(&fleet_glwe, 0, FLEET_VALUES)
                        .unwrap(),
                );
            }
            let e = t.elapsed();
            record("fleet x512, rayon", e, iters, FLEET_VALUES);
            e
        })
    });
    group.bench_function("per_device_ks_pbs_rayon_x8", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(
                    refresher
                        .extract_readings_par::<FheUint8Id, _>(&ksk, &device_glwe, 0, SLOW_VALUES)
                        .unwrap(),
                );
            }
            let e = t.elapsed();
            record("per-device x8, rayon", e, iters, SLOW_VALUES);
            e
        })
    });
    group.bench_function("per_device_ks_pbs_1_block_1_thread", |b| {
        let block = extractor.extract_block(&device_glwe, 0).unwrap();
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                let _ = black_box(refresher.refresh_block(&ksk, block.ct.clone()).unwrap());
            }
            let e = t.elapsed();
            // Four blocks per FheUint8.
            record("per-device, 1 thread (4 x 1 block)", e * 4, iters, 1);
            e
        })
    });
    group.bench_function("tfhe_rs_compact_list_expand_x8", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(expand(&list));
            }
            let e = t.elapsed();
            record("tfhe-rs expand x8", e, iters, SLOW_VALUES);
            e
        })
    });
    group.bench_function("tfhe_rs_compact_list_packed_expand_x8", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(expand(&packed));
            }
            let e = t.elapsed();
            record("tfhe-rs expand x8, packed", e, iters, SLOW_VALUES);
            e
        })
    });
    group.finish();

    // Paired rounds: on a shared machine the load drifts between criterion's groups, so each round times
    // both sides back to back and the ratio is the median of the rounds' ratios.
    let mut fleet_ratios = Vec::new();
    let mut per_device_ratios = Vec::new();
    for _ in 0..PAIRED_ROUNDS {
        let t = Instant::now();
        for _ in 0..100 {
            black_box(
                extractor
                    .extract_readings::<FheUint8Id, _>(&fleet_glwe, 0, SLOW_VALUES)
                    .unwrap(),
            );
        }
        let fleet = t.elapsed();
        let t = Instant::now();
        for _ in 0..100 {
            black_box(expand(&list));
        }
        fleet_ratios.push(fleet.as_secs_f64() / t.elapsed().as_secs_f64());
        let t = Instant::now();
        black_box(
            refresher
                .extract_readings_par::<FheUint8Id, _>(&ksk, &device_glwe, 0, SLOW_VALUES)
                .unwrap(),
        );
        let per_device = t.elapsed();
        let t = Instant::now();
        black_box(expand(&packed));
        per_device_ratios.push(per_device.as_secs_f64() / t.elapsed().as_secs_f64());
    }
    let median_of = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    eprintln!(
        "\nPaired rounds ({PAIRED_ROUNDS}, median ratio): fleet / unpacked expand = {:.3} (rounds {:?}); per-device / \
         packed expand = {:.3} (rounds {:?})",
        median_of(fleet_ratios.clone()),
        fleet_ratios
            .iter()
            .map(|r| (r * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>(),
        median_of(per_device_ratios.clone()),
        per_device_ratios
            .iter()
            .map(|r| (r * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>()
    );

    // Fleet mode is compared with expanding an unpacked list (no PBS: its blocks are big-key encryptions
    // already), per-device mode with a packed one (tfhe-rs unpacks it with one lookup table, so one key
    // switch and one PBS, per output block: two per packed block; the same work per block as ours).
    let unpacked = median("tfhe-rs expand x8").unwrap_or(f64::NAN);
    let packed = median("tfhe-rs expand x8, packed").unwrap_or(f64::NAN);
    eprintln!(
        "\nIntake per FheUint8 (medians of criterion's samples, {} rayon threads; per block = / 4):",
        rayon::current_num_threads()
    );
    eprintln!(
        "{:<36} {:>14} {:>14} {:>10} {:>10}",
        "mode", "per value", "per block", "/ expand", "/ packed"
    );
    for name in [
        "fleet x8, 1 thread",
        "fleet x512, 1 thread",
        "fleet x512, rayon",
        "per-device x8, rayon",
        "per-device, 1 thread (4 x 1 block)",
        "tfhe-rs expand x8",
        "tfhe-rs expand x8, packed",
    ] {
        if let Some(m) = median(name) {
            eprintln!(
                "{name:<36} {:>11.3} us {:>11.3} us {:>10.3} {:>10.3}",
                m * 1e6,
                m * 1e6 / 4.0,
                m / unpacked,
                m / packed
            );
        }
    }
}

criterion_group!(benches, intake);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
