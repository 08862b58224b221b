//! The firmware-facing boolean encryptor: `N` bits per GLWE ciphertext, no heap, fixed-size state.
//!
//! [`GlweEncryptor`] is a thin wrapper over the generic core [`crate::glwe_encryption`]: it owns the key's
//! spectra, one scratch buffer, the noise sampler and the CSPRNG, encodes the message bits into the body
//! buffer (`+-1/8`), and calls [`encrypt_seeded_glwe_ciphertext_assign`]. Around each encryption it checks
//! for a `fork()` (feature `getrandom`) and afterwards erases the CSPRNG's key ([`Blake2bXof::ratchet`]).
//!
//! # Building it where it lives
//! On a microcontroller the encryptor is a `static`, built in place with no large stack temporary:
//!
//! ```
//! # use tfhe_sbc_core::entities::GlweSecretKey;
//! # use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
//! # use tfhe_sbc_device::encryption::GlweEncryptor;
//! # use tfhe_sbc_device::xof::Blake2bXof;
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
//! [`GlweEncryptor::encrypt_seeded_frame_into`] encrypts straight into the frame buffer. Encrypting before
//! a key is set is [`Error::KeyNotSet`]; before the CSPRNG is seeded, [`Error::NotSeeded`].
//!
//! With the `hazmat` feature, `GlweEncryptor::encrypt_seeded_glwe_ciphertext_with_randomness` takes the
//! mask seed and the noise explicitly: the deterministic inner encryption that known-answer tests pin,
//! independent of how a sampler consumes its stream.

use crate::credentials_file::unpack_secret_key;
use crate::error::{Error, Result};
use crate::glwe_encryption::{encrypt_glwe_ciphertext_assign, encrypt_seeded_glwe_ciphertext_assign};
use crate::key_spectrum::compute_glwe_key_spectrum;
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::product::{DefaultProduct, NegacyclicProductPlan};
use crate::wire::{FrameKind, frame_bytes};
use crate::xof::Blake2bXof;
use rand_core::TryCryptoRng;
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, KeyStorage, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use zeroize::Zeroize;

