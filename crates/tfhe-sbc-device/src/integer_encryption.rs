//! The firmware-facing integer encryptor (issue \[G\]): `u8`/`u16`/`u32` readings as tfhe-rs shortint radix
//! blocks in one GLWE ciphertext over the 64-bit torus (`u64` too).
//!
//! [`IntegerEncryptor`] has the shape of [`crate::encryption::GlweEncryptor`] (build it in place from
//! [`IntegerEncryptor::EMPTY`], [`IntegerEncryptor::set_key`] / [`IntegerEncryptor::set_packed_key`],
//! [`IntegerEncryptor::seed`]; no heap; secrets wiped on drop; `Debug` redacted; not `Clone`). Each call
//! encodes the readings with the set's [`RadixEncoding`] (two-bit blocks, little-endian, `delta = 2^59` for
//! [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`]) into the `u64` body, then calls the generic core
//! [`crate::glwe_encryption`] with the exact integer NTT [`NttPlan64`] and the set's constant-time
//! TUniform(17) noise. One `N = 2048` ciphertext carries 512 `u8`, 256 `u16`, 128 `u32` or 64 `u64` readings.
//!
//! ```
//! # use rand_core::SeedableRng;
//! # use tfhe_sbc_core::entities::GlweSecretKey;
//! # use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
//! # use tfhe_sbc_device::integer_encryption::IntegerEncryptor;
//! # use tfhe_sbc_device::xof::Blake2bXof;
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

use crate::credentials_file::unpack_secret_key;
use crate::encryption::{BodyBits, NoiseSlot, check_key_shape};
use crate::error::{Error, Result};
use crate::frame_mac::DeviceCredentials;
use crate::glwe_encryption::encrypt_seeded_glwe_ciphertext_assign;
use crate::key_spectrum::compute_glwe_key_spectrum;
use crate::message::Chunk;
use crate::noise::{DeviceNoise, NoiseSampling};
use crate::product::NegacyclicProductPlan;
use crate::wire::{FrameCounter, FrameHeader, FrameKind, OutgoingMessage, frame_bytes, write_frame_in_place_u64};
use crate::xof::Blake2bXof;
use negacyclic_ntt::NttPlan64;
use rand_core::TryCryptoRng;
use tfhe_sbc_core::encoding::RadixEncoding;
use tfhe_sbc_core::entities::{GlweSecretKey, KeyStorage, MASK_SEED_BYTES};
#[cfg(doc)]
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_core::parameters::{IntegerParameters, ParameterSetId};
use zeroize::Zeroize;

