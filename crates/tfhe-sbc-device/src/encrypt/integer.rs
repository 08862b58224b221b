//! The integer encryptor: `u8`/`u16`/`u32` readings as tfhe-rs shortint radix
//! blocks in one GLWE ciphertext over the 64-bit torus (`u64` too).
//!
//! [`IntegerEncryptor`] is the [`crate::encrypt::Encryptor`] shell around an [`IntegerKey`] (build it in
//! place from `EMPTY`, `set_key` / `set_packed_key`, `seed`; no heap; secrets wiped on drop; `Debug`
//! redacted; not `Clone`). Each call
//! encodes the readings with the set's [`RadixEncoding`] (two-bit blocks, little-endian, `delta = 2^59` for
//! [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`]) into the `u64` body, then calls the generic core
//! [`crate::encrypt::glwe_encryption`] with the exact integer NTT [`NttPlan64`] and the set's constant-time
//! TUniform(17) noise. One `N = 2048` ciphertext carries 512 `u8`, 256 `u16`, 128 `u32` or 64 `u64` readings.
//!
//! ```
//! # use rand_core::SeedableRng;
//! # use tfhe_sbc_core::entities::GlweSecretKey;
//! # use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
//! # use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
//! # use tfhe_sbc_device::csprng::xof::Blake2bXof;
//! let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
//! let mut rng = Blake2bXof::from_seed([1; 32]); // a hardware TRNG on a device
//! let key = GlweSecretKey::generate_binary([0u8; 2048], params.glwe().polynomial_size(), &mut rng)?;
//! let mut encryptor = Box::new(IntegerEncryptor::<2048>::EMPTY); // a `static` in firmware
//! encryptor.set_key(&params, &key)?;
//! encryptor.seed(&mut rng)?;
//! let mut body = [0u64; 2048];
//! let seed = encryptor.encrypt_u16(&[1200, 1310, 65535], &mut body)?;
//! # let _ = seed;
//! # Ok::<(), tfhe_sbc_device::Error>(())
//! ```

