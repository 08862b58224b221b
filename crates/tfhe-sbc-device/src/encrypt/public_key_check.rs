//! The public-key check: one function for every public-key form (seeded 32-bit and 64-bit keys, tfhe-rs's
//! compact public key `[a | b]`), run before any key is used and by the file decoders.
//!
//! # The property
//! A genuine body `b = sum_i a_i * s_i + e` (uniform `a_i`, small `s_i` and `e`) is computationally
//! indistinguishable from uniform on the torus, alone and next to its mask: every efficient statistic takes
//! on `(a, b)` the value it takes on uniform words, up to a negligible advantage against RLWE. So the check
//! runs cheap statistics whose false-rejection rate on *uniform* words is computed exactly (or bounded), and
//! that a structured body fails by a wide margin. Integer arithmetic only, no heap, constant memory (under
//! 1 KiB of counters on the stack, then the mask's 1 KiB run); public data, so not constant-time.
//!
//! On the `N` body words (one pass):
//! * not all zero ([`PublicKeyDefect::ZeroBody`]); total bit weight within `BITS N / 8` of `BITS N / 2`
//!   ([`PublicKeyDefect::LowWeightBody`]; Hoeffding: below `2^-700`);
//! * **top bits**: Pearson's chi-square of the top 4 bits (16 cells, 15 degrees of freedom) at most
//!   [`CHI_SQUARE_THRESHOLD`] = 128 ([`PublicKeyDefect::NonUniformTopBits`]); the chi-square tail there is
//!   `2^-64`, and an exact upper bound of the multinomial tail (a dynamic program over the cells) is
//!   `2^-51` at `N = 512` and smaller for larger `N`;
//! * **consecutive differences** `b_{j+1} - b_j` (`N - 1` of them, uniform and independent for a uniform
//!   body): the same chi-square test ([`PublicKeyDefect::StructuredDifferences`]);
//! * **bit balance**: for every bit position, the count `c` of ones satisfies `(2c - N)^2 <= 72 N`
//!   ([`PublicKeyDefect::BiasedBit`]; Hoeffding over 64 positions: `128 e^-36 = 2^-44.9`);
//! * **repeated values**: words whose top 12 bits fall in an already occupied one of 4096 bins number at most
//!   `ceil(N (N-1) / 8192) + isqrt(15 N) + 1` ([`PublicKeyDefect::RepeatedValues`]; their mean is below
//!   `N (N-1) / 8192`, and McDiarmid's inequality bounds the excess: `e^-30 = 2^-43.3`).
//!
//! Against each mask polynomial (one streaming pass, the seeded mask expanded run by run):
//! * at most `N / 64` coefficients with `b_j = a_j` or `b_j = -a_j` ([`PublicKeyDefect::BodyEqualsMask`]);
//! * **rotated mask**: 32 body anchors (every `N / 32`-th word) are compared with every mask word and its
//!   negation; a pair within `q / 2^16` ([`ROTATION_WINDOW_BITS`]) votes for the rotation `r = j - i mod N`, and
//!   [`ROTATION_VOTES`] = 6 votes for one `r` refuse the key ([`PublicKeyDefect::BodyIsRotatedMask`]: `b =
//!   +-X^r a + e`, cyclic or negacyclic, with `|e| < q / 2^16`). A pair is near with probability `2^-14`;
//!   6 of 32 anchors at one of `N <= 2048` rotations: `C(32,6) 2^-84 2^11 = 2^-53.2` per mask polynomial.
//!
//! Summed (union bound, `k <= 3`): a genuine key is refused with probability below `2^-42.5`.
//!
//! What no check on the key can rule out: a key made by someone who knows a trapdoor (a secret of their
//! choice, a sparse or structured `s` beyond a monomial, an `e` too large for the rotation window), or any
//! body indistinguishable from uniform that is not of the form `a * s + e`. That is the trusted party's
//! problem, and the provisioning channel's: the device can only refuse keys that are visibly broken.

use crate::csprng::construction::Blake2bCounter;
use crate::csprng::mask::for_each_mask_run;
use crate::encrypt::public_key_body::PublicKeyBody;
use crate::error::{Error, PublicKeyDefect, Result};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::torus::UnsignedTorus;

