//! Decryption with the secret key, for the trusted party and for tests: a thin wrapper over
//! [`crate::glwe_encryption`]'s phase functions.

use crate::error::{Error, Result};
use crate::glwe_encryption::{decrypt_glwe_phase, decrypt_seeded_glwe_phase};
use crate::key_spectrum::compute_glwe_key_spectrum;
use negacyclic_fft::Plan;
use tfhe_sbc_core::encoding::decode_bool;
use tfhe_sbc_core::entities::{GlweSecretKey, LweCiphertext, MASK_SEED_BYTES, SeededGlweCiphertext};
use zeroize::Zeroize;

/// A GLWE decryptor for polynomial size `N` and GLWE dimension `K` (1 by default): the key's spectra and
/// one FFT scratch buffer.
pub struct GlweDecryptor<const N: usize, const K: usize = 1> {
    plan: Plan,
    key: [[f64; N]; K],
    scratch: [f64; N],
}

impl<const N: usize, const K: usize> GlweDecryptor<N, K> {
    /// Computes the key's spectra once.
    pub fn new<C: AsRef<[u8]> + AsMut<[u8]>>(key: &GlweSecretKey<C>) -> Result<Self> {
        if key.glwe_dimension().0 != K {
            return Err(Error::UnsupportedGlweDimension(key.glwe_dimension().0));
        }
        let mut this = Self {
            plan: crate::product::fft_plan(N)?,
            key: [[0.0; N]; K],
            scratch: [0.0; N],
        };
        compute_glwe_key_spectrum(&this.plan, key, this.key.as_flattened_mut())?;
        Ok(this)
    }

    /// The phase `b - sum_i a_i * s_i` of a full ciphertext given as its mask (`K * N` words) and body.
    pub fn decrypt_phase(&mut self, mask: &[u32], body: &[u32], phase: &mut [u32]) -> Result<()> {
        decrypt_glwe_phase(
            &self.plan,
            self.key.as_flattened(),
            mask,
            body,
            phase,
            &mut self.scratch,
        )
    }

    /// The phase of a seeded ciphertext (the mask is re-expanded from the seed).
    pub fn decrypt_seeded_phase<C: AsRef<[u32]>>(
        &mut self,
        ciphertext: &SeededGlweCiphertext<u32, C>,
        phase: &mut [u32],
    ) -> Result<()> {
        self.decrypt_seeded_phase_parts(ciphertext.seed(), ciphertext.body(), phase)
    }

    /// The phase of a seeded ciphertext given as its raw parts.
    pub fn decrypt_seeded_phase_parts(
        &mut self,
        seed: &[u8; MASK_SEED_BYTES],
        body: &[u32],
        phase: &mut [u32],
    ) -> Result<()> {
        decrypt_seeded_glwe_phase(
            &self.plan,
            self.key.as_flattened(),
            seed,
            body,
            phase,
            &mut self.scratch,
        )
    }
}

/// Decodes `N` boolean phases into `N / 8` packed bytes (least-significant bit first).
pub fn decode_bits(phase: &[u32], out: &mut [u8]) -> Result<()> {
    if out.len() * 8 != phase.len() {
        return Err(Error::WrongLength {
            expected: phase.len() / 8,
            found: out.len(),
        });
    }
    for (byte, bits) in out.iter_mut().zip(phase.chunks_exact(8)) {
        *byte = bits
            .iter()
            .enumerate()
            .fold(0u8, |acc, (i, &p)| acc | (u8::from(decode_bool(p)) << i));
    }
    Ok(())
}

/// The phase `b - <a, s>` of an LWE ciphertext under the key read as an LWE key (for sample-extracted
/// ciphertexts). Branch-free in the key bits.
pub fn decrypt_lwe_phase<C: AsRef<[u8]> + AsMut<[u8]>, D: AsRef<[u32]>>(
    key: &GlweSecretKey<C>,
    ciphertext: &LweCiphertext<u32, D>,
) -> Result<u32> {
    let s = key.as_bytes();
    if ciphertext.mask().len() != s.len() {
        return Err(Error::WrongLength {
            expected: s.len() + 1,
            found: ciphertext.as_slice().len(),
        });
    }
    let dot = ciphertext
        .mask()
        .iter()
        .zip(s)
        .fold(0u32, |acc, (&a, &bit)| acc.wrapping_add(a.wrapping_mul(u32::from(bit))));
    Ok(ciphertext.body().wrapping_sub(dot))
}

impl<const N: usize, const K: usize> Drop for GlweDecryptor<N, K> {
    fn drop(&mut self) {
        self.key.as_flattened_mut().zeroize();
        self.scratch.zeroize();
    }
}

impl<const N: usize, const K: usize> zeroize::ZeroizeOnDrop for GlweDecryptor<N, K> {}

impl<const N: usize, const K: usize> core::fmt::Debug for GlweDecryptor<N, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweDecryptor")
            .field("polynomial_size", &N)
            .finish_non_exhaustive()
    }
}
