//! The forward transform: decimation in frequency, natural order in, bit-reversed order out
//! ([`super::stages::transform`] with these butterflies).

use super::stages::{Butterfly, Complex, add, mul, sub};

/// The decimation-in-frequency butterflies: sums and differences first, then the twiddles.
pub(super) struct Dif;

impl Butterfly for Dif {
    const INVERSE: bool = false;

    #[inline(always)]
    fn radix2(u: Complex, v: Complex, w: Complex) -> [Complex; 2] {
        [add(u, v), mul(sub(u, v), w)]
    }

    #[inline(always)]
    fn radix4(x: [Complex; 4], w1: Complex, w2: Complex) -> [Complex; 4] {
        let [y0, e, f, g] = Self::radix4_unit(x);
        [y0, mul(e, w2), mul(f, w1), mul(g, mul(w1, w2))]
    }

    #[inline(always)]
    fn radix4_unit([x0, x1, x2, x3]: [Complex; 4]) -> [Complex; 4] {
        let (a, b, c) = (add(x0, x2), sub(x0, x2), add(x1, x3));
        // d = (x1 - x3) * (-i)
        let d = (x1.1 - x3.1, x3.0 - x1.0);
        [add(a, c), sub(a, c), add(b, d), sub(b, d)]
    }
}
