//! The commands' randomness: a CSPRNG seeded from the operating system's entropy, for key generation
//! (`init`) and the devices' keys and MAC keys (`issue`).

use crate::error::Error;
use tfhe_sbc_device::csprng::xof::Blake2bXof;

/// A CSPRNG seeded from the operating system.
pub(super) fn os_rng() -> Result<Blake2bXof, Error> {
    tfhe_sbc_device::csprng::seeding::from_os_entropy().map_err(|_| Error::Entropy)
}
