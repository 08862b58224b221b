//! The outbox: every sealed frame not yet acknowledged, one file each, so that a crash (a power cut, `kill
//! -9`) loses no reading the device has sealed. A frame is written here (atomically and durably:
//! [`write_atomic`]) before it enters the send queue, and deleted when an authenticated acknowledgement says
//! the server has it (accepted or duplicate) or that its message is lost (expired). At start-up, the client
//! sends every frame left here again, in sequence order, before any new one.
//!
//! The directory sits beside the counter file (`7.counter` → `7.counter.outbox/`), and only the process that
//! holds the counter's lock ([`tfhe_sbc_device::std_io::PersistentCounter`]) opens it, so two processes never
//! share one. Each file is one whole frame as it goes on the wire, named by its zero-padded sequence number
//! (`00000000000000000042.frame`, mode 0600); a file is trusted only if its frame's MAC verifies under the
//! device's key and its header names this device and the file's sequence number.

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use tfhe_sbc_device::frame::mac::MacKey;
use tfhe_sbc_device::frame::{FrameHeader, HEADER_BYTES, MAGIC, TAG_BYTES};
use tfhe_sbc_device::std_io::write_atomic;

/// The extension of a frame's file.
const EXTENSION: &str = "frame";
/// The largest file read back: a public-key frame at `N = 4096` with room to spare.
const MAX_FRAME_BYTES: u64 = 1 << 20;

/// A frame read back from the outbox, ready to be sent again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The frame's sequence number.
    pub sequence: u64,
    /// The sequence number of its message's first frame (frames of one message are dropped together).
    pub message_first: u64,
    /// The whole frame.
    pub bytes: Vec<u8>,
}

/// Why the outbox cannot be used. Each message names the file or directory and what to do.
#[derive(Debug)]
pub enum OutboxError {
    /// Reading, writing or listing failed.
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file that is not a frame this device sealed (damaged, truncated, or from another device).
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: &'static str,
    },
}

impl fmt::Display for OutboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { action, path, source } => write!(f, "cannot {action} {}: {source}", path.display()),
            Self::Corrupt { path, problem } => write!(
                f,
                "outbox file {} is not a frame of this device ({problem}): it cannot be sent; move it out of {} \
                 (the readings it held are lost) and start again",
                path.display(),
                path.parent().unwrap_or(Path::new(".")).display()
            ),
        }
    }
}

impl std::error::Error for OutboxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Corrupt { .. } => None,
        }
    }
}

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> OutboxError + 'a {
    move |source| OutboxError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

/// The outbox directory: one file per unacknowledged frame.
#[derive(Debug)]
pub struct Outbox {
    dir: PathBuf,
}

impl Outbox {
    /// The outbox of the counter file at `counter`: `<counter>.outbox`.
    pub fn beside(counter: &Path) -> PathBuf {
        let mut name = counter.as_os_str().to_owned();
        name.push(".outbox");
        PathBuf::from(name)
    }

    /// Opens (or creates, mode 0700) the outbox at `dir`. Call it only while holding the counter's lock.
    pub fn open(dir: &Path) -> Result<Self, OutboxError> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(io_error("create the outbox", dir))?;
        Ok(Self { dir: dir.to_owned() })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, sequence: u64) -> PathBuf {
        self.dir.join(format!("{sequence:020}.{EXTENSION}"))
    }

    /// Every frame in the outbox, in sequence order, each checked: its MAC verifies under `mac_key`, and its
    /// header names `device_id` and the file's sequence number. Temporary files a crash left behind (an
    /// interrupted [`write_atomic`]) are removed; any other file that is not a frame is an error.
    pub fn recover(&self, device_id: u64, mac_key: &MacKey) -> Result<Vec<Recovered>, OutboxError> {
        let listing = fs::read_dir(&self.dir).map_err(io_error("list the outbox", &self.dir))?;
        let mut frames = Vec::new();
        for entry in listing {
            let entry = entry.map_err(io_error("list the outbox", &self.dir))?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                // A temporary file of an interrupted write: its frame was never queued.
                fs::remove_file(&path).map_err(io_error("remove the temporary file", &path))?;
                continue;
            }
            let corrupt = |problem| OutboxError::Corrupt {
                path: path.clone(),
                problem,
            };
            let sequence = name
                .strip_suffix(&format!(".{EXTENSION}"))
                .filter(|digits| digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|digits| digits.parse::<u64>().ok())
                .ok_or_else(|| corrupt("its name is not a 20-digit sequence number with extension .frame"))?;
            let bytes = read_limited(&path)?;
            let message_first = check_frame(&bytes, device_id, sequence, mac_key).map_err(corrupt)?;
            frames.push(Recovered {
                sequence,
                message_first,
                bytes,
            });
        }
        frames.sort_by_key(|f| f.sequence);
        Ok(frames)
    }

    /// Writes `frame` (sequence number `sequence`) atomically and durably, mode 0600.
    pub fn store(&self, sequence: u64, frame: &[u8]) -> Result<(), OutboxError> {
        let path = self.path_of(sequence);
        write_atomic(&path, frame, 0o600).map_err(io_error("write the outbox file", &path))
    }

    /// Deletes the frame `sequence` (it is acknowledged or lost); a file already gone is fine.
    pub fn remove(&self, sequence: u64) -> Result<(), OutboxError> {
        let path = self.path_of(sequence);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("remove the outbox file", &path)(e)),
            _ => Ok(()),
        }
    }
}

