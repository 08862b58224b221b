//! The key set directory as the tool manages it: its file names, modes and reading and writing come from
//! the adapter's key-set module (`tfhe_sbc_adapter::key_set::files`, shared with the server); here are the
//! directories (mode 0700) and the directory lock.
//!
//! ```text
//! <DIR>/client_key.bin     0600  trusted party only: the tfhe-rs ClientKey (decrypts everything)
//! <DIR>/server_key.bin     0644  the cloud: the tfhe-rs ServerKey
//! <DIR>/public_key.tspk    0644  public-key devices: the seeded public key
//! <DIR>/compact_public_key.tscp
//!                          0644  compact-list devices (init --compact-list): tfhe-rs's compact public key
//! <DIR>/key_store.bin      0600  the cloud: every device's MAC key and per-device key-switching key
//! <DIR>/devices/<ID>.tsdc  0600  device <ID>'s credential file (its key or the public key, its MAC key)
//! <DIR>/devices/<ID>.tscp  0644  compact-list device <ID>'s compact public key
//! <DIR>/.lock              0600  held while a command writes
//! ```
//!
//! The directory and `devices/` are created with mode 0700.

use crate::error::Error;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use zeroize::Zeroizing;

pub use tfhe_sbc_adapter::key_set::files::{
    CLIENT_KEY_FILE, COMPACT_PUBLIC_KEY_FILE, DEVICES_DIR, KEY_STORE_FILE, PUBLIC_KEY_FILE, PUBLIC_MODE, SECRET_MODE,
    SERVER_KEY_FILE, compact_public_key_path, credentials_path,
};

/// Checks that the key set directory `dir` exists.
pub(crate) fn check_dir(dir: &Path) -> Result<(), Error> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Error::missing(dir, "key set directory"))
    }
}

/// The lock file's name.
pub const LOCK_FILE: &str = ".lock";

/// Mode of the directories.
pub const DIR_MODE: u32 = 0o700;

/// Creates `path` (and its parents) with mode 0700 if it does not exist.
pub fn create_dir(path: &Path) -> Result<(), Error> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)
        .map_err(|source| Error::io("create directory", path, source))
}

/// The whole of `path`, in a buffer that is wiped on drop: [`tfhe_sbc_adapter::key_set::files::read`].
pub fn read(path: &Path, what: &'static str) -> Result<Zeroizing<Vec<u8>>, Error> {
    Ok(tfhe_sbc_adapter::key_set::files::read(path, what)?)
}

/// Writes `bytes` to `path` atomically and durably with permission bits `mode`, exactly:
/// [`tfhe_sbc_adapter::key_set::files::write_atomic`], the workspace's one atomic writer.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    Ok(tfhe_sbc_adapter::key_set::files::write_atomic(path, bytes, mode)?)
}

/// The permission bits of `path`, if it exists.
pub fn mode_of(path: &Path) -> Option<u32> {
    fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o777)
}

/// How long [`DirLock::acquire`] waits for a lock another process holds.
pub const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// The exclusive lock of a key set directory: held until dropped.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the lock of `dir`, or fails if another process still holds it after [`LOCK_PATIENCE`] (a
    /// process that forks holds its parent's locks until the child's `exec`: a test suite or a service
    /// that starts processes keeps a lock its thread just released for that moment).
    pub fn acquire(dir: &Path) -> Result<Self, Error> {
        let path = dir.join(LOCK_FILE);
        #[expect(
            clippy::wildcard_enum_match_arm,
            reason = "std::io::ErrorKind is #[non_exhaustive]: every kind but NotFound is an I/O error"
        )]
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(SECRET_MODE)
            .open(&path)
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => Error::missing(dir, "key set directory"),
                _ => Error::io("open", &path, source),
            })?;
        let started = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { _file: file }),
                Err(fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_PATIENCE => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(fs::TryLockError::WouldBlock) => return Err(Error::Locked { dir: dir.to_owned() }),
                Err(fs::TryLockError::Error(source)) => return Err(Error::io("lock", &path, source)),
            }
        }
    }

    /// [`DirLock::acquire`] of a directory that holds a key set (its server key file): any other directory
    /// is refused with the server key's error before a lock file is made in it.
    pub fn acquire_key_set(dir: &Path) -> Result<Self, Error> {
        let server_key = dir.join(SERVER_KEY_FILE);
        if !server_key.is_file() {
            tfhe_sbc_adapter::key_set::server_key::read_server_key_envelope(&server_key)?;
        }
        Self::acquire(dir)
    }
}
