//! TUniform(b): exact distribution over all inputs, and statistics of the batched sampler with fixed seeds.
//!
//! Thresholds (n samples):
//! * mean: |mean| < 5 standard errors (`5 * sqrt(var / n)`)
//! * variance: within 1% of `(2^(2b+1) + 1) / 6` (about 5 standard errors at n = 10^6)
//! * chi-square over the `2^(b+1) + 1` values at b = 4 (32 degrees of freedom): below 70.0, the 0.01%
//!   critical value (a fixed seed, so the test is deterministic; 70 is far in the tail)
#![allow(clippy::unwrap_used)]

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use tfhe_sbc_core::tuniform::TUniform;

/// Every interior value of [-2^b, 2^b] is hit by exactly two of the 2^(b+2) inputs, each end point by one:
/// the distribution is exactly tfhe-rs's, not approximately.
#[test]
fn exact_distribution_over_all_inputs() {
    for b in 1..=12u32 {
        let t = TUniform::new(b).unwrap();
        let bound = 1i64 << b;
        let mut counts = vec![0u32; (2 * bound + 1) as usize];
        for r in 0..(1u64 << (b + 2)) {
            let x = t.from_bits(r);
            assert!((-bound..=bound).contains(&x), "b = {b}, r = {r}: {x}");
            counts[(x + bound) as usize] += 1;
        }
        assert_eq!(counts[0], 1, "b = {b}: -2^b");
        assert_eq!(counts[counts.len() - 1], 1, "b = {b}: 2^b");
        assert!(counts[1..counts.len() - 1].iter().all(|&c| c == 2), "b = {b}: interior");
        // The exact variance, from the counts, equals the closed form.
        let total = f64::from(1u32 << (b + 2));
        let var: f64 = counts
            .iter()
            .enumerate()
            .map(|(i, &c)| f64::from(c) * ((i as i64 - bound) as f64).powi(2))
            .sum::<f64>()
            / total;
        assert!((var - t.variance_scaled()).abs() < 1e-9 * var, "b = {b}: {var}");
    }
}

fn moments(xs: &[i64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// The batched path (`add_noise_torus`) for each word width, through u32 and u64 tori.
#[test]
fn batched_moments_for_each_word_width() {
    const N: usize = 1 << 20;
    for (b, seed) in [(8u32, 1u64), (17, 2), (45, 3)] {
        let t = TUniform::new(b).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let xs: Vec<i64> = if b + 2 <= 32 {
            let mut out = vec![0u32; N];
            t.add_noise_torus(&mut rng, &mut out);
            out.iter().map(|&x| i64::from(x as i32)).collect()
        } else {
            let mut out = vec![0u64; N];
            t.add_noise_torus(&mut rng, &mut out);
            out.iter().map(|&x| x as i64).collect()
        };
        let (mean, var) = moments(&xs);
        let expected = t.variance_scaled();
        println!(
            "TUniform({b}): mean {mean:+.3}, variance / expected {:.5}, std {:.1}",
            var / expected,
            var.sqrt()
        );
        assert!(mean.abs() < 5.0 * (expected / N as f64).sqrt(), "b = {b}: mean {mean}");
        assert!(
            (var / expected - 1.0).abs() < 0.01,
            "b = {b}: variance {var} vs {expected}"
        );
        let bound = 1i64 << b;
        assert!(xs.iter().all(|x| (-bound..=bound).contains(x)), "b = {b}: out of range");
    }
}

/// Chi-square goodness of fit of the batched sampler at b = 4 (33 values, end points at half weight).
#[test]
fn batched_chi_square() {
    const N: usize = 1_000_000;
    let t = TUniform::new(4).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let mut out = vec![0u32; N];
    t.add_noise_torus(&mut rng, &mut out);
    let mut counts = [0f64; 33];
    for &x in &out {
        counts[(x as i32 + 16) as usize] += 1.0;
    }
    let chi2: f64 = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let p = if i == 0 || i == 32 { 1.0 / 64.0 } else { 2.0 / 64.0 };
            let e = p * N as f64;
            (c - e).powi(2) / e
        })
        .sum();
    println!("TUniform(4): chi-square {chi2:.2} on 32 degrees of freedom (critical 70.0 at 0.01%)");
    assert!(chi2 < 70.0, "chi-square {chi2}");
}

/// A byte-stream RNG over a fixed buffer (ChaCha20's `fill_bytes` drops the unused bytes of a word, so it
/// would not show stream order).
struct ByteStream(Vec<u8>, usize);

impl rand_core::TryRng for ByteStream {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut b = [0u8; 4];
        self.try_fill_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut b = [0u8; 8];
        self.try_fill_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        dst.copy_from_slice(&self.0[self.1..self.1 + dst.len()]);
        self.1 += dst.len();
        Ok(())
    }
}

/// One sample at a time and the batch consume the same stream words in the same order.
#[test]
fn single_and_batched_agree() {
    use rand_core::Rng;
    let t = TUniform::new(8).unwrap();
    let mut bytes = vec![0u8; 4000];
    ChaCha20Rng::seed_from_u64(9).fill_bytes(&mut bytes);
    let mut a = ByteStream(bytes.clone(), 0);
    let mut b = ByteStream(bytes, 0);
    let mut batch = [0u32; 1000];
    t.add_noise_torus(&mut a, &mut batch);
    let single: Vec<u32> = (0..1000).map(|_| t.sample_torus::<u32, _>(&mut b)).collect();
    assert_eq!(batch.to_vec(), single);
    assert_eq!((a.1, b.1), (2000, 2000));
}
