//! What a device program on Linux (a Raspberry Pi) needs around the encryption (feature `std`): the
//! credential file from a path, an encryptor for whatever mode and parameter set that file names, a frame
//! counter persisted so that a restart never reuses a sequence number, and the stream framing of frames and
//! acknowledgements ([`crate::ack`]).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::net::TcpStream;
//! use tfhe_sbc_device::std_io::{CredentialsFile, MessageEncryptor, PersistentCounter, read_ack, write_frame};
//!
//! let file = CredentialsFile::read("devices/7.tsdc".as_ref())?;
//! let credentials = file.decode()?;
//! let rng = tfhe_sbc_device::seeding::from_os_entropy()?; // feature `getrandom`
//! let mut encryptor = MessageEncryptor::new(&credentials, rng)?;
//! let mut counter = PersistentCounter::open("devices/7.counter".as_ref(), PersistentCounter::DEFAULT_BLOCK)?;
//!
//! let readings = [21u8, 22, 23];
//! let outgoing = counter.begin_message(readings.len(), encryptor.chunk_bytes())?;
//! let frames = encryptor.encrypt_message(&credentials.credentials, &outgoing, &readings)?;
//! let mut socket = TcpStream::connect("127.0.0.1:7700")?;
//! for frame in &frames {
//!     write_frame(&mut socket, &frame.bytes)?;
//! }
//! for _ in &frames {
//!     let ack = read_ack(&mut socket)?.ok_or("server closed the connection")?;
//!     println!("{:?} for sequence {}", ack.status, ack.sequence);
//! }
//! # Ok(())
//! # }
//! ```

use crate::ack::{ACK_BYTES, Ack};
use crate::credentials_file::{Credentials, KeyMode, decode_credentials};
use crate::encryption::GlweEncryptor;
use crate::error::{Error, Result};
use crate::frame_mac::DeviceCredentials;
use crate::message::{Chunk, chunks};
use crate::public_key::decode_public_key;
use crate::public_key_encryptor::PublicKeyEncryptor;
use crate::wire::{FrameCounter, FrameKind, OutgoingMessage, frame_bytes};
use crate::xof::Blake2bXof;
use std::borrow::ToOwned;
use std::boxed::Box;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::vec;
use std::vec::Vec;
use tfhe_sbc_core::parameters::GlweParameters;
use zeroize::Zeroizing;

