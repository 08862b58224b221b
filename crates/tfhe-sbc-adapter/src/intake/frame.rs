//! What the intake hands out: authenticated frames ([`Frame`], [`IntegerFrame`], [`CompactListFrame`],
//! either of the last two as an [`IntegerInput`]), whole messages ([`Message`]), and what became of each
//! accepted frame ([`Received`]).

use tfhe_sbc_core::entities::GlweCiphertextOwned;
use tfhe_sbc_core::parameters::{GlweParameters, IntegerParameters};
use tfhe_sbc_device::frame::{FrameHeader, FrameKind, ReadingFormat};

/// An authenticated frame: its header, its parameter set, and the full ciphertext (a seeded mask expanded).
#[derive(Clone, Debug)]
pub struct Frame {
    /// The validated header.
    pub header: FrameHeader,
    /// The header's kind.
    pub kind: FrameKind,
    /// The parameter set the header names.
    pub parameters: GlweParameters,
    /// The ciphertext, mask regenerated bit for bit for seeded frames.
    pub ciphertext: GlweCiphertextOwned<u32>,
}

impl Frame {
    /// The number of message bytes this frame's chunk carries (the last chunk may be short).
    pub fn chunk_message_bytes(&self) -> usize {
        let chunk_bytes = self.parameters.polynomial_size().0 / 8;
        let start = self.header.chunk_index as usize * chunk_bytes;
        (self.header.message_length as usize)
            .saturating_sub(start)
            .min(chunk_bytes)
    }
}

/// An authenticated integer frame: its header, its integer set, and the `u64` GLWE ciphertext
/// (the seeded mask expanded) that `interop::integer::IntegerExtractor` (feature `tfhe`) takes.
#[derive(Clone, Debug)]
pub struct IntegerFrame {
    /// The validated header.
    pub header: FrameHeader,
    /// The integer set the header names.
    pub parameters: IntegerParameters,
    /// The ciphertext, mask regenerated bit for bit.
    pub ciphertext: GlweCiphertextOwned<u64>,
}

impl IntegerFrame {
    /// The reading bytes this frame carries: `N / 4` per chunk (4 two-bit blocks per byte), the last chunk
    /// as many as `message_length` leaves.
    pub fn chunk_message_bytes(&self) -> usize {
        let chunk_bytes = self.parameters.glwe().polynomial_size().0 / 4;
        let start = self.header.chunk_index as usize * chunk_bytes;
        (self.header.message_length as usize)
            .saturating_sub(start)
            .min(chunk_bytes)
    }

    /// The whole readings of `value_bits` bits this frame carries: `chunk_message_bytes() * 8 / value_bits`.
    pub fn readings(&self, value_bits: u32) -> usize {
        self.chunk_message_bytes() * 8 / value_bits.max(1) as usize
    }
}

/// An authenticated compact-list frame (`tfhe_sbc_device::frame::compact_list`): its header and the
/// tfhe-rs `CompactCiphertextList` bytes it carries, not yet read by tfhe-rs.
#[derive(Clone, Debug)]
pub struct CompactListFrame {
    /// The validated header (`body_bits` is the readings' width).
    pub header: FrameHeader,
    /// The list, as the device serialized it (tfhe-rs's `safe_serialize` form).
    pub list: Vec<u8>,
}

impl CompactListFrame {
    /// The readings' width in bits: 8, 16 or 32.
    pub fn value_bits(&self) -> u32 {
        u32::from(self.header.body_bits)
    }

    /// The reading bytes this frame's list carries.
    pub fn chunk_message_bytes(&self) -> usize {
        tfhe_sbc_device::frame::compact_list::chunk_reading_bytes(&self.header)
    }

    /// The readings this frame's list carries.
    pub fn readings(&self) -> usize {
        self.chunk_message_bytes() * 8 / self.value_bits().max(1) as usize
    }
}

/// What an integer set's intake hands out for an accepted frame: a GLWE frame of readings (fleet,
/// per-device and public-key devices) or a tfhe-rs compact list (compact-list devices).
#[derive(Clone, Debug)]
pub enum IntegerInput {
    /// A seeded or public-key GLWE frame.
    Frame(IntegerFrame),
    /// A compact-list frame.
    CompactList(CompactListFrame),
}

impl IntegerInput {
    /// The frame's validated header.
    pub fn header(&self) -> &FrameHeader {
        match self {
            Self::Frame(frame) => &frame.header,
            Self::CompactList(list) => &list.header,
        }
    }

    /// The reading bytes the frame carries.
    pub fn chunk_message_bytes(&self) -> usize {
        match self {
            Self::Frame(frame) => frame.chunk_message_bytes(),
            Self::CompactList(list) => list.chunk_message_bytes(),
        }
    }

    /// The GLWE frame, if it is one.
    pub fn as_frame(&self) -> Option<&IntegerFrame> {
        match self {
            Self::Frame(frame) => Some(frame),
            Self::CompactList(_) => None,
        }
    }
}

/// A complete message: its authenticated frames in chunk order.
#[derive(Clone, Debug)]
pub struct Message {
    /// The sending device.
    pub device_id: u64,
    /// The key its ciphertexts are under.
    pub key_id: u32,
    /// The message id.
    pub message_id: u32,
    /// The sequence number of chunk 0.
    pub first_sequence: u64,
    /// The message length in bytes.
    pub message_length: u32,
    /// Chunk `i` is `frames[i]`.
    pub frames: Vec<Frame>,
}

impl Message {
    /// How the message's bytes read as values: what its frames' headers say (checked when each frame was
    /// parsed, the same in every chunk: the reassembly's rule). [`ReadingFormat::Bytes`] for no frames.
    pub fn reading_format(&self) -> ReadingFormat {
        self.frames
            .first()
            .and_then(|frame| frame.header.format_of_readings())
            .unwrap_or_default()
    }
}

/// What [`Intake::receive`](super::Intake::receive) did with an accepted frame.
#[derive(Clone, Debug)]
pub enum Received {
    /// The frame is a chunk of a message that is not complete yet.
    Pending {
        /// The device.
        device_id: u64,
        /// The message id.
        message_id: u32,
        /// The frame's chunk index.
        chunk_index: u32,
        /// The frame's sequence number.
        sequence: u64,
        /// How many of the message's chunks have arrived.
        received: u32,
        /// How many it has.
        chunk_count: u32,
    },
    /// The frame completed its message (a one-chunk message completes at once).
    Complete(Message),
}

impl Received {
    /// The message, if this frame completed one.
    pub fn into_message(self) -> Option<Message> {
        match self {
            Self::Complete(message) => Some(message),
            Self::Pending { .. } => None,
        }
    }
}
