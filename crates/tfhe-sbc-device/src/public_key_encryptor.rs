//! The firmware-facing public-key encryptor: `N` bits per GLWE ciphertext under a published public key, no
//! secret key on the device, no heap.

use crate::encryption::NoiseSlot;
use crate::error::{Error, Result};
use crate::frame_mac::DeviceCredentials;
use crate::message::Chunk;
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::product::{DefaultProduct, NegacyclicProductPlan};
use crate::public_key::{compute_public_key_spectra, encrypt_glwe_ciphertext_with_public_key_assign};
use crate::wire::{FrameHeader, FrameKind, OutgoingMessage, frame_bytes, write_full_frame};
use crate::xof::Blake2bXof;
use rand_core::TryCryptoRng;
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use zeroize::Zeroize;

/// A boolean public-key encryptor for polynomial size `N` and GLWE dimension `K` (1 by default) through the
/// product `P` ([`DefaultProduct`] by default). It holds the public key's `K + 1` spectra, the spectrum of
/// the per-encryption `u`, one scratch spectrum, its noise sampler and its CSPRNG: `(K + 3) * 8N` bytes of
/// spectra (`f64` FFT or `[u32; 2]` NTT) plus 624 (the CSPRNG's 592, noise sampler, id and flags): 33,392 bytes on x86_64
/// at `N = 1024`, `K = 1` (`tests/firmware_api.rs` checks it).
///
/// Build it where it lives: [`Self::EMPTY`] (all zero bytes), then [`Self::set_public_key`] and
/// [`Self::seed`]; [`Self::new`] is the host's by-value convenience.
///
/// Nothing it holds decrypts anything: a stolen device reveals no past data (its CSPRNG also erases its key
/// after every encryption). It can still encrypt, and so forge data under its own MAC key.
pub struct PublicKeyEncryptor<
    const N: usize,
    const K: usize = 1,
    P: NegacyclicProductPlan<N, Torus = u32> = DefaultProduct,
> {
    mask_spectra: [[P::Spectral; N]; K],
    body_spectrum: [P::Spectral; N],
    u_spectrum: [P::Spectral; N],
    scratch: [P::Spectral; N],
    rng: Blake2bXof,
    noise: NoiseSlot,
    parameter_set: ParameterSetId,
    key_set: bool,
    seeded: bool,
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> PublicKeyEncryptor<N, K, P> {
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;

    /// An encryptor with no public key and an unseeded CSPRNG, all zero bytes (for a `static`).
    pub const EMPTY: Self = Self {
        mask_spectra: [[P::SPECTRAL_ZERO; N]; K],
        body_spectrum: [P::SPECTRAL_ZERO; N],
        u_spectrum: [P::SPECTRAL_ZERO; N],
        scratch: [P::SPECTRAL_ZERO; N],
        rng: Blake2bXof::UNSEEDED,
        noise: NoiseSlot::Unset,
        parameter_set: ParameterSetId(0),
        key_set: false,
        seeded: false,
    };

    /// Prepares an encryptor for the public key `(seed, body)` of the 32-bit set `params` (size `N`, GLWE
    /// dimension `K`), with constant-time noise, returned by value (a host's convenience).
    pub fn new(params: &GlweParameters, seed: &[u8; MASK_SEED_BYTES], body: &[u32], rng: Blake2bXof) -> Result<Self> {
        let mut this = Self::EMPTY;
        this.set_public_key(params, seed, body)?;
        this.rng = rng;
        this.seeded = true;
        Ok(this)
    }

    /// Sets the public key `(seed, body)` of the 32-bit set `params`, in place: computes its spectra once.
    pub fn set_public_key(
        &mut self,
        params: &GlweParameters,
        seed: &[u8; MASK_SEED_BYTES],
        body: &[u32],
    ) -> Result<()> {
        self.key_set = false;
        crate::encryption::check_glwe_parameters::<N, K>(params)?;
        let noise = DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime)?;
        compute_public_key_spectra(
            &P::PLAN,
            seed,
            body,
            self.mask_spectra.as_flattened_mut(),
            &mut self.body_spectrum,
        )?;
        self.noise = NoiseSlot::Set(noise);
        self.parameter_set = params.id();
        self.key_set = true;
        Ok(())
    }

    /// Seeds the CSPRNG in place from `rng`, as [`crate::encryption::GlweEncryptor::seed`] does.
    pub fn seed<R: TryCryptoRng + ?Sized>(&mut self, rng: &mut R) -> Result<()> {
        crate::seeding::seed_in_place(&mut self.rng, &mut self.seeded, rng)
    }

    /// Keys the CSPRNG in place with these 32 bytes, exactly as `Blake2bXof::from_seed(seed)` would (the same
    /// stream: a known-answer test reproduces it), without building a generator on the stack, and wipes
    /// `seed`. Replaces the CSPRNG's state. The bytes must be secret and never used twice (e.g. read from a
    /// hardware TRNG into a buffer); [`Self::seed`] draws them from an RNG instead.
    pub fn seed_from_bytes(&mut self, seed: &mut [u8; crate::xof::SEED_BYTES]) {
        self.rng.seed_in_place(seed);
        seed.zeroize();
        self.seeded = true;
    }

    /// Replaces the CSPRNG with `rng` (already seeded).
    pub fn set_rng(&mut self, rng: Blake2bXof) {
        self.rng = rng;
        self.seeded = true;
    }

    /// The parameter set this encryptor was built for.
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
    }

    /// The noise sampler in use (for `e1` and `e2`; `None` before a public key is set).
    pub fn noise(&self) -> Option<DeviceNoise> {
        self.noise.get()
    }

    /// Encrypts up to `N / 8` message bytes (`N` bits, least-significant bit first, zero-padded): writes the
    /// `K * N` mask words into `mask` and the `N` body words into `body`.
    pub fn encrypt_glwe_ciphertext(&mut self, message: &[u8], mask: &mut [u32], body: &mut [u32]) -> Result<()> {
        let noise = match (self.key_set, self.noise.get()) {
            (true, Some(noise)) => noise,
            _ => return Err(Error::KeyNotSet),
        };
        if !self.seeded {
            return Err(Error::NotSeeded);
        }
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
            &P::PLAN,
            self.mask_spectra.as_flattened(),
            &self.body_spectrum,
            &noise,
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
    /// [`Self::encrypt_public_key_frame_into`] needs no separate buffers.
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

    /// [`Self::encrypt_public_key_frame`] straight into `out`: the mask and the body are computed in the
    /// frame buffer itself, so no other buffer is needed. The frame is byte for byte the same.
    pub fn encrypt_public_key_frame_into(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        message.check_chunk(chunk)?;
        let header = FrameHeader::new(FrameKind::PublicKey, self.parameter_set, credentials, message, chunk)?;
        crate::wire::write_frame_in_place(&header, (K + 1) * N, credentials.mac_key(), out, |words| {
            let (mask, body) = words.split_at_mut(K * N);
            self.encrypt_glwe_ciphertext(chunk.bytes, mask, body)?;
            Ok([])
        })
    }
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> Drop for PublicKeyEncryptor<N, K, P> {
    fn drop(&mut self) {
        // The public key's spectra are public; u's spectrum and the scratch are not.
        self.u_spectrum.zeroize();
        self.scratch.zeroize();
    }
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> core::fmt::Debug
    for PublicKeyEncryptor<N, K, P>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PublicKeyEncryptor")
            .field("polynomial_size", &N)
            .field("glwe_dimension", &K)
            .field("parameter_set", &self.parameter_set)
            .finish_non_exhaustive()
    }
}
