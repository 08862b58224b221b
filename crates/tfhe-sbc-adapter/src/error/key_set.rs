//! [`KeySetError`]: why a file of a key set (or a key store record) was refused or could not be read or
//! written, one line each saying what was wrong and, for a file, what to do about it.

use std::fmt;
use std::io;
use std::path::PathBuf;
use tfhe_sbc_device::files::credentials::KeyMode;

/// What to do about a damaged file of the key set.
pub const RESTORE: &str = "restore it from a backup, or run init again in a new --dir";
/// What to do about a file that is not ours.
pub const POINT_AT_INIT_DIR: &str =
    "point at the key set directory `tfhe-sbc-keys init` wrote (the keys tool's --dir, the server's --keys)";

/// Why a key-set file (server key, client key, key store, the files of `key_set::files`) or a key store
/// record was refused. The variants from [`KeySetError::Truncated`] on are the key store's
/// (`KeyStore::decode`, `DeviceRecord::with_parameter_set`).
#[derive(Debug)]
pub enum KeySetError {
    /// The file does not exist.
    Missing {
        /// The file.
        path: PathBuf,
        /// What it should have held ("client key", "key store", ...).
        what: &'static str,
    },
    /// An I/O operation failed.
    Io {
        /// What was being done ("read", "write", "create directory", ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The file was refused: corrupt, truncated, of another kind, set or version, or not ours at all.
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// What to do about it.
        fix: &'static str,
    },
    /// A key does not serialize (a bug, or a key too large for the format).
    Encode {
        /// The underlying error.
        message: String,
    },
    /// The key store is shorter than its prefix and digest.
    Truncated {
        /// Bytes found.
        found: usize,
    },
    /// Not a key store file.
    BadMagic,
    /// A key store version this code does not read.
    UnsupportedVersion(u8),
    /// The key store's digest does not match: the file is corrupt or truncated.
    DigestMismatch,
    /// The key store's body does not decode.
    Malformed(postcard::Error),
    /// Bytes after the key store's body.
    TrailingBytes(usize),
    /// A (version 1) key store made for another device parameter set.
    UnsupportedParameterSet(u16),
    /// A key store field has the wrong length.
    WrongLength {
        /// The device, if the field is a device's.
        device_id: Option<u64>,
        /// Which field.
        field: &'static str,
        /// Its length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// An unknown key mode id.
    UnknownKeyMode {
        /// The device.
        device_id: u64,
        /// The id.
        mode: u8,
    },
    /// A per-device record without a key-switching key, or a fleet or public-key record with one.
    KeyMaterialMismatch {
        /// The device.
        device_id: u64,
        /// Its mode.
        mode: KeyMode,
    },
    /// A device id twice in a key store.
    DuplicateDevice(u64),
    /// A device of a parameter set this build does not know.
    UnknownParameterSet {
        /// The device.
        device_id: u64,
        /// The set's id.
        parameter_set: u16,
    },
    /// A key mode the device's parameter set does not allow (per-device on a big-key boolean set, public key
    /// on the integer set, a key-switching key of the other family).
    ModeNotAllowed {
        /// The device.
        device_id: u64,
        /// The mode.
        mode: KeyMode,
        /// The device's parameter set.
        parameter_set: u16,
    },
}

impl fmt::Display for KeySetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { path, what } => write!(
                f,
                "{} not found (the {what}): run `tfhe-sbc-keys init --dir <DIR>` first, or point at the key set \
                 directory init wrote (the keys tool's --dir, the server's --keys)",
                path.display()
            ),
            Self::Io { action, path, source } => write!(f, "cannot {action} {}: {source}", path.display()),
            Self::BadFile { path, problem, fix } => write!(f, "{}: {problem}: {fix}", path.display()),
            Self::Encode { message } => write!(f, "provisioning failed: {message}"),
            Self::Truncated { found } => write!(f, "key store truncated: {found} bytes"),
            Self::BadMagic => f.write_str("not a tfhe-sbc key store (bad magic)"),
            // 2 is `key_store::KEY_STORE_VERSION` (a test there checks this message names it).
            Self::UnsupportedVersion(v) => write!(
                f,
                "key store version {v} is not supported (this build reads versions 1 and 2)"
            ),
            Self::DigestMismatch => f.write_str("key store digest mismatch: the file is corrupt"),
            Self::Malformed(e) => write!(f, "key store body does not decode: {e}"),
            Self::TrailingBytes(n) => write!(f, "{n} bytes after the key store body"),
            Self::UnsupportedParameterSet(id) => write!(f, "key store is for parameter set {id}, not supported"),
            Self::WrongLength {
                device_id,
                field,
                expected,
                found,
            } => match device_id {
                Some(id) => write!(f, "device {id}: {field} is {found} bytes, expected {expected}"),
                None => write!(f, "{field} is {found} bytes, expected {expected}"),
            },
            Self::UnknownKeyMode { device_id, mode } => write!(f, "device {device_id}: unknown key mode {mode}"),
            Self::KeyMaterialMismatch { device_id, mode } => match mode {
                KeyMode::PerDeviceSecretKey => {
                    write!(f, "device {device_id}: per-device record without a key-switching key")
                }
                KeyMode::FleetSecretKey => write!(f, "device {device_id}: fleet record with a key-switching key"),
                KeyMode::PublicKey => write!(f, "device {device_id}: public-key record with a key-switching key"),
            },
            Self::DuplicateDevice(id) => write!(f, "device {id} appears twice in the key store"),
            Self::UnknownParameterSet {
                device_id,
                parameter_set,
            } => write!(
                f,
                "device {device_id}: parameter set {parameter_set} is not one this build knows"
            ),
            Self::ModeNotAllowed {
                device_id,
                mode,
                parameter_set,
            } => write!(
                f,
                "device {device_id}: key mode {mode:?} with this key material is not allowed on parameter set \
                 {parameter_set}"
            ),
        }
    }
}

impl std::error::Error for KeySetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Missing { .. }
            | Self::BadFile { .. }
            | Self::Encode { .. }
            | Self::Truncated { .. }
            | Self::BadMagic
            | Self::UnsupportedVersion(_)
            | Self::DigestMismatch
            | Self::Malformed(_)
            | Self::TrailingBytes(_)
            | Self::UnsupportedParameterSet(_)
            | Self::WrongLength { .. }
            | Self::UnknownKeyMode { .. }
            | Self::KeyMaterialMismatch { .. }
            | Self::DuplicateDevice(_)
            | Self::UnknownParameterSet { .. }
            | Self::ModeNotAllowed { .. } => None,
        }
    }
}

/// A [`KeySetError::BadFile`].
pub(crate) fn bad(path: &std::path::Path, problem: String, fix: &'static str) -> KeySetError {
    KeySetError::BadFile {
        path: path.to_owned(),
        problem,
        fix,
    }
}
