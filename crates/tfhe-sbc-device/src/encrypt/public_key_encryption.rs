//! Public-key GLWE encryption: a device that holds no secret key at all.
//!
//! The trusted party publishes `pk = (a_1, ..., a_k, b = sum_i a_i * s_i + e)`: a seeded GLWE encryption of
//! zero under the computation key `s` (the tfhe-rs `ClientKey`'s GLWE key), made with the same core as every
//! other encryption ([`generate_seeded_glwe_public_key`]). It travels seeded: 32 bytes plus `N` words
//! (4128 bytes at `N = 1024`, [`crate::files::public_key::encode_public_key`]).
//!
//! The device computes the key's `k + 1` spectra once, then per encryption draws a fresh binary polynomial
//! `u` and constant-time noise `e1` (`k` polynomials) and `e2`, and outputs
//!
//! ```text
//! c_i = a_i * u + e1_i        (i = 1..k)
//! c_b = b * u + e2 + plaintexts
//! ```
//!
//! whose phase under `s` is `plaintexts + e * u + e2 - sum_i e1_i * s_i`.
//!
//! * **`u` is binary**, like the key `s` of every set we support: `(a, a * u + e1)` is then an RLWE sample
//!   with the same secret distribution, so the set's own security estimate covers it, and `e * u` keeps the
//!   variance `N * Var(e) / 2`. A ternary `u` would double that term for no gain the estimate credits.
//! * **The mask cannot be seeded**: `a_i * u + e1_i` depends on the secret `u`. Public-key frames carry
//!   it in full: `(k + 1) N` words, 8255 bytes as a v2 frame at `N = 1024`, `k = 1` (a seeded frame is 4191).
//! * Noise: `Var(phase - plaintexts) = N Var(e) / 2 + Var(e2) + k N Var(e1) / 2` (each key and `u`
//!   coefficient is 1 with probability 1/2). With TUniform(8) everywhere at `N = 1024`, `k = 1` that is
//!   `1025 * 21845.5`, a standard deviation of `4732 / q = 2^-19.8`: still far below the key switch's
//!   `2^-8.3` in `TFHE_LIB_PARAMETERS` (`tests/public_key.rs` measures it).
//!
//! # Timing
//! Constant-time as the secret-key path: `u`'s bits, the noise and their products take no branch and no
//! secret-indexed load; `u`, its spectrum and the scratch are wiped after each encryption.

use crate::csprng::construction::Blake2bCounter;
use crate::encrypt::glwe_encryption::encrypt_seeded_glwe_ciphertext_assign;
use crate::error::{Error, Result};
use crate::noise::DeviceNoise;
use crate::product::NegacyclicProduct;
use rand_core::Rng;
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::torus::UnsignedTorus;
use zeroize::Zeroize;

pub use crate::encrypt::public_key_body::PublicKeyBody;
pub use crate::encrypt::public_key_check::{check_public_key, check_public_key_with_mask};

/// The trusted party's side: a seeded public key under `key_spectrum` (`k * N`), i.e. a seeded encryption of
/// zero. Writes `b` into `body` (`N`) and returns the mask seed. A seeded public key's mask is always the
/// BLAKE2b expansion (wire id 2, [`Blake2bCounter`]), whatever the devices' own XOF.
pub fn generate_seeded_glwe_public_key<P: NegacyclicProduct, R: Rng + ?Sized>(
    product: &P,
    key_spectrum: &[P::Spectral],
    noise: &DeviceNoise,
    body: &mut [P::Torus],
    scratch: &mut [P::Spectral],
    rng: &mut R,
) -> Result<[u8; MASK_SEED_BYTES]> {
    body.iter_mut().for_each(|b| *b = P::Torus::ZERO);
    encrypt_seeded_glwe_ciphertext_assign::<Blake2bCounter, P, R>(product, key_spectrum, noise, body, scratch, rng)
}

/// A public key's mask `a` as it travels: a seed that expands into the `k` mask polynomials (our seeded
/// public keys), or one mask polynomial in full (tfhe-rs's compact public key `[a | b]`, `k = 1`).
#[derive(Clone, Copy, Debug)]
pub enum PublicKeyMask<'a, T> {
    /// The mask seed ([`crate::csprng::mask`] expands it).
    Seeded(&'a [u8; MASK_SEED_BYTES]),
    /// The one mask polynomial's `N` words.
    Full(PublicKeyBody<'a, T>),
}

impl<T: UnsignedTorus> PublicKeyMask<'_, T> {
    /// Refuses a degenerate key `(self, body)` with `k` mask polynomials: [`check_public_key`] for a seeded
    /// mask, [`check_public_key_with_mask`] for one in full (where `k` must be 1).
    pub fn check_key(self, k: usize, body: PublicKeyBody<'_, T>) -> Result<()> {
        match self {
            Self::Seeded(seed) => check_public_key(seed, k, body),
            Self::Full(mask) => {
                Error::check_length(1, k)?;
                check_public_key_with_mask(mask, body)
            }
        }
    }
}

