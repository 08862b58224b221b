//! One negacyclic product at N = 1024 with a precomputed key transform: ours vs tfhe-fft (Zama's, used by
//! tfhe-rs) vs a rustfft-based product vs the schoolbook O(N^2) product; and our exact integer NTT (the
//! Cortex-M default, two 30-bit primes and CRT; also its 64-bit torus plan at N = 2048, three primes). Every FFT variant does the same work:
//! fold + twist, forward FFT, pointwise product with the key spectrum, inverse FFT, untwist, round.
//!
//! The peers' glue code is compiled for AVX2 like ours, and the bare transforms are timed too, so the table
//! shows where the time goes.
//!
//! Run: `cargo bench --bench negacyclic_product` (prints a ratio table at the end).

#![allow(clippy::unwrap_used)]

mod common;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use dyn_stack::{PodBuffer, PodStack};
use negacyclic_fft::Plan;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use rustfft::{FftPlanner, num_complex::Complex64};
use std::hint::black_box;

const N: usize = 1024;
const M: usize = N / 2;
const GROUP: &str = "negacyclic_product_1024";

fn inputs() -> (Vec<u32>, Vec<u32>) {
    let mut rng = StdRng::seed_from_u64(7);
    let a = (0..N).map(|_| rng.random()).collect();
    let key = (0..N).map(|_| rng.random_range(0..2)).collect();
    (a, key)
}

/// The folding, twisting and untwisting shared by the two peer FFTs (interleaved complex layout), written
/// as tightly as ours (split twist tables, branch-free rounding) so that the peers are not handicapped.
struct Twist {
    re: Vec<f64>,
    im: Vec<f64>,
}

/// 2^52 + 2^51: rounds an f64 below 2^51 in magnitude to the nearest integer.
const MAGIC: f64 = 6_755_399_441_055_744.0;

impl Twist {
    fn new() -> Self {
        let angle = |j: usize| std::f64::consts::PI * j as f64 / N as f64;
        Self {
            re: (0..M).map(|j| angle(j).cos()).collect(),
            im: (0..M).map(|j| angle(j).sin()).collect(),
        }
    }

    #[inline(always)]
    fn fold(&self, a: &[u32], out: &mut [Complex64]) {
        let (lo, hi) = a.split_at(M);
        for j in 0..M {
            let (x, y) = (f64::from(lo[j] as i32), f64::from(hi[j] as i32));
            out[j] = Complex64::new(x * self.re[j] - y * self.im[j], x * self.im[j] + y * self.re[j]);
        }
    }

    #[inline(always)]
    fn unfold(&self, z: &[Complex64], out: &mut [u32]) {
        let scale = 1.0 / M as f64;
        let (lo, hi) = out.split_at_mut(M);
        for j in 0..M {
            let (zr, zi) = (z[j].re * scale, z[j].im * scale);
            let (cr, ci) = (zr * self.re[j] + zi * self.im[j], zi * self.re[j] - zr * self.im[j]);
            lo[j] = ((cr + MAGIC).to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64) as u32;
            hi[j] = ((ci + MAGIC).to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64) as u32;
        }
    }

    /// The spectrum of `key` under a peer's complex FFT `transform` (`inverse = false`: forward).
    fn key_spectrum(&self, key: &[u32], transform: &mut impl FnMut(&mut [Complex64], bool)) -> Vec<Complex64> {
        let mut spectrum = vec![Complex64::default(); M];
        self.fold(key, &mut spectrum);
        transform(&mut spectrum, false);
        spectrum
    }

    /// One product through a peer's complex FFT `transform`: fold and twist `a` into `buf`, forward, times
    /// `key_spectrum`, inverse, untwist and round into `out`. The glue runs compiled for AVX2 ([`with_avx2`]).
    #[inline(always)]
    fn product(
        &self,
        a: &[u32],
        key_spectrum: &[Complex64],
        buf: &mut [Complex64],
        out: &mut [u32],
        transform: &mut impl FnMut(&mut [Complex64], bool),
    ) {
        with_avx2(|| self.fold(a, buf));
        transform(buf, false);
        with_avx2(|| {
            for (x, k) in buf.iter_mut().zip(key_spectrum) {
                *x *= k;
            }
        });
        transform(buf, true);
        with_avx2(|| self.unfold(buf, out));
    }
}

/// Benchmarks `product` (which writes `a * key` into its argument) as `id` in `group`, then checks the last
/// product against `expected`.
fn bench_product(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    expected: &[u32],
    mut product: impl FnMut(&mut [u32]),
) {
    let mut out = vec![0u32; expected.len()];
    group.bench_function(id, |b| b.iter(|| product(&mut out)));
    assert_eq!(out, expected, "{id}");
}

/// Runs the peers' glue code (fold, pointwise product, unfold) compiled for AVX2 when the CPU has it, as
/// ours is, so that the comparison is about the transforms. tfhe-rs does the same with `pulp`.
#[inline(always)]
fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    #[target_feature(enable = "avx2")]
    fn avx2<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above), the only feature `avx2` enables.
        #[allow(unsafe_code)]
        unsafe {
            avx2(f)
        }
    } else {
        f()
    }
}

