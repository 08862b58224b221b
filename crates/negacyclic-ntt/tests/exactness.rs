//! The NTT product must equal the schoolbook negacyclic product bit for bit: 32-bit torus through two
//! primes, 64-bit torus through three, at every supported size, for random and for extreme inputs.
#![allow(clippy::unwrap_used)]

use negacyclic_fft::naive::negacyclic_product_wrapping_into;
use negacyclic_ntt::{Input, NttPlan, NttPlan32, NttPlan64, Output};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng, rngs::StdRng};

/// Calls `$f::<N>()` for the `N` (a power of two from 64 to 4096) held in `$n`: plans are per `N` at compile
/// time, so a test that picks `N` at run time dispatches here.
macro_rules! for_size {
    ($n:expr, $f:ident $(, $arg:expr)*) => {
        match $n {
            64 => $f::<64>($($arg),*),
            128 => $f::<128>($($arg),*),
            256 => $f::<256>($($arg),*),
            512 => $f::<512>($($arg),*),
            1024 => $f::<1024>($($arg),*),
            2048 => $f::<2048>($($arg),*),
            4096 => $f::<4096>($($arg),*),
            n => panic!("unsupported N = {n}"),
        }
    };
}

fn naive32(a: &[u32], key: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; a.len()];
    negacyclic_product_wrapping_into(a, key, &mut out);
    out
}

/// The schoolbook product over the 64-bit torus (the naive module is 32-bit only).
fn naive64(a: &[u64], key: &[u64]) -> Vec<u64> {
    let n = a.len();
    let mut out = vec![0u64; n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in key.iter().enumerate() {
            let p = ai.wrapping_mul(bj);
            if i + j < n {
                out[i + j] = out[i + j].wrapping_add(p);
            } else {
                out[i + j - n] = out[i + j - n].wrapping_sub(p);
            }
        }
    }
    out
}

/// `a * key` through `plan` (of `L` primes).
fn product<const L: usize, T: Input + Output + Default>(plan: NttPlan<L>, a: &[T], key: &[T]) -> Vec<T> {
    let n = plan.polynomial_size();
    let mut key_spectrum = vec![[0u32; L]; n];
    plan.forward(key, &mut key_spectrum);
    let mut spectrum = vec![[0u32; L]; n];
    plan.forward(a, &mut spectrum);
    plan.mul_assign(&mut spectrum, &key_spectrum);
    let mut out = vec![T::default(); n];
    plan.inverse_wrapping(&mut spectrum, &mut out);
    out
}

/// The 32-bit torus product (two primes).
fn ntt32<const N: usize>(a: &[u32], key: &[u32]) -> Vec<u32> {
    const { assert!(N >= 64) };
    product(NttPlan32::new::<N>(), a, key)
}

/// The 64-bit torus product (three primes).
fn ntt64<const N: usize>(a: &[u64], key: &[u64]) -> Vec<u64> {
    product(NttPlan64::new::<N>(), a, key)
}

