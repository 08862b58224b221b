//! The inverse transform: decimation in time, bit-reversed order in, natural order out, scaled by `M`
//! ([`super::stages::transform`] with these butterflies: the forward stages in reverse order).

use super::stages::{Butterfly, Complex, add, mul, mul_conj, sub};

/// The decimation-in-time butterflies: conjugate twiddles first, then sums and differences; each undoes
/// the [`super::dif::Dif`] butterfly up to its factor (2 or 4).
pub(super) struct Dit;

impl Butterfly for Dit {
    const INVERSE: bool = true;

    #[inline(always)]
    fn radix2(u: Complex, v: Complex, w: Complex) -> [Complex; 2] {
        let v = mul_conj(v, w);
        [add(u, v), sub(u, v)]
    }

    #[inline(always)]
    fn radix4([z0, z1, z2, z3]: [Complex; 4], w1: Complex, w2: Complex) -> [Complex; 4] {
        let w3 = mul(w1, w2);
        Self::radix4_unit([z0, mul_conj(z1, w2), mul_conj(z2, w1), mul_conj(z3, w3)])
    }

    #[inline(always)]
    fn radix4_unit([z0, t1, s2, s3]: [Complex; 4]) -> [Complex; 4] {
        let (y0, y1, p) = (add(z0, t1), sub(z0, t1), add(s2, s3));
        // m = i * (s2 - s3)
        let m = (s3.1 - s2.1, s2.0 - s3.0);
        [add(y0, p), add(y1, m), sub(y0, p), sub(y1, m)]
    }
}
