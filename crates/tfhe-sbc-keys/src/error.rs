//! The tool's errors: one line each, saying what was wrong and what to do about it. The binary prints
//! `error: <line>` and exits with code 2. A key-set file's trouble (missing, unreadable, refused) is the
//! adapter's [`KeySetError`], wrapped as it is.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use tfhe_sbc_adapter::key_set::KeySetError;

/// Why a command failed.
#[derive(Debug)]
pub enum Error {
    /// A file of the key set is missing, unreadable, unwritable or refused (the adapter's key-set module
    /// reads and writes them all; its one line is this error's).
    KeySet(KeySetError),
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
    /// The journal of an interrupted `issue` does not agree with the key set (or is not a journal): recovery
    /// touched nothing.
    InconsistentJournal {
        /// The journal.
        path: PathBuf,
        /// What does not agree.
        problem: String,
        /// What to do.
        fix: &'static str,
    },
    /// An `issue` pass failed after its journal was written: the journal is kept for the recovery (`repair`,
    /// or the next `issue`), which finishes the pass if the key store was written, or rolls it back.
    Interrupted {
        /// The pass's journal.
        journal: PathBuf,
        /// The key set directory.
        dir: PathBuf,
        /// What failed.
        cause: Box<Error>,
    },
    /// `check-frame`: the key set's intake refused the frame.
    FrameRefused {
        /// The frame's length.
        bytes: usize,
        /// The intake's reason.
        reason: tfhe_sbc_adapter::IntakeError,
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

/// An [`Error::Provisioning`] carrying `e`'s message (for `map_err` on what key generation and provisioning
/// refuse).
pub(crate) fn provisioning(e: impl core::fmt::Display) -> Error {
    Error::Provisioning { message: e.to_string() }
}

impl Error {
    /// A [`KeySetError::Missing`]: `path` does not exist; it should have held `what`.
    pub(crate) fn missing(path: &Path, what: &'static str) -> Self {
        Self::KeySet(KeySetError::Missing {
            path: path.to_owned(),
            what,
        })
    }

    /// A [`KeySetError::Io`]: `action` on `path` failed with `source`.
    pub(crate) fn io(action: &'static str, path: &Path, source: io::Error) -> Self {
        Self::KeySet(KeySetError::Io {
            action,
            path: path.to_owned(),
            source,
        })
    }

    /// A [`KeySetError::BadFile`]: `path` was refused for `problem`; `fix` says what to do.
    pub(crate) fn bad_file(path: &Path, problem: String, fix: &'static str) -> Self {
        Self::KeySet(KeySetError::BadFile {
            path: path.to_owned(),
            problem,
            fix,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::KeySet(e) => fmt::Display::fmt(e, f),
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
            Self::Mismatch { message } | Self::BadArgument { message } => f.write_str(message),
            Self::DuplicateDevice { device_id, path } => write!(
                f,
                "device {device_id} is already provisioned (in {}): pick another --device-id",
                path.display()
            ),
            Self::OrphanCredentials { device_id, path } => write!(
                f,
                "{} exists but the key store has no device {device_id} (left by an interrupted issue of an older \
                 tfhe-sbc-keys, or copied in): run `tfhe-sbc-keys repair --dir {}`, which moves the files of \
                 devices the key store does not hold into its quarantine/ directory, then issue again",
                path.display(),
                path.parent().and_then(Path::parent).unwrap_or(Path::new(".")).display()
            ),
            Self::FrameRefused { bytes, reason } => write!(
                f,
                "frame refused ({bytes} bytes): {reason} [{}]",
                format!("{reason:?}").split(['(', ' ', '{']).next().unwrap_or_default()
            ),
            Self::Interrupted { journal, dir, cause } => write!(
                f,
                "{cause}; the issue pass did not finish and its journal {} is kept: run `tfhe-sbc-keys repair --dir \
                 {}` (or the same issue again), which finishes the pass if the key store was written, or rolls it \
                 back",
                journal.display(),
                dir.display()
            ),
            Self::InconsistentJournal { path, problem, fix } => {
                write!(f, "the issue journal {} {problem}: {fix}", path.display())
            }
            Self::Entropy => f.write_str("the operating system's entropy source failed: cannot draw keys safely"),
            Self::Provisioning { message } => write!(f, "provisioning failed: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::KeySet(e) => std::error::Error::source(e),
            Self::Interrupted { cause, .. } => Some(cause.as_ref()),
            Self::AlreadyInitialized { .. }
            | Self::Locked { .. }
            | Self::Mismatch { .. }
            | Self::DuplicateDevice { .. }
            | Self::OrphanCredentials { .. }
            | Self::InconsistentJournal { .. }
            | Self::FrameRefused { .. }
            | Self::BadArgument { .. }
            | Self::Entropy
            | Self::Provisioning { .. } => None,
        }
    }
}

pub(crate) use tfhe_sbc_adapter::key_set::error::RESTORE;

impl From<KeySetError> for Error {
    fn from(e: KeySetError) -> Self {
        Self::KeySet(e)
    }
}
