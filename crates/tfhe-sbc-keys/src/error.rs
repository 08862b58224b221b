//! The tool's errors: one line each, saying what was wrong and what to do about it. The binary prints
//! `error: <line>` and exits with code 2.

use std::fmt;
use std::io;
use std::path::PathBuf;
use tfhe_sbc_adapter::key_set::KeySetError;

/// Why a command failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file the command needs does not exist.
    Missing {
        /// The file.
        path: PathBuf,
        /// What it should have held ("client key", "key store", ...).
        what: &'static str,
    },
    /// An I/O operation failed.
    Io {
        /// What the tool was doing ("read", "write", "create directory", ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// `init` into a directory that already holds (part of) a key set.
    AlreadyInitialized {
        /// The file that is in the way.
        path: PathBuf,
    },
    /// Another `tfhe-sbc-keys` holds the directory's lock.
    Locked {
        /// The directory.
        dir: PathBuf,
    },
    /// A file was refused: corrupt, truncated, of another kind or version, or not ours at all.
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// What to do about it.
        fix: &'static str,
    },
    /// Two files that must belong together do not (different key sets, another server key, ...).
    Mismatch {
        /// What does not match, and what to do.
        message: String,
    },
    /// The device id is provisioned already.
    DuplicateDevice {
        /// The device id.
        device_id: u64,
        /// Where it was found.
        path: PathBuf,
    },
    /// A credential file exists for a device the key store does not know (an interrupted `issue`).
    OrphanCredentials {
        /// The device id.
        device_id: u64,
        /// The credential file.
        path: PathBuf,
    },
    /// A key mode the key set's parameter set does not allow.
    ModeNotAllowed {
        /// The mode asked for (its command-line name).
        mode: &'static str,
        /// The key set's parameter set (its command-line name).
        parameters: &'static str,
    },
    /// An argument that contradicts the key set.
    BadArgument {
        /// What is wrong, and what to do.
        message: String,
    },
    /// The operating system's entropy source failed.
    Entropy,
    /// Key generation or provisioning refused its input (a bug, or files that passed every check yet do
    /// not fit together).
    Provisioning {
        /// The underlying error.
        message: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { path, what } => write!(
                f,
                "{} not found (the {what}): run `tfhe-sbc-keys init --dir <DIR>` first, or point --dir at the \
                 directory init wrote",
                path.display()
            ),
            Self::Io { action, path, source } => write!(f, "cannot {action} {}: {source}", path.display()),
            Self::AlreadyInitialized { path } => write!(
                f,
                "{} exists: the directory already holds a key set; pick an empty --dir (replacing a key set \
                 cuts off every device provisioned from it)",
                path.display()
            ),
            Self::Locked { dir } => write!(
                f,
                "another tfhe-sbc-keys is working in {}: wait for it to finish and run the command again",
                dir.display()
            ),
            Self::BadFile { path, problem, fix } => write!(f, "{}: {problem}: {fix}", path.display()),
            Self::Mismatch { message } | Self::BadArgument { message } => f.write_str(message),
            Self::DuplicateDevice { device_id, path } => write!(
                f,
                "device {device_id} is already provisioned (in {}): pick another --device-id",
                path.display()
            ),
            Self::OrphanCredentials { device_id, path } => write!(
                f,
                "{} exists but the key store has no device {device_id} (an interrupted issue?): delete the file \
                 and run issue again",
                path.display()
            ),
            Self::ModeNotAllowed { mode, parameters } if *parameters == "integer" => write!(
                f,
                "--mode {mode} is not allowed with parameter set integer: integer devices hold a secret key (no \
                 tfhe-sbc public key for the 64-bit set; docs/security.md \"Which key modes each set allows\"); use \
                 --mode per-device or --mode fleet"
            ),
            Self::ModeNotAllowed { mode, parameters } => write!(
                f,
                "--mode {mode} is not allowed with parameter set {parameters}: per-device keys need tfhe-lib or \
                 integer (the KS_PBS sets' gates take big-key inputs, docs/security.md \"Which key modes each set \
                 allows\"); use --mode fleet or --mode public-key, or init a tfhe-lib key set"
            ),
            Self::Entropy => f.write_str("the operating system's entropy source failed: cannot draw keys safely"),
            Self::Provisioning { message } => write!(f, "provisioning failed: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub(crate) use tfhe_sbc_adapter::key_set::error::RESTORE;

impl From<KeySetError> for Error {
    fn from(e: KeySetError) -> Self {
        match e {
            KeySetError::Missing { path, what } => Self::Missing { path, what },
            KeySetError::Io { action, path, source } => Self::Io { action, path, source },
            KeySetError::BadFile { path, problem, fix } => Self::BadFile { path, problem, fix },
            KeySetError::Encode { message } => Self::Provisioning { message },
            other => Self::Provisioning {
                message: other.to_string(),
            },
        }
    }
}
