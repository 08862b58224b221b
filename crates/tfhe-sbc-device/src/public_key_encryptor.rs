//! The firmware-facing public-key encryptor: `N` bits per GLWE ciphertext under a published public key, no
//! secret key on the device, no heap.

use crate::error::{Error, Result};
use crate::frame_mac::DeviceCredentials;
use crate::message::Chunk;
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::public_key::{compute_public_key_spectra, encrypt_glwe_ciphertext_with_public_key_assign};
use crate::wire::{FrameHeader, FrameKind, OutgoingMessage, frame_bytes, write_full_frame};
use crate::xof::Blake2bXof;
use negacyclic_fft::Plan;
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use zeroize::Zeroize;

/// A boolean public-key encryptor for polynomial size `N` and GLWE dimension `K` (1 by default). It holds
/// the public key's `K + 1` spectra, the spectrum of the per-encryption `u`, one scratch buffer, its noise
/// sampler and its CSPRNG: `(K + 3) * 8N` bytes plus about 600 (32 KiB at `N = 1024`, `K = 1`).
///
/// Nothing it holds decrypts anything: a stolen device reveals no past data (its CSPRNG also erases its key
/// after every encryption). It can still encrypt, and so forge data under its own MAC key.
pub struct PublicKeyEncryptor<const N: usize, const K: usize = 1> {
    plan: Plan,
    mask_spectra: [[f64; N]; K],
    body_spectrum: [f64; N],
    u_spectrum: [f64; N],
    scratch: [f64; N],
    noise: DeviceNoise,
    parameter_set: ParameterSetId,
    rng: Blake2bXof,
}

impl<const N: usize, const K: usize> PublicKeyEncryptor<N, K> {
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;

    /// Prepares an encryptor for the public key `(seed, body)` of the 32-bit set `params` (size `N`, GLWE
    /// dimension `K`), with constant-time noise: computes the key's spectra once.
    pub fn new(params: &GlweParameters, seed: &[u8; MASK_SEED_BYTES], body: &[u32], rng: Blake2bXof) -> Result<Self> {
        crate::encryption::check_glwe_parameters::<N, K>(params)?;
        let mut this = Self {
            plan: crate::product::fft_plan(N)?,
            mask_spectra: [[0.0; N]; K],
            body_spectrum: [0.0; N],
            u_spectrum: [0.0; N],
            scratch: [0.0; N],
            noise: DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime)?,
            parameter_set: params.id(),
            rng,
        };
        compute_public_key_spectra(
            &this.plan,
            seed,
            body,
            this.mask_spectra.as_flattened_mut(),
            &mut this.body_spectrum,
        )?;
        Ok(this)
    }

    /// The parameter set this encryptor was built for.
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
    }

    /// The noise sampler in use (for `e1` and `e2`).
    pub fn noise(&self) -> DeviceNoise {
        self.noise
    }

    /// Encrypts up to `N / 8` message bytes (`N` bits, least-significant bit first, zero-padded): writes the
    /// `K * N` mask words into `mask` and the `N` body words into `body`.
    pub fn encrypt_glwe_ciphertext(&mut self, message: &[u8], mask: &mut [u32], body: &mut [u32]) -> Result<()> {
        crate::encryption::check_lengths::<N>(message, body)?;
        if mask.len() != K * N {
            return Err(Error::WrongLength {
                expected: K * N,
                found: mask.len(),
            });
        }
        self.rng.reseed_if_forked()?;
        crate::encryption::encode_bits(message, body);
        encrypt_glwe_ciphertext_with_public_key_assign(
            &self.plan,
            self.mask_spectra.as_flattened(),
            &self.body_spectrum,
            &self.noise,
            mask,
            body,
            &mut self.u_spectrum,
            &mut self.scratch,
            &mut self.rng,
        )?;
        self.rng.ratchet();
        Ok(())
    }

    /// Encrypts `chunk` of `message` and writes the authenticated public-key frame (kind 2, mask in full)
    /// into `out` (at least [`frame_bytes`]`(FrameKind::PublicKey, K, N, 32, 32)` bytes, 8255 at
    /// `N = 1024`, `K = 1`), using `mask` (`K * N`) and `body` (`N`) as buffers. Returns the frame's length.
    pub fn encrypt_public_key_frame(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        mask: &mut [u32],
        body: &mut [u32; N],
        out: &mut [u8],
    ) -> Result<usize> {
        message.check_chunk(chunk)?;
        if out.len() < frame_bytes(FrameKind::PublicKey, K, N, 32, 32) {
            return Err(Error::BufferTooSmall);
        }
        let header = FrameHeader::new(FrameKind::PublicKey, self.parameter_set, credentials, message, chunk)?;
        self.encrypt_glwe_ciphertext(chunk.bytes, mask, body)?;
        write_full_frame(&header, mask, body, credentials.mac_key(), out)
    }
}

impl<const N: usize, const K: usize> Drop for PublicKeyEncryptor<N, K> {
    fn drop(&mut self) {
        // The public key's spectra are public; u's spectrum and the scratch are not.
        self.u_spectrum.zeroize();
        self.scratch.zeroize();
    }
}

impl<const N: usize, const K: usize> core::fmt::Debug for PublicKeyEncryptor<N, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PublicKeyEncryptor")
            .field("polynomial_size", &N)
            .field("glwe_dimension", &K)
            .field("parameter_set", &self.parameter_set)
            .finish_non_exhaustive()
    }
}
