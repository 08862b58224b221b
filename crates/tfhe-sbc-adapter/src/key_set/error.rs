//! Why a file of a key set was refused or could not be read or written: one line each, saying what was
//! wrong and what to do about it.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What to do about a damaged file of the key set.
pub const RESTORE: &str = "restore it from a backup, or run init again in a new --dir";
/// What to do about a file that is not ours.
pub const POINT_AT_INIT_DIR: &str = "point --dir at the directory init wrote";

/// Why a key-set file (server key, client key, key store, the files of [`super::files`]) was refused.
#[derive(Debug)]
#[non_exhaustive]
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
}

impl fmt::Display for KeySetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { path, what } => write!(
                f,
                "{} not found (the {what}): run `tfhe-sbc-keys init --dir <DIR>` first, or point --dir at the \
                 directory init wrote",
                path.display()
            ),
            Self::Io { action, path, source } => write!(f, "cannot {action} {}: {source}", path.display()),
            Self::BadFile { path, problem, fix } => write!(f, "{}: {problem}: {fix}", path.display()),
            Self::Encode { message } => write!(f, "provisioning failed: {message}"),
        }
    }
}

impl std::error::Error for KeySetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
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
