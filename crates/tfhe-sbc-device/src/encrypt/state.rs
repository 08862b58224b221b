//! The state every encryptor shares, whatever its key: the CSPRNG and whether it is seeded, the resolved
//! noise sampler, the parameter set, whether a key is set, and the body width of its frames.
//!
//! Around each encryption, [`EncryptorState::encrypt_with`] checks readiness, reseeds in a forked child
//! (feature `getrandom`) and afterwards erases the CSPRNG's key ([`KeyedXof::ratchet`]: fast key
//! erasure, so a later compromise does not regenerate any earlier mask seed or noise).

use crate::csprng::construction::{DeviceConstruction, XofConstruction};
use crate::csprng::xof::{KeyedXof, SEED_BYTES};
use crate::error::{Error, Result};
use crate::noise::DeviceNoise;
use rand_core::TryCryptoRng;
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use zeroize::Zeroize;

/// CSPRNG, noise, parameter set, readiness and body width of one encryptor. All zero bytes when empty
/// ([`Self::EMPTY`]), so an encryptor in a `static` stays in `.bss`.
///
/// The CSPRNG is the keyed XOF of construction `X` ([`DeviceConstruction`] by default: BLAKE2s on 32-bit
/// targets, BLAKE2b elsewhere); its mask expansion is the one the frames name.
///
/// Secret: the CSPRNG state (zeroized on drop by [`KeyedXof`] itself); not `Clone`, `Debug` redacted.
pub struct EncryptorState<X: XofConstruction = DeviceConstruction> {
    rng: KeyedXof<X>,
    noise: NoiseSlot,
    parameter_set: ParameterSetId,
    key_set: bool,
    seeded: bool,
    body_bits: BodyBits,
}

impl<X: XofConstruction> EncryptorState<X> {
    /// No key, an unseeded CSPRNG, the full body: all zero bytes.
    pub const EMPTY: Self = Self {
        rng: KeyedXof::UNSEEDED,
        noise: NoiseSlot::Unset,
        parameter_set: ParameterSetId(0),
        key_set: false,
        seeded: false,
        body_bits: BodyBits::FULL,
    };

    /// Records that a key of the set `id` is set, with its resolved noise; the body goes back to full width.
    pub(crate) fn set_key(&mut self, id: ParameterSetId, noise: DeviceNoise) {
        self.noise = NoiseSlot::Set(noise);
        self.parameter_set = id;
        self.key_set = true;
        self.body_bits = BodyBits::FULL;
    }

    /// Records that no key is set (the caller wipes the key material).
    pub(crate) fn forget_key(&mut self) {
        self.key_set = false;
        self.noise = NoiseSlot::Unset;
        self.parameter_set = ParameterSetId(0);
        self.body_bits = BodyBits::FULL;
    }

    /// Seeds the CSPRNG in place with 32 bytes from `rng`: keys it on the first call, mixes into it
    /// afterwards ([`KeyedXof::reseed`]). On an RNG failure nothing changes: [`Error::RngFailed`].
    pub(crate) fn seed<R: TryCryptoRng + ?Sized>(&mut self, rng: &mut R) -> Result<()> {
        let seeded = self.seed_from_rng(rng);
        scrub_after_secret_work();
        seeded
    }

    #[cfg_attr(feature = "std", inline(never))]
    fn seed_from_rng<R: TryCryptoRng + ?Sized>(&mut self, rng: &mut R) -> Result<()> {
        crate::csprng::seeding::seed_in_place(&mut self.rng, &mut self.seeded, rng)
    }

    /// Keys the CSPRNG in place with `seed` (the stream of `KeyedXof::<X>::from_seed(seed)`), then wipes `seed`.
    pub(crate) fn seed_from_bytes(&mut self, seed: &mut [u8; SEED_BYTES]) {
        self.key_with(seed);
        scrub_after_secret_work();
    }

