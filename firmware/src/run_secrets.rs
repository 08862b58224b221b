//! The boolean run's secrets in this build: the KAT's, or one of the constant-time trace's other sets
//! (`TSBC_FIRMWARE_SECRETS=alt` or `=third`, read by build.rs, which computes the matching key and digest).
//! Chosen here once, for [`crate::run`] and [`crate::frames`]. (Not in `kat_inputs.rs`: build.rs includes that
//! file, and it has no such cfg.)

#[cfg(firmware_secrets = "alt")]
pub use crate::kat_inputs::{ALT_MAC_KEY as MAC_KEY, ALT_MESSAGE as MESSAGE, ALT_RNG_SEED as RNG_SEED};
#[cfg(not(any(firmware_secrets = "alt", firmware_secrets = "third")))]
pub use crate::kat_inputs::{MAC_KEY, MESSAGE, RNG_SEED};
#[cfg(firmware_secrets = "third")]
pub use crate::kat_inputs::{THIRD_MAC_KEY as MAC_KEY, THIRD_MESSAGE as MESSAGE, THIRD_RNG_SEED as RNG_SEED};
