//! [`NttPlan`]: a compile-time plan for one size `N` and `L` primes; transforms, pointwise products and the
//! CRT reconstruction.

use crate::arith::{Prime, Twiddle, centre, csub, mont_mul};
use crate::coefficients::{Digits, Input, Output};
use crate::ntt;
use crate::primes::{Crt, CrtFor, PRIMES, SMALL_PRIMES_32, Twiddles, plan_primes};
#[cfg(not(negacyclic_ntt_mul16))]
use crate::{small_crt, small_ntt};

/// The smallest supported polynomial size `N`.
pub const MIN_POLYNOMIAL_SIZE: usize = 64;
/// The largest supported polynomial size `N`.
pub const MAX_POLYNOMIAL_SIZE: usize = 4096;

/// An exact negacyclic product of size `N` over `L` primes: a `Copy` handle on compile-time tables.
///
/// * [`NttPlan32`] (`L = 2`): a 32-bit torus polynomial times a binary (or ternary) one, `N <= 4096`.
/// * [`NttPlan64`] (`L = 3`): a 64-bit torus polynomial times a binary (or ternary) one, `N <= 4096`.
///
/// A *spectrum* is `N` elements of `[u32; L]`, but its words are laid out as `L` planes: in the flat view
/// (`as_flattened`), words `[iN, (i + 1)N)` are the residues modulo prime `i`, in bit-reversed order: lazy in
/// `[0, 2p)`, or, for [`NttPlan32`] over the small primes (every build but the 16x16-bit multiplier's), signed
/// (two's complement) of magnitude below `16p`. A spectrum is only meant for the methods of a plan of the same
/// build. The grouping into `[u32; L]` only sizes the storage. The caller owns every spectrum; nothing
/// allocates.
///
/// Methods panic if a slice length is not `N` (a programmer error, not a data error). Their time does not
/// depend on the values (see the crate documentation for the multiplier on each target).
#[derive(Clone, Copy)]
pub struct NttPlan<const L: usize> {
    n: usize,
    primes: &'static [Prime; L],
    twiddles: [&'static [Twiddle]; L],
    crt: Crt<L>,
}

/// The plan for the 32-bit torus: two primes.
pub type NttPlan32 = NttPlan<2>;
/// The plan for the 64-bit torus: three primes.
pub type NttPlan64 = NttPlan<3>;

impl<const L: usize> core::fmt::Debug for NttPlan<L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NttPlan")
            .field("polynomial_size", &self.n)
            .field("primes", &L)
            .finish()
    }
}

/// Fails at compile time (when a plan for `n` is evaluated) unless `n` is supported.
const fn check_size(n: usize) {
    assert!(
        n.is_power_of_two() && n >= MIN_POLYNOMIAL_SIZE && n <= MAX_POLYNOMIAL_SIZE,
        "negacyclic NTT: unsupported polynomial size (a power of two from 64 to 4096)"
    );
}

/// The indices in `PRIMES` of the 32-bit torus plan's two primes.
const PLAN32_FIRST: usize = plan_primes::<2>()[0];
const PLAN32_SECOND: usize = plan_primes::<2>()[1];

impl NttPlan<2> {
    /// The plan for `N`; an unsupported `N` is a compile error. Links the tables of `N` for two primes.
    pub const fn new<const N: usize>() -> Self {
        const { check_size(N) };
        Self {
            n: N,
            primes: &Self::PRIMES,
            twiddles: [Twiddles::<N, PLAN32_FIRST>::TABLE, Twiddles::<N, PLAN32_SECOND>::TABLE],
            crt: CrtFor::<N, 2>::VALUE,
        }
    }
}

impl NttPlan<3> {
    /// The plan for `N`; an unsupported `N` is a compile error. Links the tables of `N` for three primes.
    pub const fn new<const N: usize>() -> Self {
        const { check_size(N) };
        Self {
            n: N,
            primes: &Self::PRIMES,
            twiddles: [
                Twiddles::<N, 0>::TABLE,
                Twiddles::<N, 1>::TABLE,
                Twiddles::<N, 2>::TABLE,
            ],
            crt: CrtFor::<N, 3>::VALUE,
        }
    }
}

impl<const L: usize> NttPlan<L> {
    /// Whether this plan runs the signed kernels over the small primes (see `primes::SMALL_PRIMES_32`).
    const SMALL: bool = L == 2 && SMALL_PRIMES_32;

    /// The plan's primes. The plan holds a reference to them (`primes`) that the methods read at run time: with
    /// the constants folded into the loops LLVM made the Cortex-M3 build's encryption 3 k instructions longer,
    /// and a copy in the plan made every materialized plan longer.
    const PRIMES: [Prime; L] = {
        let indices = plan_primes::<L>();
        let mut primes = [PRIMES[0]; L];
        let mut i = 0;
        while i < L {
            primes[i] = PRIMES[indices[i]];
            i += 1;
        }
        primes
    };

