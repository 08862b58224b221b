//! Seeding the CSPRNG: from the operating system, or from any caller-supplied `CryptoRng`.

use crate::xof::{Blake2bXof, SEED_BYTES};
use rand_core::{CryptoRng, SeedableRng};
use zeroize::Zeroize;

/// A generator seeded with 32 bytes from `rng`, e.g. a microcontroller's hardware TRNG wrapped as a
/// `CryptoRng`.
pub fn from_crypto_rng<R: CryptoRng + ?Sized>(rng: &mut R) -> Blake2bXof {
    let mut seed = [0u8; SEED_BYTES];
    rng.fill_bytes(&mut seed);
    let xof = Blake2bXof::from_seed(seed);
    seed.zeroize();
    xof
}

/// A generator seeded with 32 bytes from the operating system (`getrandom`: `getrandom(2)` on Linux).
#[cfg(feature = "getrandom")]
pub fn from_os_entropy() -> crate::Result<Blake2bXof> {
    let mut seed = [0u8; SEED_BYTES];
    getrandom::fill(&mut seed).map_err(|_| crate::Error::Entropy)?;
    let xof = Blake2bXof::from_seed(seed);
    seed.zeroize();
    Ok(xof)
}
