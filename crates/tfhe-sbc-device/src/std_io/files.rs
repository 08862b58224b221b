//! The device's files on Linux: the credential file read from a path, and what goes wrong with files.

use crate::error::Error;
use crate::files::credentials::{Credentials, decode_credentials};
use std::borrow::ToOwned;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::vec::Vec;
use zeroize::Zeroizing;

/// What went wrong with a device file (credentials, counter). Each message names the file and what to do.
#[derive(Debug)]
pub enum FileError {
    /// Reading or writing failed.
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The file is not a valid credential file.
    BadCredentials {
        /// The file.
        path: PathBuf,
        /// What the decoder found.
        error: Error,
    },
    /// The counter file does not hold a sequence number.
    BadCounter {
        /// The file.
        path: PathBuf,
    },
    /// The counter has no sequence numbers left (or the block size is 0).
    CounterExhausted {
        /// The file.
        path: PathBuf,
    },
    /// Another process holds the counter file (its lock file is locked): two programs sending with one
    /// credential file would reuse sequence numbers.
    CounterInUse {
        /// The counter file.
        path: PathBuf,
    },
    /// The message cannot be given sequence numbers (too long, or a chunk size of 0).
    Message(Error),
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { action, path, source } if source.kind() == io::ErrorKind::NotFound => {
                write!(f, "cannot {action} {}: no such file or directory", path.display())
            }
            Self::Io { action, path, source } => write!(f, "cannot {action} {}: {source}", path.display()),
            Self::BadCredentials { path, error } => write!(
                f,
                "{} is not a valid device credential file ({error}): copy the devices/<ID>.tsdc file that \
                 `tfhe-sbc-keys issue` wrote for this device again",
                path.display()
            ),
            Self::BadCounter { path } => write!(
                f,
                "counter file {} does not hold a sequence number: write the next unused sequence number into it \
                 (one decimal number), or delete it only if the server has never accepted a frame from this device",
                path.display()
            ),
            Self::CounterExhausted { path } => write!(
                f,
                "frame counter {} has no sequence numbers left (or the block size is 0): provision the device \
                 again under a new device id",
                path.display()
            ),
            Self::CounterInUse { path } => write!(
                f,
                "counter file {} is in use by another process: run one client per credential file (stop the \
                 other one first)",
                path.display()
            ),
            Self::Message(error) => write!(f, "cannot reserve sequence numbers for the message: {error}"),
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::BadCredentials { error, .. } | Self::Message(error) => Some(error),
            Self::BadCounter { .. } | Self::CounterExhausted { .. } | Self::CounterInUse { .. } => None,
        }
    }
}

pub(crate) fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> FileError + 'a {
    move |source| FileError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

/// A credential file read from disk, checked, in a buffer that is wiped on drop (it holds the device's
/// secrets). [`CredentialsFile::decode`] borrows the key material from it.
pub struct CredentialsFile {
    path: PathBuf,
    bytes: Zeroizing<Vec<u8>>,
    private: bool,
}

impl CredentialsFile {
    /// The largest credential file read: a public-key file at `N = 4096` with room to spare.
    pub const MAX_BYTES: u64 = 1 << 16;

    /// Reads and checks the credential file at `path` (`crate::files::credentials`).
    pub fn read(path: &Path) -> Result<Self, FileError> {
        let mut file = File::open(path).map_err(io_error("read credential file", path))?;
        let metadata = file.metadata().map_err(io_error("read credential file", path))?;
        if metadata.len() > Self::MAX_BYTES {
            return Err(FileError::BadCredentials {
                path: path.to_owned(),
                error: Error::BadKeyFile,
            });
        }
        #[cfg(unix)]
        let private = {
            use std::os::unix::fs::PermissionsExt;
            metadata.permissions().mode() & 0o077 == 0
        };
        #[cfg(not(unix))]
        let private = true;
        let mut bytes = Zeroizing::new(Vec::with_capacity(metadata.len() as usize));
        file.read_to_end(&mut bytes)
            .map_err(io_error("read credential file", path))?;
        let this = Self {
            path: path.to_owned(),
            bytes,
            private,
        };
        this.decode()?;
        Ok(this)
    }

    /// The checked contents: mode, parameter set, device id, key id, MAC key and key material.
    pub fn decode(&self) -> Result<Credentials<'_>, FileError> {
        decode_credentials(&self.bytes).map_err(|error| FileError::BadCredentials {
            path: self.path.clone(),
            error,
        })
    }

    /// The path it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether only its owner may read it (Unix mode `0600` or stricter): it holds secrets.
    pub fn is_private(&self) -> bool {
        self.private
    }
}

impl fmt::Debug for CredentialsFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CredentialsFile")
            .field("path", &self.path)
            .field("bytes", &"<redacted>")
            .finish()
    }
}

/// Writes `bytes` to `path` atomically and durably with permission bits `mode` (on Unix, exactly, whatever
/// the umask): every writer of the workspace goes through this one function (the client's counter file, the
/// keys tool's files and key store, the server's replay floors). The `atomic-write-file` crate does the steps:
/// a temporary file with a random name in the same directory (two processes never share one), created with
/// `mode` (applied before a byte is written), written and fsynced, renamed over `path`, and the directory
/// fsynced. A crash leaves the old file or the new one, never a mix; a failure removes the temporary file.
/// The old file's mode and owner are not carried over.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    use std::io::Write as _;
    let mut options = atomic_write_file::OpenOptions::new();
    #[cfg(unix)]
    {
        use atomic_write_file::unix::OpenOptionsExt as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        options.preserve_mode(false).preserve_owner(false).mode(mode);
    }
    let mut file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // The umask may have narrowed `mode`: set it exactly, still before any byte is written.
        file.as_file().set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    file.write_all(bytes)?;
    // Commit: fsync the file, rename it over `path`, fsync the directory. Dropped uncommitted (on error), the
    // temporary file is removed.
    file.commit()
}