/// An integer GLWE encryptor (`k = 1`) for polynomial size `N` over the 64-bit torus, through the exact
/// product `P` ([`NttPlan64`] by default; its plan for `N` is a compile-time constant). It holds the key's
/// spectrum, one scratch spectrum, its noise sampler and its CSPRNG, and nothing else; encrypting never
/// allocates.
///
/// Size at `N = 2048` with [`NttPlan64`] (`[u32; 3]` spectra): 24 KiB of key spectrum, 24 KiB of scratch,
/// the CSPRNG (592 bytes) and a few bytes of state: `size_of` is 49,784 bytes on x86_64 (the test checks the
/// spectra plus at most 1 KiB). Encrypting needs no other buffer besides the caller's body or frame.
///
/// Secret: the key spectrum, the scratch buffer and the RNG state are zeroized on drop; `Debug` is redacted.
/// Build it where it lives ([`Self::EMPTY`] is all zero bytes): a copy left by a move is not wiped.
///
/// # Timing
/// The encoding masks and shifts, the TUniform noise and the NTT are constant-time: no branch or address
/// depends on the readings, the key, the CSPRNG output or the noise.
pub struct IntegerEncryptor<const N: usize = 2048, P: NegacyclicProductPlan<N, Torus = u64> = NttPlan64> {
    key: [P::Spectral; N],
    scratch: [P::Spectral; N],
    rng: Blake2bXof,
    noise: NoiseSlot,
    parameter_set: ParameterSetId,
    key_set: bool,
    seeded: bool,
    body_bits: BodyBits,
}

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>> IntegerEncryptor<N, P> {
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

    /// An encryptor with no key and an unseeded CSPRNG: all zero bytes. Set a key and seed it before
    /// encrypting.
    pub const EMPTY: Self = Self {
        key: [P::SPECTRAL_ZERO; N],
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

    /// Sets the key, in place: checks that `params`' GLWE side is a 64-bit `k = 1` set of size `N` matching
    /// `key`, resolves its (constant-time TUniform) noise and computes the key's spectrum. `key` is only
    /// read. On error the encryptor has no key.
    pub fn set_key<C: KeyStorage>(&mut self, params: &IntegerParameters, key: &GlweSecretKey<C>) -> Result<()> {
        self.forget_key();
        let noise = check_integer_parameters::<N>(params)?;
        check_key_shape::<N, 1, C>(key)?;
        compute_glwe_key_spectrum(&P::PLAN, key, &mut self.key)?;
        self.finish_set_key(params, noise);
        Ok(())
    }

    /// Sets the key from its packed form (`N / 8` bytes, least-significant bit first: a credential file's
    /// form). The coefficients are unpacked into an `N`-byte stack buffer, wiped afterwards.
    pub fn set_packed_key(&mut self, params: &IntegerParameters, packed: &[u8]) -> Result<()> {
        self.forget_key();
        let noise = check_integer_parameters::<N>(params)?;
        if packed.len() != Self::PACKED_KEY_BYTES {
            return Err(Error::WrongLength {
                expected: Self::PACKED_KEY_BYTES,
                found: packed.len(),
            });
        }
        let mut bits = [0u8; N];
        let unpacked = unpack_secret_key(packed, &mut bits);
        if unpacked.is_ok() {
            P::PLAN.forward_binary(&bits, &mut self.key);
        }
        bits.zeroize();
        unpacked?;
        self.finish_set_key(params, noise);
        Ok(())
    }

    fn finish_set_key(&mut self, params: &IntegerParameters, noise: DeviceNoise) {
        self.noise = NoiseSlot::Set(noise);
        self.parameter_set = params.glwe().id();
        self.key_set = true;
    }

    /// Wipes the key spectrum; encrypting then fails with [`Error::KeyNotSet`].
    pub fn forget_key(&mut self) {
        self.key_set = false;
        self.body_bits = BodyBits::FULL;
        self.noise = NoiseSlot::Unset;
        self.key.zeroize();
        self.scratch.zeroize();
    }

    /// Seeds the CSPRNG in place with 32 bytes from `rng` (a later call mixes them in). An RNG failure is
    /// [`Error::RngFailed`] and leaves the CSPRNG as it was.
    pub fn seed<R: TryCryptoRng + ?Sized>(&mut self, rng: &mut R) -> Result<()> {
        crate::seeding::seed_in_place(&mut self.rng, &mut self.seeded, rng)
    }

    /// Keys the CSPRNG with these 32 bytes, exactly as `Blake2bXof::from_seed(seed)`, and wipes `seed`. The
    /// bytes must be secret and never used twice.
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

    /// Mixes `entropy` into the CSPRNG ([`Blake2bXof::reseed`]); does not count as seeding.
    pub fn reseed(&mut self, entropy: &[u8]) {
        self.rng.reseed(entropy);
    }

    /// Whether a key is set and the CSPRNG seeded.
    pub fn is_ready(&self) -> bool {
        self.key_set && self.seeded
    }

    /// The parameter set of the key (`ParameterSetId(0)` before a key is set).
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
    }

    /// The noise sampler in use (`None` before a key is set).
    pub fn noise(&self) -> Option<DeviceNoise> {
        self.noise.get()
    }

    /// Makes frames carry only the top `body_bits` bits of each body coefficient (a compact body,
    /// [`tfhe_sbc_core::compact_body`]): from the set's `compact_body_bits()` (14 for
    /// [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`]: a 3,679-byte frame instead of 16,479, about 7.2 bytes per `u8`
    /// reading) up to 64 (the full body, the default). Needs a key; setting a key again restores the full body.
    pub fn set_body_bits(&mut self, body_bits: u32) -> Result<()> {
        self.body_bits.set(self.key_set, self.parameter_set, 64, body_bits)
    }

    /// The top bits of each body coefficient that frames carry (64 unless [`Self::set_body_bits`] chose fewer).
    pub fn body_bits(&self) -> u32 {
        self.body_bits.get(64)
    }

    /// The length of the seeded frames this encryptor writes now: `frame_bytes(Seeded, 1, N, 64,
    /// body_bits())`. [`Self::encrypt_seeded_frame_into`] still needs a buffer of
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
        IntegerParameters::from_id(self.parameter_set).map(|p| p.encoding())
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

    /// Encrypts `chunk` of `message` (reading bytes, [`Self::MESSAGE_BYTES`] per chunk) as a seeded
    /// ciphertext straight into the frame buffer `out` (at least [`Self::SEEDED_FRAME_BYTES`]) and
    /// authenticates it: `header (body_bits) | seed | body | tag`, the body as `N` 8-byte little-endian words,
    /// or their top [`Self::body_bits`] bits packed. The body is computed in `out` itself
    /// ([`write_frame_in_place_u64`]). Returns the frame's length, [`Self::seeded_frame_len`].
    pub fn encrypt_seeded_frame_into(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        message.check_chunk(chunk)?;
        if out.len() < Self::SEEDED_FRAME_BYTES {
            return Err(Error::BufferTooSmall);
        }
        let mut header = FrameHeader::new(FrameKind::Seeded, self.parameter_set(), credentials, message, chunk)?;
        header.body_bits = self.body_bits() as u8;
        write_frame_in_place_u64(&header, N, credentials.mac_key(), out, |body| {
            self.encrypt_u8(chunk.bytes, body)
        })
    }

    /// The generic path: encodes, encrypts in place, erases the CSPRNG's key.
    pub(crate) fn encrypt_readings<T: Copy + Into<u64>>(
        &mut self,
        readings: &[T],
        value_bits: u32,
        body: &mut [u64],
    ) -> Result<[u8; MASK_SEED_BYTES]> {
        self.check_ready()?;
        if body.len() != N {
            return Err(Error::WrongLength {
                expected: N,
                found: body.len(),
            });
        }
        let encoding = self.encoding().ok_or(Error::KeyNotSet)?;
        encode_readings(&encoding, readings, value_bits, body)?;
        self.rng.reseed_if_forked()?;
        let noise = self.noise.get().ok_or(Error::KeyNotSet)?;
        let seed =
            encrypt_seeded_glwe_ciphertext_assign(&P::PLAN, &self.key, &noise, body, &mut self.scratch, &mut self.rng)?;
        self.rng.ratchet();
        Ok(seed)
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
}

/// Encodes `readings` (each fitting `value_bits` bits by its type) into `body`, blocks little-endian, the
/// rest of `body` the encoding of 0. Branch-free per reading.
fn encode_readings<T: Copy + Into<u64>>(
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

/// Checks that `params`' GLWE side is a 64-bit, `k = 1` set of size `N` and resolves its noise.
fn check_integer_parameters<const N: usize>(params: &IntegerParameters) -> Result<DeviceNoise> {
    let glwe = params.glwe();
    glwe.check_torus::<u64>()?;
    if glwe.polynomial_size().0 != N {
        return Err(Error::PolynomialSizeMismatch {
            expected: N,
            found: glwe.polynomial_size().0,
        });
    }
    if glwe.glwe_dimension().0 != 1 {
        return Err(Error::UnsupportedGlweDimension(glwe.glwe_dimension().0));
    }
    if IntegerParameters::from_id(glwe.id()) != Some(*params) || params.block_bits() != 2 {
        return Err(Error::Core(tfhe_sbc_core::Error::UnknownParameterSet(glwe.id().0)));
    }
    DeviceNoise::for_parameters(&glwe, NoiseSampling::ConstantTime)
}

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>> Drop for IntegerEncryptor<N, P> {
    fn drop(&mut self) {
        self.key.zeroize();
        self.scratch.zeroize();
    }
}

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>> zeroize::ZeroizeOnDrop for IntegerEncryptor<N, P> {}

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>> core::fmt::Debug for IntegerEncryptor<N, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("IntegerEncryptor")
            .field("polynomial_size", &N)
            .field("parameter_set", &self.parameter_set)
            .field("key_set", &self.key_set)
            .field("seeded", &self.seeded)
            .finish_non_exhaustive()
    }
}
