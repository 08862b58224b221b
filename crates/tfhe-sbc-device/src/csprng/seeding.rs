//! Seeding the CSPRNG: from the operating system, or from any caller-supplied random number generator (a
//! microcontroller's hardware TRNG).
//!
//! Hardware RNGs fail (a TRNG's health test, a clock error), so the firmware entry points take a fallible
//! rand_core 0.10 [`TryCryptoRng`] and return [`Error::RngFailed`] instead of panicking:
//! [`crate::encrypt::secret_key::GlweEncryptor::seed`] seeds an encryptor in place, [`try_from_crypto_rng`] builds a
//! generator.
//!
//! # A HAL's RNG (rand_core 0.6 or 0.9)
//! Most embedded HALs implement an older rand_core: `stm32f4xx-hal`'s and `nrf-hal`'s RNGs implement
//! rand_core 0.6 `RngCore + CryptoRng`, newer HALs (`embassy-stm32`, `esp-hal`) 0.9 `TryRngCore +
//! TryCryptoRng`. Wrap them in `Rng06` (feature `rand_core_06`) or `Rng09` (feature `rand_core_09`):
//!
//! ```ignore
//! // Cargo.toml: tfhe-sbc-device = { version = "0.1", default-features = false, features = ["rand_core_06"] }
//! let mut trng = dp.RNG.constrain(&clocks); // a rand_core 0.6 RngCore + CryptoRng
//! ENCRYPTOR.seed(&mut tfhe_sbc_device::csprng::seeding::Rng06(&mut trng))?;
//! ```
//!
//! The wrappers call the HAL's fallible method (`try_fill_bytes`), so a TRNG error reaches the caller as
//! [`Error::RngFailed`]; they mark the wrapped generator as cryptographic only because the HAL already
//! claims it is (`CryptoRng`).

use crate::csprng::construction::XofConstruction;
use crate::csprng::xof::{DeviceXof, KeyedXof, SEED_BYTES};
use crate::error::{Error, Result};
use rand_core::{CryptoRng, SeedableRng, TryCryptoRng};
use zeroize::Zeroize;

/// A generator of the target's construction ([`DeviceXof`]) seeded with 32 bytes from `rng`, an infallible
/// `CryptoRng` (see [`try_from_crypto_rng`] for a generator that can fail, as hardware TRNGs can).
pub fn from_crypto_rng<R: CryptoRng + ?Sized>(rng: &mut R) -> DeviceXof {
    let mut seed = [0u8; SEED_BYTES];
    rng.fill_bytes(&mut seed);
    let xof = DeviceXof::from_seed(seed);
    seed.zeroize();
    xof
}

/// A generator seeded with 32 bytes from a fallible `rng` (e.g. a hardware TRNG, or a HAL RNG through
/// `Rng06` / `Rng09`); [`Error::RngFailed`] if it fails.
pub fn try_from_crypto_rng<R: TryCryptoRng + ?Sized>(rng: &mut R) -> Result<DeviceXof> {
    let mut seed = [0u8; SEED_BYTES];
    let drawn = rng.try_fill_bytes(&mut seed);
    let xof = drawn.is_ok().then(|| DeviceXof::from_seed(seed));
    seed.zeroize();
    xof.ok_or(Error::RngFailed)
}

/// Seeds `xof` in place from `rng`: keys it on the first call (`seeded` false), mixes into it afterwards.
/// On an RNG failure nothing changes and the error is [`Error::RngFailed`].
pub(crate) fn seed_in_place<C: XofConstruction, R: TryCryptoRng + ?Sized>(
    xof: &mut KeyedXof<C>,
    seeded: &mut bool,
    rng: &mut R,
) -> Result<()> {
    let mut entropy = [0u8; SEED_BYTES];
    let drawn = rng.try_fill_bytes(&mut entropy);
    if drawn.is_ok() {
        if *seeded {
            xof.reseed(&entropy);
        } else {
            xof.seed_in_place(&entropy);
            *seeded = true;
        }
    }
    entropy.zeroize();
    drawn.map_err(|_| Error::RngFailed)
}

