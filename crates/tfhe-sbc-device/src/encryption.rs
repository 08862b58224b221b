//! The firmware-facing boolean encryptor: `N` bits per GLWE ciphertext, no heap, fixed-size state.
//!
//! [`GlweEncryptor`] is a thin wrapper over the generic core [`crate::glwe_encryption`]: it owns the key's
//! spectra, one scratch buffer, the noise sampler and the CSPRNG, encodes the message bits into the body
//! buffer (`+-1/8`), and calls [`encrypt_seeded_glwe_ciphertext_assign`]. Around each encryption it checks
//! for a `fork()` (feature `getrandom`) and afterwards erases the CSPRNG's key ([`Blake2bXof::ratchet`]).
//!
//! With the `hazmat` feature, `GlweEncryptor::encrypt_seeded_glwe_ciphertext_with_randomness` takes the
//! mask seed and the noise explicitly: the deterministic inner encryption that known-answer tests pin,
//! independent of how a sampler consumes its stream.

use crate::error::{Error, Result};
use crate::glwe_encryption::{encrypt_glwe_ciphertext_assign, encrypt_seeded_glwe_ciphertext_assign};
use crate::key_spectrum::compute_glwe_key_spectrum;
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::xof::Blake2bXof;
use negacyclic_fft::Plan;
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use zeroize::Zeroize;

/// A boolean GLWE encryptor for polynomial size `N` and GLWE dimension `K` (1 by default: TRLWE). It holds
/// the key's `K` spectra, one FFT scratch buffer, its noise sampler and its CSPRNG, and nothing else.
/// Encrypting never allocates and reuses the same buffers on every call.
///
/// `size_of::<GlweEncryptor<1024>>()` is about 17 KB: 16 KiB of spectra plus the CSPRNG's state and buffer
/// (`tests/no_alloc.rs` prints it); the FFT tables are `static` (flash on a microcontroller).
///
/// Secret: the key spectra, the scratch buffer and the RNG state are zeroized on drop; `Debug` is redacted.
/// `ZeroizeOnDrop` covers the object's final location only: a copy left behind by a move (returning it by
/// value, boxing it) is not wiped. Construct it where it will live (issue \[F\] brings in-place construction).
///
/// # Timing
/// With the default [`NoiseSampling::ConstantTime`], an encryption's branches and memory addresses do not
/// depend on the key, the message, the CSPRNG output or the noise on hosts with a hardware FPU (x86_64,
/// aarch64): checked under valgrind by `scripts/ctgrind.sh`. On Cortex-M without a double-precision FPU the
/// `f64` FFT runs in software, and compiler-builtins' soft-float multiply takes an early exit on zero
/// operands, so its time depends on the key's zero coefficients (measured under qemu); issue \[F\] brings an
/// integer product for those targets. [`NoiseSampling::Ziggurat`] is not constant-time.
pub struct GlweEncryptor<const N: usize, const K: usize = 1> {
    plan: Plan,
    key: [[f64; N]; K],
    scratch: [f64; N],
    noise: DeviceNoise,
    parameter_set: ParameterSetId,
    rng: Blake2bXof,
}

impl<const N: usize, const K: usize> GlweEncryptor<N, K> {
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;

    /// Prepares an encryptor with the constant-time noise sampler: checks that `params` is a 32-bit set of
    /// size `N` and GLWE dimension `K` matching `key`, resolves and validates its noise, and computes the
    /// key's spectra once. `rng` provides the mask seeds and the noise.
    pub fn new<C: AsRef<[u8]> + AsMut<[u8]>>(
        params: &GlweParameters,
        key: &GlweSecretKey<C>,
        rng: Blake2bXof,
    ) -> Result<Self> {
        Self::with_noise_sampling(params, key, rng, NoiseSampling::ConstantTime)
    }

