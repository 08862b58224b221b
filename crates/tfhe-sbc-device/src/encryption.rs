//! TRLWE (GLWE, `k = 1`) encryption of `N` bits with no heap: the device's hot path.
//!
//! `b = a * s + Delta * m + e`, with `a` uniform (expanded from a fresh 32-byte seed), `s` the binary key
//! (its FFT computed once), `Delta * m` the boolean encoding (+-1/8) and `e` rounded Gaussian noise from the
//! Ziggurat at the parameter set's sigma.

use crate::error::{Error, Result};
use crate::key_spectrum::KeySpectrum;
use crate::mask::{expand_mask_into_fft_input, expand_mask_u32};
use crate::xof::Blake2bXof;
use rand_core::Rng;
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, MASK_SEED_BYTES};
use tfhe_sbc_core::gaussian::{NormalSampler, Ziggurat};
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use zeroize::Zeroize;

/// A TRLWE encryptor for polynomial size `N`: it holds the key's spectrum, one FFT scratch buffer and its
/// CSPRNG, and nothing else. Encrypting never allocates and reuses the same buffers on every call.
///
/// At `N = 1024` it holds 16 KiB of spectra plus about 150 bytes (see `size_of` in the memory test); the
/// FFT tables are `static` (flash on a microcontroller).
///
/// Secret: the key spectrum, the scratch buffer and the RNG state are zeroized on drop; `Debug` is redacted.
pub struct GlweEncryptor<const N: usize> {
    key: KeySpectrum<N>,
    scratch: [f64; N],
    noise_std_dev_scaled: f64,
    parameter_set: ParameterSetId,
    rng: Blake2bXof,
}

impl<const N: usize> GlweEncryptor<N> {
    /// The message bytes one ciphertext holds: `N / 8`.
    pub const MESSAGE_BYTES: usize = N / 8;

    /// Prepares an encryptor: checks that `params` is a 32-bit, `k = 1` set of size `N` matching `key`, and
    /// computes the key's FFT once. `rng` provides the mask seeds and the noise.
    pub fn new<C: AsRef<[u8]> + AsMut<[u8]>>(
        params: &GlweParameters,
        key: &GlweSecretKey<C>,
        rng: Blake2bXof,
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
            noise_std_dev_scaled: params.noise_std_dev_scaled(),
            parameter_set: params.id(),
            rng,
        })
    }

    /// The parameter set this encryptor was built for.
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
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
        let mut seed = [0u8; MASK_SEED_BYTES];
        self.rng.fill_bytes(&mut seed);
        expand_mask_into_fft_input(&seed, &mut self.scratch);
        self.key.mul_fft_input(&mut self.scratch, body);
        self.add_message_and_noise(message, body);
        Ok(seed)
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
        let mut seed = [0u8; MASK_SEED_BYTES];
        self.rng.fill_bytes(&mut seed);
        expand_mask_u32(&seed, mask);
        seed.zeroize();
        for (x, &a) in self.scratch.iter_mut().zip(mask.iter()) {
            *x = f64::from(a as i32);
        }
        self.key.mul_fft_input(&mut self.scratch, body);
        self.add_message_and_noise(message, body);
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

    /// `body += encode(m) + e`: the encoding, then a batch of Ziggurat noise.
    fn add_message_and_noise(&mut self, message: &[u8], body: &mut [u32]) {
        add_encoded_bits(message, body);
        Ziggurat.add_noise_torus(&mut self.rng, self.noise_std_dev_scaled, body);
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
