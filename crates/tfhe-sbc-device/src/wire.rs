//! The wire format of device frames: postcard into a caller slice. Specified in `docs/wire-format.md`.
//!
//! A frame is the postcard encoding of `(FrameHeader, payload…)`:
//! * seeded: `(header, seed: [u8; 32], body: N little-endian u32)`;
//! * full:   `(header, mask: N little-endian u32, body: N little-endian u32)`.
//!
//! Torus words are packed as raw little-endian bytes (a postcard tuple of `u8`, which postcard writes
//! verbatim), not as postcard `u32`s, which would be varint-encoded and about 25% larger for uniform values.

use crate::encryption::GlweEncryptor;
use crate::error::{Error, Result};
use crate::mask::MASK_XOF_ID;
use crate::message::Chunk;
use serde::ser::SerializeTuple;
use serde::{Deserialize, Serialize, Serializer};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::ParameterSetId;

/// The first four bytes of every frame.
pub const MAGIC: [u8; 4] = *b"TSBC";
/// The version of this wire format.
pub const FORMAT_VERSION: u8 = 1;

/// The largest encoded header: magic 4, version 1, parameter set (varint u16) 3, kind 1, XOF id 1, and three
/// varint `u32`s of 5 bytes each.
pub const HEADER_MAX_BYTES: usize = 4 + 1 + 3 + 1 + 1 + 3 * 5;

/// The largest seeded frame for polynomial size `n`: header, 32-byte seed, `4n` body bytes.
pub const fn max_seeded_frame_bytes(n: usize) -> usize {
    HEADER_MAX_BYTES + MASK_SEED_BYTES + 4 * n
}

/// The largest full frame for polynomial size `n`: header, `4n` mask bytes, `4n` body bytes.
pub const fn max_full_frame_bytes(n: usize) -> usize {
    HEADER_MAX_BYTES + 8 * n
}

/// [`max_seeded_frame_bytes`] at `N = 1024`: a static buffer of this size always suffices.
pub const MAX_SEEDED_FRAME_BYTES_1024: usize = max_seeded_frame_bytes(1024);
/// [`max_full_frame_bytes`] at `N = 1024`.
pub const MAX_FULL_FRAME_BYTES_1024: usize = max_full_frame_bytes(1024);

/// Whether the mask travels as a seed or in full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FrameKind {
    /// `(seed, body)`: the mask is the XOF expansion of the seed.
    Seeded,
    /// `(mask, body)`: the paper's form.
    Full,
}

/// The header of every frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameHeader {
    /// Always [`MAGIC`].
    pub magic: [u8; 4],
    /// Always [`FORMAT_VERSION`] for this format.
    pub version: u8,
    /// The parameter set's id ([`ParameterSetId`]).
    pub parameter_set: u16,
    /// Seeded or full.
    pub kind: FrameKind,
    /// The XOF that expands the seed ([`MASK_XOF_ID`]).
    pub xof_id: u8,
    /// This frame's chunk index, from 0.
    pub chunk_index: u32,
    /// The message's number of chunks.
    pub chunk_count: u32,
    /// The whole message's length in bytes (the last chunk's padding is not part of it).
    pub message_length: u32,
}

impl FrameHeader {
    /// The header of the frame that carries `chunk` of a `message_length`-byte message.
    pub fn new(
        parameter_set: ParameterSetId,
        kind: FrameKind,
        chunk: &Chunk<'_>,
        message_length: usize,
    ) -> Result<Self> {
        Ok(Self {
            magic: MAGIC,
            version: FORMAT_VERSION,
            parameter_set: parameter_set.0,
            kind,
            xof_id: MASK_XOF_ID,
            chunk_index: chunk.index,
            chunk_count: chunk.count,
            message_length: u32::try_from(message_length).map_err(|_| Error::MessageTooLarge)?,
        })
    }
}

/// Torus words serialized as raw little-endian bytes: a postcard tuple of `4 * len` `u8`s, no length
/// prefix, no varints.
#[derive(Clone, Copy, Debug)]
pub struct LeWords<'a>(pub &'a [u32]);

impl Serialize for LeWords<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> core::result::Result<S::Ok, S::Error> {
        let mut tuple = serializer.serialize_tuple(4 * self.0.len())?;
        for word in self.0 {
            for byte in word.to_le_bytes() {
                tuple.serialize_element(&byte)?;
            }
        }
        tuple.end()
    }
}

/// Encodes a seeded frame into `out`, returning the used prefix.
pub fn encode_seeded_frame<'o>(
    header: &FrameHeader,
    seed: &[u8; MASK_SEED_BYTES],
    body: &[u32],
    out: &'o mut [u8],
) -> Result<&'o mut [u8]> {
    postcard::to_slice(&(header, seed, LeWords(body)), out).map_err(|_| Error::BufferTooSmall)
}

/// Encodes a full frame into `out`, returning the used prefix.
pub fn encode_full_frame<'o>(
    header: &FrameHeader,
    mask: &[u32],
    body: &[u32],
    out: &'o mut [u8],
) -> Result<&'o mut [u8]> {
    postcard::to_slice(&(header, LeWords(mask), LeWords(body)), out).map_err(|_| Error::BufferTooSmall)
}

impl<const N: usize> GlweEncryptor<N> {
    /// Encrypts `chunk` of a `message_length`-byte message as a seeded ciphertext and encodes it as a frame
    /// into `out` (at most [`max_seeded_frame_bytes`]`(N)` bytes), using `body` as the body buffer.
    /// Returns the frame's length.
    pub fn encrypt_seeded_frame(
        &mut self,
        chunk: &Chunk<'_>,
        message_length: usize,
        body: &mut [u32; N],
        out: &mut [u8],
    ) -> Result<usize> {
        let header = FrameHeader::new(self.parameter_set(), FrameKind::Seeded, chunk, message_length)?;
        let seed = self.encrypt_seeded_glwe_ciphertext(chunk.bytes, body)?;
        Ok(encode_seeded_frame(&header, &seed, body, out)?.len())
    }
}
