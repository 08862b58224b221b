//! Sample extraction (the TFHE-SBC paper's Algorithm 1): one GLWE ciphertext of `N` coefficients becomes
//! `N` LWE ciphertexts of dimension `k * N`, with no added noise. Generic in `k` and in the torus.
//!
//! For coefficient `i` of `(A_0, ..., A_{k-1}, B)`: block `p` of the LWE mask (words `[pN, (p+1)N)`) is
//! `a'_j = A_p[i-j]` for `j <= i` and `a'_j = -A_p[N+i-j]` for `j > i`, and the body is `B[i]`. Under the
//! GLWE key read as a flat LWE key, its phase is coefficient `i` of `B - sum_p A_p * S_p`. This is tfhe-rs's
//! `extract_lwe_sample_from_glwe_ciphertext` layout, so the outputs are tfhe-rs LWE ciphertexts under the
//! "big" key.

use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::torus::UnsignedTorus;

/// Writes the LWE ciphertext of coefficient `index` (`k * N + 1` words: mask then body) into `out`.
///
/// # Panics
/// If `index >= N` or `out.len() != k * N + 1`: programmer errors.
pub fn extract_lwe_sample<T: UnsignedTorus, C: AsRef<[T]>>(glwe: &GlweCiphertext<T, C>, index: usize, out: &mut [T]) {
    let n = glwe.polynomial_size().0;
    let k = glwe.glwe_dimension().0;
    assert!(index < n, "coefficient index {index} out of range for N = {n}");
    assert_eq!(
        out.len(),
        k * n + 1,
        "an LWE ciphertext of dimension kN has kN + 1 words"
    );
    let (mask, body) = out.split_at_mut(k * n);
    for (a, m) in glwe.mask().chunks_exact(n).zip(mask.chunks_exact_mut(n)) {
        // j <= i: a'_j = A_{i-j}, i.e. the first i+1 mask words reversed.
        for (o, &x) in m[..=index].iter_mut().zip(a[..=index].iter().rev()) {
            *o = x;
        }
        // j > i: a'_j = -A_{N+i-j}, i.e. the remaining words reversed and negated.
        for (o, &x) in m[index + 1..].iter_mut().zip(a[index + 1..].iter().rev()) {
            *o = x.wrapping_neg();
        }
    }
    body[0] = glwe.body()[index];
}

/// Extracts all `N` coefficients into `out`, a contiguous buffer of `N * (k * N + 1)` words (ciphertext `i`
/// at `out[i * (k * N + 1)..]`).
///
/// # Panics
/// If `out.len() != N * (k * N + 1)`.
pub fn extract_all_lwe_samples<T: UnsignedTorus, C: AsRef<[T]>>(glwe: &GlweCiphertext<T, C>, out: &mut [T]) {
    let n = glwe.polynomial_size().0;
    let size = glwe.glwe_dimension().0 * n + 1;
    assert_eq!(out.len(), n * size, "the output holds N ciphertexts of kN + 1 words");
    for (i, lwe) in out.chunks_exact_mut(size).enumerate() {
        extract_lwe_sample(glwe, i, lwe);
    }
}

/// A lazy extractor: yields only the coefficients asked for, each into a fresh `Vec` of `k * N + 1` words.
pub struct LazyExtractor<'a, C> {
    glwe: &'a GlweCiphertext<u32, C>,
    next: usize,
}

impl<'a, C: AsRef<[u32]>> LazyExtractor<'a, C> {
    /// An iterator over the extracted ciphertexts of `glwe`, in coefficient order.
    pub fn new(glwe: &'a GlweCiphertext<u32, C>) -> Self {
        Self { glwe, next: 0 }
    }

    /// The ciphertext of coefficient `index`, or `None` if `index >= N`.
    pub fn get(&self, index: usize) -> Option<Vec<u32>> {
        let n = self.glwe.polynomial_size().0;
        (index < n).then(|| {
            let mut out = vec![0u32; self.glwe.glwe_dimension().0 * n + 1];
            extract_lwe_sample(self.glwe, index, &mut out);
            out
        })
    }
}

impl<C: AsRef<[u32]>> Iterator for LazyExtractor<'_, C> {
    type Item = Vec<u32>;

    fn next(&mut self) -> Option<Vec<u32>> {
        let item = self.get(self.next)?;
        self.next += 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.glwe.polynomial_size().0 - self.next;
        (left, Some(left))
    }

    fn nth(&mut self, n: usize) -> Option<Vec<u32>> {
        self.next = self.next.saturating_add(n);
        self.next()
    }
}

impl<C: AsRef<[u32]>> ExactSizeIterator for LazyExtractor<'_, C> {}

impl<C: AsRef<[u32]>> core::fmt::Debug for LazyExtractor<'_, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LazyExtractor")
            .field("glwe", self.glwe)
            .field("next", &self.next)
            .finish()
    }
}

/// Extracts every coefficient of many ciphertexts (from many devices) in parallel with rayon: ciphertext
/// `c` goes to `outputs[c]`, each of `N * (k * N + 1)` words.
///
/// # Panics
/// If the lengths do not match, as [`extract_all_lwe_samples`].
#[cfg(feature = "rayon")]
pub fn extract_all_lwe_samples_par<C: AsRef<[u32]> + Sync>(glwes: &[GlweCiphertext<u32, C>], outputs: &mut [Vec<u32>]) {
    use rayon::prelude::*;
    assert_eq!(glwes.len(), outputs.len(), "one output per ciphertext");
    glwes
        .par_iter()
        .zip(outputs.par_iter_mut())
        .for_each(|(glwe, out)| extract_all_lwe_samples(glwe, out));
}
