//! The commands: `init` (boolean key sets) or `init_integer` / `init_compact_list` (the integer key set),
//! `issue` (`issue_compact_list_devices` for compact-list devices, `issue_dev_devices` for development ones),
//! `repair`, `show`, `check_frame`.
//! Each prints what it did to stdout and returns a typed [`Error`] on failure.

mod check_frame;
mod compact_list;
mod credentials;
mod dev_credential;
mod device_kinds;
mod init;
mod issue;
mod journal;
mod key_files;
mod repair;
mod report;
mod show;

pub use check_frame::check_frame;
pub use init::{init, init_compact_list, init_integer};
pub use issue::{issue, issue_compact_list_devices, issue_dev_devices, issue_devices};
pub use repair::repair;
pub use show::show;

use crate::KeySetParameters;
use crate::error::Error;
use std::path::Path;
use tfhe_sbc_core::parameters::{GlweParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128};
use tfhe_sbc_device::csprng::xof::Blake2bXof;

/// A CSPRNG seeded from the operating system.
fn os_rng() -> Result<Blake2bXof, Error> {
    tfhe_sbc_device::csprng::seeding::from_os_entropy().map_err(|_| Error::Entropy)
}

/// The GLWE parameters a key set's devices encrypt with: the boolean set's, or set 4 (`N = 2048`, `q = 2^64`)
/// for the integer key set.
fn glwe_parameters(parameters: KeySetParameters) -> GlweParameters {
    match parameters {
        KeySetParameters::Boolean(set) => set.glwe_parameters(),
        KeySetParameters::Integer => MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe(),
    }
}

/// An [`Error::Provisioning`] carrying `e`'s message.
fn provisioning(e: impl core::fmt::Display) -> Error {
    Error::Provisioning { message: e.to_string() }
}

/// Checks that the key set directory `dir` exists.
fn check_dir(dir: &Path) -> Result<(), Error> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Error::missing(dir, "key set directory"))
    }
}
