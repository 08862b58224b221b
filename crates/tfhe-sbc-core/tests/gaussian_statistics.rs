//! Statistical tests of the Gaussian samplers, with fixed seeds and stated thresholds.
//!
//! Thresholds (n samples of N(0, 1)):
//! * mean: |mean| < 5 / sqrt(n)                   (5 standard errors)
//! * variance: |var - 1| < 1%                       (about 7 standard errors at n = 10^6)
//! * Kolmogorov–Smirnov: D < 1.95 / sqrt(n)         (the 0.1% critical value)
//! * tails: the count beyond 3 and 5 sigma lies within 5 standard deviations of its binomial mean

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use tfhe_sbc_core::gaussian::{NormalSampler, Polar, Ziggurat};

const N: usize = 1_000_000;

fn draw<S: NormalSampler>(mut sampler: S, seed: u64, n: usize) -> Vec<f64> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n).map(|_| sampler.sample(&mut rng)).collect()
}

fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / core::f64::consts::SQRT_2)
}

fn check_moments(name: &str, xs: &[f64]) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    println!("{name}: mean {mean:+.5}, variance {var:.5}");
    assert!(mean.abs() < 5.0 / n.sqrt(), "{name}: mean {mean}");
    assert!((var - 1.0).abs() < 0.01, "{name}: variance {var}");
}

fn check_kolmogorov_smirnov(name: &str, xs: &mut [f64]) {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let d = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let c = normal_cdf(x);
            (c - i as f64 / n).max((i + 1) as f64 / n - c)
        })
        .fold(0.0, f64::max);
    let critical = 1.95 / n.sqrt();
    println!("{name}: KS D = {d:.6} (critical {critical:.6})");
    assert!(d < critical, "{name}: KS statistic {d}");
}

/// The count of |x| > t must be within 5 binomial standard deviations of n * P(|X| > t).
fn check_tail(name: &str, xs: &[f64], t: f64) {
    let n = xs.len() as f64;
    let p = libm::erfc(t / core::f64::consts::SQRT_2);
    let expected = n * p;
    let sd = (n * p * (1.0 - p)).sqrt();
    let count = xs.iter().filter(|x| x.abs() > t).count() as f64;
    println!("{name}: beyond {t} sigma: {count} (expected {expected:.1} +- {sd:.1})");
    assert!(
        (count - expected).abs() <= 5.0 * sd,
        "{name}: {count} beyond {t} sigma, expected {expected}"
    );
}

#[test]
fn ziggurat_moments_and_ks() {
    let mut xs = draw(Ziggurat, 1, N);
    check_moments("ziggurat", &xs);
    check_tail("ziggurat", &xs, 3.0);
    check_kolmogorov_smirnov("ziggurat", &mut xs);
}

#[test]
fn polar_moments_and_ks() {
    let mut xs = draw(Polar::new(), 2, N);
    check_moments("polar", &xs);
    check_tail("polar", &xs, 3.0);
    check_kolmogorov_smirnov("polar", &mut xs);
}

/// 5 sigma has probability 5.7e-7, so it needs more samples: 2 * 10^7 give 11.5 expected. The tail beyond
/// the Ziggurat's base (r = 3.65) takes a separate code path, so its frequency is checked too.
#[test]
fn ziggurat_far_tails() {
    let xs = draw(Ziggurat, 3, 20_000_000);
    check_tail("ziggurat", &xs, 3.654_152_885_361_009);
    check_tail("ziggurat", &xs, 4.0);
    check_tail("ziggurat", &xs, 5.0);
}

/// The symmetric halves: the sign bit is independent of the magnitude.
#[test]
fn ziggurat_is_symmetric() {
    let xs = draw(Ziggurat, 4, N);
    let positive = xs.iter().filter(|&&x| x > 0.0).count() as f64;
    let sd = (N as f64 * 0.25).sqrt();
    assert!(
        (positive - N as f64 / 2.0).abs() < 5.0 * sd,
        "{positive} positive of {N}"
    );
}

/// Rounded torus noise at the paper's sigma * q = 128, one sample at a time and batched: mean ~ 0, variance
/// 128^2 + 1/12 within 1%; and the batched path passes Kolmogorov-Smirnov at a fine scale.
#[test]
fn rounded_torus_noise_at_sigma_128() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let mut sampler = Ziggurat;
    let single: Vec<u32> = (0..N)
        .map(|_| sampler.sample_torus::<u32, _>(&mut rng, 128.0))
        .collect();
    check_rounded("one at a time", &single);
    let mut batched = vec![0u32; N];
    // Calls of 1000 exercise the partial batches.
    for chunk in batched.chunks_mut(1000) {
        sampler.add_noise_torus(&mut rng, 128.0, chunk);
    }
    check_rounded("batched", &batched);
    let mut fine = vec![0u64; N];
    sampler.add_noise_torus(&mut rng, 1e6, &mut fine);
    let mut scaled: Vec<f64> = fine.iter().map(|&x| x as i64 as f64 / 1e6).collect();
    check_kolmogorov_smirnov("batched, scale 1e6", &mut scaled);
}

fn check_rounded(name: &str, noise: &[u32]) {
    let xs: Vec<f64> = noise.iter().map(|&x| x as i32 as f64).collect();
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    let expected: f64 = 128.0 * 128.0 + 1.0 / 12.0;
    println!(
        "rounded noise, {name}: mean {mean:+.3}, std {:.3} (expected {:.3})",
        var.sqrt(),
        expected.sqrt()
    );
    assert!(mean.abs() < 5.0 * 128.0 / n.sqrt(), "{name}: mean {mean}");
    assert!((var / expected - 1.0).abs() < 0.01, "{name}: variance {var}");
}

/// Both samplers are deterministic functions of the RNG stream (a fixed seed gives fixed output).
#[test]
fn samplers_are_deterministic() {
    assert_eq!(draw(Ziggurat, 9, 1000), draw(Ziggurat, 9, 1000));
    assert_eq!(draw(Polar::new(), 9, 1000), draw(Polar::new(), 9, 1000));
    assert_ne!(draw(Ziggurat, 9, 1000), draw(Ziggurat, 10, 1000));
}
