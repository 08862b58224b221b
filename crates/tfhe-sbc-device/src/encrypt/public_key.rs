//! The public-key encryptor: `N` bits per GLWE ciphertext under a published public key
//! ([`crate::encrypt::public_key_encryption`]), no secret key on the device, no heap.

use crate::csprng::xof::Blake2bXof;
use crate::encrypt::frame_encryptor::{FramePayload, FrameSealing, FrameShape};
use crate::encrypt::public_key_encryption::{
    check_public_key, compute_public_key_spectra, encrypt_glwe_ciphertext_with_public_key_assign,
};
use crate::encrypt::secret_key::{check_lengths, encode_bits};
use crate::encrypt::shape::check_glwe_parameters;
use crate::encrypt::shell::{Encryptor, EncryptorKey};
use crate::encrypt::state::EncryptorState;
use crate::error::{Error, Result};
use crate::frame::mac::DeviceCredentials;
use crate::frame::message::Chunk;
use crate::frame::{FrameHeader, FrameKind, OutgoingMessage, frame_bytes, write_frame_in_place, write_full_frame};
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::product::{DefaultProduct, NegacyclicProductPlan};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::GlweParameters;
use zeroize::Zeroize;

/// The key material of a public-key encryptor for polynomial size `N` and GLWE dimension `K` through the
/// product `P`: the public key's `K + 1` spectra (public), the spectrum of the per-encryption secret `u`
/// and one scratch spectrum (both wiped after every encryption).
pub struct PublicKey<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> {
    mask_spectra: [[P::Spectral; N]; K],
    body_spectrum: [P::Spectral; N],
    u_spectrum: [P::Spectral; N],
    scratch: [P::Spectral; N],
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> EncryptorKey for PublicKey<N, K, P> {
    const EMPTY: Self = Self {
        mask_spectra: [[P::SPECTRAL_ZERO; N]; K],
        body_spectrum: [P::SPECTRAL_ZERO; N],
        u_spectrum: [P::SPECTRAL_ZERO; N],
        scratch: [P::SPECTRAL_ZERO; N],
    };
    const NAME: &'static str = "PublicKeyEncryptor";
    const TORUS_BITS: u32 = 32;
    const COMPACT_BODY: bool = false;

    fn wipe(&mut self) {
        // The public key's spectra are public; forgetting them all the same leaves no key behind.
        self.mask_spectra.zeroize();
        self.body_spectrum.zeroize();
        self.u_spectrum.zeroize();
        self.scratch.zeroize();
    }
}

/// A boolean public-key encryptor for polynomial size `N` and GLWE dimension `K` (1 by default) through the
/// product `P` ([`DefaultProduct`] by default): the [`Encryptor`] shell around a [`PublicKey`]. It holds
/// `(K + 3) * 8N` bytes of spectra (`f64` FFT or `[u32; 2]` NTT) plus the [`EncryptorState`]
/// (`tests/firmware_api.rs` checks the size).
///
/// Build it where it lives: [`Encryptor::EMPTY`] (all zero bytes), then [`Self::set_public_key`] (or
/// [`Self::set_public_key_le_bytes`]) and [`Encryptor::seed`]; [`Self::new`] is a host's by-value convenience for
/// tests.
///
/// Nothing it holds decrypts anything: a stolen device reveals no past data (its CSPRNG erases its key
/// after every encryption, and `u` is wiped). It can still encrypt, and so forge data under its own MAC key.
/// Degenerate public keys are refused ([`crate::Error::DegeneratePublicKey`]).
pub type PublicKeyEncryptor<const N: usize, const K: usize = 1, P = DefaultProduct> = Encryptor<PublicKey<N, K, P>>;

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> Encryptor<PublicKey<N, K, P>> {
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;

    /// Prepares an encryptor for the public key `(seed, body)` of the 32-bit set `params` (size `N`, GLWE
    /// dimension `K`), with constant-time noise, returned by value: a host's convenience for tests
    /// (returning it moves the CSPRNG, leaving its bytes behind; devices build in place).
    pub fn new(params: &GlweParameters, seed: &[u8; MASK_SEED_BYTES], body: &[u32], rng: Blake2bXof) -> Result<Self> {
        let mut this = Self::EMPTY;
        this.set_public_key(params, seed, body)?;
        this.set_rng(rng);
        Ok(this)
    }

    /// Sets the public key `(seed, body)` of the 32-bit set `params`, in place: refuses a degenerate key
    /// ([`check_public_key`]), then computes its spectra once. On error the encryptor has no key.
    pub fn set_public_key(
        &mut self,
        params: &GlweParameters,
        seed: &[u8; MASK_SEED_BYTES],
        body: &[u32],
    ) -> Result<()> {
        self.forget_key();
        let PublicKey {
            mask_spectra,
            body_spectrum,
            ..
        } = &mut self.key;
        let noise = install_public_key::<N, K, P>(params, seed, body, mask_spectra, body_spectrum)?;
        self.state.set_key(params.id(), noise);
        Ok(())
    }

    /// [`Self::set_public_key`] with the body as it travels in a public-key file: `4 N` bytes, each word
    /// little-endian (`crate::files::public_key::public_key_body` gives them, after checking the file and its
    /// binding to the credentials). The words are decoded into the scratch spectrum's memory (no stack
    /// buffer), which is wiped afterwards. On error the encryptor has no key.
    pub fn set_public_key_le_bytes(
        &mut self,
        params: &GlweParameters,
        seed: &[u8; MASK_SEED_BYTES],
        body_le: &[u8],
    ) -> Result<()> {
        self.forget_key();
        Error::check_length(4 * N, body_le.len())?;
        let PublicKey {
            mask_spectra,
            body_spectrum,
            scratch,
            ..
        } = &mut self.key;
        let words: &mut [u32] = bytemuck::cast_slice_mut(scratch.as_mut_slice());
        let body = words.get_mut(..N).ok_or(Error::BufferTooSmall)?;
        for (word, bytes) in body.iter_mut().zip(body_le.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        let installed = install_public_key::<N, K, P>(params, seed, body, mask_spectra, body_spectrum);
        scratch.zeroize();
        self.state.set_key(params.id(), installed?);
        Ok(())
    }

    /// Encrypts up to `N / 8` message bytes (`N` bits, least-significant bit first, zero-padded): writes the
    /// `K * N` mask words into `mask` and the `N` body words into `body`.
    pub fn encrypt_glwe_ciphertext(&mut self, message: &[u8], mask: &mut [u32], body: &mut [u32]) -> Result<()> {
        self.state.check_ready()?;
        check_lengths::<N>(message, body)?;
        Error::check_length(K * N, mask.len())?;
        self.key.encrypt(&mut self.state, message, mask, body)
    }

    /// Encrypts `chunk` of `message` and writes the authenticated public-key frame (kind 2, mask in full)
    /// into `out` (at least [`frame_bytes`]`(FrameKind::PublicKey, K, N, 32, 32)` bytes, 8255 at
    /// `N = 1024`, `K = 1`), using `mask` (`K * N`) and `body` (`N`) as buffers. Returns the frame's length.
    /// [`FrameEncryptor::encrypt_frame_into`](crate::encrypt::FrameEncryptor::encrypt_frame_into) needs no separate buffers.
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
        let header = FrameHeader::new(FrameKind::PublicKey, self.parameter_set(), credentials, message, chunk)?;
        self.encrypt_glwe_ciphertext(chunk.bytes, mask, body)?;
        write_full_frame(&header, mask, body, credentials.mac_key(), out)
    }
}

/// Checks `params` (a 32-bit set of size `N`, dimension `K`) and the key (`N` body words, not degenerate),
/// computes the public key's spectra and returns the set's noise sampler.
fn install_public_key<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>>(
    params: &GlweParameters,
    seed: &[u8; MASK_SEED_BYTES],
    body: &[u32],
    mask_spectra: &mut [[P::Spectral; N]; K],
    body_spectrum: &mut [P::Spectral; N],
) -> Result<DeviceNoise> {
    check_glwe_parameters::<u32, N, K>(params)?;
    Error::check_length(N, body.len())?;
    check_public_key(seed, K, body)?;
    let noise = DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime)?;
    compute_public_key_spectra(&P::PLAN, seed, body, mask_spectra.as_flattened_mut(), body_spectrum)?;
    Ok(noise)
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> PublicKey<N, K, P> {
    /// Encodes `message` into `body` and encrypts it under the public key, with the state's noise and CSPRNG.
    fn encrypt(
        &mut self,
        state: &mut EncryptorState,
        message: &[u8],
        mask: &mut [u32],
        body: &mut [u32],
    ) -> Result<()> {
        state.encrypt_with(|noise, rng| {
            encode_bits(message, body);
            encrypt_glwe_ciphertext_with_public_key_assign(
                &P::PLAN,
                self.mask_spectra.as_flattened(),
                &self.body_spectrum,
                noise,
                mask,
                body,
                &mut self.u_spectrum,
                &mut self.scratch,
                rng,
            )
        })
    }
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> FrameSealing for PublicKey<N, K, P> {
    const FRAME: FrameShape = FrameShape::boolean(FrameKind::PublicKey, K, N);

    fn seal(&mut self, state: &mut EncryptorState, payload: &FramePayload<'_>, out: &mut [u8]) -> Result<usize> {
        write_frame_in_place(
            &payload.header,
            (K + 1) * N,
            payload.mac_key,
            out,
            |words: &mut [u32]| {
                let (mask, body) = words.split_at_mut(K * N);
                check_lengths::<N>(payload.message, body)?;
                self.encrypt(state, payload.message, mask, body)?;
                Ok([])
            },
        )
    }
}
