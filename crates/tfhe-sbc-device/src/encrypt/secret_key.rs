//! The firmware-facing boolean encryptor: `N` bits per GLWE ciphertext, no heap, fixed-size state.
//!
//! [`GlweEncryptor`] is a thin wrapper over the generic core [`crate::encrypt::glwe_encryption`]: it owns the key's
//! spectra, one scratch buffer, the noise sampler and the CSPRNG, encodes the message bits into the body
//! buffer (`+-1/8`), and calls [`encrypt_seeded_glwe_ciphertext_assign`]. Around each encryption it checks
//! for a `fork()` (feature `getrandom`) and afterwards erases the CSPRNG's key ([`KeyedXof::ratchet`]).
//!
//! # Building it where it lives
//! On a microcontroller the encryptor is a `static`, built in place with no large stack temporary:
//!
//! ```
//! # use tfhe_sbc_core::entities::GlweSecretKey;
//! # use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
//! # use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
//! # use tfhe_sbc_device::csprng::xof::Blake2bXof;
//! # use rand_core::SeedableRng;
//! # let mut trng = Blake2bXof::from_seed([9; 32]); // a hardware RNG (`seeding::Rng06`/`Rng09` adapt HAL ones)
//! # let packed_key_in_flash = [0x5Au8; 128];
//! # let mut encryptor_cell = Box::new(GlweEncryptor::<1024>::EMPTY);
//! # let encryptor: &mut GlweEncryptor<1024> = &mut encryptor_cell;
//! // static ENCRYPTOR: Mutex<RefCell<GlweEncryptor<1024>>> = Mutex::new(RefCell::new(GlweEncryptor::EMPTY));
//! encryptor.set_packed_key(&TFHE_LIB_GLWE_1024, &packed_key_in_flash)?; // spectra computed in place
//! encryptor.seed(&mut trng)?; // any rand_core 0.10 `TryCryptoRng`; an RNG failure is an error
//! let mut body = [0u32; 1024];
//! let seed = encryptor.encrypt_seeded_glwe_ciphertext(&[0xA5; 128], &mut body)?;
//! # Ok::<(), tfhe_sbc_device::Error>(())
//! ```
//!
//! [`crate::encrypt::FrameEncryptor::encrypt_frame_into`] encrypts straight into the frame buffer. Encrypting before
//! a key is set is [`Error::KeyNotSet`]; before the CSPRNG is seeded, [`Error::NotSeeded`].
//!
//! With the `hazmat` feature, `GlweEncryptor::encrypt_seeded_glwe_ciphertext_with_randomness` takes the
//! mask seed and the noise explicitly: the deterministic inner encryption that known-answer tests pin,
//! independent of how a sampler consumes its stream.

use crate::csprng::construction::{DeviceConstruction, XofConstruction};
use crate::csprng::xof::KeyedXof;
use crate::encrypt::frame_encryptor::{FramePayload, FrameSealing, FrameShape};
use crate::encrypt::glwe_encryption::{encrypt_glwe_ciphertext_assign, encrypt_seeded_glwe_ciphertext_assign};
use crate::encrypt::shape::{check_glwe_parameters, check_key_shape};
use crate::encrypt::shell::{Encryptor, EncryptorKey};
use crate::encrypt::state::EncryptorState;
use crate::error::{Error, Result};
use tfhe_sbc_core::entities::unpack_secret_key;

use crate::frame::mac::DeviceCredentials;
use crate::frame::message::Chunk;
use crate::frame::{
    FrameCounter, FrameKind, OutgoingMessage, frame_bytes, write_frame_in_place, write_full_frame, write_seeded_frame,
};
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::product::key_spectrum::compute_glwe_key_spectrum;
use crate::product::{DefaultProduct, NegacyclicProductPlan};
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, KeyStorage, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::GlweParameters;
use zeroize::Zeroize;

