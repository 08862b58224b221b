//! Decryption with the secret key, for the trusted party and for tests.

use crate::error::{Error, Result};
use crate::key_spectrum::KeySpectrum;
use crate::mask::expand_mask_into_fft_input;
use tfhe_sbc_core::encoding::decode_bool;
use tfhe_sbc_core::entities::{GlweSecretKey, LweCiphertext, MASK_SEED_BYTES, SeededGlweCiphertext};
use zeroize::Zeroize;

/// A TRLWE decryptor for polynomial size `N`: the key's spectrum and one FFT scratch buffer.
pub struct GlweDecryptor<const N: usize> {
    key: KeySpectrum<N>,
    scratch: [f64; N],
}

impl<const N: usize> GlweDecryptor<N> {
    /// Computes the key's FFT once.
    pub fn new<C: AsRef<[u8]> + AsMut<[u8]>>(key: &GlweSecretKey<C>) -> Result<Self> {
        Ok(Self {
            key: KeySpectrum::new(key)?,
            scratch: [0.0; N],
        })
    }

    /// The phase `b - a * s` of a full ciphertext given as its mask and body (each `N` words).
    pub fn decrypt_phase(&mut self, mask: &[u32], body: &[u32], phase: &mut [u32]) -> Result<()> {
        check::<N>(mask.len())?;
        for (x, &a) in self.scratch.iter_mut().zip(mask) {
            *x = f64::from(a as i32);
        }
        self.finish_phase(body, phase)
    }

    /// The phase `b - a * s` of a seeded ciphertext (the mask is re-expanded from the seed).
    pub fn decrypt_seeded_phase<C: AsRef<[u32]>>(
        &mut self,
        ciphertext: &SeededGlweCiphertext<u32, C>,
        phase: &mut [u32],
    ) -> Result<()> {
        expand_mask_into_fft_input(ciphertext.seed(), &mut self.scratch);
        self.finish_phase(ciphertext.body(), phase)
    }

    /// The phase of a seeded ciphertext given as its raw parts.
    pub fn decrypt_seeded_phase_parts(
        &mut self,
        seed: &[u8; MASK_SEED_BYTES],
        body: &[u32],
        phase: &mut [u32],
    ) -> Result<()> {
        expand_mask_into_fft_input(seed, &mut self.scratch);
        self.finish_phase(body, phase)
    }

    fn finish_phase(&mut self, body: &[u32], phase: &mut [u32]) -> Result<()> {
        check::<N>(body.len())?;
        check::<N>(phase.len())?;
        self.key.mul_fft_input(&mut self.scratch, phase);
        // The scratch held the spectrum of `a * s`: `N` linear equations in the key.
        self.scratch.zeroize();
        for (p, &b) in phase.iter_mut().zip(body) {
            *p = b.wrapping_sub(*p);
        }
        Ok(())
    }
}

fn check<const N: usize>(len: usize) -> Result<()> {
    if len == N {
        Ok(())
    } else {
        Err(Error::WrongLength {
            expected: N,
            found: len,
        })
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

impl<const N: usize> Drop for GlweDecryptor<N> {
    fn drop(&mut self) {
        self.scratch.zeroize();
    }
}

impl<const N: usize> zeroize::ZeroizeOnDrop for GlweDecryptor<N> {}

impl<const N: usize> core::fmt::Debug for GlweDecryptor<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweDecryptor")
            .field("polynomial_size", &N)
            .finish_non_exhaustive()
    }
}
