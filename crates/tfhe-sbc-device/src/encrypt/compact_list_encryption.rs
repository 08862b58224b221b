//! tfhe-rs's compact public-key encryption of a list, one output word at a time: the streaming form, whose
//! RAM does not grow with the list (tfhe-rs `core_crypto/algorithms/lwe_encryption.rs`,
//! `encrypt_lwe_compact_ciphertext_list_with_compact_public_key_impl`; eprint 2023/603).
//!
//! The public key is `[a | b]` with `b = a * rev(s) + e` (`lwe_compact_public_key_generation.rs`). Per bin of
//! up to `N` LWEs, with `r` uniform binary, `e1` TUniform(17)^N and one `e2_j` per LWE:
//!
//! ```text
//! mask    = a * rev(r) + e1                      (slice_semi_reverse_negacyclic_convolution(a, r))
//! body_j  = (b * rev(r))[N - 1 - j] + e2_j + delta p_j
//! ```
//!
//! Each word of `lhs * rev(r)` is a signed sum of key words selected by the bits of `r`
//! ([`semi_reverse_convolution_word`]), so a bin needs `r` (one byte per coefficient: 2 KiB at
//! `N = 2048`), one batch of 64 words and the CSPRNG, whatever the list's length; the key is read in place
//! (from flash). Cost: `N^2 + N n_bin` masked 64-bit additions per bin.
//!
//! With `u = rev(r)` this is the public-key GLWE encryption of [`crate::encrypt::public_key_encryption`]
//! (`mask = a * u + e1`, `c_b = b * u + e2 + plaintexts`) with the plaintext of LWE `j` at position
//! `N - 1 - j`. The faster form ([`crate::encrypt::compact_list`]'s `CompactListNttEncryptor`) calls that
//! function through the exact NTT; this one draws the same stream in the same order (`u` as `N / 8` bytes,
//! bit `m` of the stream being `u_m = r_{N-1-m}`, then `e1` for positions `0..N`, then `e2` for positions
//! `0..N`, the unused ones discarded), so both write the same bytes from the same CSPRNG state.
//!
//! # Timing
//! No branch and no address depends on `r`, `e1`, `e2` or the readings: `r`'s bits become masks, the loop
//! bounds and indices depend on `N`, the bin and the list's length only.

use crate::compact_list::{CompactReading, ListLayout, packed_plaintext};
use crate::encrypt::public_key_body::PublicKeyBody;
use crate::encrypt::public_key_check::check_public_key_with_mask;
use crate::error::{Error, Result};
use crate::noise::DeviceNoise;
use rand_core::Rng;
use zeroize::Zeroize;

/// The largest `N` the streaming form serves (its `r` lives in a stack array of this many bytes): tfhe-rs's
/// compact public-key sets use 2048.
pub const MAX_LWE_DIMENSION: usize = 2048;

/// Words per batch: the noise of a batch is drawn at once (256 bytes of the CSPRNG).
const BATCH: usize = 64;

/// A tfhe-rs compact public key `[a | b]` (`LweCompactPublicKey`'s container: `N` mask words, then `N` body
/// words), borrowed where it lies: as words, or as their little-endian bytes (a file in flash). Public.
#[derive(Clone, Copy, Debug)]
pub struct CompactPublicKey<'a> {
    mask: PublicKeyBody<'a, u64>,
    body: PublicKeyBody<'a, u64>,
}

impl<'a> CompactPublicKey<'a> {
    /// The key from its `2N` words. Refuses a key of another size than `2 lwe_dimension` words
    /// ([`Error::WrongLength`]) and a degenerate key ([`check_public_key_with_mask`]).
    pub fn from_words(key: &'a [u64], lwe_dimension: usize) -> Result<Self> {
        Error::check_length(2 * lwe_dimension, key.len())?;
        let (mask, body) = key.split_at(lwe_dimension);
        Self::checked(PublicKeyBody::Words(mask), PublicKeyBody::Words(body))
    }

    /// The key from the little-endian bytes of its `2N` words (`16 lwe_dimension` bytes, as
    /// `LweCompactPublicKey::into_container` gives them, written little-endian), read in place.
    pub fn from_le_bytes(key: &'a [u8], lwe_dimension: usize) -> Result<Self> {
        Error::check_length(16 * lwe_dimension, key.len())?;
        let (mask, body) = key.split_at(8 * lwe_dimension);
        Self::checked(PublicKeyBody::LeBytes(mask), PublicKeyBody::LeBytes(body))
    }

    fn checked(mask: PublicKeyBody<'a, u64>, body: PublicKeyBody<'a, u64>) -> Result<Self> {
        if body.len() > MAX_LWE_DIMENSION {
            return Err(Error::PolynomialSizeMismatch {
                expected: MAX_LWE_DIMENSION,
                found: body.len(),
            });
        }
        check_public_key_with_mask(mask, body)?;
        Ok(Self { mask, body })
    }

    /// `N`: the key's dimension, and the dimension of each LWE of its lists.
    pub fn lwe_dimension(&self) -> usize {
        self.body.len()
    }

    /// The mask `a` (`N` words).
    pub fn mask(&self) -> PublicKeyBody<'a, u64> {
        self.mask
    }

    /// The body `b` (`N` words).
    pub fn body(&self) -> PublicKeyBody<'a, u64> {
        self.body
    }
}

