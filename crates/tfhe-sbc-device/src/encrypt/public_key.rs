//! The public-key encryptor: one GLWE ciphertext per frame under a published public key
//! ([`crate::encrypt::public_key_encryption`]), no secret key on the device, no heap. One key kind,
//! [`PublicKey`], serves both tori: `N` message bits on the 32-bit torus ([`PublicKeyEncryptor`], the boolean
//! sets) and `N / 4` bytes of two-bit radix blocks on the 64-bit torus
//! ([`crate::encrypt::integer_public_key`], the integer set); [`PublicKeyPlaintexts`] is what differs.

use crate::csprng::construction::{DeviceConstruction, XofConstruction};
use crate::csprng::xof::KeyedXof;
use crate::encrypt::frame_encryptor::{FramePayload, FrameSealing, FrameShape};
use crate::encrypt::integer::encode_readings;
use crate::encrypt::public_key_encryption::{
    PublicKeyBody, PublicKeyMask, compute_public_key_spectra, encrypt_glwe_ciphertext_with_public_key_assign,
};
use crate::encrypt::secret_key::{check_lengths, encode_bits};
use crate::encrypt::shape::check_glwe_parameters;
use crate::encrypt::shell::{Encryptor, EncryptorKey};
use crate::encrypt::state::EncryptorState;
use crate::error::{Error, Result};
use crate::frame::mac::DeviceCredentials;
use crate::frame::message::Chunk;
use crate::frame::writer::PayloadWord;
use crate::frame::{FrameKind, OutgoingMessage, frame_bytes, write_frame_in_place, write_full_frame};
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::product::{DefaultProduct, NegacyclicProductPlan};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::{GlweParameters, IntegerParameters, ParameterSetId};
use zeroize::Zeroize;

/// What a frame's message chunk is on a public-key encryptor's torus: message bits on the 32-bit torus (the
/// boolean sets: one bit per coefficient, `encode_bool`), `u8` readings as two-bit radix blocks on the 64-bit
/// torus (the integer sets: the set's [`tfhe_sbc_core::encoding::RadixEncoding`]).
pub trait PublicKeyPlaintexts: PayloadWord {
    /// Message bits per body coefficient: 1 (a bit) or 2 (a radix block).
    const MESSAGE_BITS_PER_COEFFICIENT: usize;
    /// Encodes `message` into the `N` plaintexts `body` for the set `parameter_set` (the rest encrypts 0).
    fn encode(parameter_set: ParameterSetId, message: &[u8], body: &mut [Self]) -> Result<()>;
}

impl PublicKeyPlaintexts for u32 {
    const MESSAGE_BITS_PER_COEFFICIENT: usize = 1;

    fn encode(_: ParameterSetId, message: &[u8], body: &mut [u32]) -> Result<()> {
        if message.len() > body.len() / 8 {
            return Err(Error::MessageTooLong {
                capacity: body.len() / 8,
                found: message.len(),
            });
        }
        encode_bits(message, body);
        Ok(())
    }
}

impl PublicKeyPlaintexts for u64 {
    const MESSAGE_BITS_PER_COEFFICIENT: usize = 2;

    fn encode(parameter_set: ParameterSetId, message: &[u8], body: &mut [u64]) -> Result<()> {
        let encoding = IntegerParameters::from_id(parameter_set)
            .map(|p| p.encoding())
            .ok_or(Error::KeyNotSet)?;
        encode_readings(&encoding, message, 8, body)
    }
}