/// The largest chi-square (16 cells of the top 4 bits, 15 degrees of freedom) a body, or its consecutive
/// differences, may show.
pub const CHI_SQUARE_THRESHOLD: u64 = 128;
/// A bit position with `c` ones among `N` words is refused when `(2c - N)^2 > BIT_BALANCE_THRESHOLD * N`.
pub const BIT_BALANCE_THRESHOLD: u64 = 72;
/// The repeated-value test's slack: `isqrt(COLLISION_SLACK * N) + 1` above the mean's bound.
pub const COLLISION_SLACK: u64 = 15;
/// The repeated-value test's bins: the top 12 bits of a word.
const COLLISION_BIN_BITS: u32 = 12;
/// The body anchors of the rotated-mask test.
pub const ROTATION_ANCHORS: usize = 32;
/// A body anchor and a mask word (or its negation) are near when they differ by less than `q / 2^16`.
pub const ROTATION_WINDOW_BITS: u32 = 16;
/// The votes for one rotation that refuse a key.
pub const ROTATION_VOTES: usize = 6;
/// At most this many near pairs are kept (a genuine key has about 4 at `N = 2048`).
const ROTATION_EVENTS: usize = 64;

/// Refuses a degenerate public key `(seed, body)` with `k` mask polynomials of `N = body.len()` coefficients
/// ([`PublicKeyDefect`], the module's statistics). A genuine key passes except with probability below
/// `2^-42`.
pub fn check_public_key<T: UnsignedTorus>(
    seed: &[u8; MASK_SEED_BYTES],
    k: usize,
    body: PublicKeyBody<'_, T>,
) -> Result<()> {
    check_public_key_body(body)?;
    let n = body.len();
    for i in 0..k {
        let mut relation = MaskRelation::new(body);
        for_each_mask_run::<Blake2bCounter, T>(seed, i, n, |offset, words| relation.observe(body, offset, words));
        relation.verdict()?;
    }
    Ok(())
}

/// [`check_public_key`] for a key whose one mask polynomial travels in full (tfhe-rs's compact public key
/// `[a | b]`): the same checks, with `a` read from `mask` (`N` words, as many as `body`).
pub fn check_public_key_with_mask<T: UnsignedTorus>(
    mask: PublicKeyBody<'_, T>,
    body: PublicKeyBody<'_, T>,
) -> Result<()> {
    let n = body.len();
    mask.check_length(n)?;
    check_public_key_body(body)?;
    let mut relation = MaskRelation::new(body);
    let mut run = [T::ZERO; 32];
    for offset in (0..n).step_by(run.len()) {
        let len = run.len().min(n - offset);
        for (j, w) in run[..len].iter_mut().enumerate() {
            *w = mask.word(offset + j);
        }
        relation.observe(body, offset, &run[..len]);
    }
    relation.verdict()
}

/// The body statistics (module docs), in one pass over the words.
pub(crate) fn check_public_key_body<T: UnsignedTorus>(body: PublicKeyBody<'_, T>) -> Result<()> {
    let n = body.len();
    body.check_length(n)?;
    let mut stats = BodyStatistics::EMPTY;
    let mut previous = None;
    for j in 0..n {
        let word = body.word(j);
        stats.add(word, previous);
        previous = Some(word);
    }
    stats.verdict::<T>(n as u64).map_err(Error::DegeneratePublicKey)
}

/// The counters of the body statistics: 832 bytes.
struct BodyStatistics {
    nonzero: bool,
    weight: u64,
    top: [u32; 16],
    differences: [u32; 16],
    ones: [u32; 64],
    occupied: [u32; 1 << (COLLISION_BIN_BITS - 5)],
    repeated: u64,
}

impl BodyStatistics {
    const EMPTY: Self = Self {
        nonzero: false,
        weight: 0,
        top: [0; 16],
        differences: [0; 16],
        ones: [0; 64],
        occupied: [0; 1 << (COLLISION_BIN_BITS - 5)],
        repeated: 0,
    };

    fn add<T: UnsignedTorus>(&mut self, word: T, previous: Option<T>) {
        let x = word.to_u64();
        self.nonzero |= x != 0;
        self.weight += u64::from(x.count_ones());
        self.top[(x >> (T::BITS - 4)) as usize] += 1;
        if let Some(previous) = previous {
            self.differences[(word.wrapping_sub(previous).to_u64() >> (T::BITS - 4)) as usize] += 1;
        }
        for (bit, ones) in self.ones[..T::BITS as usize].iter_mut().enumerate() {
            *ones += ((x >> bit) & 1) as u32;
        }
        let bin = (x >> (T::BITS - COLLISION_BIN_BITS)) as usize;
        let (slot, mask) = (bin / 32, 1u32 << (bin % 32));
        if self.occupied[slot] & mask != 0 {
            self.repeated += 1;
        }
        self.occupied[slot] |= mask;
    }

