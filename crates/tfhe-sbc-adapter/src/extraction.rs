//! Sample extraction (the TFHE-SBC paper's Algorithm 1): one TRLWE ciphertext of `N` coefficients becomes
//! `N` TLWE ciphertexts of dimension `N`, with no added noise.
//!
//! For coefficient `i` of `(A, B)` with `k = 1`: the LWE mask is `a'_j = A_{i-j}` for `j <= i` and
//! `a'_j = -A_{N+i-j}` for `j > i`, and the body is `B_i`. Under the GLWE key read as a flat LWE key, its
//! phase is coefficient `i` of `B - A*S`. This is tfhe-rs's `extract_lwe_sample_from_glwe_ciphertext`
//! layout, so the outputs are tfhe-rs LWE ciphertexts under the "big" key.

use tfhe_sbc_core::entities::GlweCiphertext;

/// Writes the LWE ciphertext of coefficient `index` (`N + 1` words: mask then body) into `out`.
///
/// # Panics
/// If `index >= N`, the ciphertext is not `k = 1`, or `out.len() != N + 1`: programmer errors.
pub fn extract_lwe_sample<C: AsRef<[u32]>>(glwe: &GlweCiphertext<u32, C>, index: usize, out: &mut [u32]) {
    let n = glwe.polynomial_size().0;
    assert_eq!(glwe.glwe_dimension().0, 1, "sample extraction here is for k = 1");
    assert!(index < n, "coefficient index {index} out of range for N = {n}");
    assert_eq!(out.len(), n + 1, "an LWE ciphertext of dimension N has N + 1 words");
    let a = glwe.mask();
    let (mask, body) = out.split_at_mut(n);
    // j <= i: a'_j = A_{i-j}, i.e. the first i+1 mask words reversed.
    for (o, &x) in mask[..=index].iter_mut().zip(a[..=index].iter().rev()) {
        *o = x;
    }
    // j > i: a'_j = -A_{N+i-j}, i.e. the remaining words reversed and negated.
    for (o, &x) in mask[index + 1..].iter_mut().zip(a[index + 1..].iter().rev()) {
        *o = x.wrapping_neg();
    }
    body[0] = glwe.body()[index];
}

/// Extracts all `N` coefficients into `out`, a contiguous buffer of `N * (N + 1)` words (ciphertext `i` at
/// `out[i * (N + 1)..]`).
///
/// # Panics
/// If `out.len() != N * (N + 1)` or the ciphertext is not `k = 1`.
pub fn extract_all_lwe_samples<C: AsRef<[u32]>>(glwe: &GlweCiphertext<u32, C>, out: &mut [u32]) {
    let n = glwe.polynomial_size().0;
    assert_eq!(out.len(), n * (n + 1), "the output holds N ciphertexts of N + 1 words");
    for (i, lwe) in out.chunks_exact_mut(n + 1).enumerate() {
        extract_lwe_sample(glwe, i, lwe);
    }
}

/// A lazy extractor: yields only the coefficients asked for, each into a fresh `Vec` of `N + 1` words.
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
            let mut out = vec![0u32; n + 1];
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
/// `c` goes to `outputs[c]`, each of `N * (N + 1)` words.
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