/// Writes one length-delimited frame: its length as a little-endian `u32`, then its bytes.
pub fn write_frame<W: Write + ?Sized>(writer: &mut W, frame: &[u8]) -> io::Result<()> {
    let len = u32::try_from(frame.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    let mut prefixed = Vec::with_capacity(4 + frame.len());
    prefixed.extend_from_slice(&len.to_le_bytes());
    prefixed.extend_from_slice(frame);
    writer.write_all(&prefixed)
}

/// Writes one acknowledgement record (the server's side).
pub fn write_ack<W: Write + ?Sized>(writer: &mut W, ack: &Ack) -> io::Result<()> {
    writer.write_all(&ack.encode())
}

/// Reads one acknowledgement record; `Ok(None)` at a clean end of stream (between records). A record that
/// does not decode is an [`io::ErrorKind::InvalidData`] error carrying the [`crate::ack::AckError`].
pub fn read_ack<R: Read + ?Sized>(reader: &mut R) -> io::Result<Option<Ack>> {
    let mut record = [0u8; ACK_BYTES];
    let mut filled = 0;
    while filled < ACK_BYTES {
        match reader.read(&mut record[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ack::decode(&record)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// What went wrong with a device file (credentials, counter). Each message names the file and what to do.
#[derive(Debug)]
#[non_exhaustive]
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
            Self::Message(error) => write!(f, "cannot reserve sequence numbers for the message: {error}"),
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::BadCredentials { error, .. } | Self::Message(error) => Some(error),
            _ => None,
        }
    }
}

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> FileError + 'a {
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

    /// Reads and checks the credential file at `path` (`crate::credentials_file`).
    pub fn read(path: &Path) -> core::result::Result<Self, FileError> {
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
    pub fn decode(&self) -> core::result::Result<Credentials<'_>, FileError> {
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

/// A frame counter whose high-water mark lives in a file, so that a restart never reuses a sequence number
/// ([`FrameCounter`]'s first strategy).
///
/// The file holds one decimal number: the lowest sequence number no run has reserved. Opening it reserves a
/// block of `block` numbers by writing the block's end first (write to a temporary file, `fsync`, rename,
/// `fsync` the directory), then hands the block out; running out of it reserves the next block the same
/// way. A crash loses at most the rest of a block, never reuses a number. Two processes must not share one
/// counter file.
#[derive(Debug)]
pub struct PersistentCounter {
    path: PathBuf,
    counter: FrameCounter,
    block: u64,
}

impl PersistentCounter {
    /// The default block: one file write per 65,536 frames.
    pub const DEFAULT_BLOCK: u64 = 1 << 16;

    /// Opens (or creates, starting from 0) the counter file at `path` and reserves the first block.
    pub fn open(path: &Path, block: u64) -> core::result::Result<Self, FileError> {
        let start = match fs::read_to_string(path) {
            Ok(text) => text
                .trim()
                .parse::<u64>()
                .map_err(|_| FileError::BadCounter { path: path.to_owned() })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(io_error("read counter file", path)(e)),
        };
        let exhausted = || FileError::CounterExhausted { path: path.to_owned() };
        let end = start.checked_add(block).filter(|_| block > 0).ok_or_else(exhausted)?;
        persist(path, end)?;
        Ok(Self {
            path: path.to_owned(),
            counter: FrameCounter::with_limit(start, end),
            block,
        })
    }

    /// The next sequence number this counter hands out.
    pub fn next_sequence(&self) -> u64 {
        self.counter.next_sequence()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reserves the sequence numbers of a message of `message_length` bytes in chunks of `chunk_bytes`
    /// ([`FrameCounter::begin_message`]), reserving (and persisting) the next block first if needed.
    pub fn begin_message(
        &mut self,
        message_length: usize,
        chunk_bytes: usize,
    ) -> core::result::Result<OutgoingMessage, FileError> {
        match self.counter.begin_message(message_length, chunk_bytes) {
            Err(Error::SequenceExhausted) => {}
            other => return other.map_err(FileError::Message),
        }
        let next = self.counter.next_sequence();
        let end = next
            .checked_add(self.counter.remaining())
            .and_then(|end| end.checked_add(self.block))
            .ok_or_else(|| FileError::CounterExhausted {
                path: self.path.clone(),
            })?;
        persist(&self.path, end)?;
        self.counter.extend_limit(end);
        self.counter
            .begin_message(message_length, chunk_bytes)
            .map_err(|_| FileError::CounterExhausted {
                path: self.path.clone(),
            })
    }
}

/// Writes `value` into `path` atomically and durably: temporary file, `fsync`, rename, `fsync` of the
/// directory.
fn persist(path: &Path, value: u64) -> core::result::Result<(), FileError> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let write = || -> io::Result<()> {
        let mut file = File::create(&temporary)?;
        file.write_all(std::format!("{value}\n").as_bytes())?;
        file.sync_all()?;
        fs::rename(&temporary, path)?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        // Directories can be opened and synced on Unix; elsewhere the rename is what we have.
        if let Ok(dir) = File::open(parent) {
            let _ = dir.sync_all();
        }
        Ok(())
    };
    write().map_err(io_error("write counter file", path))
}

/// One encrypted, authenticated frame and its sequence number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedFrame {
    /// The frame's sequence number.
    pub sequence: u64,
    /// The whole frame (wire format v2).
    pub bytes: Vec<u8>,
}

/// The frames of one kind and size, from one encryptor of the right `N` and `K`.
trait ChunkEncryptor: Send {
    fn encrypt_chunk(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize>;

    /// Makes frames carry the top `body_bits` bits of each body coefficient.
    fn set_body_bits(&mut self, body_bits: u32) -> Result<()>;

    /// The body bits frames carry.
    fn body_bits(&self) -> u32;
}

struct SecretKeyChunks<const N: usize, const K: usize> {
    encryptor: GlweEncryptor<N, K>,
}

impl<const N: usize, const K: usize> ChunkEncryptor for SecretKeyChunks<N, K> {
    fn encrypt_chunk(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        self.encryptor
            .encrypt_seeded_frame_into(credentials, message, chunk, out)
    }

    fn set_body_bits(&mut self, body_bits: u32) -> Result<()> {
        self.encryptor.set_body_bits(body_bits)
    }

    fn body_bits(&self) -> u32 {
        self.encryptor.body_bits()
    }
}

struct PublicKeyChunks<const N: usize, const K: usize> {
    encryptor: PublicKeyEncryptor<N, K>,
}

impl<const N: usize, const K: usize> ChunkEncryptor for PublicKeyChunks<N, K> {
    fn encrypt_chunk(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        self.encryptor
            .encrypt_public_key_frame_into(credentials, message, chunk, out)
    }

    /// Public-key frames carry the full body (their mask travels in full anyway).
    fn set_body_bits(&mut self, body_bits: u32) -> Result<()> {
        if body_bits == 32 {
            Ok(())
        } else {
            Err(Error::Core(tfhe_sbc_core::Error::UnsupportedBodyBits {
                body_bits,
                torus_bits: 32,
            }))
        }
    }

    fn body_bits(&self) -> u32 {
        32
    }
}

fn secret_key_chunks<const N: usize, const K: usize>(
    params: &GlweParameters,
    packed_key: &[u8],
    rng: Blake2bXof,
) -> Result<Box<dyn ChunkEncryptor>> {
    // Built in place on the heap: the empty encryptor holds no secret, and the key's spectrum is computed
    // where it stays (no copy of it left behind by a move).
    let mut chunks = Box::new(SecretKeyChunks::<N, K> {
        encryptor: GlweEncryptor::EMPTY,
    });
    chunks.encryptor.set_packed_key(params, packed_key)?;
    chunks.encryptor.set_rng(rng);
    Ok(chunks)
}

fn public_key_chunks<const N: usize, const K: usize>(
    params: &GlweParameters,
    key_id: u32,
    public_key_file: &[u8],
    rng: Blake2bXof,
) -> Result<Box<dyn ChunkEncryptor>> {
    let mut body = vec![0u32; N];
    let header = decode_public_key(public_key_file, &mut body)?;
    if header.parameters.id() != params.id() || header.key_id != key_id {
        return Err(Error::BadKeyFile);
    }
    Ok(Box::new(PublicKeyChunks::<N, K> {
        encryptor: PublicKeyEncryptor::new(params, &header.seed, &body, rng)?,
    }))
}

/// The encryptor a credential file calls for: secret-key (fleet or per-device) or public-key, for the
/// file's parameter set, on the heap. Encrypts whole messages into frames.
pub struct MessageEncryptor {
    inner: Box<dyn ChunkEncryptor>,
    mode: KeyMode,
    parameters: GlweParameters,
}

impl MessageEncryptor {
    /// The encryptor for `credentials`, drawing its randomness from `rng` (seed it from the OS:
    /// `seeding::from_os_entropy`).
    pub fn new(credentials: &Credentials<'_>, rng: Blake2bXof) -> Result<Self> {
        let params = &credentials.parameters;
        let (n, k) = (params.polynomial_size().0, params.glwe_dimension().0);
        let material = credentials.key_material;
        let key_id = credentials.credentials.key_id();
        let inner = match (credentials.mode, n, k) {
            (KeyMode::PublicKey, 1024, 1) => public_key_chunks::<1024, 1>(params, key_id, material, rng)?,
            (KeyMode::PublicKey, 512, 3) => public_key_chunks::<512, 3>(params, key_id, material, rng)?,
            (KeyMode::PublicKey, 1024, 2) => public_key_chunks::<1024, 2>(params, key_id, material, rng)?,
            (KeyMode::PublicKey, ..) => return Err(Error::UnsupportedGlweDimension(k)),
            (_, 1024, 1) => secret_key_chunks::<1024, 1>(params, material, rng)?,
            (_, 512, 3) => secret_key_chunks::<512, 3>(params, material, rng)?,
            (_, 1024, 2) => secret_key_chunks::<1024, 2>(params, material, rng)?,
            _ => return Err(Error::UnsupportedGlweDimension(k)),
        };
        Ok(Self {
            inner,
            mode: credentials.mode,
            parameters: *params,
        })
    }

    /// The key mode.
    pub fn mode(&self) -> KeyMode {
        self.mode
    }

    /// The parameter set.
    pub fn parameters(&self) -> &GlweParameters {
        &self.parameters
    }

    /// The message bytes one frame carries: `N / 8`.
    pub fn chunk_bytes(&self) -> usize {
        self.parameters.polynomial_size().0 / 8
    }

    /// The kind of frame this encryptor writes.
    pub fn frame_kind(&self) -> FrameKind {
        match self.mode {
            KeyMode::PublicKey => FrameKind::PublicKey,
            _ => FrameKind::Seeded,
        }
    }

    /// Makes secret-key frames carry only the top `body_bits` bits of each body coefficient (a compact body:
    /// from the set's `compact_body_bits()` to 32). Public-key frames take only 32.
    pub fn set_body_bits(&mut self, body_bits: u32) -> Result<()> {
        self.inner.set_body_bits(body_bits)
    }

    /// Makes secret-key frames compact at the set's smallest width (`compact_body_bits()`); public-key
    /// frames stay full. Returns the body bits frames now carry.
    pub fn use_compact_body(&mut self) -> u32 {
        if self.mode != KeyMode::PublicKey {
            // The set's own width is always accepted for its secret-key encryptor.
            let _ = self.inner.set_body_bits(self.parameters.compact_body_bits());
        }
        self.inner.body_bits()
    }

    /// The body bits frames carry.
    pub fn body_bits(&self) -> u32 {
        self.inner.body_bits()
    }

    /// The length of each frame (with the body bits in use).
    pub fn frame_bytes(&self) -> usize {
        let (n, k) = (self.parameters.polynomial_size().0, self.parameters.glwe_dimension().0);
        frame_bytes(self.frame_kind(), k, n, 32, self.body_bits())
    }

    /// The buffer one frame is computed in: the full-body frame (a compact body is computed in full, then
    /// packed).
    fn buffer_bytes(&self) -> usize {
        let (n, k) = (self.parameters.polynomial_size().0, self.parameters.glwe_dimension().0);
        frame_bytes(self.frame_kind(), k, n, 32, 32)
    }

    /// Encrypts `message` (reserved as `outgoing`, of `message.len()` bytes in chunks of
    /// [`Self::chunk_bytes`]) into its frames, in sequence order.
    pub fn encrypt_message(
        &mut self,
        credentials: &DeviceCredentials,
        outgoing: &OutgoingMessage,
        message: &[u8],
    ) -> Result<Vec<SealedFrame>> {
        let mut frames = Vec::with_capacity(outgoing.chunk_count() as usize);
        let mut out = vec![0u8; self.buffer_bytes()];
        for chunk in chunks(message, self.chunk_bytes()) {
            let len = self.inner.encrypt_chunk(credentials, outgoing, &chunk, &mut out)?;
            frames.push(SealedFrame {
                sequence: outgoing.first_sequence() + u64::from(chunk.index),
                bytes: out[..len].to_vec(),
            });
        }
        Ok(frames)
    }
}

impl fmt::Debug for MessageEncryptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageEncryptor")
            .field("mode", &self.mode)
            .field("parameter_set", &self.parameters.id())
            .finish_non_exhaustive()
    }
}

/// A short, human name of a key mode: `fleet`, `per-device`, `public-key` (the provisioning tool's names).
pub fn mode_name(mode: KeyMode) -> &'static str {
    match mode {
        KeyMode::FleetSecretKey => "fleet",
        KeyMode::PerDeviceSecretKey => "per-device",
        KeyMode::PublicKey => "public-key",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ack::AckStatus;

    /// A fresh, empty directory under the system's temporary directory.
    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(std::format!("tfhe-sbc-std-io-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn counter_reserves_blocks_and_never_goes_back() {
        let dir = scratch_dir("counter");
        let path = dir.join("7.counter");
        let mut counter = PersistentCounter::open(&path, 4).unwrap();
        assert_eq!(counter.next_sequence(), 0);
        assert_eq!(fs::read_to_string(&path).unwrap(), "4\n");
        let first = counter.begin_message(300, 128).unwrap(); // 3 chunks: 0, 1, 2
        assert_eq!((first.first_sequence(), first.chunk_count()), (0, 3));
        let second = counter.begin_message(200, 128).unwrap(); // 2 chunks: past the block, 3 and 4
        assert_eq!(second.first_sequence(), 3);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "8\n",
            "the next block (the old end plus 4) persisted before its numbers were handed out"
        );
        drop(counter);
        // A restart starts at the persisted end: every number handed out before stays below it.
        let counter = PersistentCounter::open(&path, 4).unwrap();
        assert_eq!(counter.next_sequence(), 8);
        assert!(matches!(
            PersistentCounter::open(&path, 0),
            Err(FileError::CounterExhausted { .. })
        ));
        fs::write(&path, "nine\n").unwrap();
        let error = PersistentCounter::open(&path, 4).unwrap_err();
        assert!(matches!(error, FileError::BadCounter { .. }));
        assert!(std::format!("{error}").contains("7.counter"));
        fs::write(&path, std::format!("{}\n", u64::MAX - 2)).unwrap();
        assert!(matches!(
            PersistentCounter::open(&path, 4),
            Err(FileError::CounterExhausted { .. })
        ));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn credential_files_are_checked() {
        let dir = scratch_dir("credentials");
        let missing = CredentialsFile::read(&dir.join("absent.tsdc")).unwrap_err();
        assert!(std::format!("{missing}").contains("no such file"), "{missing}");
        fs::write(dir.join("bad.tsdc"), b"TSDC and then nothing useful").unwrap();
        let bad = CredentialsFile::read(&dir.join("bad.tsdc")).unwrap_err();
        assert!(matches!(bad, FileError::BadCredentials { .. }));
        assert!(std::format!("{bad}").contains("tfhe-sbc-keys issue"), "{bad}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn frames_and_acks_over_a_stream() {
        let mut wire = Vec::new();
        write_frame(&mut wire, b"frame").unwrap();
        assert_eq!(wire, [5, 0, 0, 0, b'f', b'r', b'a', b'm', b'e']);
        let mut acks = Vec::new();
        let ack = Ack::new(AckStatus::Accepted, 7, 12);
        write_ack(&mut acks, &ack).unwrap();
        write_ack(&mut acks, &ack).unwrap();
        let mut reader = &acks[..];
        assert_eq!(read_ack(&mut reader).unwrap(), Some(ack));
        assert_eq!(read_ack(&mut reader).unwrap(), Some(ack));
        assert_eq!(read_ack(&mut reader).unwrap(), None);
        let mut truncated = &acks[..10];
        assert_eq!(
            read_ack(&mut truncated).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        let garbage = [0u8; ACK_BYTES];
        assert_eq!(
            read_ack(&mut &garbage[..]).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