/// A generator of the target's construction ([`DeviceXof`]) seeded with 32 bytes from the operating system
/// (`getrandom`: `getrandom(2)` on Linux).
#[cfg(feature = "getrandom")]
#[cfg_attr(docsrs, doc(cfg(feature = "getrandom")))]
pub fn from_os_entropy() -> Result<DeviceXof> {
    let mut seed = [0u8; SEED_BYTES];
    getrandom::fill(&mut seed).map_err(|_| Error::Entropy)?;
    let xof = DeviceXof::from_seed(seed);
    seed.zeroize();
    Ok(xof)
}

/// The error of a HAL RNG seen through `Rng06` or `Rng09`: it failed; for rand_core 0.6, with the
/// error code the HAL gave, if any.
#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "rand_core_06", feature = "rand_core_09"))))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HalRngError {
    /// The rand_core 0.6 error code (`rand_core::Error::code`), if the HAL set one.
    pub code: Option<core::num::NonZeroU32>,
}

#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
impl core::fmt::Display for HalRngError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.code {
            Some(code) => write!(f, "hardware RNG failed (code {code})"),
            None => f.write_str("hardware RNG failed"),
        }
    }
}

#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
impl core::error::Error for HalRngError {}

/// A rand_core 0.6 `RngCore + CryptoRng` (most embedded HALs' RNGs) as a rand_core 0.10 [`TryCryptoRng`],
/// calling its fallible `try_fill_bytes`. Feature `rand_core_06`. Wrap a `&mut` to keep the HAL's RNG.
#[cfg(feature = "rand_core_06")]
#[cfg_attr(docsrs, doc(cfg(feature = "rand_core_06")))]
#[derive(Debug)]
pub struct Rng06<R>(pub R);

#[cfg(feature = "rand_core_06")]
impl<R: rand_core_06::RngCore + rand_core_06::CryptoRng> rand_core::TryRng for Rng06<R> {
    type Error = HalRngError;

    fn try_next_u32(&mut self) -> core::result::Result<u32, HalRngError> {
        let mut bytes = [0u8; 4];
        self.try_fill_bytes(&mut bytes)?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn try_next_u64(&mut self) -> core::result::Result<u64, HalRngError> {
        let mut bytes = [0u8; 8];
        self.try_fill_bytes(&mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> core::result::Result<(), HalRngError> {
        self.0.try_fill_bytes(dst).map_err(|e| HalRngError { code: e.code() })
    }
}

#[cfg(feature = "rand_core_06")]
impl<R: rand_core_06::RngCore + rand_core_06::CryptoRng> TryCryptoRng for Rng06<R> {}

/// A rand_core 0.9 `TryRngCore + TryCryptoRng` (newer HALs' RNGs; any 0.9 `CryptoRng` is one too) as a
/// rand_core 0.10 [`TryCryptoRng`]. Feature `rand_core_09`. Wrap a `&mut` to keep the HAL's RNG.
#[cfg(feature = "rand_core_09")]
#[cfg_attr(docsrs, doc(cfg(feature = "rand_core_09")))]
#[derive(Debug)]
pub struct Rng09<R>(pub R);

#[cfg(feature = "rand_core_09")]
impl<R: rand_core_09::TryCryptoRng> rand_core::TryRng for Rng09<R> {
    type Error = HalRngError;

    fn try_next_u32(&mut self) -> core::result::Result<u32, HalRngError> {
        self.0.try_next_u32().map_err(|_| HalRngError { code: None })
    }

    fn try_next_u64(&mut self) -> core::result::Result<u64, HalRngError> {
        self.0.try_next_u64().map_err(|_| HalRngError { code: None })
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> core::result::Result<(), HalRngError> {
        self.0.try_fill_bytes(dst).map_err(|_| HalRngError { code: None })
    }
}

#[cfg(feature = "rand_core_09")]
impl<R: rand_core_09::TryCryptoRng> TryCryptoRng for Rng09<R> {}