    /// The polynomial size `N`, which is also the length of a spectrum in `[u32; L]` elements.
    #[inline]
    pub const fn polynomial_size(&self) -> usize {
        self.n
    }

    fn planes<'a>(&self, spectrum: &'a mut [[u32; L]]) -> &'a mut [u32] {
        assert_eq!(spectrum.len(), self.n, "spectrum length must be N");
        spectrum.as_flattened_mut()
    }

    /// Transforms the polynomial `input` into `spectrum` (both of length `N`).
    pub fn forward<T: Input>(&self, input: &[T], spectrum: &mut [[u32; L]]) {
        assert_eq!(input.len(), self.n, "input length must be N");
        self.load(spectrum, 0, input);
        self.forward_loaded(spectrum);
    }

    /// Writes coefficients `offset..offset + values.len()` of a polynomial into `spectrum` (reduced modulo
    /// every prime, or for [`NttPlan32`] over the small primes as words the first pass of
    /// [`Self::forward_loaded`] reduces), for a caller that generates a polynomial piece by piece straight
    /// into the transform buffer; then [`Self::forward_loaded`] transforms it.
    pub fn load<T: Input>(&self, spectrum: &mut [[u32; L]], offset: usize, values: &[T]) {
        let n = self.n;
        let planes = self.planes(spectrum);
        assert!(offset <= n && values.len() <= n - offset, "coefficients past N");
        if Self::SMALL {
            // Both planes in one loop: for `u8` and `u32` the word is the same for both primes.
            #[cfg(not(negacyclic_ntt_mul16))]
            {
                let (first, second) = planes.split_at_mut(n);
                let (q0, q1) = (self.primes[0], self.primes[1]);
                let range = offset..offset + values.len();
                let rows = first[range.clone()].iter_mut().zip(&mut second[range]);
                for ((x0, x1), &v) in rows.zip(values) {
                    (*x0, *x1) = (v.word_signed(q0) as u32, v.word_signed(q1) as u32);
                }
            }
        } else {
            for (i, plane) in planes.chunks_exact_mut(n).enumerate() {
                let q = self.primes[i];
                for (x, &v) in plane[offset..offset + values.len()].iter_mut().zip(values) {
                    *x = v.residue(q);
                }
            }
        }
    }

    /// Transforms in place a polynomial written with [`Self::load`].
    pub fn forward_loaded(&self, spectrum: &mut [[u32; L]]) {
        let n = self.n;
        let planes = self.planes(spectrum);
        for ((plane, &tw), &q) in planes.chunks_exact_mut(n).zip(&self.twiddles).zip(self.primes) {
            if Self::SMALL {
                #[cfg(not(negacyclic_ntt_mul16))]
                small_ntt::forward(plane, tw, q);
            } else {
                ntt::forward(plane, tw, q);
            }
        }
    }

    /// Pointwise product `acc *= rhs` of two spectra.
    pub fn mul_assign(&self, acc: &mut [[u32; L]], rhs: &[[u32; L]]) {
        let n = self.n;
        assert_eq!(rhs.len(), n, "spectrum length must be N");
        let acc = self.planes(acc);
        for ((a, b), &q) in acc
            .chunks_exact_mut(n)
            .zip(rhs.as_flattened().chunks_exact(n))
            .zip(self.primes)
        {
            if Self::SMALL {
                // Signed residues below 16p: the product is below 256 p^2 / 2^32 + p/2 < p.
                #[cfg(not(negacyclic_ntt_mul16))]
                small_crt::pointwise(a, b, q);
            } else {
                for (x, &y) in a.iter_mut().zip(b) {
                    *x = mont_mul(*x, y, q);
                }
            }
        }
    }

    /// Pointwise multiply-accumulate `acc += lhs * rhs` of spectra.
    ///
    /// The accumulated sum must stay in the exact range of the plan's primes, `|X| < P/2`. For
    /// [`NttPlan32`] that is `P = Q0 Q1 ~ 2^45.96` (the Cortex-M0/M3 build's `P0 P1 ~ 2^60` is larger): at
    /// most `floor(2^44.95 / (N 2^31))` products of full-magnitude torus words and binary or ternary keys per
    /// spectrum, 3 at `N = 4096`, 7 at 2048, 15 at 1024, 31 at 512. Beyond it the result is silently wrong
    /// (`tests/exactness.rs` checks the limit's worst case). [`NttPlan64`] (`P ~ 2^90`) takes `2^14` at `N =
    /// 4096`. To sum more, invert each partial sum into the output (`inverse_add_wrapping`, exact modulo
    /// the torus).
    pub fn mul_add_assign(&self, acc: &mut [[u32; L]], lhs: &[[u32; L]], rhs: &[[u32; L]]) {
        let n = self.n;
        assert_eq!(lhs.len(), n, "spectrum length must be N");
        assert_eq!(rhs.len(), n, "spectrum length must be N");
        let acc = self.planes(acc);
        let planes = acc
            .chunks_exact_mut(n)
            .zip(lhs.as_flattened().chunks_exact(n))
            .zip(rhs.as_flattened().chunks_exact(n));
        for (((a, l), r), &q) in planes.zip(self.primes) {
            if Self::SMALL {
                // The sum (an accumulator below 16p plus a product below p) reduced to [-p/2, 3p/2].
                #[cfg(not(negacyclic_ntt_mul16))]
                small_crt::pointwise_add(a, l, r, q);
            } else {
                for ((x, &y), &z) in a.iter_mut().zip(l).zip(r) {
                    *x = csub(x.wrapping_add(mont_mul(y, z, q)), q.two_p);
                }
            }
        }
    }

    /// Inverse transform of `spectrum` (destroyed: it is the scratch) into `out`, wrapping modulo
    /// `2^32`/`2^64`.
    pub fn inverse_wrapping<T: Output>(&self, spectrum: &mut [[u32; L]], out: &mut [T]) {
        self.inverse_with(spectrum, out, false, |_, x| x);
    }

    /// `out += inverse(spectrum)`, wrapping; `spectrum` is scratch afterwards.
    pub fn inverse_add_wrapping<T: Output>(&self, spectrum: &mut [[u32; L]], out: &mut [T]) {
        self.inverse_with(spectrum, out, true, Digits::wrapping_add);
    }

    #[inline(always)]
    fn inverse_with<T: Output>(
        &self,
        spectrum: &mut [[u32; L]],
        out: &mut [T],
        add: bool,
        combine: impl Fn(T, T) -> T,
    ) {
        #[cfg(any(not(negacyclic_ntt_arm_asm), negacyclic_ntt_mul16))]
        let _ = add;
        let n = self.n;
        assert_eq!(out.len(), n, "output length must be N");
        let planes = self.planes(spectrum);
        for ((plane, &tw), &q) in planes.chunks_exact_mut(n).zip(&self.twiddles).zip(self.primes) {
            if Self::SMALL {
                #[cfg(not(negacyclic_ntt_mul16))]
                small_ntt::inverse(plane, tw, q);
            } else {
                ntt::inverse(plane, tw, q);
            }
        }
        #[cfg(not(negacyclic_ntt_mul16))]
        if Self::SMALL {
            let (first, second) = planes.split_at(n);
            let crt = &self.crt;
            let constants = [crt.own[0], crt.own[1], crt.cross[1][0]];
            // `combine` is the wrapping addition when `add`: a `u32` output has an assembly twin there.
            #[cfg(negacyclic_ntt_arm_asm)]
            if add && T::crt_add_asm(first, second, out, constants, [self.primes[0], self.primes[1]]) {
                return;
            }
            small_crt::crt(first, second, out, constants, [self.primes[0], self.primes[1]], combine);
            return;
        }
        let (crt, primes) = (&self.crt, self.primes);
        for (j, o) in out.iter_mut().enumerate() {
            let mut x = [0u32; L];
            for (i, x) in x.iter_mut().enumerate() {
                *x = planes[i * n + j];
            }
            *o = combine(*o, reconstruct::<T, L>(&x, crt, primes));
        }
    }
}

/// Garner's reconstruction of one coefficient from its `L` residues (`[0, 2p_i)`, scaled by `N R^-1`),
/// wrapped into `T`. Every digit but the last stays lazy in `[0, 2p_i)`; the last is reduced to `[0, p)` and
/// centred, which makes the sum the exact signed integer (crate documentation: bounds).
#[inline(always)]
fn reconstruct<T: Output, const L: usize>(x: &[u32; L], crt: &Crt<L>, primes: &[Prime; L]) -> T {
    let mut d = [0u32; L];
    for i in 0..L {
        let q = primes[i];
        let own = mont_mul(x[i], crt.own[i], q);
        let mut sub = 0u32;
        for (&dj, &cross) in d[..i].iter().zip(&crt.cross[i]) {
            sub = csub(sub.wrapping_add(mont_mul(dj, cross, q)), q.two_p);
        }
        d[i] = csub(own.wrapping_add(q.two_p).wrapping_sub(sub), q.two_p);
    }
    let last = primes[L - 1];
    let c = centre(csub(d[L - 1], last.p), last);
    T::from_digits(&d, c, &crt.radix)
}