/// The key material of a boolean secret-key encryptor for polynomial size `N` and GLWE dimension `K`,
/// through the exact negacyclic product `P`: the key's `K` spectra and one scratch spectrum.
#[derive(Zeroize)]
pub struct SecretKey<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> {
    spectra: [[P::Spectral; N]; K],
    scratch: [P::Spectral; N],
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> EncryptorKey for SecretKey<N, K, P> {
    const EMPTY: Self = Self {
        spectra: [[P::SPECTRAL_ZERO; N]; K],
        scratch: [P::SPECTRAL_ZERO; N],
    };
    const NAME: &'static str = "GlweEncryptor";
    const TORUS_BITS: u32 = 32;
    const COMPACT_BODY: bool = true;
}

/// A boolean GLWE encryptor for polynomial size `N` and GLWE dimension `K` (1 by default: TRLWE), through
/// the exact negacyclic product `P` ([`DefaultProduct`] by default; its plan for `N` is a compile-time
/// constant, so an unsupported `N` does not compile): the [`Encryptor`] shell around a [`SecretKey`]. It
/// holds the key's `K` spectra, one scratch spectrum, its noise sampler and its CSPRNG, and nothing else.
/// Encrypting never allocates and reuses the same buffers on every call.
///
/// Size: `size_of::<GlweEncryptor<1024>>()` is 16,992 bytes on x86_64 (`f64` FFT spectra): 8 KiB of key
/// spectrum, 8 KiB of scratch, 592 bytes of CSPRNG (chaining value 64, counter 8, output buffer 512, fill
/// level 8) and the rest of the [`EncryptorState`] (noise sampler, parameter-set id, flags). On thumbv7em
/// (`[u32; 2]` NTT spectra) it is 16,480 bytes: the CSPRNG is BLAKE2s there and buffers one 32-byte block (80
/// bytes; 144 with BLAKE2b's 64-byte block).
/// With the `getrandom` feature the CSPRNG also remembers a process id.
/// `tests/stack.rs` checks the breakdown. The FFT/NTT tables are `static` (flash on a microcontroller).
///
/// # Timing
/// With the default [`NoiseSampling::ConstantTime`], an encryption's branches and memory addresses do not
/// depend on the key, the message, the CSPRNG output or the noise on hosts with a hardware FPU (x86_64,
/// aarch64): checked under valgrind by the workspace's constant-time check. On Cortex-M the default product is the
/// constant-time integer NTT (see the crate's Timing section); the `f64` FFT named there runs in software
/// floating point, whose multiply takes an early exit on zero operands, so its time depends on the key.
/// `NoiseSampling::Ziggurat` (feature `ziggurat`) is not constant-time.
///
/// `X` is the XOF construction of its CSPRNG and of its seeded masks ([`DeviceConstruction`] by default:
/// BLAKE2s on 32-bit targets, whose frames name mask XOF id 3; BLAKE2b elsewhere, id 2).
pub type GlweEncryptor<const N: usize, const K: usize = 1, P = DefaultProduct, X = DeviceConstruction> =
    Encryptor<SecretKey<N, K, P>, X>;

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>, X: XofConstruction>
    Encryptor<SecretKey<N, K, P>, X>
{
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;
    /// The bytes of a packed key ([`Self::set_packed_key`]): `K * N / 8`.
    pub const PACKED_KEY_BYTES: usize = K * N / 8;

    /// Prepares an encryptor with the constant-time noise sampler, returned by value: a host's convenience
    /// for tests and benchmarks (returning it moves the key spectra and the CSPRNG, leaving their bytes
    /// behind). Devices build [`Self::EMPTY`] in place and call [`Self::set_key`] and [`Self::seed`].
    pub fn new<C: KeyStorage>(params: &GlweParameters, key: &GlweSecretKey<C>, rng: KeyedXof<X>) -> Result<Self> {
        Self::with_noise_sampling(params, key, rng, NoiseSampling::ConstantTime)
    }

    /// [`Self::new`] with an explicit noise sampler choice (`NoiseSampling::Ziggurat`, feature `ziggurat`, is
    /// the paper's method and is not constant-time).
    pub fn with_noise_sampling<C: KeyStorage>(
        params: &GlweParameters,
        key: &GlweSecretKey<C>,
        rng: KeyedXof<X>,
        sampling: NoiseSampling,
    ) -> Result<Self> {
        let mut this = Self::EMPTY;
        this.set_key_with_noise_sampling(params, key, sampling)?;
        this.set_rng(rng);
        Ok(this)
    }

    /// Sets the key, in place, with the constant-time noise sampler: checks that `params` is a 32-bit set of
    /// size `N` and GLWE dimension `K` matching `key`, resolves and validates its noise, and computes the
    /// key's spectra into the encryptor. `key` is only read (it may be in flash). On error the encryptor
    /// has no key.
    pub fn set_key<C: KeyStorage>(&mut self, params: &GlweParameters, key: &GlweSecretKey<C>) -> Result<()> {
        self.set_key_with_noise_sampling(params, key, NoiseSampling::ConstantTime)
    }

    /// [`Self::set_key`] with an explicit noise sampler choice.
    pub fn set_key_with_noise_sampling<C: KeyStorage>(
        &mut self,
        params: &GlweParameters,
        key: &GlweSecretKey<C>,
        sampling: NoiseSampling,
    ) -> Result<()> {
        self.forget_key();
        check_glwe_parameters::<u32, N, K>(params)?;
        check_key_shape::<N, K, C>(key)?;
        let noise = DeviceNoise::for_parameters(params, sampling)?;
        compute_glwe_key_spectrum(&P::PLAN, key, self.key.spectra.as_flattened_mut())?;
        self.state.set_key(params.id(), noise);
        Ok(())
    }

    /// Sets the key from its packed form (`K * N / 8` bytes, eight coefficients per byte, least-significant
    /// bit first: what a credential file holds, [`crate::files::credentials`]), with the constant-time noise
    /// sampler. The packed bytes are only read (they may stay in flash); each polynomial is unpacked into
    /// the scratch spectrum's own memory (no stack buffer), wiped before the spectrum is computed over it.
    pub fn set_packed_key(&mut self, params: &GlweParameters, packed: &[u8]) -> Result<()> {
        self.forget_key();
        check_glwe_parameters::<u32, N, K>(params)?;
        Error::check_length(Self::PACKED_KEY_BYTES, packed.len())?;
        let noise = DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime)?;
        let plan = P::PLAN;
        let SecretKey { spectra, scratch } = &mut self.key;
        for (spectrum, packed) in spectra.iter_mut().zip(packed.chunks_exact(N / 8)) {
            with_unpacked_bits::<N, P::Spectral>(scratch, packed, |bits| plan.forward_binary(bits, spectrum))?;
        }
        self.state.set_key(params.id(), noise);
        Ok(())
    }

