//! The schoolbook O(N^2) negacyclic product: the reference the FFT is tested and benchmarked against.

/// Writes `a * b mod (X^N + 1)` into `out`, with coefficients wrapping modulo 2^32.
///
/// `b` usually holds small integers given as `u32` (a binary key), but any values work.
///
/// # Panics
/// If the three lengths differ.
pub fn negacyclic_product_wrapping_into(a: &[u32], b: &[u32], out: &mut [u32]) {
    let n = a.len();
    assert!(b.len() == n && out.len() == n, "length mismatch");
    out.fill(0);
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let p = ai.wrapping_mul(bj);
            let k = i + j;
            if k < n {
                out[k] = out[k].wrapping_add(p);
            } else {
                out[k - n] = out[k - n].wrapping_sub(p);
            }
        }
    }
}
