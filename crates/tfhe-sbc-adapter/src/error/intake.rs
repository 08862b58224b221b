//! [`IntakeError`]: what can be wrong with bytes received from a device, whether they arrive over a stream
//! or are read back from the JetStream service's results store (where [`super::ResultsError`] says what
//! was wrong with the store itself).

use core::fmt;
use tfhe_sbc_device::frame::{FrameKind, ReadingFormat};

/// A field on which a chunk disagrees with the other chunks of its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageField {
    /// `chunk_count`.
    ChunkCount,
    /// `message_length`.
    MessageLength,
    /// `parameter_set`.
    ParameterSet,
    /// `sequence - chunk_index`: chunk `i` of a message has sequence number `first + i`.
    FirstSequence,
    /// `reading_format`.
    ReadingFormat,
}

impl fmt::Display for MessageField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ChunkCount => "chunk count",
            Self::MessageLength => "message length",
            Self::ParameterSet => "parameter set",
            Self::FirstSequence => "first sequence number (sequence - chunk index)",
            Self::ReadingFormat => "reading format",
        })
    }
}

/// Why a frame (or an incomplete message) was rejected. Every malformed input maps to one of these; intake
/// never panics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IntakeError {
    /// The frame ends before its fixed-size prefix or header does.
    Truncated {
        /// The bytes needed to read the next field.
        needed: usize,
        /// The bytes present.
        found: usize,
    },
    /// The header could not be decoded; the postcard error says why.
    MalformedHeader(postcard::Error),
    /// The first four bytes are not `"TSBC"`.
    BadMagic([u8; 4]),
    /// The format version is not one this adapter reads (only 2 is; 1 is refused: it is unauthenticated).
    UnsupportedVersion(u8),
    /// The `reading_format` byte names no [`tfhe_sbc_device::frame::ReadingFormat`].
    UnknownReadingFormat(u8),
    /// The frame kind is not a known value.
    UnknownFrameKind(u8),
    /// The frame kind does not match how the device was registered to encrypt: public-key frames from a
    /// secret-key device (a chosen mask), or secret-key frames from a public-key device (it has no key).
    FrameKindNotAllowed {
        /// The device the frame names.
        device_id: u64,
        /// The frame's kind.
        kind: FrameKind,
    },
    /// A full-mask secret-key frame, and `IntakeConfig::allow_full_frames` is off.
    FullFrameRejected,
    /// The parameter-set id names no set this adapter knows.
    UnknownParameterSet(u16),
    /// The parameter set is known but not one this adapter converts (e.g. not a 32-bit set).
    UnsupportedParameterSet(u16),
    /// The mask-expansion XOF id is not the one this kind needs.
    UnsupportedXof(u8),
    /// `body_bits` is outside what the parameter set allows: from its noise-budget minimum
    /// (`GlweParameters::compact_body_bits`) to the torus width.
    UnsupportedBodyBits {
        /// The header's value.
        found: u8,
        /// The fewest body bits this set accepts.
        min: u8,
        /// The torus width.
        max: u8,
    },
    /// The unused bits at the end of a compact body are not 0.
    NonZeroBodyPadding,
    /// A compact-list frame names a reading width lists do not take (its `body_bits`: 8, 16 or 32).
    UnsupportedReadingWidth(u8),
    /// A compact-list frame's reading format states readings of another width than the list's (its
    /// `body_bits`): an `f32` list must be 32 bits wide, for example. Bytes state no width.
    ReadingFormatWidth {
        /// The header's `reading_format`.
        format: u8,
        /// The list's width in bits (`body_bits`).
        width_bits: u8,
    },
    /// The message is not a whole number of readings: of its reading format, or of a compact list's width.
    PartialReadings {
        /// The header's message length.
        message_length: u32,
        /// The bytes of one reading.
        reading_bytes: u8,
    },
    /// `chunk_count` is 0.
    ZeroChunkCount,
    /// `chunk_index >= chunk_count`.
    ChunkIndexOutOfRange {
        /// The frame's chunk index.
        index: u32,
        /// The frame's chunk count.
        count: u32,
    },
    /// `chunk_count` is above the configured limit.
    TooManyChunks {
        /// The frame's chunk count.
        count: u32,
        /// `IntakeConfig::max_chunks_per_message`.
        limit: u32,
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
    /// The message's sequence numbers would leave the `u64` range: `sequence < chunk_index`, or the last
    /// chunk's number overflows.
    SequenceOutOfRange {
        /// The frame's sequence number.
        sequence: u64,
        /// The frame's chunk index.
        chunk_index: u32,
    },
    /// The frame does not have the exact length its header implies (header + payload + tag).
    WrongFrameLength {
        /// The bytes required.
        expected: usize,
        /// The bytes present.
        found: usize,
    },
    /// No device with this id is registered.
    UnknownDevice(u64),
    /// The frame's key id is not the registered device's.
    WrongKeyId {
        /// The device.
        device_id: u64,
        /// The registered key id.
        expected: u32,
        /// The frame's key id.
        found: u32,
    },
    /// The tag is not the MAC of the frame under the named device's key: forged, corrupted, or sent under
    /// another device's id.
    BadMac {
        /// The device the frame claims to come from.
        device_id: u64,
    },
    /// This sequence number was already accepted from this device.
    Replayed {
        /// The device.
        device_id: u64,
        /// The repeated sequence number.
        sequence: u64,
    },
    /// The sequence number is below the device's replay window (or its registered floor).
    TooOld {
        /// The device.
        device_id: u64,
        /// The frame's sequence number.
        sequence: u64,
        /// The lowest number the device's window still accepts.
        lowest_acceptable: u64,
    },
    /// A chunk disagrees with the open message of the same id. The chunk is rejected and the open message
    /// dropped: the two are never merged.
    MessageMismatch {
        /// The device.
        device_id: u64,
        /// The message id.
        message_id: u32,
        /// The first field found to differ.
        field: MessageField,
    },
    /// This chunk of the open message has already arrived (under another sequence number).
    DuplicateChunk {
        /// The device.
        device_id: u64,
        /// The message id.
        message_id: u32,
        /// The repeated chunk index.
        chunk_index: u32,
    },
    /// Opening this message would exceed `IntakeConfig::max_open_messages_per_device`.
    TooManyOpenMessagesForDevice {
        /// The device.
        device_id: u64,
        /// The limit.
        limit: usize,
    },
    /// Opening this message would exceed `IntakeConfig::max_open_messages`.
    TooManyOpenMessages {
        /// The limit.
        limit: usize,
    },
    /// An incomplete message outlived `IntakeConfig::max_message_age` and was dropped, with its chunks.
    MessageExpired {
        /// The device.
        device_id: u64,
        /// The message id.
        message_id: u32,
        /// The chunks that had arrived.
        received: u32,
        /// The chunks the message has.
        chunk_count: u32,
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
    /// A device registered twice with the intake: its id.
    DuplicateDevice(u64),
}

impl IntakeError {
    /// Whether this is the frame accepted before under its number ([`IntakeError::Replayed`]): a resend,
    /// answered "duplicate" ([`crate::ack::status_for`], where every variant has its answer). The question
    /// the gateway, the workers and the commit ledger ask of a refusal; any other refusal is handled alike
    /// by each of them.
    pub fn is_replay(&self) -> bool {
        matches!(self, Self::Replayed { .. })
    }
}

impl fmt::Display for IntakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { needed, found } => {
                write!(f, "frame truncated: {found} bytes, at least {needed} needed")
            }
            Self::MalformedHeader(e) => write!(f, "malformed frame header: {e}"),
            Self::BadMagic(m) => write!(f, "bad magic {m:02x?}, expected \"TSBC\""),
            Self::UnsupportedVersion(1) => f.write_str(
                "wire format version 1 is no longer accepted: it is unauthenticated (no device identity, no MAC, \
                 no replay protection); update the device to version 2",
            ),
            Self::UnsupportedVersion(v) => write!(f, "unsupported wire format version {v} (this adapter reads 2)"),
            Self::UnknownReadingFormat(b) => write!(f, "unknown reading format {b} (0 to 7)"),
            Self::UnknownFrameKind(k) => write!(f, "unknown frame kind {k}"),
            Self::FrameKindNotAllowed { device_id, kind } => write!(
                f,
                "device {device_id} is not registered to send {kind:?} frames (register it with its encryption mode)"
            ),
            Self::FullFrameRejected => f.write_str(
                "full-mask secret-key frame rejected (a chosen mask probes the key); enable allow_full_frames only \
                 for trusted comparisons",
            ),
            Self::UnknownParameterSet(id) => write!(f, "unknown parameter set {id}"),
            Self::UnsupportedParameterSet(id) => write!(f, "parameter set {id} is not supported by this adapter"),
            Self::UnsupportedXof(id) => write!(f, "unsupported XOF id {id} for this frame kind"),
            Self::UnsupportedBodyBits { found, min, max } => {
                write!(
                    f,
                    "body bits {found} not supported for this parameter set: the device must send {min} to {max}"
                )
            }
            Self::NonZeroBodyPadding => f.write_str("the unused bits at the end of the compact body are not 0"),
            Self::UnsupportedReadingWidth(bits) => write!(
                f,
                "compact-list frames carry 8-, 16- or 32-bit readings, the header says {bits} (body_bits)"
            ),
            Self::ReadingFormatWidth { format, width_bits } => write!(
                f,
                "reading format {} has {}-bit readings, the compact list is {width_bits} bits wide (body_bits)",
                ReadingFormat::from_u8(*format).map_or("unknown", ReadingFormat::name),
                ReadingFormat::from_u8(*format).map_or(0, |r| r.reading_bytes() * 8),
            ),
            Self::PartialReadings {
                message_length,
                reading_bytes,
            } => write!(
                f,
                "a message of {message_length} bytes is not a whole number of {reading_bytes}-byte readings (its \
                 reading format, or a compact list's width)"
            ),
            Self::ZeroChunkCount => f.write_str("chunk count is 0"),
            Self::ChunkIndexOutOfRange { index, count } => {
                write!(f, "chunk index {index} is not below chunk count {count}")
            }
            Self::TooManyChunks { count, limit } => write!(f, "message of {count} chunks, the limit is {limit}"),
            Self::InconsistentMessageLength {
                message_length,
                chunk_count,
                chunk_bytes,
            } => write!(
                f,
                "message length {message_length} does not fill {chunk_count} chunks of {chunk_bytes} bytes"
            ),
            Self::SequenceOutOfRange { sequence, chunk_index } => {
                write!(
                    f,
                    "sequence {sequence} with chunk index {chunk_index} leaves the sequence range"
                )
            }
            Self::WrongFrameLength { expected, found } => {
                write!(f, "frame has {found} bytes, its header requires exactly {expected}")
            }
            Self::UnknownDevice(id) => write!(f, "unknown device {id}"),
            Self::WrongKeyId {
                device_id,
                expected,
                found,
            } => write!(f, "device {device_id}: key id {found}, registered key id is {expected}"),
            Self::BadMac { device_id } => write!(f, "device {device_id}: bad frame MAC"),
            Self::Replayed { device_id, sequence } => {
                write!(f, "device {device_id}: sequence {sequence} replayed")
            }
            Self::TooOld {
                device_id,
                sequence,
                lowest_acceptable,
            } => write!(
                f,
                "device {device_id}: sequence {sequence} is too old (lowest acceptable {lowest_acceptable})"
            ),
            Self::MessageMismatch {
                device_id,
                message_id,
                field,
            } => write!(
                f,
                "device {device_id}, message {message_id}: chunk disagrees on the {field}; chunk rejected and \
                 incomplete message dropped"
            ),
            Self::DuplicateChunk {
                device_id,
                message_id,
                chunk_index,
            } => write!(
                f,
                "device {device_id}, message {message_id}: duplicate chunk {chunk_index}"
            ),
            Self::TooManyOpenMessagesForDevice { device_id, limit } => {
                write!(f, "device {device_id} has {limit} incomplete messages open, the limit")
            }
            Self::TooManyOpenMessages { limit } => write!(f, "{limit} incomplete messages open, the limit"),
            Self::MessageExpired {
                device_id,
                message_id,
                received,
                chunk_count,
            } => write!(
                f,
                "device {device_id}, message {message_id}: expired with {received} of {chunk_count} chunks; dropped"
            ),
            Self::FrameTooLarge { declared, limit } => write!(f, "frame declares {declared} bytes, limit is {limit}"),
            Self::TruncatedStream => f.write_str("stream ended inside a frame"),
            Self::Io(kind) => write!(f, "I/O error: {kind}"),
            Self::DuplicateDevice(id) => write!(f, "device {id} is already registered"),
        }
    }
}

impl std::error::Error for IntakeError {}