    /// Encrypts up to `N / 8` message bytes (`N` bits, least-significant bit first, zero-padded) as a
    /// seeded ciphertext: writes the body into `body` (length `N`) and returns the mask seed.
    ///
    /// The mask is expanded from the seed straight into the product's scratch; no buffer holds it as
    /// integers.
    pub fn encrypt_seeded_glwe_ciphertext(
        &mut self,
        message: &[u8],
        body: &mut [u32],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        self.state.check_ready()?;
        check_lengths::<N>(message, body)?;
        let SecretKey { spectra, scratch } = &mut self.key;
        self.state.encrypt_with(|noise, rng| {
            encode_bits(message, body);
            encrypt_seeded_glwe_ciphertext_assign::<X, _, _>(
                &P::PLAN,
                spectra.as_flattened(),
                noise,
                body,
                scratch,
                rng,
            )
        })
    }

    /// The deterministic inner encryption: [`Self::encrypt_seeded_glwe_ciphertext`] with the mask seed and
    /// the noise (`N` torus values) given instead of drawn. For known-answer tests only: reusing a seed or a
    /// noise vector breaks the encryption, and this entry point does neither draw nor ratchet (so it needs a
    /// key but no seeded CSPRNG).
    #[cfg(feature = "hazmat")]
    #[cfg_attr(docsrs, doc(cfg(feature = "hazmat")))]
    pub fn encrypt_seeded_glwe_ciphertext_with_randomness(
        &mut self,
        message: &[u8],
        mask_seed: &[u8; MASK_SEED_BYTES],
        noise: &[u32],
        body: &mut [u32],
    ) -> Result<()> {
        if !self.state.key_is_set() {
            return Err(Error::KeyNotSet);
        }
        check_lengths::<N>(message, body)?;
        encode_bits(message, body);
        crate::encrypt::glwe_encryption::encrypt_seeded_glwe_ciphertext_with_randomness_assign::<X, _>(
            &P::PLAN,
            self.key.spectra.as_flattened(),
            mask_seed,
            noise,
            body,
            &mut self.key.scratch,
        )
    }

