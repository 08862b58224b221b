//! GLWE encryption and decryption with a secret key: the one core every device mode and firmware wrapper
//! calls, generic in `k` (the key spectrum's length), in the torus (through [`NegacyclicProduct`]) and in
//! storage (plain slices).
//!
//! `b = sum_i a_i * s_i + plaintext + e`, with the `k` mask polynomials `a_i` uniform (expanded from a fresh
//! 32-byte seed, `crate::csprng::mask`), `s_i` the binary key (its spectra computed once,
//! [`crate::product::key_spectrum`]) and `e` the device's noise ([`DeviceNoise`]).
//!
//! The algorithms work in place on the body buffer, so a device needs no separate plaintext buffer: the
//! caller writes the encoded plaintexts into `body`, and the encryption turns them into the ciphertext body.
//! The randomness comes from the caller's generator, drawn in this order: the mask seed, then the noise.
//! The `_with_randomness` variant takes both explicitly (the deterministic inner encryption known-answer
//! tests pin). Each call wipes `scratch`, which held `a_i * s_i`: linear equations in the key.

use crate::csprng::construction::XofConstruction;
use crate::csprng::mask::expand_mask;
use crate::error::{Error, Result};
use crate::noise::DeviceNoise;
use crate::product::{NegacyclicProduct, wipe_spectrum};
use rand_core::Rng;
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::torus::UnsignedTorus;
use zeroize::Zeroize;

/// Checks the shapes: a key spectrum of `k * N`, a body and a scratch of `N`; returns `k`.
fn check_shapes<P: NegacyclicProduct>(
    product: &P,
    key_spectrum: &[P::Spectral],
    body: &[P::Torus],
    scratch: &[P::Spectral],
) -> Result<usize> {
    let n = product.polynomial_size();
    Error::check_polynomials(n, key_spectrum.len())?;
    for len in [body.len(), scratch.len()] {
        Error::check_length(n, len)?;
    }
    Ok(key_spectrum.len() / n)
}

/// `body += sum_i a_i * s_i`, where the `k` mask polynomials `a_i` are the expansion of `seed` under the
/// construction `C`. Wipes `scratch` afterwards.
pub fn add_seeded_mask_key_products<C: XofConstruction, P: NegacyclicProduct>(
    product: &P,
    key_spectrum: &[P::Spectral],
    seed: &[u8; MASK_SEED_BYTES],
    body: &mut [P::Torus],
    scratch: &mut [P::Spectral],
) -> Result<()> {
    let n = product.polynomial_size();
    check_shapes(product, key_spectrum, body, scratch)?;
    for (i, s_i) in key_spectrum.chunks_exact(n).enumerate() {
        product.forward_seeded_mask::<C>(seed, i, scratch);
        product.mul_assign(scratch, s_i);
        product.inverse_add(scratch, body);
    }
    wipe_spectrum(scratch);
    Ok(())
}

/// `body += sum_i a_i * s_i` for a mask given in full (`k * N` coefficients, polynomial after polynomial).
/// Wipes `scratch` afterwards.
pub fn add_mask_key_products<P: NegacyclicProduct>(
    product: &P,
    key_spectrum: &[P::Spectral],
    mask: &[P::Torus],
    body: &mut [P::Torus],
    scratch: &mut [P::Spectral],
) -> Result<()> {
    let n = product.polynomial_size();
    let k = check_shapes(product, key_spectrum, body, scratch)?;
    Error::check_length(k * n, mask.len())?;
    for (a_i, s_i) in mask.chunks_exact(n).zip(key_spectrum.chunks_exact(n)) {
        product.forward_torus(a_i, scratch);
        product.mul_assign(scratch, s_i);
        product.inverse_add(scratch, body);
    }
    wipe_spectrum(scratch);
    Ok(())
}

/// Seeded GLWE encryption in place: `body` holds the `N` plaintexts (encoded messages) on entry and the
/// ciphertext body on return; returns the mask seed, which expands under the construction `C` (the frame
/// names its mask XOF id). Draws the 32-byte seed, then `N` noise samples, from `rng`.
pub fn encrypt_seeded_glwe_ciphertext_assign<C: XofConstruction, P: NegacyclicProduct, R: Rng + ?Sized>(
    product: &P,
    key_spectrum: &[P::Spectral],
    noise: &DeviceNoise,
    body: &mut [P::Torus],
    scratch: &mut [P::Spectral],
    rng: &mut R,
) -> Result<[u8; MASK_SEED_BYTES]> {
    check_shapes(product, key_spectrum, body, scratch)?;
    let mut seed = [0u8; MASK_SEED_BYTES];
    rng.fill_bytes(&mut seed);
    noise.add_noise(rng, body);
    add_seeded_mask_key_products::<C, P>(product, key_spectrum, &seed, body, scratch)?;
    Ok(seed)
}