/// A random torus polynomial of `2^log_n` words and a key of as many: binary {0, 1}, or ternary {-1, 0, 1}
/// (as wrapping torus words) when `minus_one` is given.
fn case<T: Arbitrary + Copy + core::fmt::Debug + From<u8> + 'static>(
    log_n: std::ops::RangeInclusive<u32>,
    minus_one: Option<T>,
) -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    let coefficients: Vec<T> = [T::from(0), T::from(1)].into_iter().chain(minus_one).collect();
    log_n.prop_flat_map(move |log_n| {
        let n = 1usize << log_n;
        let key = prop::collection::vec(prop::sample::select(coefficients.clone()), n);
        (prop::collection::vec(any::<T>(), n), key)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn binary_key_product_is_exact((a, key) in case(6..=12, None)) {
        prop_assert_eq!(for_size!(a.len(), ntt32, &a, &key), naive32(&a, &key));
    }

    #[test]
    fn ternary_key_product_is_exact((a, key) in case(6..=11, Some(u32::MAX))) {
        prop_assert_eq!(for_size!(a.len(), ntt32, &a, &key), naive32(&a, &key));
    }

    #[test]
    fn u64_product_is_exact((a, key) in case(6..=11, Some(u64::MAX))) {
        prop_assert_eq!(for_size!(a.len(), ntt64, &a, &key), naive64(&a, &key));
    }
}

/// The largest magnitudes: a constant `a` (`2^31`, `2^31 - 1`, `2^32 - 1`) against an all-ones key or an
/// all-minus-ones key, so every output coefficient is as large as a 32-bit torus allows before wrapping.
#[test]
fn extreme_magnitudes_are_exact_u32() {
    fn run<const N: usize>() {
        for (fill, key_fill) in [
            (0x8000_0000u32, 1u32),
            (0x7fff_ffff, 1),
            (u32::MAX, 1),
            (0x8000_0000, u32::MAX),
            (u32::MAX, u32::MAX),
        ] {
            let (a, key) = (vec![fill; N], vec![key_fill; N]);
            assert_eq!(
                ntt32::<N>(&a, &key),
                naive32(&a, &key),
                "N = {N}, a = {fill:#x}, s = {key_fill:#x}"
            );
        }
    }
    for log_n in 6..=12 {
        for_size!(1usize << log_n, run);
    }
}

#[test]
fn extreme_magnitudes_are_exact_u64() {
    fn run<const N: usize>() {
        for (fill, key_fill) in [
            (1u64 << 63, 1u64),
            ((1 << 63) - 1, 1),
            (u64::MAX, 1),
            (u64::MAX, u64::MAX),
        ] {
            let (a, key) = (vec![fill; N], vec![key_fill; N]);
            assert_eq!(ntt64::<N>(&a, &key), naive64(&a, &key), "N = {N}, a = {fill:#x}");
        }
    }
    for log_n in [6, 10, 11, 12] {
        for_size!(1usize << log_n, run);
    }
}

/// A binary key given as bytes transforms like the same key as torus words; `load` in pieces equals one
/// `forward`; `mul_add_assign` and `inverse_add_wrapping` accumulate exactly (two products summed).
#[test]
fn bytes_pieces_and_accumulation() {
    const N: usize = 1024;
    let plan = NttPlan32::new::<N>();
    let mut rng = StdRng::seed_from_u64(3);
    let a: Vec<u32> = (0..N).map(|_| rng.random()).collect();
    let b: Vec<u32> = (0..N).map(|_| rng.random()).collect();
    let s: Vec<u8> = (0..N).map(|_| rng.random_range(0..2)).collect();
    let t: Vec<u8> = (0..N).map(|_| rng.random_range(0..2)).collect();
    let s32: Vec<u32> = s.iter().map(|&x| u32::from(x)).collect();
    let t32: Vec<u32> = t.iter().map(|&x| u32::from(x)).collect();

    let (mut s_hat, mut s_hat32) = (vec![[0u32; 2]; N], vec![[0u32; 2]; N]);
    plan.forward(&s, &mut s_hat);
    plan.forward(&s32, &mut s_hat32);
    assert_eq!(s_hat, s_hat32);

    let mut a_hat = vec![[0u32; 2]; N];
    plan.forward(&a, &mut a_hat);
    let mut pieces = vec![[0u32; 2]; N];
    for (k, chunk) in a.chunks(16).enumerate() {
        plan.load(&mut pieces, 16 * k, chunk);
    }
    plan.forward_loaded(&mut pieces);
    assert_eq!(pieces, a_hat);

    let (mut t_hat, mut b_hat) = (vec![[0u32; 2]; N], vec![[0u32; 2]; N]);
    plan.forward(&t, &mut t_hat);
    plan.forward(&b, &mut b_hat);
    let mut acc = vec![[0u32; 2]; N];
    plan.mul_add_assign(&mut acc, &a_hat, &s_hat);
    plan.mul_add_assign(&mut acc, &b_hat, &t_hat);
    let mut out: Vec<u32> = (0..N).map(|_| rng.random()).collect();
    let before = out.clone();
    plan.inverse_add_wrapping(&mut acc, &mut out);
    let (p, q) = (naive32(&a, &s32), naive32(&b, &t32));
    for j in 0..N {
        assert_eq!(
            out[j],
            before[j].wrapping_add(p[j]).wrapping_add(q[j]),
            "coefficient {j}"
        );
    }
}

/// The most full-magnitude products one `NttPlan32` spectrum may accumulate (`mul_add_assign`) at size `n`:
/// the sum of `k` products of torus words (`|a| <= 2^31`) and binary keys is at most `k n 2^31`, which must
/// stay below `P / 2`, `P = Q0 Q1` the small primes' product (the Cortex-M0/M3 build's `P0 P1` is larger:
/// this bound holds there too). 3 at `N = 4096`, 7 at 2048, 15 at 1024.
fn accumulation_limit(n: usize) -> usize {
    let p = u128::from(negacyclic_ntt::Q0) * u128::from(negacyclic_ntt::Q1);
    ((p / 2 - 1) / ((n as u128) << 31)) as usize
}

fn accumulate_worst_case<const N: usize>() {
    let plan = NttPlan32::new::<N>();
    let k = accumulation_limit(N);
    // Every term of every coefficient at the largest magnitude and the same sign: -2^31 times a key of ones.
    let a = vec![0x8000_0000u32; N];
    let key = vec![1u8; N];
    let key32 = vec![1u32; N];
    let (mut a_hat, mut key_hat) = (vec![[0u32; 2]; N], vec![[0u32; 2]; N]);
    plan.forward(&a, &mut a_hat);
    plan.forward(&key, &mut key_hat);
    let mut acc = vec![[0u32; 2]; N];
    for _ in 0..k {
        plan.mul_add_assign(&mut acc, &a_hat, &key_hat);
    }
    let mut out = vec![5u32; N];
    plan.inverse_add_wrapping(&mut acc, &mut out);
    let one = naive32(&a, &key32);
    for j in 0..N {
        let want = (0..k).fold(5u32, |sum, _| sum.wrapping_add(one[j]));
        assert_eq!(out[j], want, "N = {N}, {k} products, coefficient {j}");
    }
}

/// `mul_add_assign` is exact up to the documented number of full-magnitude products (`NttPlan::mul_add_assign`).
#[test]
fn accumulation_up_to_the_documented_limit_is_exact() {
    assert_eq!(
        [
            accumulation_limit(4096),
            accumulation_limit(2048),
            accumulation_limit(1024)
        ],
        [3, 7, 15]
    );
    accumulate_worst_case::<1024>();
    accumulate_worst_case::<2048>();
    accumulate_worst_case::<4096>();
}

/// Random products at every size, both plans, from a fixed seed.
#[test]
fn every_supported_size_is_exact() {
    fn run<const N: usize>(rng: &mut StdRng) {
        for _ in 0..2 {
            let a: Vec<u32> = (0..N).map(|_| rng.random()).collect();
            let key: Vec<u32> = (0..N).map(|_| rng.random_range(0..2)).collect();
            assert_eq!(ntt32::<N>(&a, &key), naive32(&a, &key), "N = {N}");
            let a: Vec<u64> = (0..N).map(|_| rng.random()).collect();
            let key: Vec<u64> = (0..N).map(|_| rng.random_range(0..2)).collect();
            assert_eq!(ntt64::<N>(&a, &key), naive64(&a, &key), "N = {N}");
        }
    }
    let mut rng = StdRng::seed_from_u64(1);
    for log_n in 6..=12 {
        for_size!(1usize << log_n, run, &mut rng);
    }
}

/// Plans are `const` and cheap handles.
#[test]
fn plans_are_const() {
    const PLAN: NttPlan<2> = NttPlan32::new::<2048>();
    const PLAN64: NttPlan<3> = NttPlan64::new::<2048>();
    assert_eq!(PLAN.polynomial_size(), 2048);
    assert_eq!(PLAN64.polynomial_size(), 2048);
    assert!(format!("{PLAN:?}").contains("2048"));
}