fn bench(c: &mut Criterion) {
    let (a, key) = inputs();
    let mut expected = vec![0u32; N];
    negacyclic_fft::naive::negacyclic_product_wrapping_into(&a, &key, &mut expected);
    let mut group = c.benchmark_group(GROUP);

    // Ours.
    let plan = Plan::new(N).unwrap();
    let mut key_spectrum = vec![0.0; N];
    plan.forward(&key, &mut key_spectrum);
    let mut spectrum = vec![0.0; N];
    bench_product(&mut group, "negacyclic-fft", &expected, |out| {
        plan.forward(black_box(&a), &mut spectrum);
        plan.mul_assign(&mut spectrum, &key_spectrum);
        plan.inverse_wrapping(&mut spectrum, out);
    });

    // tfhe-fft (unordered plan, as tfhe-rs uses it), with runtime-measured algorithm choice.
    let twist = Twist::new();
    let tplan = tfhe_fft::unordered::Plan::new(
        M,
        tfhe_fft::unordered::Method::Measure(std::time::Duration::from_millis(20)),
    );
    let mut mem = PodBuffer::try_new(tplan.fft_scratch()).unwrap();
    let stack = PodStack::new(&mut mem);
    let mut tfhe_fft = |x: &mut [Complex64], inverse: bool| {
        if inverse {
            tplan.inv(x, stack);
        } else {
            tplan.fwd(x, stack);
        }
    };
    let tkey = twist.key_spectrum(&key, &mut tfhe_fft);
    let mut buf = vec![Complex64::default(); M];
    bench_product(&mut group, "tfhe-fft", &expected, |out| {
        twist.product(black_box(&a), &tkey, &mut buf, out, &mut tfhe_fft);
    });

    // The bare transforms, without folding, twisting, products or rounding.
    group.bench_function("negacyclic-fft forward+inverse only", |b| {
        b.iter(|| {
            plan.forward(black_box(&a), &mut spectrum);
            plan.inverse_raw(&mut spectrum);
        })
    });
    group.bench_function("tfhe-fft forward+inverse only", |b| {
        b.iter(|| {
            tfhe_fft(black_box(&mut buf), false);
            tfhe_fft(&mut buf, true);
        })
    });

    // rustfft (ordered, separate forward and inverse plans, caller scratch).
    let mut planner = FftPlanner::<f64>::new();
    let rfwd = planner.plan_fft_forward(M);
    let rinv = planner.plan_fft_inverse(M);
    let mut scratch = vec![Complex64::default(); rfwd.get_inplace_scratch_len().max(rinv.get_inplace_scratch_len())];
    let mut rustfft = |x: &mut [Complex64], inverse: bool| {
        let plan = if inverse { &rinv } else { &rfwd };
        plan.process_with_scratch(x, &mut scratch);
    };
    let rkey = twist.key_spectrum(&key, &mut rustfft);
    bench_product(&mut group, "rustfft", &expected, |out| {
        twist.product(black_box(&a), &rkey, &mut buf, out, &mut rustfft);
    });

    // The integer NTT (negacyclic-ntt): forward transform of `a` modulo both primes, pointwise product with
    // the key's precomputed spectrum, inverse transforms, CRT.
    let ntt = negacyclic_ntt::NttPlan32::new::<N>();
    let mut ntt_key = vec![[0u32; 2]; N];
    ntt.forward(&key, &mut ntt_key);
    let mut ntt_spectrum = vec![[0u32; 2]; N];
    bench_product(&mut group, "negacyclic-ntt", &expected, |out| {
        ntt.forward(black_box(&a), &mut ntt_spectrum);
        ntt.mul_assign(&mut ntt_spectrum, &ntt_key);
        ntt.inverse_wrapping(&mut ntt_spectrum, out);
    });

    // The 64-bit torus plan (three primes) at N = 2048, the integer set's size: one product.
    const N64: usize = 2048;
    let ntt64 = negacyclic_ntt::NttPlan64::new::<N64>();
    let mut rng = StdRng::seed_from_u64(8);
    let a64: Vec<u64> = (0..N64).map(|_| rng.random()).collect();
    let key64: Vec<u8> = (0..N64).map(|_| rng.random_range(0..2)).collect();
    let (mut key64_spectrum, mut spectrum64) = (vec![[0u32; 3]; N64], vec![[0u32; 3]; N64]);
    ntt64.forward(&key64, &mut key64_spectrum);
    let mut out64 = vec![0u64; N64];
    group.bench_function("negacyclic-ntt u64 N=2048", |b| {
        b.iter(|| {
            ntt64.forward(black_box(&a64), &mut spectrum64);
            ntt64.mul_assign(&mut spectrum64, &key64_spectrum);
            ntt64.inverse_wrapping(&mut spectrum64, &mut out64);
        })
    });
    let naive64_coefficient = |j: usize| {
        (0..N64).fold(0u64, |acc, i| {
            let s = u64::from(key64[i]);
            if i <= j {
                acc.wrapping_add(a64[j - i].wrapping_mul(s))
            } else {
                acc.wrapping_sub(a64[N64 + j - i].wrapping_mul(s))
            }
        })
    };
    for j in [0, 1, 777, N64 - 1] {
        assert_eq!(out64[j], naive64_coefficient(j), "negacyclic-ntt u64, coefficient {j}");
    }

    bench_product(&mut group, "naive", &expected, |out| {
        negacyclic_fft::naive::negacyclic_product_wrapping_into(black_box(&a), &key, out);
    });
    group.finish();
}

fn main() {
    common::run(bench);
    common::print_ratio_table(
        "Negacyclic product, N = 1024, key spectrum precomputed (ratio = time / tfhe-fft time)",
        GROUP,
        &[
            "negacyclic-fft",
            "tfhe-fft",
            "rustfft",
            "naive",
            "negacyclic-fft forward+inverse only",
            "tfhe-fft forward+inverse only",
        ],
        "tfhe-fft",
    );
    common::print_ratio_table(
        "The integer NTT against our FFT and the schoolbook product, same run (ratio = time / negacyclic-fft time)",
        GROUP,
        &["negacyclic-ntt", "negacyclic-fft", "naive", "negacyclic-ntt u64 N=2048"],
        "negacyclic-fft",
    );
}