/// A boolean GLWE encryptor for polynomial size `N` and GLWE dimension `K` (1 by default: TRLWE), through
/// the exact negacyclic product `P` ([`DefaultProduct`] by default; its plan for `N` is a compile-time
/// constant, so an unsupported `N` does not compile). It holds the key's `K` spectra, one scratch spectrum,
/// its noise sampler and its CSPRNG, and nothing else. Encrypting never allocates and reuses the same
/// buffers on every call.
///
/// Size: `size_of::<GlweEncryptor<1024>>()` is 17,008 bytes, on 64-bit hosts (`f64` FFT spectra; measured on x86_64) as on
/// thumbv7em (`[u32; 2]` NTT spectra, checked with a `const` assertion in a thumbv7em build): 8 KiB of key
/// spectrum, 8 KiB of scratch, 592 bytes of CSPRNG (chaining value 64, counter 8, output buffer 512, fill
/// level 8), 24 of noise sampler and 8 of parameter-set id and flags. With the `getrandom` feature the
/// CSPRNG also remembers a process id: 17,016. `tests/stack.rs` checks the breakdown. The FFT/NTT tables are
/// `static` (flash on a microcontroller).
///
/// Build it where it lives: [`Self::EMPTY`] is all zero bytes (a `static` of it is in `.bss`), and
/// [`Self::set_key`] / [`Self::set_packed_key`] and [`Self::seed`] fill it in place. [`Self::new`] is the
/// host's convenience that returns it by value.
///
/// Secret: the key spectra, the scratch buffer and the RNG state are zeroized on drop; `Debug` is redacted.
/// `ZeroizeOnDrop` covers the object's final location only: a copy left behind by a move (returning it by
/// value from [`Self::new`], boxing it) is not wiped, which is one more reason to build it in place.
///
/// # Timing
/// With the default [`NoiseSampling::ConstantTime`], an encryption's branches and memory addresses do not
/// depend on the key, the message, the CSPRNG output or the noise on hosts with a hardware FPU (x86_64,
/// aarch64): checked under valgrind by `scripts/ctgrind.sh`. On Cortex-M the default product is the
/// constant-time integer NTT (see the crate's Timing section); the `f64` FFT named there runs in software
/// floating point, whose multiply takes an early exit on zero operands, so its time depends on the key. `NoiseSampling::Ziggurat` (feature `ziggurat`) is not constant-time.
pub struct GlweEncryptor<const N: usize, const K: usize = 1, P: NegacyclicProductPlan<N, Torus = u32> = DefaultProduct>
{
    key: [[P::Spectral; N]; K],
    scratch: [P::Spectral; N],
    rng: Blake2bXof,
    noise: NoiseSlot,
    parameter_set: ParameterSetId,
    key_set: bool,
    seeded: bool,
    body_bits: BodyBits,
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> GlweEncryptor<N, K, P> {
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;
    /// The bytes of a packed key ([`Self::set_packed_key`]): `K * N / 8`.
    pub const PACKED_KEY_BYTES: usize = K * N / 8;

    /// An encryptor with no key and an unseeded CSPRNG: all zero bytes, so `static E: ... = EMPTY` costs no
    /// flash and no stack. Set a key ([`Self::set_key`], [`Self::set_packed_key`]) and seed it
    /// ([`Self::seed`]) before encrypting.
    pub const EMPTY: Self = Self {
        key: [[P::SPECTRAL_ZERO; N]; K],
        scratch: [P::SPECTRAL_ZERO; N],
        rng: Blake2bXof::UNSEEDED,
        noise: NoiseSlot::Unset,
        parameter_set: ParameterSetId(0),
        key_set: false,
        seeded: false,
        body_bits: BodyBits::FULL,
    };

    /// [`Self::EMPTY`], as a `const fn`.
    pub const fn empty() -> Self {
        Self::EMPTY
    }

    /// Prepares an encryptor with the constant-time noise sampler, returned by value (a host's
    /// convenience: firmware builds [`Self::EMPTY`] in place and calls [`Self::set_key`] and
    /// [`Self::seed`]). `rng` provides the mask seeds and the noise.
    pub fn new<C: KeyStorage>(params: &GlweParameters, key: &GlweSecretKey<C>, rng: Blake2bXof) -> Result<Self> {
        Self::with_noise_sampling(params, key, rng, NoiseSampling::ConstantTime)
    }

    /// [`Self::new`] with an explicit noise sampler choice (`NoiseSampling::Ziggurat`, feature `ziggurat`, is the paper's
    /// method and is not constant-time).
    pub fn with_noise_sampling<C: KeyStorage>(
        params: &GlweParameters,
        key: &GlweSecretKey<C>,
        rng: Blake2bXof,
        sampling: NoiseSampling,
    ) -> Result<Self> {
        let mut this = Self::EMPTY;
        this.set_key_with_noise_sampling(params, key, sampling)?;
        this.rng = rng;
        this.seeded = true;
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
        check_glwe_parameters::<N, K>(params)?;
        check_key_shape::<N, K, C>(key)?;
        let noise = DeviceNoise::for_parameters(params, sampling)?;
        compute_glwe_key_spectrum(&P::PLAN, key, self.key.as_flattened_mut())?;
        self.noise = NoiseSlot::Set(noise);
        self.parameter_set = params.id();
        self.key_set = true;
        Ok(())
    }

    /// Sets the key from its packed form (`K * N / 8` bytes, eight coefficients per byte, least-significant
    /// bit first: what a credential file holds, [`crate::credentials_file`]), with the constant-time noise
    /// sampler. The packed bytes are only read (they may stay in flash); each polynomial is unpacked into an
    /// `N`-byte stack buffer (1 KiB at `N = 1024`, wiped afterwards), less than an encryption's own stack.
    pub fn set_packed_key(&mut self, params: &GlweParameters, packed: &[u8]) -> Result<()> {
        self.forget_key();
        check_glwe_parameters::<N, K>(params)?;
        if packed.len() != Self::PACKED_KEY_BYTES {
            return Err(Error::WrongLength {
                expected: Self::PACKED_KEY_BYTES,
                found: packed.len(),
            });
        }
        let noise = DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime)?;
        let plan = P::PLAN;
        let mut bits = [0u8; N];
        for (spectrum, packed) in self.key.iter_mut().zip(packed.chunks_exact(N / 8)) {
            unpack_secret_key(packed, &mut bits)?;
            plan.forward_binary(&bits, spectrum);
        }
        bits.zeroize();
        self.noise = NoiseSlot::Set(noise);
        self.parameter_set = params.id();
        self.key_set = true;
        Ok(())
    }

