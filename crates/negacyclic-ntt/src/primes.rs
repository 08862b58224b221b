//! The NTT primes, the per-size twiddle tables and the CRT constants, all computed at compile time by
//! `const fn`s. A table is an associated `const` of a type generic in `N` and the prime's index, so a program
//! links the tables of the sizes and primes it names and no others, in every build profile.

use crate::arith::{Prime, Twiddle, inv_mod, mul_mod, pow_mod, to_montgomery, twiddle};

/// The first prime, `2^30 - 3 * 2^14 + 1 = 0x3fff4001`.
pub const P0: u32 = 0x3fff_4001;
/// The second prime, `2^30 - 6 * 2^14 + 1 = 0x3ffe8001`.
pub const P1: u32 = 0x3ffe_8001;
/// The third prime (64-bit torus), `2^30 - 16 * 2^14 + 1 = 0x3ffc0001`.
pub const P2: u32 = 0x3ffc_0001;

/// The first small prime (32-bit torus on targets with a 32x32->64 multiplier), `2^23 - 7 * 2^14 + 1 =
/// 0x7e4001`.
pub const Q0: u32 = 0x007e_4001;
/// The second small prime, `2^23 - 8 * 2^14 + 1 = 0x7e0001`.
pub const Q1: u32 = 0x007e_0001;

/// The largest number of primes a plan uses.
pub(crate) const MAX_PRIMES: usize = 3;

/// Every prime with its constants, indexed by [`plan_primes`]: the three 30-bit primes, then the two small ones.
pub(crate) const PRIMES: [Prime; 5] = [
    Prime::new(P0),
    Prime::new(P1),
    Prime::new(P2),
    Prime::new(Q0),
    Prime::new(Q1),
];

/// Whether the 32-bit torus plan uses the small primes `Q0`, `Q1` (below `2^23`) and the signed kernels
/// (`crate::small_ntt`): everywhere but with the 16x16-bit multiplier,
/// which keeps `P0`, `P1` and Shoup's twiddles.
pub(crate) const SMALL_PRIMES_32: bool = cfg!(not(negacyclic_ntt_mul16));

/// The indices in [`PRIMES`] of the primes of an `L`-prime plan: `Q0, Q1` (or `P0, P1`) for `L = 2`,
/// `P0, P1, P2` for `L = 3`.
pub(crate) const fn plan_primes<const L: usize>() -> [usize; L] {
    let mut indices = [0; L];
    let base = if L == 2 && SMALL_PRIMES_32 { 3 } else { 0 };
    let mut i = 0;
    while i < L {
        indices[i] = base + i;
        i += 1;
    }
    indices
}

/// For each prime: `(k, z)` with `p - 1 = 2^k * odd` and `z` of multiplicative order exactly `2^k`
/// (`z = g^((p-1)/2^k)` for a quadratic non-residue `g`: 3, 3, 11, 3, 5). Checked when a table is built.
const ROOTS: [(u32, u32); 5] = [
    (14, 1_035_643_497),
    (15, 269_685_106),
    (18, 543_545_472),
    (14, 4_051_674),
    (17, 6_891_324),
];

/// A primitive `2N`-th root of unity `psi` modulo prime `index` (`psi^N = -1`).
const fn psi(index: usize, n: usize) -> u32 {
    let p = PRIMES[index].p;
    let (k, z) = ROOTS[index];
    assert!(pow_mod(z, 1 << (k - 1), p) == p - 1, "z must have order 2^k");
    assert!(n.is_power_of_two() && 2 * n <= 1 << k, "2N must divide p - 1");
    let psi = pow_mod(z, (1u64 << k) / (2 * n as u64), p);
    assert!(pow_mod(psi, n as u64, p) == p - 1);
    psi
}

/// `i` with its low `bits` bits reversed.
const fn bit_reverse(i: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - bits)
    }
}

/// The forward twiddles of prime `index` for size `N`: entry `k` (`1 <= k < N`) is `psi^brv(k)` (`brv`
/// reverses `log2 N` bits) as a [`Twiddle`] (its Montgomery form, or with its Shoup companion). The inverse transform reads the same table backwards
/// (`psi^-brv(k) = -psi^brv(k')` with `k'` the mirror of `k` in its stage), so one table serves both.
const fn twiddle_table<const N: usize>(index: usize) -> [Twiddle; N] {
    let p = PRIMES[index].p;
    let psi = psi(index, N);
    let mut powers = [0u32; N];
    powers[0] = 1;
    let mut i = 1;
    while i < N {
        powers[i] = mul_mod(powers[i - 1], psi, p);
        i += 1;
    }
    let bits = N.trailing_zeros();
    let mut table = [twiddle(0, p); N];
    let mut k = 0;
    while k < N {
        table[k] = twiddle(powers[bit_reverse(k, bits)], p);
        k += 1;
    }
    table
}

/// The twiddle table of size `N` for prime `I`, as a `'static` slice: a program that never names this
/// `(N, I)` never contains it.
pub(crate) struct Twiddles<const N: usize, const I: usize>;

impl<const N: usize, const I: usize> Twiddles<N, I> {
    /// See [`twiddle_table`].
    pub(crate) const TABLE: &'static [Twiddle] = &twiddle_table::<N>(I);
}