/// [`encrypt_seeded_glwe_ciphertext_assign`] with the mask seed and the noise given explicitly: the
/// deterministic inner encryption. For known-answer tests: a seed or a noise vector used twice breaks the
/// encryption.
pub fn encrypt_seeded_glwe_ciphertext_with_randomness_assign<C: XofConstruction, P: NegacyclicProduct>(
    product: &P,
    key_spectrum: &[P::Spectral],
    mask_seed: &[u8; MASK_SEED_BYTES],
    noise: &[P::Torus],
    body: &mut [P::Torus],
    scratch: &mut [P::Spectral],
) -> Result<()> {
    check_shapes(product, key_spectrum, body, scratch)?;
    Error::check_length(body.len(), noise.len())?;
    for (b, &e) in body.iter_mut().zip(noise) {
        *b = b.wrapping_add(e);
    }
    add_seeded_mask_key_products::<C, P>(product, key_spectrum, mask_seed, body, scratch)
}

/// GLWE encryption with the mask in full, in place: `mask` (`k * N`) receives the expansion of a fresh seed
/// (drawn from `rng` first, expanded under the construction `C`, then wiped), `body` holds the plaintexts on
/// entry and the ciphertext body on return.
pub fn encrypt_glwe_ciphertext_assign<C: XofConstruction, P: NegacyclicProduct, R: Rng + ?Sized>(
    product: &P,
    key_spectrum: &[P::Spectral],
    noise: &DeviceNoise,
    mask: &mut [P::Torus],
    body: &mut [P::Torus],
    scratch: &mut [P::Spectral],
    rng: &mut R,
) -> Result<()> {
    let k = check_shapes(product, key_spectrum, body, scratch)?;
    Error::check_length(k * product.polynomial_size(), mask.len())?;
    let mut seed = [0u8; MASK_SEED_BYTES];
    rng.fill_bytes(&mut seed);
    noise.add_noise(rng, body);
    expand_mask::<C, P::Torus>(&seed, mask);
    seed.zeroize();
    add_mask_key_products(product, key_spectrum, mask, body, scratch)
}

/// The phase `body - sum_i a_i * s_i` of a seeded ciphertext whose mask expands under `C`, into `phase`
/// (`N`). Wipes `scratch`.
pub fn decrypt_seeded_glwe_phase<C: XofConstruction, P: NegacyclicProduct>(
    product: &P,
    key_spectrum: &[P::Spectral],
    seed: &[u8; MASK_SEED_BYTES],
    body: &[P::Torus],
    phase: &mut [P::Torus],
    scratch: &mut [P::Spectral],
) -> Result<()> {
    phase.iter_mut().for_each(|p| *p = P::Torus::ZERO);
    add_seeded_mask_key_products::<C, P>(product, key_spectrum, seed, phase, scratch)?;
    subtract_from(body, phase)
}

/// The phase `body - sum_i a_i * s_i` of a ciphertext with its mask in full (`k * N`). Wipes `scratch`.
pub fn decrypt_glwe_phase<P: NegacyclicProduct>(
    product: &P,
    key_spectrum: &[P::Spectral],
    mask: &[P::Torus],
    body: &[P::Torus],
    phase: &mut [P::Torus],
    scratch: &mut [P::Spectral],
) -> Result<()> {
    phase.iter_mut().for_each(|p| *p = P::Torus::ZERO);
    add_mask_key_products(product, key_spectrum, mask, phase, scratch)?;
    subtract_from(body, phase)
}

/// `phase = body - phase`.
fn subtract_from<T: UnsignedTorus>(body: &[T], phase: &mut [T]) -> Result<()> {
    Error::check_length(phase.len(), body.len())?;
    for (p, &b) in phase.iter_mut().zip(body) {
        *p = b.wrapping_sub(*p);
    }
    Ok(())
}
