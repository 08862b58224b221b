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

/// Where [`extract_lwe_sample_into`] writes an LWE ciphertext's words, in order: a caller's slice
/// ([`extract_lwe_sample`]) or a `Vec` with room reserved (the integer converter builds tfhe-rs's own
/// container that way, without zero-filling it first). Each method copies a whole run, so both stay
/// single-pass copies the compiler vectorizes.
pub(crate) trait LweSampleSink<T> {
    /// Appends `words` in reverse order.
    fn reversed(&mut self, words: &[T]);
    /// Appends `words` in reverse order, each negated modulo the torus.
    fn reversed_negated(&mut self, words: &[T]);
    /// Appends the body.
    fn body(&mut self, body: T);
}

impl<T: UnsignedTorus> LweSampleSink<T> for Vec<T> {
    fn reversed(&mut self, words: &[T]) {
        self.extend(words.iter().rev());
    }

    fn reversed_negated(&mut self, words: &[T]) {
        self.extend(words.iter().rev().map(|x| x.wrapping_neg()));
    }

    fn body(&mut self, body: T) {
        self.push(body);
    }
}

/// A slice written from its start.
struct SliceSink<'a, T> {
    out: &'a mut [T],
    written: usize,
}

impl<T: UnsignedTorus> SliceSink<'_, T> {
    fn next(&mut self, len: usize) -> &mut [T] {
        let run = &mut self.out[self.written..self.written + len];
        self.written += len;
        run
    }
}

impl<T: UnsignedTorus> LweSampleSink<T> for SliceSink<'_, T> {
    fn reversed(&mut self, words: &[T]) {
        for (o, &x) in self.next(words.len()).iter_mut().zip(words.iter().rev()) {
            *o = x;
        }
    }

    fn reversed_negated(&mut self, words: &[T]) {
        for (o, &x) in self.next(words.len()).iter_mut().zip(words.iter().rev()) {
            *o = x.wrapping_neg();
        }
    }

    fn body(&mut self, body: T) {
        self.next(1)[0] = body;
    }
}

/// Algorithm 1 itself, written once: the LWE ciphertext of coefficient `index` (`k * N + 1` words, mask
/// then body) into `sink`.
///
/// # Panics
/// If `index >= N`: a programmer error.
pub(crate) fn extract_lwe_sample_into<T: UnsignedTorus, C: AsRef<[T]>>(
    glwe: &GlweCiphertext<T, C>,
    index: usize,
    sink: &mut impl LweSampleSink<T>,
) {
    let n = glwe.polynomial_size().0;
    assert!(index < n, "coefficient index {index} out of range for N = {n}");
    for a in glwe.mask().chunks_exact(n) {
        // j <= i: a'_j = A_{i-j}, i.e. the first i+1 mask words reversed.
        sink.reversed(&a[..=index]);
        // j > i: a'_j = -A_{N+i-j}, i.e. the remaining words reversed and negated.
        sink.reversed_negated(&a[index + 1..]);
    }
    sink.body(glwe.body()[index]);
}

/// Writes the LWE ciphertext of coefficient `index` (`k * N + 1` words: mask then body) into `out`.
///
/// # Panics
/// If `index >= N` or `out.len() != k * N + 1`: programmer errors.
pub fn extract_lwe_sample<T: UnsignedTorus, C: AsRef<[T]>>(glwe: &GlweCiphertext<T, C>, index: usize, out: &mut [T]) {
    let n = glwe.polynomial_size().0;
    let k = glwe.glwe_dimension().0;
    assert_eq!(
        out.len(),
        k * n + 1,
        "an LWE ciphertext of dimension kN has kN + 1 words"
    );
    extract_lwe_sample_into(glwe, index, &mut SliceSink { out, written: 0 });
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