use crate::csprng::construction::{DeviceConstruction, XofConstruction};
use crate::encrypt::frame_encryptor::{FramePayload, FrameSealing, FrameShape};
use crate::encrypt::glwe_encryption::encrypt_seeded_glwe_ciphertext_assign;
use crate::encrypt::secret_key::with_unpacked_bits;
use crate::encrypt::shape::{check_glwe_parameters, check_key_shape};
use crate::encrypt::shell::{Encryptor, EncryptorKey};
use crate::encrypt::state::EncryptorState;
use crate::error::{Error, Result};
use crate::frame::{FrameCounter, FrameKind, OutgoingMessage, frame_bytes, write_frame_in_place};
use crate::noise::DeviceNoise;
use crate::product::NegacyclicProductPlan;
use crate::product::key_spectrum::compute_glwe_key_spectrum;
use negacyclic_ntt::NttPlan64;
use tfhe_sbc_core::encoding::RadixEncoding;
use tfhe_sbc_core::entities::{GlweSecretKey, KeyStorage, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::IntegerParameters;
#[cfg(doc)]
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use zeroize::Zeroize;

/// The key material of an integer encryptor (`k = 1`, 64-bit torus) for polynomial size `N` through the
/// exact product `P`: the key's spectrum and one scratch spectrum.
#[derive(Zeroize)]
pub struct IntegerKey<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>> {
    spectrum: [P::Spectral; N],
    scratch: [P::Spectral; N],
}

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>> EncryptorKey for IntegerKey<N, P> {
    const EMPTY: Self = Self {
        spectrum: [P::SPECTRAL_ZERO; N],
        scratch: [P::SPECTRAL_ZERO; N],
    };
    const NAME: &'static str = "IntegerEncryptor";
    const TORUS_BITS: u32 = 64;
    const COMPACT_BODY: bool = true;
}

/// An integer GLWE encryptor (`k = 1`) for polynomial size `N` over the 64-bit torus, through the exact
/// product `P` ([`NttPlan64`] by default; its plan for `N` is a compile-time constant): the [`Encryptor`]
/// shell around an [`IntegerKey`]. It holds the key's spectrum, one scratch spectrum, its noise sampler
/// and its CSPRNG, and nothing else; encrypting never allocates.
///
/// Size at `N = 2048` with [`NttPlan64`] (`[u32; 3]` spectra): 24 KiB of key spectrum, 24 KiB of scratch
/// and the [`EncryptorState`] (the CSPRNG's 592 bytes, 80 on a 32-bit microcontroller (BLAKE2s), and a few bytes of state;
/// the test checks the spectra plus at most 1 KiB). Encrypting needs no other buffer besides the caller's
/// body or frame.
///
/// # Timing
/// The encoding masks and shifts, the TUniform noise and the NTT are constant-time: no branch or address
/// depends on the readings, the key, the CSPRNG output or the noise.
/// `X` is the XOF construction of its CSPRNG and seeded masks ([`DeviceConstruction`] by default).
pub type IntegerEncryptor<const N: usize = 2048, P = NttPlan64, X = DeviceConstruction> =
    Encryptor<IntegerKey<N, P>, X>;

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>, X: XofConstruction> Encryptor<IntegerKey<N, P>, X> {
    /// The bytes of a packed key ([`Self::set_packed_key`]): `N / 8`.
    pub const PACKED_KEY_BYTES: usize = N / 8;
    /// The reading bytes one frame carries: `N / 4` (512 at `N = 2048`), four two-bit blocks per byte.
    /// Readings travel as their little-endian bytes: the blocks of a little-endian `u16` or `u32` are its
    /// bytes' blocks one after another, so a message of 512 `u8`, 256 `u16` or 128 `u32` readings fills a
    /// frame, and the receiver's integer type says how to group the blocks.
    pub const MESSAGE_BYTES: usize = N / 4;
    /// The bytes of a seeded frame of this encryptor: `frame_bytes(Seeded, 1, N, 64, 64)`, 47 + 32 +
    /// `8 N` + 16 (16,479 at `N = 2048`).
    pub const SEEDED_FRAME_BYTES: usize = frame_bytes(FrameKind::Seeded, 1, N, 64, 64);

    /// Sets the key, in place: checks that `params`' GLWE side is a 64-bit `k = 1` set of size `N` matching
    /// `key`, resolves its (constant-time TUniform) noise and computes the key's spectrum. `key` is only
    /// read. On error the encryptor has no key.
    pub fn set_key<C: KeyStorage>(&mut self, params: &IntegerParameters, key: &GlweSecretKey<C>) -> Result<()> {
        self.forget_key();
        let noise = check_integer_parameters::<N>(params)?;
        check_key_shape::<N, 1, C>(key)?;
        compute_glwe_key_spectrum(&P::PLAN, key, &mut self.key.spectrum)?;
        self.state.set_key(params.glwe().id(), noise);
        Ok(())
    }

    /// Sets the key from its packed form (`N / 8` bytes, least-significant bit first: a credential file's
    /// form). The coefficients are unpacked into the scratch spectrum's own memory (no stack buffer), wiped
    /// before the spectrum is computed over it.
    pub fn set_packed_key(&mut self, params: &IntegerParameters, packed: &[u8]) -> Result<()> {
        self.forget_key();
        let noise = check_integer_parameters::<N>(params)?;
        Error::check_length(Self::PACKED_KEY_BYTES, packed.len())?;
        let IntegerKey { spectrum, scratch } = &mut self.key;
        with_unpacked_bits::<N, P::Spectral>(scratch, packed, |bits| P::PLAN.forward_binary(bits, spectrum))?;
        self.state.set_key(params.glwe().id(), noise);
        Ok(())
    }

    /// The length of the seeded frames this encryptor writes now: `frame_bytes(Seeded, 1, N, 64,
    /// body_bits())`. [`FrameEncryptor::encrypt_frame_into`](crate::encrypt::FrameEncryptor::encrypt_frame_into) still needs a buffer of
    /// [`Self::SEEDED_FRAME_BYTES`]: the full body is computed there before it is compacted.
    pub fn seeded_frame_len(&self) -> usize {
        frame_bytes(FrameKind::Seeded, 1, N, 64, self.body_bits())
    }

    /// The readings of `value_bits` bits one ciphertext holds: `N / blocks per value` (512 `u8`, 256 `u16`,
    /// 128 `u32` at `N = 2048` with two-bit blocks); 0 before a key is set.
    pub fn capacity(&self, value_bits: u32) -> usize {
        self.encoding()
            .and_then(|e| e.blocks_per_value(value_bits).ok())
            .map_or(0, |blocks| N / blocks)
    }

    fn encoding(&self) -> Option<RadixEncoding> {
        IntegerParameters::from_id(self.parameter_set()).map(|p| p.encoding())
    }

    /// Encrypts up to [`Self::capacity`]`(8)` `u8` readings as a seeded ciphertext: the body (`N` words,
    /// every coefficient after the last reading an encryption of 0) into `body`; returns the mask seed.
    pub fn encrypt_u8(&mut self, readings: &[u8], body: &mut [u64]) -> Result<[u8; MASK_SEED_BYTES]> {
        self.encrypt_readings(readings, 8, body)
    }

    /// [`Self::encrypt_u8`] for `u16` readings (8 blocks each).
    pub fn encrypt_u16(&mut self, readings: &[u16], body: &mut [u64]) -> Result<[u8; MASK_SEED_BYTES]> {
        self.encrypt_readings(readings, 16, body)
    }

    /// [`Self::encrypt_u8`] for `u32` readings (16 blocks each).
    pub fn encrypt_u32(&mut self, readings: &[u32], body: &mut [u64]) -> Result<[u8; MASK_SEED_BYTES]> {
        self.encrypt_readings(readings, 32, body)
    }

    /// [`Self::encrypt_u8`] for `u64` readings (32 blocks each: 64 per ciphertext at `N = 2048`).
    pub fn encrypt_u64(&mut self, readings: &[u64], body: &mut [u64]) -> Result<[u8; MASK_SEED_BYTES]> {
        self.encrypt_readings(readings, 64, body)
    }

    /// Reserves the sequence numbers of a message of `message_length` reading bytes (little-endian readings)
    /// in chunks of [`Self::MESSAGE_BYTES`] ([`FrameCounter::begin_message`]).
    pub fn begin_message(&self, counter: &mut FrameCounter, message_length: usize) -> Result<OutgoingMessage> {
        counter.begin_message(message_length, Self::MESSAGE_BYTES)
    }

    /// The generic path: encodes, encrypts in place, erases the CSPRNG's key.
    pub(crate) fn encrypt_readings<T: Copy + Into<u64>>(
        &mut self,
        readings: &[T],
        value_bits: u32,
        body: &mut [u64],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        self.state.check_ready()?;
        let encoding = self.encoding().ok_or(Error::KeyNotSet)?;
        self.key.encrypt(&mut self.state, &encoding, readings, value_bits, body)
    }
}

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>> IntegerKey<N, P> {
    /// Encodes `readings` into `body` (`N` words) and encrypts it, with the state's noise and CSPRNG.
    fn encrypt<X: XofConstruction, T: Copy + Into<u64>>(
        &mut self,
        state: &mut EncryptorState<X>,
        encoding: &RadixEncoding,
        readings: &[T],
        value_bits: u32,
        body: &mut [u64],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        Error::check_length(N, body.len())?;
        encode_readings(encoding, readings, value_bits, body)?;
        state.encrypt_with(|noise, rng| {
            encrypt_seeded_glwe_ciphertext_assign::<X, _, _>(
                &P::PLAN,
                &self.spectrum,
                noise,
                body,
                &mut self.scratch,
                rng,
            )
        })
    }
}

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>> FrameSealing for IntegerKey<N, P> {
    const FRAME: FrameShape = FrameShape::integer(N);

    fn seal<X: XofConstruction>(
        &mut self,
        state: &mut EncryptorState<X>,
        payload: &FramePayload<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        let encoding = IntegerParameters::from_id(state.parameter_set())
            .map(|p| p.encoding())
            .ok_or(Error::KeyNotSet)?;
        write_frame_in_place(&payload.header, N, payload.mac_key, out, |body: &mut [u64]| {
            self.encrypt(state, &encoding, payload.message, 8, body)
        })
    }
}

/// Encodes `readings` (each fitting `value_bits` bits by its type) into `body`, blocks little-endian, the
/// rest of `body` the encoding of 0. Branch-free per reading.
pub(crate) fn encode_readings<T: Copy + Into<u64>>(
    encoding: &RadixEncoding,
    readings: &[T],
    value_bits: u32,
    body: &mut [u64],
) -> Result<()> {
    let blocks = encoding.blocks_per_value(value_bits)?;
    let capacity = body.len() / blocks;
    if readings.len() > capacity {
        return Err(Error::MessageTooLong {
            capacity,
            found: readings.len(),
        });
    }
    for (&reading, words) in readings.iter().zip(body.chunks_exact_mut(blocks)) {
        encoding.encode_value(reading.into(), value_bits, words)?;
    }
    body[readings.len() * blocks..].fill(0);
    Ok(())
}

/// Checks that `params` is a named integer set whose GLWE side is a 64-bit, `k = 1` set of size `N` with
/// two-bit blocks, and resolves the named set's TUniform noise. Integer code only (no `f64` comparison or
/// conversion): an integer firmware links no floating-point code for it.
pub(crate) fn check_integer_parameters<const N: usize>(params: &IntegerParameters) -> Result<DeviceNoise> {
    let glwe = params.glwe();
    check_glwe_parameters::<u64, N, 1>(&glwe)?;
    let unknown = Error::Core(tfhe_sbc_core::Error::UnknownParameterSet(glwe.id().0));
    let named = IntegerParameters::from_id(glwe.id()).ok_or(unknown)?;
    if params.block_bits() != 2 || named.block_bits() != params.block_bits() {
        return Err(unknown);
    }
    DeviceNoise::for_tuniform_parameters(&named.glwe())
}