/// The spectra of a public key: its `k` mask spectra (`k * N`: expanded from a seed, or the one polynomial
/// in full with `k = 1`) and the body's (`N`).
pub fn compute_public_key_spectra<P: NegacyclicProduct>(
    product: &P,
    mask: PublicKeyMask<'_, P::Torus>,
    body: PublicKeyBody<'_, P::Torus>,
    mask_spectra: &mut [P::Spectral],
    body_spectrum: &mut [P::Spectral],
) -> Result<()> {
    let n = product.polynomial_size();
    body.check_length(n)?;
    Error::check_length(n, body_spectrum.len())?;
    match mask {
        PublicKeyMask::Seeded(seed) => {
            Error::check_polynomials(n, mask_spectra.len())?;
            for (i, spectrum) in mask_spectra.chunks_exact_mut(n).enumerate() {
                product.forward_seeded_mask::<Blake2bCounter>(seed, i, spectrum);
            }
        }
        PublicKeyMask::Full(mask) => {
            mask.check_length(n)?;
            Error::check_length(n, mask_spectra.len())?;
            forward_words(product, mask, mask_spectra);
        }
    }
    forward_words(product, body, body_spectrum);
    Ok(())
}

/// The spectrum of a key polynomial held as words or as their little-endian bytes.
fn forward_words<P: NegacyclicProduct>(product: &P, words: PublicKeyBody<'_, P::Torus>, spectrum: &mut [P::Spectral]) {
    match words {
        PublicKeyBody::Words(words) => product.forward_torus(words, spectrum),
        PublicKeyBody::LeBytes(bytes) => product.forward_torus_le_bytes(bytes, spectrum),
    }
}

/// Public-key GLWE encryption in place: `body` holds the `N` plaintexts on entry and the ciphertext body on
/// return; `mask` (`k * N`) receives `a_i * u + e1_i`. Draws from `rng`, in this order: `u` (`N / 8` bytes,
/// one bit per coefficient), `e1` (`k * N` samples), `e2` (`N` samples). `u_spectrum` and `scratch` (`N`
/// each) are wiped on return.
#[allow(clippy::too_many_arguments)] // The buffers are the caller's: that is the point of a no-heap API.
pub fn encrypt_glwe_ciphertext_with_public_key_assign<P: NegacyclicProduct, R: Rng + ?Sized>(
    product: &P,
    mask_spectra: &[P::Spectral],
    body_spectrum: &[P::Spectral],
    noise: &DeviceNoise,
    mask: &mut [P::Torus],
    body: &mut [P::Torus],
    u_spectrum: &mut [P::Spectral],
    scratch: &mut [P::Spectral],
    rng: &mut R,
) -> Result<()> {
    let n = product.polynomial_size();
    for len in [body.len(), body_spectrum.len(), u_spectrum.len(), scratch.len()] {
        Error::check_length(n, len)?;
    }
    Error::check_polynomials(n, mask_spectra.len())?;
    Error::check_length(mask_spectra.len(), mask.len())?;

    // u, drawn as bits into the first mask polynomial (its torus words 0 or 1), then transformed.
    let u = &mut mask[..n];
    let mut bits = [0u8; 64];
    for chunk in u.chunks_mut(8 * bits.len()) {
        let bytes = &mut bits[..chunk.len().div_ceil(8)];
        rng.fill_bytes(bytes);
        for (j, c) in chunk.iter_mut().enumerate() {
            *c = P::Torus::from_u64_wrapping(u64::from((bytes[j / 8] >> (j % 8)) & 1));
        }
    }
    bits.zeroize();
    product.forward_torus(u, u_spectrum);

    // c_i = e1_i + a_i * u.
    mask.iter_mut().for_each(|c| *c = P::Torus::ZERO);
    noise.add_noise(rng, mask);
    for (c_i, a_i) in mask.chunks_exact_mut(n).zip(mask_spectra.chunks_exact(n)) {
        scratch.copy_from_slice(u_spectrum);
        product.mul_assign(scratch, a_i);
        product.inverse_add(scratch, c_i);
    }
    // c_b = plaintexts + e2 + b * u.
    noise.add_noise(rng, body);
    scratch.copy_from_slice(u_spectrum);
    product.mul_assign(scratch, body_spectrum);
    product.inverse_add(scratch, body);

    u_spectrum.iter_mut().for_each(Zeroize::zeroize);
    scratch.iter_mut().for_each(Zeroize::zeroize);
    Ok(())
}