    fn verdict<T: UnsignedTorus>(&self, n: u64) -> core::result::Result<(), PublicKeyDefect> {
        let bits = u64::from(T::BITS);
        if !self.nonzero {
            return Err(PublicKeyDefect::ZeroBody);
        }
        if self.weight.abs_diff(bits * n / 2) > bits * n / 8 {
            return Err(PublicKeyDefect::LowWeightBody);
        }
        if chi_square_exceeds(&self.top, n) {
            return Err(PublicKeyDefect::NonUniformTopBits);
        }
        if chi_square_exceeds(&self.differences, n.saturating_sub(1)) {
            return Err(PublicKeyDefect::StructuredDifferences);
        }
        let biased = |&ones: &u32| {
            let excess = (2 * u64::from(ones)).abs_diff(n);
            excess * excess > BIT_BALANCE_THRESHOLD * n
        };
        if self.ones[..T::BITS as usize].iter().any(biased) {
            return Err(PublicKeyDefect::BiasedBit);
        }
        if self.repeated > repeated_values_threshold(n) {
            return Err(PublicKeyDefect::RepeatedValues);
        }
        Ok(())
    }
}

/// Whether Pearson's chi-square of `m` values in 16 equiprobable cells, `16 sum c^2 / m - m`, exceeds
/// [`CHI_SQUARE_THRESHOLD`] (compared as `16 sum c^2 > m^2 + 128 m`, integers only).
fn chi_square_exceeds(counts: &[u32; 16], m: u64) -> bool {
    let squares: u64 = counts.iter().map(|&c| u64::from(c) * u64::from(c)).sum();
    16 * squares > m * m + CHI_SQUARE_THRESHOLD * m
}

/// The most words of `n` a body may have in already occupied bins: the mean's bound `ceil(n (n-1) / 2M)`
/// (`M = 4096` bins) plus `isqrt(15 n) + 1`.
pub fn repeated_values_threshold(n: u64) -> u64 {
    let bins = 1u64 << COLLISION_BIN_BITS;
    (n * n.saturating_sub(1)).div_ceil(2 * bins) + (COLLISION_SLACK * n).isqrt() + 1
}

/// The streaming comparison of a body with one mask polynomial: same-index equality, and the rotation
/// votes of [`ROTATION_ANCHORS`] body anchors.
struct MaskRelation<T> {
    n: usize,
    step: usize,
    anchors: [T; ROTATION_ANCHORS],
    anchor_count: usize,
    equal: usize,
    events: [u32; ROTATION_EVENTS],
    stored: usize,
}

impl<T: UnsignedTorus> MaskRelation<T> {
    fn new(body: PublicKeyBody<'_, T>) -> Self {
        let n = body.len();
        let anchor_count = ROTATION_ANCHORS.min(n);
        let step = n.checked_div(anchor_count).unwrap_or(1);
        let mut anchors = [T::ZERO; ROTATION_ANCHORS];
        for (t, anchor) in anchors[..anchor_count].iter_mut().enumerate() {
            *anchor = body.word(t * step);
        }
        Self {
            n,
            step,
            anchors,
            anchor_count,
            equal: 0,
            events: [0; ROTATION_EVENTS],
            stored: 0,
        }
    }

    /// Mask words `words`, the first at index `offset`.
    fn observe(&mut self, body: PublicKeyBody<'_, T>, offset: usize, words: &[T]) {
        let window = 1u64 << (T::BITS - ROTATION_WINDOW_BITS);
        let near = |d: T| d.wrapping_add(T::from_u64_wrapping(window)).to_u64() < 2 * window;
        for (i, &a) in (offset..).zip(words) {
            let b = body.word(i);
            if a == b || a.wrapping_neg() == b {
                self.equal += 1;
            }
            for t in 0..self.anchor_count {
                let anchor = self.anchors[t];
                if (near(anchor.wrapping_sub(a)) || near(anchor.wrapping_add(a))) && self.stored < ROTATION_EVENTS {
                    self.events[self.stored] = ((t * self.step + self.n - i % self.n) % self.n) as u32;
                    self.stored += 1;
                }
            }
        }
    }

    fn verdict(&self) -> Result<()> {
        if self.equal > self.n / 64 {
            return Err(Error::DegeneratePublicKey(PublicKeyDefect::BodyEqualsMask));
        }
        let events = &self.events[..self.stored];
        if events
            .iter()
            .any(|r| events.iter().filter(|&s| s == r).count() >= ROTATION_VOTES)
        {
            return Err(Error::DegeneratePublicKey(PublicKeyDefect::BodyIsRotatedMask));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_the_documented_ones() {
        assert_eq!(repeated_values_threshold(512), 32 + 87 + 1);
        assert_eq!(repeated_values_threshold(1024), 128 + 123 + 1);
        assert_eq!(repeated_values_threshold(2048), 512 + 175 + 1);
        // The chi-square of a constant body is 15 m; of a perfectly flat one, 0.
        let mut counts = [0u32; 16];
        counts[5] = 512;
        assert!(chi_square_exceeds(&counts, 512));
        assert!(!chi_square_exceeds(&[32; 16], 512));
    }
}