    /// Wipes the key spectra; encrypting then fails with [`Error::KeyNotSet`] until a key is set again.
    pub fn forget_key(&mut self) {
        self.key_set = false;
        self.body_bits = BodyBits::FULL;
        self.key.zeroize();
        self.scratch.zeroize();
    }

    /// Seeds the CSPRNG, in place, with 32 bytes from `rng` (a hardware TRNG; a HAL's rand_core 0.6 or
    /// 0.9 RNG through `seeding::Rng06` / `seeding::Rng09`). The first call keys it; a
    /// later call mixes the bytes into the current state ([`Blake2bXof::reseed`]), so the result is
    /// unpredictable if either is. If `rng` fails, returns [`Error::RngFailed`] and leaves the CSPRNG as it
    /// was (an unseeded encryptor stays unseeded).
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

    /// Replaces the CSPRNG with `rng` (already seeded, e.g. `seeding::from_os_entropy()`, feature `getrandom`).
    pub fn set_rng(&mut self, rng: Blake2bXof) {
        self.rng = rng;
        self.seeded = true;
    }

    /// Whether a key is set and the CSPRNG seeded: whether encrypting can succeed.
    pub fn is_ready(&self) -> bool {
        self.key_set && self.seeded
    }

    fn check_ready(&self) -> Result<()> {
        if !self.key_set {
            Err(Error::KeyNotSet)
        } else if !self.seeded {
            Err(Error::NotSeeded)
        } else {
            Ok(())
        }
    }