    #[cfg_attr(feature = "std", inline(never))]
    fn key_with(&mut self, seed: &mut [u8; SEED_BYTES]) {
        self.rng.seed_in_place(seed);
        seed.zeroize();
        self.seeded = true;
    }

    /// Seeds the CSPRNG in place from the operating system (`getrandom`), no copy of the state anywhere: the
    /// seed is drawn and the generator keyed in a call that is never inlined, and the stack it used is
    /// scrubbed afterwards (feature `std`, [`crate::encrypt::stack_scrub`]).
    #[cfg(feature = "getrandom")]
    pub(crate) fn seed_from_os(&mut self) -> Result<()> {
        let drawn = self.key_from_os();
        scrub_after_secret_work();
        drawn
    }

    #[cfg(feature = "getrandom")]
    #[cfg_attr(feature = "std", inline(never))]
    fn key_from_os(&mut self) -> Result<()> {
        let mut seed = [0u8; SEED_BYTES];
        let drawn = getrandom::fill(&mut seed);
        if drawn.is_ok() {
            self.key_with(&mut seed);
        }
        seed.zeroize();
        drawn.map_err(|_| Error::Entropy)
    }

    /// Replaces the CSPRNG with an already seeded one (a host's convenience: moving a generator leaves its
    /// old bytes wherever it was; firmware seeds in place).
    pub(crate) fn set_rng(&mut self, rng: KeyedXof<X>) {
        self.rng = rng;
        self.seeded = true;
    }

    /// Mixes `entropy` into the CSPRNG ([`KeyedXof::reseed`]); does not count as seeding.
    pub(crate) fn reseed(&mut self, entropy: &[u8]) {
        self.mix(entropy);
        scrub_after_secret_work();
    }

    #[cfg_attr(feature = "std", inline(never))]
    fn mix(&mut self, entropy: &[u8]) {
        self.rng.reseed(entropy);
    }

    /// Whether a key is set.
    pub fn key_is_set(&self) -> bool {
        self.key_set
    }

    /// Whether the CSPRNG is seeded.
    pub fn is_seeded(&self) -> bool {
        self.seeded
    }

    /// Whether a key is set and the CSPRNG seeded: whether encrypting can succeed.
    pub fn is_ready(&self) -> bool {
        self.key_set && self.seeded
    }

    /// [`Error::KeyNotSet`] or [`Error::NotSeeded`] unless [`Self::is_ready`].
    pub(crate) fn check_ready(&self) -> Result<()> {
        if !self.key_set {
            Err(Error::KeyNotSet)
        } else if !self.seeded {
            Err(Error::NotSeeded)
        } else {
            Ok(())
        }
    }

    /// The parameter set of the key (`ParameterSetId(0)` before one is set).
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
    }

    /// The noise sampler in use (`None` before a key is set).
    pub fn noise(&self) -> Option<DeviceNoise> {
        self.noise.get()
    }

    /// The body width of frames on a `torus_bits`-bit torus.
    pub(crate) fn body_bits(&self, torus_bits: u32) -> u32 {
        self.body_bits.get(torus_bits)
    }

    /// Sets the body width: from the key's set's [`GlweParameters::compact_body_bits`] to the torus width
    /// (only the torus width for a custom set, or when `compact` is false); needs a key.
    pub(crate) fn set_body_bits(&mut self, torus_bits: u32, compact: bool, body_bits: u32) -> Result<()> {
        if !compact && self.key_set && body_bits != torus_bits {
            return Err(Error::Core(tfhe_sbc_core::Error::UnsupportedBodyBits {
                body_bits,
                torus_bits,
            }));
        }
        self.body_bits
            .set(self.key_set, self.parameter_set, torus_bits, body_bits)
    }

    /// Runs one encryption: checks readiness, reseeds in a forked child, calls `encrypt` with the noise
    /// sampler and the CSPRNG, then erases the CSPRNG's key ([`KeyedXof::ratchet`]), on success or not.
    /// With feature `std` the stack the encryption and the ratchet used is scrubbed afterwards: they run in a
    /// call that is never inlined, so no copy of the generator's state, its ratchet key or the noise the
    /// compiler spilled outlives the call ([`crate::encrypt::stack_scrub`]).
    pub(crate) fn encrypt_with<T>(
        &mut self,
        encrypt: impl FnOnce(&DeviceNoise, &mut KeyedXof<X>) -> Result<T>,
    ) -> Result<T> {
        let result = self.encrypt_and_ratchet(encrypt);
        scrub_after_secret_work();
        result
    }

    #[cfg_attr(feature = "std", inline(never))]
    fn encrypt_and_ratchet<T>(
        &mut self,
        encrypt: impl FnOnce(&DeviceNoise, &mut KeyedXof<X>) -> Result<T>,
    ) -> Result<T> {
        self.check_ready()?;
        let noise = self.noise.get().ok_or(Error::KeyNotSet)?;
        self.rng.reseed_if_forked()?;
        let result = encrypt(&noise, &mut self.rng);
        self.rng.ratchet();
        result
    }
}

