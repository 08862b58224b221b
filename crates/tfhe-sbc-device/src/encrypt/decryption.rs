//! Decryption with the secret key, for the trusted party and for tests: a thin wrapper over
//! [`crate::encrypt::glwe_encryption`]'s phase functions, and the phases of a compact list
//! ([`decrypt_compact_list_phases`]).

use crate::compact_list::ListLayout;
use crate::csprng::construction::{DeviceConstruction, XofConstruction};
use crate::encrypt::compact_list::COMPACT_PKE_N;
use crate::encrypt::glwe_encryption::{decrypt_glwe_phase, decrypt_seeded_glwe_phase};
use crate::encrypt::shape::check_key_shape;
use crate::error::{Error, Result};
use crate::product::key_spectrum::compute_glwe_key_spectrum;
use crate::product::{DefaultProduct, NegacyclicProductPlan};
use tfhe_sbc_core::encoding::decode_bool;
use tfhe_sbc_core::entities::{GlweSecretKey, KeyStorage, LweCiphertext, MASK_SEED_BYTES, SeededGlweCiphertext};
use zeroize::Zeroize;

/// A GLWE decryptor for polynomial size `N` and GLWE dimension `K` (1 by default) through the product `P`
/// ([`DefaultProduct`] by default): the key's spectra and one scratch spectrum. Seeded masks expand under
/// the XOF construction `X` ([`DeviceConstruction`] by default, as the encryptors').
pub struct GlweDecryptor<
    const N: usize,
    const K: usize = 1,
    P: NegacyclicProductPlan<N, Torus = u32> = DefaultProduct,
    X: XofConstruction = DeviceConstruction,
> {
    key: [[P::Spectral; N]; K],
    scratch: [P::Spectral; N],
    key_set: bool,
    xof: core::marker::PhantomData<X>,
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>, X: XofConstruction>
    GlweDecryptor<N, K, P, X>
{
    /// A decryptor with no key, all zero bytes (for a `static`): call [`Self::set_key`] before decrypting.
    pub const EMPTY: Self = Self {
        key: [[P::SPECTRAL_ZERO; N]; K],
        scratch: [P::SPECTRAL_ZERO; N],
        key_set: false,
        xof: core::marker::PhantomData,
    };

    /// Computes the key's spectra once, returned by value (a host's convenience: see [`Self::EMPTY`] and
    /// [`Self::set_key`]). `key` is only read.
    pub fn new<C: KeyStorage>(key: &GlweSecretKey<C>) -> Result<Self> {
        let mut this = Self::EMPTY;
        this.set_key(key)?;
        Ok(this)
    }

    /// Computes the spectra of `key` (`K` polynomials of `N` coefficients, only read) in place.
    pub fn set_key<C: KeyStorage>(&mut self, key: &GlweSecretKey<C>) -> Result<()> {
        self.key_set = false;
        self.key.zeroize();
        check_key_shape::<N, K, C>(key)?;
        compute_glwe_key_spectrum(&P::PLAN, key, self.key.as_flattened_mut())?;
        self.key_set = true;
        Ok(())
    }

    fn check_key(&self) -> Result<()> {
        if self.key_set { Ok(()) } else { Err(Error::KeyNotSet) }
    }

    /// The phase `b - sum_i a_i * s_i` of a full ciphertext given as its mask (`K * N` words) and body.
    pub fn decrypt_phase(&mut self, mask: &[u32], body: &[u32], phase: &mut [u32]) -> Result<()> {
        self.check_key()?;
        decrypt_glwe_phase(&P::PLAN, self.key.as_flattened(), mask, body, phase, &mut self.scratch)
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
        self.check_key()?;
        decrypt_seeded_glwe_phase::<X, P>(&P::PLAN, self.key.as_flattened(), seed, body, phase, &mut self.scratch)
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
pub fn decrypt_lwe_phase<C: KeyStorage, D: AsRef<[u32]>>(
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

/// The phases of every LWE of the packed compact list `list` (laid out as `layout` says) under the binary
/// secret key `s` behind its compact public key (`N` words, each 0 or 1), into `phases` (`layout.lwes()`),
/// as tfhe-rs expands and decrypts the list (`expand_lwe_compact_ciphertext_list`: LWE `j` of a bin has
/// the mask `mask * X^j` and the body `body_j`). A schoolbook product, not constant-time: for tests and the
/// trusted party's checks.
pub fn decrypt_compact_list_phases(layout: &ListLayout, list: &[u8], s: &[u64], phases: &mut [u64]) -> Result<()> {
    let n = COMPACT_PKE_N;
    Error::check_length(n, s.len())?;
    Error::check_length(layout.lwes(), phases.len())?;
    let list = list.get(..layout.bytes()).ok_or(Error::BufferTooSmall)?;
    let word = |at: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&list[at..at + 8]);
        u64::from_le_bytes(bytes)
    };
    for (lwe, phase) in phases.iter_mut().enumerate() {
        let (bin, j) = (lwe / n, lwe % n);
        let mask = |i: usize| word(layout.mask_offset(bin) + 8 * i);
        // (mask * X^j)_i = mask_{i-j}, or -mask_{i-j+N} when i < j.
        let dot = s.iter().enumerate().fold(0u64, |acc, (i, &s_i)| {
            let m = if i >= j {
                mask(i - j)
            } else {
                mask(i + n - j).wrapping_neg()
            };
            acc.wrapping_add(m.wrapping_mul(s_i))
        });
        *phase = word(layout.body_offset(lwe)).wrapping_sub(dot);
    }
    Ok(())
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>, X: XofConstruction> Drop
    for GlweDecryptor<N, K, P, X>
{
    fn drop(&mut self) {
        self.key.zeroize();
        self.scratch.zeroize();
    }
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>, X: XofConstruction>
    zeroize::ZeroizeOnDrop for GlweDecryptor<N, K, P, X>
{
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>, X: XofConstruction> core::fmt::Debug
    for GlweDecryptor<N, K, P, X>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweDecryptor")
            .field("polynomial_size", &N)
            .finish_non_exhaustive()
    }
}
