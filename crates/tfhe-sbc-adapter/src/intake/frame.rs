//! What the intake hands out: authenticated frames ([`Frame`], [`IntegerFrame`]), whole messages
//! ([`Message`]), and what became of each accepted frame ([`Received`]).

use tfhe_sbc_core::entities::GlweCiphertextOwned;
use tfhe_sbc_core::parameters::{GlweParameters, IntegerParameters};
use tfhe_sbc_device::frame::{FrameHeader, FrameKind};

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