/// Word `k` of `slice_semi_reverse_negacyclic_convolution(lhs, r)`, i.e. of `lhs * rev(r)` modulo
/// `X^N + 1` and `2^64`, for `r` binary (bytes 0 or 1) with `N = r.len()` words in `lhs`:
/// `sum_{i <= k} lhs_i r_{N-1-k+i} - sum_{i > k} lhs_i r_{i-k-1}`. Constant-time in `r`.
pub fn semi_reverse_convolution_word(lhs: PublicKeyBody<'_, u64>, r: &[u8], k: usize) -> u64 {
    let n = r.len();
    let (r_negative, r_positive) = r.split_at(n - 1 - k);
    match lhs {
        PublicKeyBody::Words(words) => {
            let (positive, negative) = words.split_at(k + 1);
            masked_sum(positive.iter().copied(), r_positive)
                .wrapping_sub(masked_sum(negative.iter().copied(), r_negative))
        }
        PublicKeyBody::LeBytes(bytes) => {
            let (positive, negative) = bytemuck::cast_slice::<u8, [u8; 8]>(bytes).split_at(k + 1);
            masked_sum(positive.iter().map(|w| u64::from_le_bytes(*w)), r_positive)
                .wrapping_sub(masked_sum(negative.iter().map(|w| u64::from_le_bytes(*w)), r_negative))
        }
    }
}

/// `sum_i words_i r_i` for `r_i` in `{0, 1}`, each term a masked addition.
#[inline(always)]
fn masked_sum(words: impl Iterator<Item = u64>, r: &[u8]) -> u64 {
    words.zip(r).fold(0u64, |acc, (w, &bit)| {
        acc.wrapping_add(w & 0u64.wrapping_sub(u64::from(bit)))
    })
}

/// Encrypts bin `bin` of the packed list `layout` of `readings` under `key`, straight into `out` (the whole
/// list's buffer, [`ListLayout::bytes`]): its mask at [`ListLayout::mask_offset`] and its bodies at
/// [`ListLayout::body_offset`]. Draws `u` (`N / 8` bytes), then `N` samples of `noise` for `e1`, then `N` for
/// `e2`. RAM: `N` bytes for `r` and a batch of 64 words, both wiped on return.
pub fn encrypt_compact_bin<T: CompactReading, R: Rng + ?Sized>(
    key: &CompactPublicKey<'_>,
    noise: &DeviceNoise,
    layout: &ListLayout,
    bin: usize,
    readings: &[T],
    out: &mut [u8],
    rng: &mut R,
) -> Result<()> {
    let n = key.lwe_dimension();
    Error::check_length(layout.params().lwe_dimension, n)?;
    Error::check_length(layout.values(), readings.len())?;
    if out.len() < layout.bytes() || bin >= layout.bins() {
        return Err(Error::BufferTooSmall);
    }
    let mut r_bytes = [0u8; MAX_LWE_DIMENSION];
    let r = &mut r_bytes[..n];
    draw_reversed_bits(r, rng);
    let mut batch = [0u64; BATCH];

    // mask_k = (a * rev(r))_k + e1_k.
    let mask = &mut out[layout.mask_offset(bin)..layout.mask_offset(bin) + 8 * n];
    for (start, bytes) in (0..n).step_by(BATCH).zip(mask.chunks_mut(8 * BATCH)) {
        let words = &mut batch[..bytes.len() / 8];
        for (k, word) in words.iter_mut().enumerate() {
            *word = semi_reverse_convolution_word(key.mask, r, start + k);
        }
        noise.add_noise(rng, words);
        for (word, le) in words.iter().zip(bytes.chunks_exact_mut(8)) {
            le.copy_from_slice(&word.to_le_bytes());
        }
    }

    // body_j = (b * rev(r))_{N-1-j} + e2 + delta p_j, for the bin's LWEs j (positions N - 1 - j).
    let used_from = n - layout.lwes_in_bin(bin);
    let delta = layout.params().delta();
    for start in (0..n).step_by(BATCH) {
        let words = &mut batch[..BATCH.min(n - start)];
        for (offset, word) in words.iter_mut().enumerate() {
            let position = start + offset;
            *word =
                if position >= used_from {
                    let lwe = bin * n + (n - 1 - position);
                    semi_reverse_convolution_word(key.body, r, position)
                        .wrapping_add(delta.wrapping_mul(packed_plaintext(&layout.params(), readings, lwe)))
                } else {
                    0
                };
        }
        noise.add_noise(rng, words);
        for (offset, word) in words.iter().enumerate() {
            let position = start + offset;
            if position >= used_from {
                let at = layout.body_offset(bin * n + (n - 1 - position));
                out[at..at + 8].copy_from_slice(&word.to_le_bytes());
            }
        }
    }
    r.zeroize();
    batch.zeroize();
    Ok(())
}

/// Draws `r.len() / 8` bytes and stores bit `m` of the stream as `r[N - 1 - m]` (one byte, 0 or 1, each).
fn draw_reversed_bits<R: Rng + ?Sized>(r: &mut [u8], rng: &mut R) {
    let n = r.len();
    let mut bytes = [0u8; BATCH];
    for start in (0..n).step_by(8 * BATCH) {
        let bits = (n - start).min(8 * BATCH);
        let drawn = &mut bytes[..bits.div_ceil(8)];
        rng.fill_bytes(drawn);
        for m in 0..bits {
            r[n - 1 - (start + m)] = (drawn[m / 8] >> (m % 8)) & 1;
        }
    }
    bytes.zeroize();
}
