//! Public-key GLWE encryption: a device that holds no secret key at all.
//!
//! The trusted party publishes `pk = (a_1, ..., a_k, b = sum_i a_i * s_i + e)`: a seeded GLWE encryption of
//! zero under the computation key `s` (the tfhe-rs `ClientKey`'s GLWE key), made with the same core as every
//! other encryption ([`generate_seeded_glwe_public_key`]). It travels seeded: 32 bytes plus `N` words
//! (4128 bytes at `N = 1024`, [`encode_public_key`]).
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

use crate::error::{Error, Result};
use crate::file_check::{CHECK_BYTES, file_check};
use crate::glwe_encryption::encrypt_seeded_glwe_ciphertext_assign;
use crate::noise::DeviceNoise;
use crate::product::NegacyclicProduct;
use rand_core::Rng;
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use tfhe_sbc_core::torus::UnsignedTorus;
use zeroize::Zeroize;

/// The trusted party's side: a seeded public key under `key_spectrum` (`k * N`), i.e. a seeded encryption of
/// zero. Writes `b` into `body` (`N`) and returns the mask seed.
pub fn generate_seeded_glwe_public_key<P: NegacyclicProduct, R: Rng + ?Sized>(
    product: &P,
    key_spectrum: &[P::Spectral],
    noise: &DeviceNoise,
    body: &mut [P::Torus],
    scratch: &mut [P::Spectral],
    rng: &mut R,
) -> Result<[u8; MASK_SEED_BYTES]> {
    body.iter_mut().for_each(|b| *b = P::Torus::ZERO);
    encrypt_seeded_glwe_ciphertext_assign(product, key_spectrum, noise, body, scratch, rng)
}

/// The spectra of a seeded public key: `k` mask spectra (`k * N`, expanded from `seed`) and the body's.
pub fn compute_public_key_spectra<P: NegacyclicProduct>(
    product: &P,
    seed: &[u8; MASK_SEED_BYTES],
    body: &[P::Torus],
    mask_spectra: &mut [P::Spectral],
    body_spectrum: &mut [P::Spectral],
) -> Result<()> {
    let n = product.polynomial_size();
    check(body.len(), n)?;
    check(body_spectrum.len(), n)?;
    if mask_spectra.is_empty() || mask_spectra.len() % n != 0 {
        return Err(Error::WrongLength {
            expected: n,
            found: mask_spectra.len(),
        });
    }
    for (i, spectrum) in mask_spectra.chunks_exact_mut(n).enumerate() {
        product.forward_seeded_mask(seed, i, spectrum);
    }
    product.forward_torus(body, body_spectrum);
    Ok(())
}

fn check(found: usize, expected: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(Error::WrongLength { expected, found })
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
        check(len, n)?;
    }
    if mask_spectra.is_empty() || mask_spectra.len() % n != 0 {
        return Err(Error::WrongLength {
            expected: n,
            found: mask_spectra.len(),
        });
    }
    check(mask.len(), mask_spectra.len())?;

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

/// The first bytes of a public-key file.
pub const PUBLIC_KEY_MAGIC: [u8; 4] = *b"TSPK";
/// The public-key file format version.
pub const PUBLIC_KEY_VERSION: u8 = 1;
/// The BLAKE2b personalization of the public-key file's checksum.
pub const PUBLIC_KEY_CHECK_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC pk v1..";
const PUBLIC_KEY_HEADER_BYTES: usize = 4 + 1 + 2 + 4;
const PUBLIC_KEY_CHECK_BYTES: usize = CHECK_BYTES;

/// The bytes of a 32-bit-torus public-key file for polynomial size `n`:
/// `"TSPK" | version 1 | parameter set u16 LE | key id u32 LE | seed (32) | b (N LE u32) | check (16)`.
pub const fn public_key_file_bytes(n: usize) -> usize {
    PUBLIC_KEY_HEADER_BYTES + MASK_SEED_BYTES + 4 * n + PUBLIC_KEY_CHECK_BYTES
}

/// The checksum: BLAKE2b-128 of everything before it. It catches corruption, not forgery: the public key
/// must reach the device through an authentic channel (provisioning).
fn public_key_check(bytes: &[u8]) -> [u8; PUBLIC_KEY_CHECK_BYTES] {
    file_check(PUBLIC_KEY_CHECK_PERSONALIZATION, bytes)
}

/// Writes a public-key file (see [`public_key_file_bytes`]) into `out`; returns its length.
pub fn encode_public_key(
    parameter_set: ParameterSetId,
    key_id: u32,
    seed: &[u8; MASK_SEED_BYTES],
    body: &[u32],
    out: &mut [u8],
) -> Result<usize> {
    let total = public_key_file_bytes(body.len());
    let out = out.get_mut(..total).ok_or(Error::BufferTooSmall)?;
    out[..4].copy_from_slice(&PUBLIC_KEY_MAGIC);
    out[4] = PUBLIC_KEY_VERSION;
    out[5..7].copy_from_slice(&parameter_set.0.to_le_bytes());
    out[7..11].copy_from_slice(&key_id.to_le_bytes());
    out[11..43].copy_from_slice(seed);
    for (chunk, w) in out[43..43 + 4 * body.len()].chunks_exact_mut(4).zip(body) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    let check = public_key_check(&out[..total - PUBLIC_KEY_CHECK_BYTES]);
    out[total - PUBLIC_KEY_CHECK_BYTES..].copy_from_slice(&check);
    Ok(total)
}

/// A decoded public-key file: its parameter set, key id and seed; the body words go to the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublicKeyHeader {
    /// The named parameter set.
    pub parameters: GlweParameters,
    /// The key id frames encrypted under it carry.
    pub key_id: u32,
    /// The mask seed.
    pub seed: [u8; MASK_SEED_BYTES],
}

/// Reads a public-key file, no heap: checks magic, version, a known 32-bit parameter set, the exact length
/// and the checksum, and writes `b` into `body` (`N` words).
pub fn decode_public_key(bytes: &[u8], body: &mut [u32]) -> Result<PublicKeyHeader> {
    if bytes.len() < PUBLIC_KEY_HEADER_BYTES || bytes[..4] != PUBLIC_KEY_MAGIC || bytes[4] != PUBLIC_KEY_VERSION {
        return Err(Error::BadKeyFile);
    }
    let id = u16::from_le_bytes([bytes[5], bytes[6]]);
    let parameters = GlweParameters::from_id(ParameterSetId(id)).ok_or(Error::BadKeyFile)?;
    parameters.check_torus::<u32>()?;
    let n = parameters.polynomial_size().0;
    check(bytes.len(), public_key_file_bytes(n))?;
    check(body.len(), n)?;
    let (content, check_bytes) = bytes.split_at(bytes.len() - PUBLIC_KEY_CHECK_BYTES);
    if public_key_check(content) != check_bytes {
        return Err(Error::BadKeyFile);
    }
    let key_id = u32::from_le_bytes([bytes[7], bytes[8], bytes[9], bytes[10]]);
    let mut seed = [0u8; MASK_SEED_BYTES];
    seed.copy_from_slice(&bytes[11..43]);
    for (w, chunk) in body.iter_mut().zip(content[43..].chunks_exact(4)) {
        *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    Ok(PublicKeyHeader {
        parameters,
        key_id,
        seed,
    })
}
