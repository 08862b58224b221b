//! The key set directory: file names, reading into wiped buffers, atomic writes with explicit modes, and
//! the directory lock.
//!
//! ```text
//! <DIR>/client_key.bin     0600  trusted party only: the tfhe-rs ClientKey (decrypts everything)
//! <DIR>/server_key.bin     0644  the cloud: the tfhe-rs ServerKey
//! <DIR>/public_key.tspk    0644  public-key devices: the seeded public key
//! <DIR>/key_store.bin      0600  the cloud: every device's MAC key and per-device key-switching key
//! <DIR>/devices/<ID>.tsdc  0600  device <ID>'s credential file (its key or the public key, its MAC key)
//! <DIR>/.lock              0600  held while a command writes
//! ```
//!
//! The directory and `devices/` are created with mode 0700.

use crate::error::Error;
use std::fs::{self, DirBuilder, File, OpenOptions, Permissions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// The client key's file name.
pub const CLIENT_KEY_FILE: &str = "client_key.bin";
/// The server key's file name.
pub const SERVER_KEY_FILE: &str = "server_key.bin";
/// The public-key file's name.
pub const PUBLIC_KEY_FILE: &str = "public_key.tspk";
/// The adapter's key store's file name.
pub const KEY_STORE_FILE: &str = "key_store.bin";
/// The directory of the device credential files.
pub const DEVICES_DIR: &str = "devices";
/// The lock file's name.
pub const LOCK_FILE: &str = ".lock";

/// Mode of a file that holds a secret: owner read and write only.
pub const SECRET_MODE: u32 = 0o600;
/// Mode of a public file.
pub const PUBLIC_MODE: u32 = 0o644;
/// Mode of the directories.
pub const DIR_MODE: u32 = 0o700;

/// The credential file of device `device_id` in `dir`.
pub fn credentials_path(dir: &Path, device_id: u64) -> PathBuf {
    dir.join(DEVICES_DIR).join(format!("{device_id}.tsdc"))
}

/// Creates `path` (and its parents) with mode 0700 if it does not exist.
pub fn create_dir(path: &Path) -> Result<(), Error> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)
        .map_err(|source| Error::Io {
            action: "create directory",
            path: path.to_owned(),
            source,
        })
}

/// The whole of `path`, in a buffer that is wiped on drop (the file may hold secrets). `what` names the
/// file in the error if it does not exist.
pub fn read(path: &Path, what: &'static str) -> Result<Zeroizing<Vec<u8>>, Error> {
    let io = |source| Error::Io {
        action: "read",
        path: path.to_owned(),
        source,
    };
    let mut file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Missing {
            path: path.to_owned(),
            what,
        },
        _ => io(e),
    })?;
    let len = file.metadata().map_err(io)?.len();
    let len = usize::try_from(len).map_err(|_| Error::BadFile {
        path: path.to_owned(),
        problem: format!("{len} bytes is too large"),
        fix: crate::error::POINT_AT_INIT_DIR,
    })?;
    // Sized in advance, so that reading never reallocates and leaves a copy of a secret behind; one more
    // byte to notice a file that grew.
    let mut bytes = Zeroizing::new(Vec::with_capacity(len + 1));
    file.read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Writes `bytes` to `path` atomically with permission bits `mode` (exactly, whatever the umask): a
/// temporary file in the same directory, created with `mode`, written and fsynced, then renamed over
/// `path`, and the directory fsynced. A crash leaves either the old file or the new one.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let io = |action, p: &Path| {
        let p = p.to_owned();
        move |source| Error::Io {
            action,
            path: p,
            source,
        }
    };
    // A leftover of an earlier process with our pid: it was never renamed, so it is garbage.
    let _ = fs::remove_file(&temporary);
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temporary)
            .map_err(io("create", &temporary))?;
        file.set_permissions(Permissions::from_mode(mode))
            .map_err(io("set the permissions of", &temporary))?;
        file.write_all(bytes).map_err(io("write", &temporary))?;
        file.sync_all().map_err(io("sync", &temporary))?;
        fs::rename(&temporary, path).map_err(io("rename into", path))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
        return result;
    }
    File::open(dir).and_then(|d| d.sync_all()).map_err(io("sync", dir))
}

/// The permission bits of `path`, if it exists.
pub fn mode_of(path: &Path) -> Option<u32> {
    fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o777)
}

/// The exclusive lock of a key set directory: held until dropped.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the lock of `dir`, or fails at once if another process holds it.
    pub fn acquire(dir: &Path) -> Result<Self, Error> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(SECRET_MODE)
            .open(&path)
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => Error::Missing {
                    path: dir.to_owned(),
                    what: "key set directory",
                },
                _ => Error::Io {
                    action: "open",
                    path: path.clone(),
                    source,
                },
            })?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(fs::TryLockError::WouldBlock) => Err(Error::Locked { dir: dir.to_owned() }),
            Err(fs::TryLockError::Error(source)) => Err(Error::Io {
                action: "lock",
                path,
                source,
            }),
        }
    }
}