    /// Encrypts up to `N / 8` message bytes into the full `(a_1, ..., a_K, b)` form the paper sends
    /// (`(K + 1) N` words). The mask is the expansion of a fresh seed, exactly as in the seeded form.
    pub fn encrypt_glwe_ciphertext<C: AsRef<[u32]> + AsMut<[u32]>>(
        &mut self,
        message: &[u8],
        out: &mut GlweCiphertext<u32, C>,
    ) -> Result<()> {
        self.state.check_ready()?;
        if out.polynomial_size().0 != N || out.glwe_dimension().0 != K {
            return Err(Error::WrongLength {
                expected: (K + 1) * N,
                found: out.as_slice().len(),
            });
        }
        let (mask, body) = out.mask_and_body_mut();
        check_lengths::<N>(message, body)?;
        let SecretKey { spectra, scratch } = &mut self.key;
        self.state.encrypt_with(|noise, rng| {
            encode_bits(message, body);
            encrypt_glwe_ciphertext_assign::<X, _, _>(&P::PLAN, spectra.as_flattened(), noise, mask, body, scratch, rng)
        })
    }

    /// [`Self::encrypt_seeded_glwe_ciphertext`] with the key's spectra recomputed first: the paper's
    /// "on-the-fly" variant, kept for measuring what the reuse saves. `key` must be the key that was set.
    pub fn encrypt_seeded_glwe_ciphertext_on_the_fly<C: KeyStorage>(
        &mut self,
        key: &GlweSecretKey<C>,
        message: &[u8],
        body: &mut [u32],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        self.state.check_ready()?;
        check_key_shape::<N, K, C>(key)?;
        compute_glwe_key_spectrum(&P::PLAN, key, self.key.spectra.as_flattened_mut())?;
        self.encrypt_seeded_glwe_ciphertext(message, body)
    }

    /// The length of the seeded frames this encryptor writes now:
    /// `frame_bytes(Seeded, K, N, 32, body_bits())` (4,191 at `N = 1024` with the full body, 1,503 with 11
    /// bits). [`FrameEncryptor::encrypt_frame_into`](crate::encrypt::FrameEncryptor::encrypt_frame_into) still needs a buffer of [`crate::frame::seeded_frame_bytes`]`(N)`: the
    /// full body is computed there before it is compacted.
    pub fn seeded_frame_len(&self) -> usize {
        frame_bytes(FrameKind::Seeded, K, N, 32, self.body_bits())
    }

    /// Reserves the sequence numbers of a `message_length`-byte message in chunks of `N / 8` bytes
    /// ([`FrameCounter::begin_message`]).
    pub fn begin_message(&self, counter: &mut FrameCounter, message_length: usize) -> Result<OutgoingMessage> {
        counter.begin_message(message_length, N / 8)
    }

    /// Encrypts `chunk` of `message` as a seeded ciphertext and writes the authenticated frame into `out`
    /// (at least [`Self::seeded_frame_len`] bytes), using `body` as the body buffer. Returns the frame's
    /// length. [`FrameEncryptor::encrypt_frame_into`](crate::encrypt::FrameEncryptor::encrypt_frame_into) needs no body buffer.
    pub fn encrypt_seeded_frame(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        body: &mut [u32; N],
        out: &mut [u8],
    ) -> Result<usize> {
        let frame_len = self.seeded_frame_len();
        let mut header = self.frame_header(FrameKind::Seeded, frame_len, out, credentials, message, chunk)?;
        header.body_bits = self.body_bits() as u8;
        let seed = self.encrypt_seeded_glwe_ciphertext(chunk.bytes, body)?;
        write_seeded_frame(&header, &seed, body, credentials.mac_key(), out)
    }

