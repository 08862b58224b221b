//! Sealing frames: the one trait through which every encryptor writes authenticated wire-format v2 frames
//! ([`crate::frame`]), so that a device program (the Pi client, a firmware loop) is written once for
//! every key mode.

use crate::csprng::construction::XofConstruction;
use crate::encrypt::shell::{Encryptor, EncryptorKey};
use crate::encrypt::state::EncryptorState;
use crate::error::{Error, Result};
use crate::frame::mac::{DeviceCredentials, MacKey};
use crate::frame::message::Chunk;
use crate::frame::{FrameCounter, FrameHeader, FrameKind, OutgoingMessage, frame_bytes};
use tfhe_sbc_core::parameters::ParameterSetId;

/// An encryptor that seals message chunks into frames: begin a message, encrypt each chunk straight into
/// the frame buffer, know the frame's length and body width. Object-safe: `&mut dyn FrameEncryptor` serves
/// every key mode.
pub trait FrameEncryptor {
    /// The message bytes one frame carries (`N / 8` bits for booleans, `N / 4` reading bytes for integers).
    fn chunk_bytes(&self) -> usize;
    /// The kind of frame written (seeded for secret keys, public-key frames carry the mask in full).
    fn frame_kind(&self) -> FrameKind;
    /// The parameter set frames name.
    fn frame_parameter_set(&self) -> ParameterSetId;
    /// The XOF id the frames' headers name: the mask XOF of seeded frames (2: BLAKE2b, 3: BLAKE2s,
    /// [`crate::csprng::construction`]), 0 for the kinds with no seed.
    fn frame_mask_xof_id(&self) -> u8;
    /// The bytes of the frames written now (with the current body width).
    fn frame_len(&self) -> usize;
    /// The bytes a frame buffer needs: the payload is computed at full width before it is compacted.
    fn frame_buffer_len(&self) -> usize;
    /// The top bits of each body coefficient frames carry.
    fn frame_body_bits(&self) -> u32;
    /// The smallest body width the key's set allows (the full width where compact bodies are not offered).
    fn compact_body_bits(&self) -> u32;
    /// Sets the body width of the frames ([`Encryptor::set_body_bits`]).
    fn set_frame_body_bits(&mut self, body_bits: u32) -> Result<()>;
    /// Whether a key is set and the CSPRNG seeded.
    fn is_ready_to_seal(&self) -> bool;

    /// Reserves the sequence numbers of a message of `message_length` bytes, in chunks of
    /// [`Self::chunk_bytes`] ([`FrameCounter::begin_message`]).
    fn begin_message(&self, counter: &mut FrameCounter, message_length: usize) -> Result<OutgoingMessage> {
        counter.begin_message(message_length, self.chunk_bytes())
    }

    /// Encrypts `chunk` of `message` straight into the frame buffer `out` (at least
    /// [`Self::frame_buffer_len`] bytes) and authenticates it with the device's MAC key. Returns the frame's
    /// length, [`Self::frame_len`]. On an error the buffer holds no frame to send.
    fn encrypt_frame_into(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize>;
}

/// The shape of a key kind's frames: kind, GLWE dimension, polynomial size, torus width and the message
/// bytes one frame carries. Every size follows from it ([`frame_bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameShape {
    /// The kind of frame written.
    pub kind: FrameKind,
    /// The GLWE dimension `k`.
    pub glwe_dimension: usize,
    /// The polynomial size `N`.
    pub polynomial_size: usize,
    /// The torus width: 32 or 64.
    pub torus_bits: u32,
    /// The message bytes one frame carries.
    pub chunk_bytes: usize,
}

impl FrameShape {
    /// Boolean frames: `K` masks (or a seed) and `N` 32-bit body coefficients carrying `N / 8` message bytes.
    pub const fn boolean(kind: FrameKind, glwe_dimension: usize, polynomial_size: usize) -> Self {
        Self {
            kind,
            glwe_dimension,
            polynomial_size,
            torus_bits: 32,
            chunk_bytes: polynomial_size / 8,
        }
    }

    /// Integer frames: one mask seed and `N` 64-bit body coefficients carrying `N / 4` readings' bytes
    /// (two-bit blocks).
    pub const fn integer(polynomial_size: usize) -> Self {
        Self {
            kind: FrameKind::Seeded,
            glwe_dimension: 1,
            polynomial_size,
            torus_bits: 64,
            chunk_bytes: polynomial_size / 4,
        }
    }

