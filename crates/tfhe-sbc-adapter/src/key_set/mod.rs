//! The cloud's side of a key set (feature `tfhe`): every file the trusted party's tool (`tfhe-sbc-keys`)
//! writes and the server reads, in one place, so that the tool, the server and the examples share one
//! reader and one writer per format.
//!
//! * [`files`]: the directory's file names and modes, reading into wiped buffers, and the one atomic,
//!   durable writer ([`files::write_atomic`]) that every file goes through.
//! * [`envelope`]: the versioned, checked envelope of the tfhe-rs key files.
//! * [`server_key`]: `server_key.bin`, the tfhe-rs `ServerKey` (boolean or integer).
//! * [`client_key`]: `client_key.bin`, the tfhe-rs `ClientKey`, wiped on drop.
//! * [`key_store`]: `key_store.bin`, what the cloud holds per device (key id, parameter set, key mode, MAC
//!   key, seeded key-switching key).
//! * [`error`]: [`KeySetError`], why a file was refused, in one line with what to do.

pub mod client_key;
pub mod development;
pub mod envelope;
pub mod error;
pub mod files;
pub mod key_store;
pub mod server_key;

pub use error::KeySetError;
pub use files::short_hex;

use crate::interop::big_key::BooleanSet;
use tfhe_sbc_core::parameters::{IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128, ParameterSetId};

/// How a device encrypts, and so what the cloud holds for it: one name for the device's credential file,
/// the key store and the provisioning tool (fleet, per-device, public key).
pub use tfhe_sbc_device::files::credentials::KeyMode;

/// The parameters of a key set: a tfhe-rs boolean set, or the integer set (tfhe-rs's high-level default,
/// our set 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySetParameters {
    /// A `tfhe::boolean` key set.
    Boolean(BooleanSet),
    /// The high-level `tfhe::ClientKey` / `ServerKey` of `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`.
    Integer,
}

impl KeySetParameters {
    /// The key set of the named parameter set `id`, if any.
    pub const fn from_id(id: ParameterSetId) -> Option<Self> {
        match BooleanSet::from_id(id) {
            Some(set) => Some(Self::Boolean(set)),
            None => match IntegerParameters::from_id(id) {
                Some(_) => Some(Self::Integer),
                None => None,
            },
        }
    }

    /// The device's named parameter set.
    pub const fn id(self) -> ParameterSetId {
        match self {
            Self::Boolean(set) => set.glwe_parameters().id(),
            Self::Integer => MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().id(),
        }
    }

    /// The command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Boolean(set) => parameters_name(set),
            Self::Integer => "integer",
        }
    }

    /// The tfhe-rs constant's name.
    pub const fn tfhe_name(self) -> &'static str {
        match self {
            Self::Boolean(set) => set.tfhe_name(),
            Self::Integer => "PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128",
        }
    }
}

/// The command-line name of a boolean parameter set (`tfhe-lib`, `ks-pbs-512`, `ks-pbs-1024`).
pub const fn parameters_name(set: BooleanSet) -> &'static str {
    match set {
        BooleanSet::TfheLib => "tfhe-lib",
        BooleanSet::DefaultKsPbs => "ks-pbs-512",
        BooleanSet::ErrorProb2m165KsPbs => "ks-pbs-1024",
    }
}