    /// The parameter set this encryptor's key was set for (`ParameterSetId(0)` before [`Self::set_key`]).
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
    }

    /// Makes frames carry only the top `body_bits` bits of each body coefficient (a compact body,
    /// [`tfhe_sbc_core::compact_body`]): from the key's set's
    /// [`GlweParameters::compact_body_bits`] (11 bits for `TFHE_LIB_GLWE_1024`: a seeded frame of 1,503 bytes
    /// instead of 4,191 at `N = 1024`) up to 32 (the full body, the default). Needs a key (the width is
    /// checked against its set; a custom set allows only 32); setting a key again restores the full body.
    pub fn set_body_bits(&mut self, body_bits: u32) -> Result<()> {
        self.body_bits.set(self.key_set, self.parameter_set, 32, body_bits)
    }

    /// The top bits of each body coefficient that frames carry (32 unless [`Self::set_body_bits`] chose fewer).
    pub fn body_bits(&self) -> u32 {
        self.body_bits.get(32)
    }

    /// The length of the seeded frames this encryptor writes now:
    /// `frame_bytes(Seeded, K, N, 32, body_bits())` (4,191 at `N = 1024` with the full body, 1,503 with 11 bits).
    /// [`Self::encrypt_seeded_frame_into`] still needs a buffer of [`crate::wire::seeded_frame_bytes`]`(N)`: the full
    /// body is computed there before it is compacted.
    pub fn seeded_frame_len(&self) -> usize {
        frame_bytes(FrameKind::Seeded, K, N, 32, self.body_bits())
    }

    /// The noise sampler in use (`None` before a key is set).
    pub fn noise(&self) -> Option<DeviceNoise> {
        self.noise.get()
    }

    /// Mixes `entropy` (from a hardware TRNG or the OS) into the CSPRNG ([`Blake2bXof::reseed`]). On an
    /// unseeded encryptor this does not count as seeding: use [`Self::seed`].
    pub fn reseed(&mut self, entropy: &[u8]) {
        self.rng.reseed(entropy);
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
        self.check_ready()?;
        check_lengths::<N>(message, body)?;
        self.rng.reseed_if_forked()?;
        encode_bits(message, body);
        let noise = self.noise.get().ok_or(Error::KeyNotSet)?;
        let seed = encrypt_seeded_glwe_ciphertext_assign(
            &P::PLAN,
            self.key.as_flattened(),
            &noise,
            body,
            &mut self.scratch,
            &mut self.rng,
        )?;
        self.rng.ratchet();
        Ok(seed)
    }

    /// The deterministic inner encryption: [`Self::encrypt_seeded_glwe_ciphertext`] with the mask seed and
    /// the noise (`N` torus values) given instead of drawn. For known-answer tests only: reusing a seed or a
    /// noise vector breaks the encryption, and this entry point does neither draw nor ratchet (so it needs a
    /// key but no seeded CSPRNG).
    #[cfg(feature = "hazmat")]
    pub fn encrypt_seeded_glwe_ciphertext_with_randomness(
        &mut self,
        message: &[u8],
        mask_seed: &[u8; MASK_SEED_BYTES],
        noise: &[u32],
        body: &mut [u32],
    ) -> Result<()> {
        if !self.key_set {
            return Err(Error::KeyNotSet);
        }
        check_lengths::<N>(message, body)?;
        encode_bits(message, body);
        crate::glwe_encryption::encrypt_seeded_glwe_ciphertext_with_randomness_assign(
            &P::PLAN,
            self.key.as_flattened(),
            mask_seed,
            noise,
            body,
            &mut self.scratch,
        )
    }

    /// Encrypts up to `N / 8` message bytes into the full `(a_1, ..., a_K, b)` form the paper sends
    /// (`(K + 1) N` words).
    ///
    /// The mask is the expansion of a fresh seed, exactly as in the seeded form.
    pub fn encrypt_glwe_ciphertext<C: AsRef<[u32]> + AsMut<[u32]>>(
        &mut self,
        message: &[u8],
        out: &mut GlweCiphertext<u32, C>,
    ) -> Result<()> {
        self.check_ready()?;
        if out.polynomial_size().0 != N || out.glwe_dimension().0 != K {
            return Err(Error::WrongLength {
                expected: (K + 1) * N,
                found: out.as_slice().len(),
            });
        }
        let (mask, body) = out.mask_and_body_mut();
        check_lengths::<N>(message, body)?;
        self.rng.reseed_if_forked()?;
        encode_bits(message, body);
        let noise = self.noise.get().ok_or(Error::KeyNotSet)?;
        encrypt_glwe_ciphertext_assign(
            &P::PLAN,
            self.key.as_flattened(),
            &noise,
            mask,
            body,
            &mut self.scratch,
            &mut self.rng,
        )?;
        self.rng.ratchet();
        Ok(())
    }

    /// [`Self::encrypt_seeded_glwe_ciphertext`] with the key's spectra recomputed first: the paper's
    /// "on-the-fly" variant, kept for measuring what the reuse saves. `key` must be the key that was set.
    pub fn encrypt_seeded_glwe_ciphertext_on_the_fly<C: KeyStorage>(
        &mut self,
        key: &GlweSecretKey<C>,
        message: &[u8],
        body: &mut [u32],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        self.check_ready()?;
        check_key_shape::<N, K, C>(key)?;
        compute_glwe_key_spectrum(&P::PLAN, key, self.key.as_flattened_mut())?;
        self.encrypt_seeded_glwe_ciphertext(message, body)
    }
}

/// The noise sampler slot of an encryptor built empty: `Unset` is tag 0 with no payload, so an empty
/// encryptor is all zero bytes (`Option<DeviceNoise>` would encode `None` in a non-zero niche, moving a
/// `static` encryptor from `.bss` to `.data`: 17 KB of flash).
#[derive(Clone, Copy)]
#[repr(u8)]
pub(crate) enum NoiseSlot {
    /// No key set yet.
    Unset = 0,
    /// The resolved sampler.
    Set(DeviceNoise) = 1,
}

