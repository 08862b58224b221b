//! A key set's directory as the trusted party's tool writes it and the server reads it: file names and
//! modes, reading into wiped buffers, and the one atomic writer every file of the workspace goes through.
//!
//! ```text
//! <DIR>/client_key.bin     0600  trusted party only: the tfhe-rs ClientKey (decrypts everything)
//! <DIR>/server_key.bin     0644  the cloud: the tfhe-rs ServerKey
//! <DIR>/public_key.tspk    0644  public-key devices: the seeded public key
//! <DIR>/compact_public_key.tscp
//!                          0644  compact-list devices (integer key sets made with --compact-list): the raw
//!                                tfhe-rs compact public key (tfhe_sbc_device::files::compact_public_key)
//! <DIR>/key_store.bin      0600  the cloud: every device's MAC key and per-device key-switching key
//! <DIR>/devices/<ID>.tsdc  0600  device <ID>'s credential file (its key or the public key, its MAC key)
//! <DIR>/devices/<ID>.tscp  0644  compact-list device <ID>'s copy of compact_public_key.tscp
//! ```

use super::error::{KeySetError, POINT_AT_INIT_DIR};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// The client key's file name.
pub const CLIENT_KEY_FILE: &str = "client_key.bin";
/// The server key's file name.
pub const SERVER_KEY_FILE: &str = "server_key.bin";
/// The public-key file's name.
pub const PUBLIC_KEY_FILE: &str = "public_key.tspk";
/// The compact public-key file's name (integer key sets made for compact lists).
pub const COMPACT_PUBLIC_KEY_FILE: &str = "compact_public_key.tscp";
/// The key store's file name.
pub const KEY_STORE_FILE: &str = "key_store.bin";
/// The directory of the device credential files.
pub const DEVICES_DIR: &str = "devices";

/// Mode of a file that holds a secret: owner read and write only.
pub const SECRET_MODE: u32 = 0o600;
/// Mode of a public file.
pub const PUBLIC_MODE: u32 = 0o644;

/// The credential file of device `device_id` in the key set directory `dir`.
pub fn credentials_path(dir: &Path, device_id: u64) -> PathBuf {
    dir.join(DEVICES_DIR).join(format!("{device_id}.tsdc"))
}

/// The compact public-key file given to compact-list device `device_id` in the key set directory `dir`.
pub fn compact_public_key_path(dir: &Path, device_id: u64) -> PathBuf {
    dir.join(DEVICES_DIR).join(format!("{device_id}.tscp"))
}

/// The whole of `path`, in a buffer that is wiped on drop (the file may hold secrets). `what` names the
/// file in the error if it does not exist.
pub fn read(path: &Path, what: &'static str) -> Result<Zeroizing<Vec<u8>>, KeySetError> {
    let io = |source| KeySetError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    };
    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "std::io::ErrorKind is #[non_exhaustive]: every kind but NotFound is an I/O error"
    )]
    let mut file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => KeySetError::Missing {
            path: path.to_owned(),
            what,
        },
        _ => io(e),
    })?;
    let len = file.metadata().map_err(io)?.len();
    let len = usize::try_from(len).map_err(|_| KeySetError::BadFile {
        path: path.to_owned(),
        problem: format!("{len} bytes is too large"),
        fix: POINT_AT_INIT_DIR,
    })?;
    // Sized in advance, so that reading never reallocates and leaves a copy of a secret behind; one more
    // byte to notice a file that grew.
    let mut bytes = Zeroizing::new(Vec::with_capacity(len + 1));
    file.read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Writes `bytes` to `path` atomically and durably with permission bits `mode`, exactly (whatever the
/// umask): [`write_atomic_io`], with a [`KeySetError::Io`] naming the file on failure.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), KeySetError> {
    write_atomic_io(path, bytes, mode).map_err(|source| KeySetError::Io {
        action: "write",
        path: path.to_owned(),
        source,
    })
}

/// Writes `bytes` to `path` atomically and durably with permission bits `mode`, exactly (whatever the
/// umask): the workspace's one writer, [`tfhe_sbc_device::std_io::write_atomic`] (temporary file with a random
/// name, fsync, rename, fsync of the directory).
pub fn write_atomic_io(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    tfhe_sbc_device::std_io::write_atomic(path, bytes, mode)
}

/// A short hexadecimal form of a fingerprint (its first 8 bytes), for messages.
pub fn short_hex(fingerprint: &[u8; 32]) -> String {
    fingerprint[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Scratch directories for the tests of the key set's files (here and in the key store's).
#[cfg(test)]
pub(super) mod scratch {
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    /// A fresh directory under the system's temporary directory, removed on drop.
    pub(crate) struct TempDir(pub(crate) PathBuf);

    impl TempDir {
        pub(crate) fn new(name: &str) -> Self {
            let path = std::env::temp_dir().join(format!("tfhe-sbc-key-set-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).expect("a temporary directory");
            Self(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The permission bits of `path`.
    pub(crate) fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
    }

    /// The names of the entries of `dir`, sorted.
    pub(crate) fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("listed")
            .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::scratch::{TempDir, mode, names};
    use super::{PUBLIC_MODE, SECRET_MODE, write_atomic};

    /// The bytes land whole with exactly the mode asked for, a rewrite replaces them (and its mode, not the
    /// old file's), and no temporary file is left; a write into a missing directory fails with the file named
    /// and leaves nothing.
    #[test]
    fn write_atomic_sets_the_mode_replaces_and_leaves_no_temporary_file() {
        let dir = TempDir::new("write");
        let path = dir.0.join("secret.bin");
        write_atomic(&path, b"first", SECRET_MODE).expect("written");
        assert_eq!(std::fs::read(&path).expect("read"), b"first");
        assert_eq!(mode(&path), SECRET_MODE);
        write_atomic(&path, b"second, longer", PUBLIC_MODE).expect("rewritten");
        assert_eq!(std::fs::read(&path).expect("read"), b"second, longer");
        assert_eq!(mode(&path), PUBLIC_MODE);
        assert_eq!(names(&dir.0), ["secret.bin"]);

        let missing = dir.0.join("no-such-dir").join("file.bin");
        let err = write_atomic(&missing, b"x", SECRET_MODE).expect_err("no directory");
        assert!(err.to_string().contains("no-such-dir"), "{err}");
        assert_eq!(names(&dir.0), ["secret.bin"]);
    }
}
