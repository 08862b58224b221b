//! The FFT product must equal the schoolbook negacyclic product bit for bit.

use negacyclic_fft::{FftError, Plan, naive::negacyclic_product_wrapping_into};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng, rngs::StdRng};

/// The spectrum of `a`.
fn spectrum<T: negacyclic_fft::Coefficient>(plan: &Plan, a: &[T]) -> Vec<f64> {
    let mut spectrum = vec![0.0; plan.polynomial_size()];
    plan.forward(a, &mut spectrum);
    spectrum
}

fn fft_product(plan: &Plan, a: &[u32], key: &[u32]) -> Vec<u32> {
    let mut product = spectrum(plan, a);
    plan.mul_assign(&mut product, &spectrum(plan, key));
    let mut out = vec![0u32; plan.polynomial_size()];
    plan.inverse_wrapping(&mut product, &mut out);
    out
}

/// `n` random torus coefficients.
fn torus(rng: &mut StdRng, n: usize) -> Vec<u32> {
    (0..n).map(|_| rng.random()).collect()
}

/// `n` random binary key coefficients.
fn binary(rng: &mut StdRng, n: usize) -> Vec<u32> {
    (0..n).map(|_| rng.random_range(0..2)).collect()
}

fn naive_product(a: &[u32], key: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; a.len()];
    negacyclic_product_wrapping_into(a, key, &mut out);
    out
}

/// A key polynomial: binary {0, 1} or ternary {-1, 0, 1} (as wrapping u32).
fn key_strategy(n: usize, ternary: bool) -> impl Strategy<Value = Vec<u32>> {
    let coefficient = if ternary {
        prop_oneof![Just(0u32), Just(1u32), Just(u32::MAX)].boxed()
    } else {
        prop_oneof![Just(0u32), Just(1u32)].boxed()
    };
    prop::collection::vec(coefficient, n)
}

