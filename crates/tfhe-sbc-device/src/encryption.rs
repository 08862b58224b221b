//! TRLWE (GLWE, `k = 1`) encryption of `N` bits with no heap: the device's hot path.
//!
//! `b = a * s + Delta * m + e`, with `a` uniform (expanded from a fresh 32-byte seed), `s` the binary key
//! (its FFT computed once), `Delta * m` the boolean encoding (+-1/8) and `e` the device's noise
//! ([`crate::noise`]: constant-time TUniform by default).
//!
//! Each encryption draws, from the encryptor's CSPRNG and in this order, the 32-byte mask seed and then the
//! noise; afterwards the CSPRNG erases its key ([`Blake2bXof::ratchet`]) and the FFT scratch (which held
//! `a * s`, `N` linear equations in `s`) is wiped.
//!
//! With the `hazmat` feature, `GlweEncryptor::encrypt_seeded_glwe_ciphertext_with_randomness` takes the
//! mask seed and the noise explicitly: the deterministic inner encryption that known-answer tests pin,
//! independent of how a sampler consumes its stream.

use crate::error::{Error, Result};
use crate::key_spectrum::KeySpectrum;
use crate::mask::{expand_mask_into_fft_input, expand_mask_u32};
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::xof::Blake2bXof;
use rand_core::Rng;
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use zeroize::Zeroize;

/// A TRLWE encryptor for polynomial size `N`: it holds the key's spectrum, one FFT scratch buffer, its noise
/// sampler and its CSPRNG, and nothing else. Encrypting never allocates and reuses the same buffers on every
/// call.
///
/// `size_of::<GlweEncryptor<1024>>()` is about 17 KB: 16 KiB of spectra plus the CSPRNG's state and buffer
/// (`tests/no_alloc.rs` prints it); the FFT tables are `static` (flash on a microcontroller).
///
/// Secret: the key spectrum, the scratch buffer and the RNG state are zeroized on drop; `Debug` is redacted.
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
pub struct GlweEncryptor<const N: usize> {
    key: KeySpectrum<N>,
    scratch: [f64; N],
    noise: DeviceNoise,
    parameter_set: ParameterSetId,
    rng: Blake2bXof,
}

impl<const N: usize> GlweEncryptor<N> {
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;

    /// Prepares an encryptor with the constant-time noise sampler: checks that `params` is a 32-bit,
    /// `k = 1` set of size `N` matching `key`, resolves and validates its noise, and computes the key's FFT
    /// once. `rng` provides the mask seeds and the noise.
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
        params.check_torus::<u32>()?;
        if params.polynomial_size().0 != N {
            return Err(Error::PolynomialSizeMismatch {
                expected: N,
                found: params.polynomial_size().0,
            });
        }
        if params.glwe_dimension().0 != 1 {
            return Err(Error::UnsupportedGlweDimension(params.glwe_dimension().0));
        }
        Ok(Self {
            key: KeySpectrum::new(key)?,
            scratch: [0.0; N],
            noise: DeviceNoise::for_parameters(params, sampling)?,
            parameter_set: params.id(),
            rng,
        })
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
        let mut seed = [0u8; MASK_SEED_BYTES];
        self.rng.fill_bytes(&mut seed);
        self.sample_noise_into(body);
        expand_mask_into_fft_input(&seed, &mut self.scratch);
        self.add_mask_product_and_message(message, body);
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
        if noise.len() != N {
            return Err(Error::WrongLength {
                expected: N,
                found: noise.len(),
            });
        }
        body.copy_from_slice(noise);
        expand_mask_into_fft_input(mask_seed, &mut self.scratch);
        self.add_mask_product_and_message(message, body);
        Ok(())
    }

    /// Encrypts up to `N / 8` message bytes into the full `(a, b)` form the paper sends (`2N` words).
    ///
    /// The mask is the expansion of a fresh seed, exactly as in the seeded form.
    pub fn encrypt_glwe_ciphertext<C: AsRef<[u32]> + AsMut<[u32]>>(
        &mut self,
        message: &[u8],
        out: &mut GlweCiphertext<u32, C>,
    ) -> Result<()> {
        if out.polynomial_size().0 != N || out.glwe_dimension().0 != 1 {
            return Err(Error::WrongLength {
                expected: 2 * N,
                found: out.as_slice().len(),
            });
        }
        let (mask, body) = out.mask_and_body_mut();
        check_lengths::<N>(message, body)?;
        self.rng.reseed_if_forked()?;
        let mut seed = [0u8; MASK_SEED_BYTES];
        self.rng.fill_bytes(&mut seed);
        self.sample_noise_into(body);
        expand_mask_u32(&seed, mask);
        seed.zeroize();
        for (x, &a) in self.scratch.iter_mut().zip(mask.iter()) {
            *x = f64::from(a as i32);
        }
        self.add_mask_product_and_message(message, body);
        self.rng.ratchet();
        Ok(())
    }

    /// [`Self::encrypt_seeded_glwe_ciphertext`] with the key's FFT recomputed first: the paper's
    /// "on-the-fly" variant, kept for measuring what the reuse saves.
    pub fn encrypt_seeded_glwe_ciphertext_on_the_fly<C: AsRef<[u8]> + AsMut<[u8]>>(
        &mut self,
        key: &GlweSecretKey<C>,
        message: &[u8],
        body: &mut [u32],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        self.key.refresh(key)?;
        self.encrypt_seeded_glwe_ciphertext(message, body)
    }

    /// `body = e`: fresh noise from the CSPRNG.
    fn sample_noise_into(&mut self, body: &mut [u32]) {
        body.fill(0);
        self.noise.add_noise(&mut self.rng, body);
    }

    /// `body += a * s + encode(m)`, with `a` already in the scratch as FFT input; then wipes the scratch.
    fn add_mask_product_and_message(&mut self, message: &[u8], body: &mut [u32]) {
        self.key.mul_add_fft_input(&mut self.scratch, body);
        add_encoded_bits(message, body);
        self.scratch.zeroize();
    }
}

/// `body[i] += encode_bool(bit i of message)`, eight coefficients per message byte (missing bytes are 0),
/// branch-free: `+1/8 = 1 << 29` plus `6/8 = 6 << 29` when the bit is 0, giving `-1/8 = 7 << 29`.
fn add_encoded_bits(message: &[u8], body: &mut [u32]) {
    const TRUE: u32 = 1 << 29;
    const FALSE_MINUS_TRUE: u32 = 6 << 29;
    debug_assert_eq!(encode_bool::<u32>(true), TRUE);
    debug_assert_eq!(encode_bool::<u32>(false), TRUE.wrapping_add(FALSE_MINUS_TRUE));
    for (k, coefficients) in body.chunks_exact_mut(8).enumerate() {
        let byte = u32::from(message.get(k).copied().unwrap_or(0));
        for (j, b) in coefficients.iter_mut().enumerate() {
            let zero = ((byte >> j) & 1) ^ 1;
            *b = b.wrapping_add(TRUE).wrapping_add(zero.wrapping_mul(FALSE_MINUS_TRUE));
        }
    }
}

fn check_lengths<const N: usize>(message: &[u8], body: &[u32]) -> Result<()> {
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

impl<const N: usize> Drop for GlweEncryptor<N> {
    fn drop(&mut self) {
        self.scratch.zeroize();
    }
}

impl<const N: usize> zeroize::ZeroizeOnDrop for GlweEncryptor<N> {}

impl<const N: usize> core::fmt::Debug for GlweEncryptor<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweEncryptor")
            .field("polynomial_size", &N)
            .field("parameter_set", &self.parameter_set)
            .finish_non_exhaustive()
    }
}
