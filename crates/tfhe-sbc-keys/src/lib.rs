//! The trusted party's provisioning tool (`tfhe-sbc-keys`): makes a tfhe-rs key set, issues device
//! credentials and writes the adapter's key store.
//!
//! ```text
//! tfhe-sbc-keys init  --dir keys --parameters tfhe-lib
//! tfhe-sbc-keys issue --dir keys --device-id 7 --mode per-device
//! tfhe-sbc-keys show  --dir keys
//!
//! tfhe-sbc-keys init  --dir ints --parameters integer
//! tfhe-sbc-keys issue --dir ints --device-id 8 --mode per-device
//! ```
//!
//! * [`commands::init`]: the tfhe-rs `ClientKey` and `ServerKey` (every secret seeded from the OS), the
//!   seeded public key (`tfhe_sbc_device::public_key`) and an empty key store
//!   (`tfhe_sbc_adapter::key_store`) bound to the server key. With `--parameters integer`
//!   ([`commands::init_integer`]): tfhe-rs's high-level `ClientKey` and `ServerKey` of its default
//!   `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` (`FheUint8` .. `FheUint64`), no public key (the integer
//!   set has fleet and per-device modes), and an empty key store bound to that server key.
//! * [`commands::issue`]: one device in one key mode (`docs/security.md`): its credential file
//!   (`tfhe_sbc_device::credentials_file`: device id, key id, MAC key, and its own secret key, the client
//!   key's GLWE key or the public key) and its record in the key store.
//! * [`commands::show`]: the key set and its devices, no secret.
//!
//! The directory's layout and file modes are in [`files`]; the tfhe-rs key files' envelope (version, key
//! id, integrity check) in [`key_file`]. Every failure is one line of [`error::Error`].

pub mod commands;
pub mod error;
pub mod files;
pub mod key_file;

use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_core::parameters::{IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128, ParameterSetId};

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

/// A key mode, by its command-line name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The device's own secret key; the cloud holds a per-device key-switching key (`tfhe-lib` and
    /// `integer` only).
    PerDevice,
    /// The client key's GLWE key, shared by the fleet.
    Fleet,
    /// The public key: the device holds nothing that decrypts.
    PublicKey,
}

impl Mode {
    /// The command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::PerDevice => "per-device",
            Self::Fleet => "fleet",
            Self::PublicKey => "public-key",
        }
    }
}

/// The command-line name of a parameter set.
pub const fn parameters_name(set: BooleanSet) -> &'static str {
    match set {
        BooleanSet::TfheLib => "tfhe-lib",
        BooleanSet::DefaultKsPbs => "ks-pbs-512",
        BooleanSet::ErrorProb2m165KsPbs => "ks-pbs-1024",
        _ => "unknown",
    }
}