    /// [`Self::new`] with an explicit noise sampler choice ([`NoiseSampling::Ziggurat`] is the paper's
    /// method and is not constant-time).
    pub fn with_noise_sampling<C: AsRef<[u8]> + AsMut<[u8]>>(
        params: &GlweParameters,
        key: &GlweSecretKey<C>,
        rng: Blake2bXof,
        sampling: NoiseSampling,
    ) -> Result<Self> {
        check_glwe_parameters::<N, K>(params)?;
        if key.glwe_dimension().0 != K {
            return Err(Error::UnsupportedGlweDimension(key.glwe_dimension().0));
        }
        let plan = crate::product::fft_plan(N)?;
        let mut this = Self {
            plan,
            key: [[0.0; N]; K],
            scratch: [0.0; N],
            noise: DeviceNoise::for_parameters(params, sampling)?,
            parameter_set: params.id(),
            rng,
        };
        compute_glwe_key_spectrum(&this.plan, key, this.key.as_flattened_mut())?;
        Ok(this)
    }

    /// The parameter set this encryptor was built for.
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
    }

    /// The noise sampler in use.
    pub fn noise(&self) -> DeviceNoise {
        self.noise
    }

    /// Mixes `entropy` (from a hardware TRNG or the OS) into the CSPRNG ([`Blake2bXof::reseed`]).
    pub fn reseed(&mut self, entropy: &[u8]) {
        self.rng.reseed(entropy);
    }

    /// Encrypts up to `N / 8` message bytes (`N` bits, least-significant bit first, zero-padded) as a
    /// seeded ciphertext: writes the body into `body` (length `N`) and returns the mask seed.
    ///
    /// The mask is expanded from the seed straight into the FFT scratch; no buffer holds it as integers.
    pub fn encrypt_seeded_glwe_ciphertext(
        &mut self,
        message: &[u8],
        body: &mut [u32],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        check_lengths::<N>(message, body)?;
        self.rng.reseed_if_forked()?;
        encode_bits(message, body);
        let seed = encrypt_seeded_glwe_ciphertext_assign(
            &self.plan,
            self.key.as_flattened(),
            &self.noise,
            body,
            &mut self.scratch,
            &mut self.rng,
        )?;
        self.rng.ratchet();
        Ok(seed)
    }

    /// The deterministic inner encryption: [`Self::encrypt_seeded_glwe_ciphertext`] with the mask seed and
    /// the noise (`N` torus values) given instead of drawn. For known-answer tests only: reusing a seed or a
    /// noise vector breaks the encryption, and this entry point does neither draw nor ratchet.
    #[cfg(feature = "hazmat")]
    pub fn encrypt_seeded_glwe_ciphertext_with_randomness(
        &mut self,
        message: &[u8],
        mask_seed: &[u8; MASK_SEED_BYTES],
        noise: &[u32],
        body: &mut [u32],
    ) -> Result<()> {
        check_lengths::<N>(message, body)?;
        encode_bits(message, body);
        crate::glwe_encryption::encrypt_seeded_glwe_ciphertext_with_randomness_assign(
            &self.plan,
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
        encrypt_glwe_ciphertext_assign(
            &self.plan,
            self.key.as_flattened(),
            &self.noise,
            mask,
            body,
            &mut self.scratch,
            &mut self.rng,
        )?;
        self.rng.ratchet();
        Ok(())
    }

    /// [`Self::encrypt_seeded_glwe_ciphertext`] with the key's spectra recomputed first: the paper's
    /// "on-the-fly" variant, kept for measuring what the reuse saves.
    pub fn encrypt_seeded_glwe_ciphertext_on_the_fly<C: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        key: &GlweSecretKey<C>,
        message: &[u8],
        body: &mut [u32],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        if key.glwe_dimension().0 != K {
            return Err(Error::UnsupportedGlweDimension(key.glwe_dimension().0));
        }
        compute_glwe_key_spectrum(&self.plan, key, self.key.as_flattened_mut())?;
        self.encrypt_seeded_glwe_ciphertext(message, body)
    }
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

impl<const N: usize, const K: usize> Drop for GlweEncryptor<N, K> {
    fn drop(&mut self) {
        self.key.as_flattened_mut().zeroize();
        self.scratch.zeroize();
    }
}

impl<const N: usize, const K: usize> zeroize::ZeroizeOnDrop for GlweEncryptor<N, K> {}

impl<const N: usize, const K: usize> core::fmt::Debug for GlweEncryptor<N, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweEncryptor")
            .field("polynomial_size", &N)
            .field("glwe_dimension", &K)
            .field("parameter_set", &self.parameter_set)
            .finish_non_exhaustive()
    }
}