/// The constants of Garner's CRT for `L` primes at size `N`, folding in the inverse transform's `N^-1` and
/// the pointwise product's Montgomery factor `R^-1`.
///
/// After the inverse transform, plane `i` holds `x_i = X N R^-1 mod p_i` (in `[0, 2p_i)`), where `X` is the
/// integer product. With `P_i = p_0 ... p_{i-1}`, Garner's digits are
/// `d_i = (X - sum_{j<i} d_j P_j) / P_i mod p_i = x_i * own[i] - sum_{j<i} d_j * cross[i][j]`, every product
/// a Montgomery product:
/// * `own[i] = R^2 N^-1 P_i^-1 mod p_i`, so that `mont(x_i, own[i]) = X P_i^-1 mod p_i`;
/// * `cross[i][j] = R P_j P_i^-1 mod p_i`, so that `mont(d_j, cross[i][j]) = d_j P_j P_i^-1 mod p_i`.
///
/// Then `X = sum_i d_i P_i` exactly, with the last digit taken centred; `radix[i] = P_i mod 2^64`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Crt<const L: usize> {
    pub own: [u32; L],
    pub cross: [[u32; L]; L],
    pub radix: [u64; L],
}

impl<const L: usize> Crt<L> {
    const fn new(n: usize, primes: [usize; L]) -> Self {
        assert!(L >= 1 && L <= MAX_PRIMES);
        let mut own = [0u32; L];
        let mut cross = [[0u32; L]; L];
        let mut radix = [0u64; L];
        let mut i = 0;
        while i < L {
            let q = PRIMES[primes[i]];
            // P_i mod p_i and P_i mod 2^64.
            let (mut pi_mod, mut pi_wide) = (1u32, 1u64);
            let mut j = 0;
            while j < i {
                pi_mod = mul_mod(pi_mod, PRIMES[primes[j]].p % q.p, q.p);
                pi_wide = pi_wide.wrapping_mul(PRIMES[primes[j]].p as u64);
                j += 1;
            }
            radix[i] = pi_wide;
            let pi_inv = inv_mod(pi_mod, q.p);
            let n_inv = inv_mod((n as u64 % q.p as u64) as u32, q.p);
            // R^2 N^-1 P_i^-1: r2 is R^2 mod p.
            own[i] = mul_mod(mul_mod(q.r2, n_inv, q.p), pi_inv, q.p);
            // R P_j P_i^-1, with P_j accumulated.
            let mut pj = 1u32;
            let mut j = 0;
            while j < i {
                cross[i][j] = mul_mod(to_montgomery(pj, q.p), pi_inv, q.p);
                pj = mul_mod(pj, PRIMES[primes[j]].p % q.p, q.p);
                j += 1;
            }
            i += 1;
        }
        Self { own, cross, radix }
    }
}

/// The CRT constants of `L` primes at size `N`.
pub(crate) struct CrtFor<const N: usize, const L: usize>;

impl<const N: usize, const L: usize> CrtFor<N, L> {
    /// See [`Crt`].
    pub(crate) const VALUE: Crt<L> = Crt::new(N, plan_primes::<L>());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_are_prime_and_split_for_every_size() {
        for q in PRIMES {
            let p = q.p;
            assert!((2..=(p as f64).sqrt() as u32 + 1).all(|d| p % d != 0), "{p} is prime");
            assert_eq!((p - 1) % (1 << 14), 0, "2 * 8192 divides p - 1");
        }
        for (i, n) in [(0, 64), (1, 1024), (2, 4096), (0, 8192), (3, 8192), (4, 8192)] {
            let psi = psi(i, n);
            let p = PRIMES[i].p;
            assert_eq!(pow_mod(psi, n as u64, p), p - 1, "psi^N = -1");
        }
    }

    #[test]
    fn inverse_table_mirror_holds() {
        // psi^-brv(h + i) = -psi^brv(2h - 1 - i) for every stage h and index i < h.
        const N: usize = 256;
        let p = PRIMES[1].p;
        let psi = psi(1, N);
        let psi_inv = inv_mod(psi, p);
        let bits = N.trailing_zeros();
        let mut h = 1;
        while h < N {
            for i in 0..h {
                let lhs = pow_mod(psi_inv, bit_reverse(h + i, bits) as u64, p);
                let rhs = p - pow_mod(psi, bit_reverse(2 * h - 1 - i, bits) as u64, p);
                assert_eq!(lhs, rhs, "h = {h}, i = {i}");
            }
            h *= 2;
        }
    }

    #[test]
    fn product_of_primes_covers_the_bounds() {
        let p2: u128 = PRIMES[..2].iter().map(|q| u128::from(q.p)).product();
        let p3: u128 = PRIMES[..3].iter().map(|q| u128::from(q.p)).product();
        let small: u128 = PRIMES[3..].iter().map(|q| u128::from(q.p)).product();
        assert!(small / 2 > (1 << 44) + (1 << 25));
        // |X| + the lazy lower digits must stay below P/2 (crate docs): 2^44 + 2^31 for a 32-bit torus at
        // N = 4096, 2^76 + 2^62 for a 64-bit torus at N = 4096.
        assert!(p2 / 2 > (1 << 44) + (1 << 32));
        assert!(p3 / 2 > (1 << 76) + (1 << 63));
    }
}