    /// Encrypts `chunk` of `message` with a full mask into `ciphertext` and writes the authenticated full
    /// frame into `out` (at least [`frame_bytes`]`(FrameKind::Full, K, N, 32, 32)` bytes). The paper's
    /// form, for comparisons: receivers reject it by default.
    pub fn encrypt_full_frame<C: AsRef<[u32]> + AsMut<[u32]>>(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        ciphertext: &mut GlweCiphertext<u32, C>,
        out: &mut [u8],
    ) -> Result<usize> {
        let frame_len = frame_bytes(FrameKind::Full, K, N, 32, 32);
        let header = self.frame_header(FrameKind::Full, frame_len, out, credentials, message, chunk)?;
        self.encrypt_glwe_ciphertext(chunk.bytes, ciphertext)?;
        write_full_frame(
            &header,
            ciphertext.mask(),
            ciphertext.body(),
            credentials.mac_key(),
            out,
        )
    }
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> FrameSealing for SecretKey<N, K, P> {
    const FRAME: FrameShape = FrameShape::boolean(FrameKind::Seeded, K, N);

    fn seal<X: XofConstruction>(
        &mut self,
        state: &mut EncryptorState<X>,
        payload: &FramePayload<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        let Self { spectra, scratch } = self;
        let message = payload.message;
        write_frame_in_place(&payload.header, N, payload.mac_key, out, |body: &mut [u32]| {
            check_lengths::<N>(message, body)?;
            state.encrypt_with(|noise, rng| {
                encode_bits(message, body);
                encrypt_seeded_glwe_ciphertext_assign::<X, _, _>(
                    &P::PLAN,
                    spectra.as_flattened(),
                    noise,
                    body,
                    scratch,
                    rng,
                )
            })
        })
    }
}

/// Unpacks `packed` (`N / 8` bytes) into one byte (0 or 1) per coefficient in the memory of `scratch` (a
/// spectrum of `N` elements of at least one byte each), runs `f` on those `N` bytes, then wipes them (on an
/// error too): the unpacked key needs no stack buffer.
pub(crate) fn with_unpacked_bits<const N: usize, S: Zeroize + bytemuck::Pod>(
    scratch: &mut [S; N],
    packed: &[u8],
    f: impl FnOnce(&[u8]),
) -> Result<()> {
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(scratch.as_mut_slice());
    let bits = bytes.get_mut(..N).ok_or(Error::BufferTooSmall)?;
    let unpacked = unpack_secret_key(packed, bits);
    if unpacked.is_ok() {
        f(bits);
    }
    // Only these `N` bytes of the scratch were written.
    bits.zeroize();
    unpacked.map_err(Error::from)
}

/// `body[i] = encode_bool(bit i of message)`, eight coefficients per message byte (missing bytes are 0),
/// branch-free: `+1/8 = 1 << 29` plus `6/8 = 6 << 29` when the bit is 0, giving `-1/8 = 7 << 29`.
pub(crate) fn encode_bits(message: &[u8], body: &mut [u32]) {
    const TRUE: u32 = 1 << 29;
    const FALSE_MINUS_TRUE: u32 = 6 << 29;
    debug_assert_eq!(encode_bool::<u32>(true), TRUE);
    debug_assert_eq!(encode_bool::<u32>(false), TRUE.wrapping_add(FALSE_MINUS_TRUE));
    for (k, coefficients) in body.chunks_exact_mut(8).enumerate() {
        let byte = u32::from(message.get(k).copied().unwrap_or(0));
        for (j, b) in coefficients.iter_mut().enumerate() {
            let zero = ((byte >> j) & 1) ^ 1;
            *b = TRUE.wrapping_add(zero.wrapping_mul(FALSE_MINUS_TRUE));
        }
    }
}

/// Checks a message of at most `N / 8` bytes and a body of `N` words.
pub(crate) fn check_lengths<const N: usize>(message: &[u8], body: &[u32]) -> Result<()> {
    if message.len() > N / 8 {
        return Err(Error::MessageTooLong {
            capacity: N / 8,
            found: message.len(),
        });
    }
    Error::check_length(N, body.len())?;
    Ok(())
}