impl NoiseSlot {
    /// The sampler, if set.
    pub(crate) fn get(self) -> Option<DeviceNoise> {
        match self {
            Self::Unset => None,
            Self::Set(noise) => Some(noise),
        }
    }
}

/// Checks that `key` has `K` polynomials of `N` coefficients.
pub(crate) fn check_key_shape<const N: usize, const K: usize, C: KeyStorage>(key: &GlweSecretKey<C>) -> Result<()> {
    if key.polynomial_size().0 != N {
        return Err(Error::PolynomialSizeMismatch {
            expected: N,
            found: key.polynomial_size().0,
        });
    }
    if key.glwe_dimension().0 != K {
        return Err(Error::UnsupportedGlweDimension(key.glwe_dimension().0));
    }
    Ok(())
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

/// The body width an encryptor's frames carry ([`GlweEncryptor::set_body_bits`]): 0 stands for the torus
/// width, so that an empty encryptor is all zero bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BodyBits(u8);

impl BodyBits {
    /// The full body.
    pub(crate) const FULL: Self = Self(0);

    /// Sets `body_bits` for frames of the set `id` on a `torus_bits`-bit torus: from the named set's
    /// [`GlweParameters::compact_body_bits`] to the torus width, only the torus width for a custom set; a key
    /// must be set. On error the width is unchanged.
    pub(crate) fn set(&mut self, key_set: bool, id: ParameterSetId, torus_bits: u32, body_bits: u32) -> Result<()> {
        if !key_set {
            return Err(Error::KeyNotSet);
        }
        match GlweParameters::from_id(id) {
            Some(params) => params.check_body_bits(body_bits)?,
            None if body_bits == torus_bits => {}
            None => {
                return Err(Error::Core(tfhe_sbc_core::Error::UnsupportedBodyBits {
                    body_bits,
                    torus_bits,
                }));
            }
        }
        // `check_body_bits` bounds it by the torus width (<= 64): it fits a byte.
        *self = if body_bits == torus_bits {
            Self::FULL
        } else {
            Self(body_bits as u8)
        };
        Ok(())
    }

    /// The width, on a `torus_bits`-bit torus.
    pub(crate) fn get(self, torus_bits: u32) -> u32 {
        if self.0 == 0 { torus_bits } else { u32::from(self.0) }
    }
}

/// Checks that `params` is a 32-bit set of polynomial size `N` and GLWE dimension `K`: what a firmware
/// wrapper instantiated for `N` and `K` can encrypt.
pub(crate) fn check_glwe_parameters<const N: usize, const K: usize>(params: &GlweParameters) -> Result<()> {
    params.check_torus::<u32>()?;
    if params.polynomial_size().0 != N {
        return Err(Error::PolynomialSizeMismatch {
            expected: N,
            found: params.polynomial_size().0,
        });
    }
    if params.glwe_dimension().0 != K {
        return Err(Error::UnsupportedGlweDimension(params.glwe_dimension().0));
    }
    Ok(())
}

pub(crate) fn check_lengths<const N: usize>(message: &[u8], body: &[u32]) -> Result<()> {
    if message.len() > N / 8 {
        return Err(Error::MessageTooLong {
            capacity: N / 8,
            found: message.len(),
        });
    }
    if body.len() != N {
        return Err(Error::WrongLength {
            expected: N,
            found: body.len(),
        });
    }
    Ok(())
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> Drop for GlweEncryptor<N, K, P> {
    fn drop(&mut self) {
        self.key.zeroize();
        self.scratch.zeroize();
    }
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> zeroize::ZeroizeOnDrop
    for GlweEncryptor<N, K, P>
{
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> core::fmt::Debug
    for GlweEncryptor<N, K, P>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweEncryptor")
            .field("polynomial_size", &N)
            .field("glwe_dimension", &K)
            .field("parameter_set", &self.parameter_set)
            .field("key_set", &self.key_set)
            .field("seeded", &self.seeded)
            .finish_non_exhaustive()
    }
}