    /// The frame's length with `body_bits` bits per body coefficient.
    pub const fn frame_len(&self, body_bits: u32) -> usize {
        frame_bytes(
            self.kind,
            self.glwe_dimension,
            self.polynomial_size,
            self.torus_bits,
            body_bits,
        )
    }

    /// The bytes a frame buffer needs: the full-width frame (a compact body is computed in full, then packed).
    pub const fn buffer_len(&self) -> usize {
        self.frame_len(self.torus_bits)
    }
}

/// What one frame seals: its header (body width included), the device's MAC key and the message chunk.
#[derive(Debug)]
pub struct FramePayload<'a> {
    /// The frame's header.
    pub header: FrameHeader,
    /// The key of the frame's MAC.
    pub mac_key: &'a MacKey,
    /// The chunk's message bytes (at most [`FrameShape::chunk_bytes`]).
    pub message: &'a [u8],
}

/// How a key kind seals the payload of its frames: what [`FrameEncryptor`] needs beyond the shell.
pub trait FrameSealing: EncryptorKey {
    /// The shape of its frames.
    const FRAME: FrameShape;
    /// Encrypts `payload.message` into the payload of a frame with `payload.header` in `out` (at least
    /// [`FrameShape::buffer_len`] bytes), authenticated under `payload.mac_key`; returns the frame's length.
    /// A seeded mask expands under `X`, the construction `payload.header.xof_id` names.
    fn seal<X: XofConstruction>(
        &mut self,
        state: &mut EncryptorState<X>,
        payload: &FramePayload<'_>,
        out: &mut [u8],
    ) -> Result<usize>;
}

impl<Key: EncryptorKey, X: XofConstruction> Encryptor<Key, X> {
    /// The header of the `kind` frame that carries `chunk` of `message` for `credentials` (full body; a
    /// seeded frame names `X`'s mask XOF id), once the chunk is checked against the message and `out` is
    /// found to hold the frame's `frame_len` bytes.
    pub(crate) fn frame_header(
        &self,
        kind: FrameKind,
        frame_len: usize,
        out: &[u8],
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
    ) -> Result<FrameHeader> {
        message.check_chunk(chunk)?;
        if out.len() < frame_len {
            return Err(Error::BufferTooSmall);
        }
        FrameHeader::new(kind, X::MASK_XOF_ID, self.parameter_set(), credentials, message, chunk)
    }
}

impl<Key: FrameSealing, X: XofConstruction> FrameEncryptor for Encryptor<Key, X> {
    fn chunk_bytes(&self) -> usize {
        Key::FRAME.chunk_bytes
    }

    fn frame_kind(&self) -> FrameKind {
        Key::FRAME.kind
    }

    fn frame_parameter_set(&self) -> ParameterSetId {
        self.parameter_set()
    }

    fn frame_mask_xof_id(&self) -> u8 {
        match Key::FRAME.kind {
            FrameKind::Seeded => X::MASK_XOF_ID,
            FrameKind::Full | FrameKind::PublicKey | FrameKind::CompactList => 0,
        }
    }

    fn frame_len(&self) -> usize {
        Key::FRAME.frame_len(self.body_bits())
    }

    fn frame_buffer_len(&self) -> usize {
        Key::FRAME.buffer_len()
    }

    fn frame_body_bits(&self) -> u32 {
        self.body_bits()
    }

    fn compact_body_bits(&self) -> u32 {
        match tfhe_sbc_core::parameters::GlweParameters::from_id(self.parameter_set()) {
            Some(params) if Key::COMPACT_BODY => params.compact_body_bits(),
            _ => Key::TORUS_BITS,
        }
    }

    fn set_frame_body_bits(&mut self, body_bits: u32) -> Result<()> {
        self.set_body_bits(body_bits)
    }

    fn is_ready_to_seal(&self) -> bool {
        self.is_ready()
    }

    fn encrypt_frame_into(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        let frame = Key::FRAME;
        let mut header = self.frame_header(frame.kind, frame.buffer_len(), out, credentials, message, chunk)?;
        header.body_bits = self.body_bits() as u8;
        let payload = FramePayload {
            header,
            mac_key: credentials.mac_key(),
            message: chunk.bytes,
        };
        self.key.seal(&mut self.state, &payload, out)
    }
}
