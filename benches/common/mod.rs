//! Shared benchmark helpers: read criterion's medians back and print them as a ratio table.
#![allow(dead_code)]

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use rand_core::SeedableRng;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

/// Runs `bench` under the workspace's criterion settings (honouring command-line filters), then summarizes.
pub fn run(bench: fn(&mut Criterion)) {
    let mut criterion = Criterion::default()
        .sample_size(60)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}

fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"),
        PathBuf::from,
    );
    target.join("criterion")
}

/// The median time in nanoseconds of `group/id` from criterion's `estimates.json` of this run.
pub fn median_ns(group: &str, id: &str) -> Option<f64> {
    // Criterion replaces characters that are not allowed in file names.
    let clean = |s: &str| s.replace(['/', '\\', ':', '*', '?', '"', '<', '>', '|'], "_");
    let path = criterion_dir()
        .join(clean(group))
        .join(clean(id))
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let median = &text[text.find("\"median\"")?..];
    let point = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = point.find([',', '}'])?;
    point[..end].trim().parse().ok()
}

fn human(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} us", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// Prints `ids` of `group` with their medians and their ratio to `reference` (time / reference time).
pub fn print_ratio_table(title: &str, group: &str, ids: &[&str], reference: &str) {
    let rows: Vec<(&str, &str)> = ids.iter().map(|id| (group, *id)).collect();
    print_ratio_table_across(title, &rows, (group, reference));
}

/// Like [`print_ratio_table`], for rows taken from several criterion groups.
pub fn print_ratio_table_across(title: &str, rows: &[(&str, &str)], reference: (&str, &str)) {
    let Some(reference_ns) = median_ns(reference.0, reference.1) else {
        println!(
            "(no criterion estimate for {}/{}; was it filtered out?)",
            reference.0, reference.1
        );
        return;
    };
    println!("\n{title}");
    println!("| {:<52} | {:>12} | {:>12} |", "benchmark", "median", "ratio");
    println!("|{:-<54}|{:->14}|{:->14}|", "", "", "");
    for (group, id) in rows {
        match median_ns(group, id) {
            Some(ns) => println!("| {:<52} | {:>12} | {:>12.2} |", id, human(ns), ns / reference_ns),
            None => println!("| {:<52} | {:>12} | {:>12} |", id, "-", "-"),
        }
    }
}

/// A fresh intake that knows the benches' one device (id 1, key id 1, MAC key `[3; 32]`, never sent a frame).
#[allow(dead_code)] // Not every bench binary that includes this module takes frames in.
pub fn one_device_intake() -> tfhe_sbc_adapter::intake::Intake {
    let mut registry = tfhe_sbc_adapter::registry::DeviceRegistry::new();
    registry
        .register(tfhe_sbc_device::frame::mac::DeviceCredentials::new(
            1,
            1,
            tfhe_sbc_device::frame::mac::MacKey::from_bytes([3; 32]),
        ))
        .unwrap_or_else(|_| unreachable!("one device"));
    tfhe_sbc_adapter::intake::Intake::new(tfhe_sbc_adapter::intake::IntakeConfig::default(), registry)
}

/// The polynomial size of the `TFHE_LIB_GLWE_1024` benchmarks.
pub const N: usize = 1024;

/// The benches' binary `TFHE_LIB_GLWE_1024` key (from XOF seed 1).
#[allow(dead_code)] // Not every bench binary that includes this module encrypts.
pub fn secret_key() -> tfhe_sbc_core::entities::GlweSecretKey<[u8; N]> {
    let mut xof = tfhe_sbc_device::csprng::xof::Blake2bXof::from_seed([1; 32]);
    tfhe_sbc_core::entities::GlweSecretKey::generate_binary(
        [0u8; N],
        tfhe_sbc_core::dimensions::PolynomialSize(N),
        &mut xof,
    )
    .unwrap_or_else(|_| unreachable!("a key buffer of N bytes"))
}

/// A `TFHE_LIB_GLWE_1024` encryptor of [`secret_key`] with the noise `sampling`, its XOF from `[seed; 32]`.
#[allow(dead_code)] // Not every bench binary that includes this module encrypts.
pub fn encryptor(
    sampling: tfhe_sbc_device::noise::NoiseSampling,
    seed: u8,
) -> Box<tfhe_sbc_device::encrypt::secret_key::GlweEncryptor<N>> {
    let xof = tfhe_sbc_device::csprng::xof::Blake2bXof::from_seed([seed; 32]);
    let params = tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
    Box::new(
        tfhe_sbc_device::encrypt::secret_key::GlweEncryptor::with_noise_sampling(&params, &secret_key(), xof, sampling)
            .unwrap_or_else(|_| unreachable!("TFHE_LIB_GLWE_1024")),
    )
}

/// Benchmarks `encryptor`'s seeded encryption of a fixed message as `id` in `group`.
#[allow(dead_code)] // Not every bench binary that includes this module encrypts.
pub fn bench_seeded(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    encryptor: &mut tfhe_sbc_device::encrypt::secret_key::GlweEncryptor<N>,
) {
    let message = [0xA5u8; N / 8];
    let mut body = [0u32; N];
    group.bench_function(id, |b| {
        b.iter(|| {
            encryptor
                .encrypt_seeded_glwe_ciphertext(black_box(&message), &mut body)
                .unwrap_or_else(|_| unreachable!("N / 8 message bytes, N body words"))
        })
    });
}