/// The key material of a public-key encryptor for polynomial size `N` and GLWE dimension `K` through the
/// product `P` (on either torus): the public key's `K + 1` spectra (public), the spectrum of the
/// per-encryption secret `u` and one scratch spectrum (both wiped after every encryption). The public key's
/// spectra are public; zeroizing wipes them all the same, so that no key is left behind.
#[derive(Zeroize)]
pub struct PublicKey<const N: usize, const K: usize, P: NegacyclicProductPlan<N>> {
    mask_spectra: [[P::Spectral; N]; K],
    body_spectrum: [P::Spectral; N],
    u_spectrum: [P::Spectral; N],
    scratch: [P::Spectral; N],
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N>> EncryptorKey for PublicKey<N, K, P> {
    const EMPTY: Self = Self {
        mask_spectra: [[P::SPECTRAL_ZERO; N]; K],
        body_spectrum: [P::SPECTRAL_ZERO; N],
        u_spectrum: [P::SPECTRAL_ZERO; N],
        scratch: [P::SPECTRAL_ZERO; N],
    };
    const NAME: &'static str = "PublicKeyEncryptor";
    const TORUS_BITS: u32 = <P::Torus as tfhe_sbc_core::torus::UnsignedTorus>::BITS;
    const COMPACT_BODY: bool = false;
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
/// Its CSPRNG is the target's ([`DeviceConstruction`]; `Encryptor<PublicKey<N, K, P>, X>` names another).
pub type PublicKeyEncryptor<const N: usize, const K: usize = 1, P = DefaultProduct> =
    Encryptor<PublicKey<N, K, P>, DeviceConstruction>;

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>, X: XofConstruction>
    Encryptor<PublicKey<N, K, P>, X>
{
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;

    /// Prepares an encryptor for the public key `(seed, body)` of the 32-bit set `params` (size `N`, GLWE
    /// dimension `K`), with constant-time noise, returned by value: a host's convenience for tests
    /// (returning it moves the CSPRNG, leaving its bytes behind; devices build in place).
    pub fn new(params: &GlweParameters, seed: &[u8; MASK_SEED_BYTES], body: &[u32], rng: KeyedXof<X>) -> Result<Self> {
        let mut this = Self::EMPTY;
        this.set_public_key(params, seed, body)?;
        this.set_rng(rng);
        Ok(this)
    }

    /// Sets the public key `(seed, body)` of the 32-bit set `params`, in place: refuses a degenerate key
    /// ([`check_public_key`](crate::encrypt::public_key_encryption::check_public_key)), then computes its
    /// spectra once. On error the encryptor has no key.
    pub fn set_public_key(
        &mut self,
        params: &GlweParameters,
        seed: &[u8; MASK_SEED_BYTES],
        body: &[u32],
    ) -> Result<()> {
        let noise = boolean_noise::<N, K>(params);
        self.set_seeded_public_key(params.id(), noise, seed, PublicKeyBody::Words(body))
    }

    /// [`Self::set_public_key`] with the body as it travels in a public-key file: `4 N` bytes, each word
    /// little-endian (`crate::files::public_key::public_key_body` gives them, after checking the file and its
    /// binding to the credentials), read in place (no copy of the key in RAM). On error the encryptor has
    /// no key.
    pub fn set_public_key_le_bytes(
        &mut self,
        params: &GlweParameters,
        seed: &[u8; MASK_SEED_BYTES],
        body_le: &[u8],
    ) -> Result<()> {
        let noise = boolean_noise::<N, K>(params);
        self.set_seeded_public_key(params.id(), noise, seed, PublicKeyBody::LeBytes(body_le))
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
        let frame_len = frame_bytes(FrameKind::PublicKey, K, N, 32, 32);
        let header = self.frame_header(FrameKind::PublicKey, frame_len, out, credentials, message, chunk)?;
        self.encrypt_glwe_ciphertext(chunk.bytes, mask, body)?;
        write_full_frame(&header, mask, body, credentials.mac_key(), out)
    }
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N>, X: XofConstruction> Encryptor<PublicKey<N, K, P>, X>
where
    P::Torus: PublicKeyPlaintexts,
{
    /// Forgets the key, then sets the seeded public key `(seed, body)` of the set `id` with `noise`, the set's
    /// noise as the caller resolved it (an error there, or a degenerate key, leaves no key).
    pub(crate) fn set_seeded_public_key(
        &mut self,
        id: ParameterSetId,
        noise: Result<DeviceNoise>,
        seed: &[u8; MASK_SEED_BYTES],
        body: PublicKeyBody<'_, P::Torus>,
    ) -> Result<()> {
        self.forget_key();
        let noise = noise?;
        self.key.install(PublicKeyMask::Seeded(seed), body)?;
        self.state.set_key(id, noise);
        Ok(())
    }
}

/// Checks that `params` is a 32-bit set of size `N` and dimension `K`, and returns its constant-time noise.
fn boolean_noise<const N: usize, const K: usize>(params: &GlweParameters) -> Result<DeviceNoise> {
    check_glwe_parameters::<u32, N, K>(params)?;
    DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime)
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N>> PublicKey<N, K, P>
where
    P::Torus: PublicKeyPlaintexts,
{
    /// Refuses a degenerate key ([`PublicKeyMask::check_key`]: `N` words, not zero, not low-weight, not the
    /// mask; a mask in full only with `K = 1`), then computes its `K + 1` spectra once. On error the spectra
    /// hold no key.
    pub(crate) fn install(
        &mut self,
        mask: PublicKeyMask<'_, P::Torus>,
        body: PublicKeyBody<'_, P::Torus>,
    ) -> Result<()> {
        body.check_length(N)?;
        mask.check_key(K, body)?;
        let installed = compute_public_key_spectra(
            &P::PLAN,
            mask,
            body,
            self.mask_spectra.as_flattened_mut(),
            &mut self.body_spectrum,
        );
        if installed.is_err() {
            self.zeroize();
        }
        installed
    }

    /// Encodes `message` into `body` and encrypts it under the public key, with the state's noise and CSPRNG.
    pub(crate) fn encrypt<X: XofConstruction>(
        &mut self,
        state: &mut EncryptorState<X>,
        message: &[u8],
        mask: &mut [P::Torus],
        body: &mut [P::Torus],
    ) -> Result<()> {
        P::Torus::encode(state.parameter_set(), message, body)?;
        self.encrypt_plaintexts(state, mask, body)
    }

    /// Encrypts the `N` plaintexts in `body` in place under the public key, writing the mask into `mask`.
    pub(crate) fn encrypt_plaintexts<X: XofConstruction>(
        &mut self,
        state: &mut EncryptorState<X>,
        mask: &mut [P::Torus],
        body: &mut [P::Torus],
    ) -> Result<()> {
        state.encrypt_with(|noise, rng| {
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

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N>> FrameSealing for PublicKey<N, K, P>
where
    P::Torus: PublicKeyPlaintexts,
{
    const FRAME: FrameShape = FrameShape {
        kind: FrameKind::PublicKey,
        glwe_dimension: K,
        polynomial_size: N,
        torus_bits: Self::TORUS_BITS,
        chunk_bytes: N * P::Torus::MESSAGE_BITS_PER_COEFFICIENT / 8,
    };

    fn seal<X: XofConstruction>(
        &mut self,
        state: &mut EncryptorState<X>,
        payload: &FramePayload<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        write_frame_in_place(
            &payload.header,
            (K + 1) * N,
            payload.mac_key,
            out,
            |words: &mut [P::Torus]| {
                let (mask, body) = words.split_at_mut(K * N);
                self.encrypt(state, payload.message, mask, body)?;
                Ok([])
            },
        )
    }
}
