//! What can be wrong with bytes received from a device.

use core::fmt;

/// Why a frame was rejected. Every malformed input maps to one of these; intake never panics.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IntakeError {
    /// The header could not be decoded (truncated, or a malformed varint); the postcard error says which.
    MalformedHeader(postcard::Error),
    /// The first four bytes are not `"TSBC"`.
    BadMagic([u8; 4]),
    /// The format version is not one this adapter reads.
    UnsupportedVersion(u8),
    /// The parameter-set id names no set this adapter knows.
    UnknownParameterSet(u16),
    /// The parameter set is known but not one this adapter converts (e.g. not a 32-bit, k = 1 set).
    UnsupportedParameterSet(u16),
    /// The seed-expansion XOF id is unknown.
    UnsupportedXof(u8),
    /// `chunk_count` is 0.
    ZeroChunkCount,
    /// `chunk_index >= chunk_count`.
    ChunkIndexOutOfRange {
        /// The frame's chunk index.
        index: u32,
        /// The frame's chunk count.
        count: u32,
    },
    /// `message_length` cannot be split into `chunk_count` chunks of `chunk_bytes`.
    InconsistentMessageLength {
        /// The declared message length.
        message_length: u32,
        /// The declared chunk count.
        chunk_count: u32,
        /// The bytes one chunk carries (`N / 8`).
        chunk_bytes: u32,
    },
    /// The payload after the header does not have the exact length the parameter set requires.
    WrongPayloadLength {
        /// The bytes required.
        expected: usize,
        /// The bytes present.
        found: usize,
    },
    /// A length-delimited frame declares more bytes than the reader accepts.
    FrameTooLarge {
        /// The declared length.
        declared: u64,
        /// The reader's limit.
        limit: usize,
    },
    /// The stream ended inside a frame.
    TruncatedStream,
    /// An I/O error from the underlying stream.
    Io(std::io::ErrorKind),
}

impl fmt::Display for IntakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MalformedHeader(e) => write!(f, "malformed frame header: {e}"),
            Self::BadMagic(m) => write!(f, "bad magic {m:02x?}, expected \"TSBC\""),
            Self::UnsupportedVersion(v) => write!(f, "unsupported wire format version {v}"),
            Self::UnknownParameterSet(id) => write!(f, "unknown parameter set {id}"),
            Self::UnsupportedParameterSet(id) => write!(f, "parameter set {id} is not supported by this adapter"),
            Self::UnsupportedXof(id) => write!(f, "unsupported XOF id {id}"),
            Self::ZeroChunkCount => f.write_str("chunk count is 0"),
            Self::ChunkIndexOutOfRange { index, count } => {
                write!(f, "chunk index {index} is not below chunk count {count}")
            }
            Self::InconsistentMessageLength {
                message_length,
                chunk_count,
                chunk_bytes,
            } => write!(
                f,
                "message length {message_length} does not fill {chunk_count} chunks of {chunk_bytes} bytes"
            ),
            Self::WrongPayloadLength { expected, found } => {
                write!(f, "payload has {found} bytes, the parameter set requires {expected}")
            }
            Self::FrameTooLarge { declared, limit } => write!(f, "frame declares {declared} bytes, limit is {limit}"),
            Self::TruncatedStream => f.write_str("stream ended inside a frame"),
            Self::Io(kind) => write!(f, "I/O error: {kind}"),
        }
    }
}

impl std::error::Error for IntakeError {}