/// Overwrites the stack below the caller that a never-inlined call handling the CSPRNG just used: 64 KiB on a
/// host (feature `std`, [`crate::encrypt::stack_scrub::scrub_stack`]), [`FIRMWARE_SCRUB_BYTES`] without it.
#[inline(always)]
fn scrub_after_secret_work() {
    #[cfg(feature = "std")]
    crate::encrypt::stack_scrub::scrub_stack();
    #[cfg(not(feature = "std"))]
    crate::encrypt::stack_scrub::scrub_stack_words::<{ FIRMWARE_SCRUB_BYTES / 8 }>();
}

/// The stack a firmware (no `std`) scrubs after seeding and after each encryption and ratchet: it covers the
/// frames where the ratchet left the new key and a copy of the new chaining value, which
/// the firmware's RAM-image check found 280 and 664 bytes below the stack pointer right after the first
/// encryption on the M4. Less than an encryption's own depth, so the encryption's peak stack does not grow;
/// about 1,000 instructions per call.
#[cfg(not(feature = "std"))]
const FIRMWARE_SCRUB_BYTES: usize = 1024;

impl<X: XofConstruction> core::fmt::Debug for EncryptorState<X> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EncryptorState")
            .field("parameter_set", &self.parameter_set)
            .field("key_set", &self.key_set)
            .field("seeded", &self.seeded)
            .field("xof", &X::NAME)
            .finish_non_exhaustive()
    }
}

/// The noise sampler slot: `Unset` is tag 0 with no payload, so an empty encryptor is all zero bytes
/// (`Option<DeviceNoise>` would encode `None` in a non-zero niche, moving a `static` encryptor from `.bss`
/// to `.data`: 17 KB of flash).
#[derive(Clone, Copy)]
#[repr(u8)]
enum NoiseSlot {
    /// No key set yet.
    Unset = 0,
    /// The resolved sampler.
    Set(DeviceNoise) = 1,
}

impl NoiseSlot {
    fn get(self) -> Option<DeviceNoise> {
        match self {
            Self::Unset => None,
            Self::Set(noise) => Some(noise),
        }
    }
}

/// The body width of an encryptor's frames: 0 stands for the torus width, so that an empty encryptor is
/// all zero bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BodyBits(u8);

impl BodyBits {
    const FULL: Self = Self(0);

    /// Sets `body_bits` for frames of the set `id` on a `torus_bits`-bit torus: from the named set's
    /// [`GlweParameters::compact_body_bits`] to the torus width, only the torus width for a custom set; a key
    /// must be set. On error the width is unchanged.
    fn set(&mut self, key_set: bool, id: ParameterSetId, torus_bits: u32, body_bits: u32) -> Result<()> {
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

    fn get(self, torus_bits: u32) -> u32 {
        if self.0 == 0 { torus_bits } else { u32::from(self.0) }
    }
}