fn case(log_n: std::ops::RangeInclusive<u32>, ternary: bool) -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    log_n.prop_flat_map(move |log_n| {
        let n = 1usize << log_n;
        (prop::collection::vec(any::<u32>(), n), key_strategy(n, ternary))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn binary_key_product_is_exact((a, key) in case(8..=11, false)) {
        let plan = Plan::new(a.len()).unwrap();
        prop_assert_eq!(fft_product(&plan, &a, &key), naive_product(&a, &key));
    }

    #[test]
    fn ternary_key_product_is_exact((a, key) in case(8..=11, true)) {
        let plan = Plan::new(a.len()).unwrap();
        prop_assert_eq!(fft_product(&plan, &a, &key), naive_product(&a, &key));
    }
}

#[test]
fn every_supported_size_is_exact() {
    let mut rng = StdRng::seed_from_u64(1);
    for log_n in 6..=12 {
        let n = 1 << log_n;
        let plan = Plan::new(n).unwrap();
        for _ in 0..3 {
            let a = torus(&mut rng, n);
            let key: Vec<u32> = (0..n).map(|_| [0, 1, u32::MAX][rng.random_range(0..3)]).collect();
            assert_eq!(fft_product(&plan, &a, &key), naive_product(&a, &key), "N = {n}");
        }
    }
}

/// The largest possible coefficients: every a_j = -2^31 and an all-ones key, so each output is N * 2^31
/// in magnitude before wrapping (2^43 at N = 4096).
#[test]
fn extreme_magnitudes_are_exact() {
    for log_n in 6..=12 {
        let n = 1 << log_n;
        let plan = Plan::new(n).unwrap();
        for (fill, key_fill) in [(0x8000_0000u32, 1u32), (0x7fff_ffff, 1), (0x8000_0000, u32::MAX)] {
            let a = vec![fill; n];
            let key = vec![key_fill; n];
            assert_eq!(fft_product(&plan, &a, &key), naive_product(&a, &key), "N = {n}");
        }
    }
}

/// The rounding margin: over 10^4 random (torus, binary key) pairs at N = 1024, the largest distance of a
/// raw inverse output from the nearest integer. Exactness needs < 0.5; the contract is < 0.25.
#[test]
fn worst_rounding_distance_at_1024() {
    const PAIRS: usize = 10_000;
    let n = 1024;
    let plan = Plan::new(n).unwrap();
    let mut rng = StdRng::seed_from_u64(0x5bc_f17);
    let mut key_spectrum = vec![0.0; n];
    let mut spectrum = vec![0.0; n];
    let mut a = vec![0u32; n];
    let mut key = vec![0u32; n];
    let mut worst: f64 = 0.0;
    for pair in 0..PAIRS {
        a.iter_mut().for_each(|x| *x = rng.random());
        key.iter_mut().for_each(|x| *x = rng.random_range(0..2));
        plan.forward(&key, &mut key_spectrum);
        plan.forward(&a, &mut spectrum);
        plan.mul_assign(&mut spectrum, &key_spectrum);
        plan.inverse_raw(&mut spectrum);
        for &x in &spectrum {
            worst = worst.max((x - x.round()).abs());
        }
        if pair < 20 {
            // Spot-check exactness too (the naive product is O(N^2), so only a few).
            let mut rounded = vec![0u32; n];
            for (o, &x) in rounded.iter_mut().zip(&spectrum) {
                *o = x.round() as i64 as u32;
            }
            assert_eq!(rounded, naive_product(&a, &key));
        }
    }
    println!("worst distance to the nearest integer over {PAIRS} pairs at N = {n}: {worst:.3e}");
    assert!(worst < 0.25, "rounding margin too small: {worst}");
}

#[test]
fn multiply_accumulate_and_accumulating_inverse() {
    let n = 512;
    let plan = Plan::new(n).unwrap();
    let mut rng = StdRng::seed_from_u64(2);
    let (a, b) = (torus(&mut rng, n), torus(&mut rng, n));
    let (s1, s2) = (binary(&mut rng, n), binary(&mut rng, n));
    let mut acc = vec![0.0; n];
    plan.mul_add_assign(&mut acc, &spectrum(&plan, &a), &spectrum(&plan, &s1));
    plan.mul_add_assign(&mut acc, &spectrum(&plan, &b), &spectrum(&plan, &s2));
    let offset = torus(&mut rng, n);
    let mut out = offset.clone();
    plan.inverse_add_wrapping(&mut acc, &mut out);
    let (p1, p2) = (naive_product(&a, &s1), naive_product(&b, &s2));
    let expected: Vec<u32> = (0..n)
        .map(|i| offset[i].wrapping_add(p1[i]).wrapping_add(p2[i]))
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn signed_and_exact_outputs() {
    let n = 64;
    let plan = Plan::new(n).unwrap();
    // X * X^(N-1) = X^N = -1 in the negacyclic ring.
    let mut x = vec![0i32; n];
    x[1] = 1;
    let mut y = vec![0i8; n];
    y[n - 1] = 1;
    let mut fx = spectrum(&plan, &x);
    plan.mul_assign(&mut fx, &spectrum(&plan, &y));
    let mut out = vec![0i64; n];
    plan.inverse_wrapping(&mut fx, &mut out);
    let mut expected = vec![0i64; n];
    expected[0] = -1;
    assert_eq!(out, expected);
}

#[test]
fn unsupported_sizes_are_rejected() {
    for n in [0, 1, 32, 100, 1000, 8192] {
        assert_eq!(Plan::new(n).unwrap_err(), FftError::UnsupportedSize(n));
    }
    assert!(Plan::new(64).is_ok() && Plan::new(4096).is_ok());
    assert!(FftError::UnsupportedSize(3).to_string().contains("power of two"));
}

#[test]
#[should_panic(expected = "input length must be N")]
fn wrong_length_panics() {
    let plan = Plan::new(64).unwrap();
    plan.forward(&[0u32; 32], &mut [0.0; 64]);
}

#[test]
fn forward_in_place_equals_forward() {
    let n = 1024;
    let plan = Plan::new(n).unwrap();
    let a = torus(&mut StdRng::seed_from_u64(11), n);
    let expected = spectrum(&plan, &a);
    let mut spectrum: Vec<f64> = a.iter().map(|&x| f64::from(x as i32)).collect();
    plan.forward_in_place(&mut spectrum);
    assert_eq!(spectrum, expected);
}