fn read_limited(path: &Path) -> Result<Vec<u8>, OutboxError> {
    let file = fs::File::open(path).map_err(io_error("read the outbox file", path))?;
    let mut bytes = Vec::new();
    file.take(MAX_FRAME_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error("read the outbox file", path))?;
    Ok(bytes)
}

/// Checks that `bytes` is a frame sealed by this device with sequence number `sequence`; returns the sequence
/// number of its message's first frame.
fn check_frame(bytes: &[u8], device_id: u64, sequence: u64, mac_key: &MacKey) -> Result<u64, &'static str> {
    if bytes.len() as u64 > MAX_FRAME_BYTES || bytes.len() < HEADER_BYTES + TAG_BYTES || bytes[..4] != MAGIC {
        return Err("not a whole v2 frame");
    }
    let (authenticated, tag) = bytes.split_at(bytes.len() - TAG_BYTES);
    if !mac_key.verify(authenticated, tag) {
        return Err("its MAC does not verify under this credential file's key: damaged, or from another device");
    }
    let header = FrameHeader::read(bytes).ok_or("its header does not decode")?;
    if header.device_id != device_id {
        return Err("it names another device");
    }
    if header.sequence != sequence {
        return Err("its sequence number is not its name's");
    }
    sequence
        .checked_sub(u64::from(header.chunk_index))
        .ok_or("its chunk index is above its sequence number")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_damage_is_reported() {
        let dir = std::env::temp_dir().join(format!("tfhe-sbc-client-outbox-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let outbox = Outbox::open(&dir).unwrap_or_else(|e| panic!("{e}"));
        let key = MacKey::from_bytes([3; 32]);
        let frame = |device_id: u64, sequence: u64, chunk_index: u32| {
            let header = FrameHeader {
                kind: 0,
                parameter_set: 1,
                xof_id: 1,
                body_bits: 11,
                reading_format: 0,
                device_id,
                key_id: 1,
                sequence,
                message_id: 1,
                chunk_index,
                chunk_count: 2,
                message_length: 200,
            };
            let mut bytes = vec![0x5a; HEADER_BYTES + 40 + TAG_BYTES];
            header.write(&mut bytes).unwrap_or_else(|e| panic!("{e}"));
            let tag = key.tag(&bytes[..HEADER_BYTES + 40]);
            bytes[HEADER_BYTES + 40..].copy_from_slice(&tag);
            bytes
        };
        let ok = |r: Result<(), OutboxError>| r.unwrap_or_else(|e| panic!("{e}"));
        ok(outbox.store(11, &frame(7, 11, 1)));
        ok(outbox.store(10, &frame(7, 10, 0)));
        fs::write(dir.join(".00000000000000000012.frame.tmp"), b"half").unwrap_or_else(|e| panic!("{e}"));
        let recovered = outbox.recover(7, &key).unwrap_or_else(|e| panic!("{e}"));
        let firsts: Vec<(u64, u64)> = recovered.iter().map(|r| (r.sequence, r.message_first)).collect();
        assert_eq!(firsts, [(10, 10), (11, 10)]);
        assert_eq!(recovered[1].bytes, frame(7, 11, 1));
        assert!(!dir.join(".00000000000000000012.frame.tmp").exists());

        // Another device's frame, a flipped bit, a wrong name: each a one-line error naming the file.
        let reasons = [
            (frame(8, 12, 0), "names another device"),
            (
                {
                    let mut f = frame(7, 12, 0);
                    f[60] ^= 1;
                    f
                },
                "MAC does not verify",
            ),
            (frame(7, 13, 0), "not its name's"),
            (b"TSBC".to_vec(), "not a whole v2 frame"),
        ];
        for (bytes, reason) in reasons {
            ok(outbox.store(12, &bytes));
            let error = outbox.recover(7, &key).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                error.contains(reason) && error.contains("00000000000000000012.frame") && !error.contains('\n'),
                "{error}"
            );
        }
        ok(outbox.remove(12));
        ok(outbox.remove(12));
        fs::write(dir.join("notes.txt"), b"").unwrap_or_else(|e| panic!("{e}"));
        let error = outbox.recover(7, &key).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            error.contains("notes.txt") && error.contains("move it out of"),
            "{error}"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
