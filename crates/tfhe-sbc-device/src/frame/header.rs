//! Wire format v2: authenticated frames, written into a caller slice, byte by byte as below.
//!
//! ```text
//! magic "TSBC" | version 2 | header (42 bytes, fixed) | payload (fixed by the set and body_bits) | tag (16 bytes)
//! ```
//!
//! The header is the postcard encoding of [`FrameHeader`], every integer fixed-width little-endian
//! (`postcard::fixint::le`), so every header has the same size and every frame of a given kind, parameter
//! set and body width has the same size: [`frame_bytes`], [`seeded_frame_bytes`], [`full_frame_bytes`]. Torus
//! words travel as raw little-endian bytes, a compact body as its top bits packed
//! ([`tfhe_sbc_core::compact_body`]). The tag is the [`frame_mac`](crate::frame::mac) of every byte before it.
//!
//! Frame identity and freshness: each frame names its device and key ([`DeviceCredentials`]), a per-device
//! monotonic sequence number and a message id ([`crate::frame::FrameCounter`], [`crate::frame::OutgoingMessage`]). The chunks of one
//! message carry the same message id and consecutive sequence numbers.
//!
//! Version 1 (no identity, no MAC) is gone: receivers reject it.

use crate::error::{Error, Result};
use crate::frame::counter::OutgoingMessage;
use crate::frame::mac::{DeviceCredentials, TAG_BYTES};
use crate::frame::message::Chunk;
use crate::frame::reading_format::ReadingFormat;
use serde::{Deserialize, Serialize};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::ParameterSetId;

/// The first four bytes of every frame.
pub const MAGIC: [u8; 4] = *b"TSBC";
/// The version of this wire format.
pub const FORMAT_VERSION: u8 = 2;
/// The magic and the version: the bytes every version shares, read before anything else.
pub const PREFIX_BYTES: usize = 5;
/// The encoded [`FrameHeader`] (after the prefix): kind 1, parameter set 2, XOF id 1, body bits 1, reading format 1,
/// device id 8, key id 4, sequence 8, message id 4, chunk index 4, chunk count 4, message length 4.
pub const HEADER_FIELDS_BYTES: usize = 1 + 2 + 1 + 1 + 1 + 8 + 4 + 8 + 4 + 4 + 4 + 4;
/// Every byte before the payload: prefix and header.
pub const HEADER_BYTES: usize = PREFIX_BYTES + HEADER_FIELDS_BYTES;

/// What the payload carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FrameKind {
    /// Secret-key encryption, mask as a 32-byte seed: `seed | body`.
    Seeded = 0,
    /// Secret-key encryption, mask in full: `mask | body` (the TFHE-SBC paper's form). Receivers reject it
    /// unless configured otherwise: a chosen mask lets the sender probe the key through decrypted results.
    Full = 1,
    /// Public-key encryption, mask in full: `mask | body`..
    PublicKey = 2,
    /// tfhe-rs's own packed `CompactCiphertextList` (its `safe_serialize` bytes,
    /// [`crate::compact_list`]) of one chunk's readings: the list is public-key encrypted already, the frame
    /// authenticates it. `body_bits` is the readings' width (8, 16 or 32), the parameter set the integer
    /// set the list expands into ([`crate::frame::compact_list`]).
    CompactList = 3,
}

impl FrameKind {
    /// The kind with this wire value, if any.
    pub const fn from_u8(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::Seeded),
            1 => Some(Self::Full),
            2 => Some(Self::PublicKey),
            3 => Some(Self::CompactList),
            _ => None,
        }
    }

    /// The wire value.
    pub const fn to_u8(self) -> u8 {
        self as u8
    }
}

/// The fixed-layout header of a v2 frame (after the magic and the version). Field order is wire order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameHeader {
    /// A [`FrameKind`] wire value.
    pub kind: u8,
    /// The parameter set's id ([`ParameterSetId`]): fixes `k`, `N` and the torus word size, hence the payload
    /// size.
    #[serde(with = "postcard::fixint::le")]
    pub parameter_set: u16,
    /// The XOF that expands a seeded mask: [`crate::csprng::mask::MASK_XOF_ID`] (2, BLAKE2b) or 3 (BLAKE2s, a 32-bit target's
    /// default); 0 for kinds with no seed.
    pub xof_id: u8,
    /// How many top bits of each body coefficient travel: the torus width, or fewer for a compact body
    /// ([`tfhe_sbc_core::compact_body`]).
    pub body_bits: u8,
    /// How the message's bytes read as values ([`ReadingFormat`]'s wire value; 0: bytes). The same in every
    /// chunk of a message, whose length is a whole number of readings.
    pub reading_format: u8,
    /// The sending device.
    #[serde(with = "postcard::fixint::le")]
    pub device_id: u64,
    /// The key the ciphertext is encrypted under.
    #[serde(with = "postcard::fixint::le")]
    pub key_id: u32,
    /// The device's frame counter: strictly increasing over all of its frames.
    #[serde(with = "postcard::fixint::le")]
    pub sequence: u64,
    /// The message this frame is a chunk of.
    #[serde(with = "postcard::fixint::le")]
    pub message_id: u32,
    /// This frame's chunk index, from 0.
    #[serde(with = "postcard::fixint::le")]
    pub chunk_index: u32,
    /// The message's number of chunks.
    #[serde(with = "postcard::fixint::le")]
    pub chunk_count: u32,
    /// The whole message's length in bytes (the last chunk's padding is not part of it).
    #[serde(with = "postcard::fixint::le")]
    pub message_length: u32,
}

impl FrameHeader {
    /// The header of the `kind` frame (32-bit torus, full body) that carries `chunk` of `message` for the
    /// device `credentials`. A seeded frame names `mask_xof_id`, the XOF its mask seed expands under (2:
    /// BLAKE2b, 3: BLAKE2s, [`crate::csprng::construction`]); other kinds have no seed and name 0.
    pub fn new(
        kind: FrameKind,
        mask_xof_id: u8,
        parameter_set: ParameterSetId,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
    ) -> Result<Self> {
        let sequence = message.sequence_of(chunk.index, chunk.count)?;
        Ok(Self {
            kind: kind.to_u8(),
            parameter_set: parameter_set.0,
            xof_id: if kind == FrameKind::Seeded { mask_xof_id } else { 0 },
            body_bits: 32,
            reading_format: message.reading_format().to_u8(),
            device_id: credentials.device_id(),
            key_id: credentials.key_id(),
            sequence,
            message_id: message.message_id(),
            chunk_index: chunk.index,
            chunk_count: chunk.count,
            message_length: message.message_length(),
        })
    }

    /// The header's [`FrameKind`], if its kind value is one.
    pub const fn frame_kind(&self) -> Option<FrameKind> {
        FrameKind::from_u8(self.kind)
    }

    /// The [`ReadingFormat`] of `reading_format`, if it is one.
    pub const fn format_of_readings(&self) -> Option<ReadingFormat> {
        ReadingFormat::from_u8(self.reading_format)
    }

    /// Writes the prefix (magic, version) and this header into `out[..HEADER_BYTES]`.
    pub fn write(&self, out: &mut [u8]) -> Result<()> {
        let out = out.get_mut(..HEADER_BYTES).ok_or(Error::BufferTooSmall)?;
        out[..4].copy_from_slice(&MAGIC);
        out[4] = FORMAT_VERSION;
        let written = postcard::to_slice(self, &mut out[PREFIX_BYTES..]).map_err(|_| Error::BufferTooSmall)?;
        debug_assert_eq!(written.len(), HEADER_FIELDS_BYTES);
        Ok(())
    }

    /// The header fields of `bytes[PREFIX_BYTES..HEADER_BYTES]` (what [`FrameHeader::write`] wrote), decoded
    /// but not validated; `None` if `bytes` is shorter than a header or the fields do not decode. The prefix
    /// (magic, version) is not checked.
    pub fn read(bytes: &[u8]) -> Option<Self> {
        postcard::from_bytes(bytes.get(PREFIX_BYTES..HEADER_BYTES)?).ok()
    }
}

/// The bytes of a body of `n` coefficients of which the top `body_bits` bits travel, bit-packed:
/// `ceil(n * body_bits / 8)`.
pub const fn body_bytes(n: usize, body_bits: u32) -> usize {
    tfhe_sbc_core::compact_body::packed_body_bytes(n, body_bits)
}

/// The exact payload length of a `kind` frame for a set with GLWE dimension `k`, polynomial size `n` and a
/// `torus_bits`-bit torus, of which `body_bits` travel per body coefficient. For
/// [`FrameKind::CompactList`], the list of a whole chunk of `body_bits`-bit readings
/// ([`crate::frame::compact_list_payload::compact_list_payload_bytes`]; a last, shorter chunk's is shorter; 0 for
/// a width lists do not take).
pub const fn payload_bytes(kind: FrameKind, k: usize, n: usize, torus_bits: u32, body_bits: u32) -> usize {
    let mask = match kind {
        FrameKind::Seeded => MASK_SEED_BYTES,
        FrameKind::Full | FrameKind::PublicKey => k * n * (torus_bits as usize / 8),
        FrameKind::CompactList => {
            return match crate::frame::compact_list_payload::compact_list_payload_bytes(
                body_bits,
                crate::frame::compact_list_payload::COMPACT_LIST_CHUNK_BYTES,
            ) {
                Some(bytes) => bytes,
                None => 0,
            };
        }
    };
    mask + body_bytes(n, body_bits)
}

/// The exact length of a whole frame: header, [`payload_bytes`], tag.
pub const fn frame_bytes(kind: FrameKind, k: usize, n: usize, torus_bits: u32, body_bits: u32) -> usize {
    HEADER_BYTES + payload_bytes(kind, k, n, torus_bits, body_bits) + TAG_BYTES
}

/// The exact length of a seeded frame for `N = n` (32-bit torus, any `k`: the mask is a seed): `47 + 32 + 4n + 16`.
pub const fn seeded_frame_bytes(n: usize) -> usize {
    frame_bytes(FrameKind::Seeded, 1, n, 32, 32)
}

/// The exact length of a full frame for `N = n` (32-bit torus, `k = 1`): `47 + 8n + 16`.
pub const fn full_frame_bytes(n: usize) -> usize {
    frame_bytes(FrameKind::Full, 1, n, 32, 32)
}

/// [`seeded_frame_bytes`] at `N = 1024`: 4191.
pub const SEEDED_FRAME_BYTES_1024: usize = seeded_frame_bytes(1024);
/// [`full_frame_bytes`] at `N = 1024`: 8255.
pub const FULL_FRAME_BYTES_1024: usize = full_frame_bytes(1024);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_fixed_size() {
        let mut out = [0u8; HEADER_BYTES + 1];
        for fill in [0u8, 0xFF] {
            let header = FrameHeader {
                kind: fill,
                parameter_set: u16::from(fill) * 257,
                xof_id: fill,
                body_bits: fill,
                reading_format: fill,
                device_id: u64::from(fill) * 0x0101_0101_0101_0101,
                key_id: u32::from(fill) * 0x0101_0101,
                sequence: u64::from(fill) * 0x0101_0101_0101_0101,
                message_id: u32::from(fill) * 0x0101_0101,
                chunk_index: u32::from(fill) * 0x0101_0101,
                chunk_count: u32::from(fill) * 0x0101_0101,
                message_length: u32::from(fill) * 0x0101_0101,
            };
            let written = postcard::to_slice(&header, &mut out).unwrap().len();
            assert_eq!(written, HEADER_FIELDS_BYTES);
            let (back, rest): (FrameHeader, &[u8]) = postcard::take_from_bytes(&out[..written]).unwrap();
            assert_eq!(back, header);
            assert!(rest.is_empty());
        }
        assert_eq!(HEADER_BYTES, 47);
        assert!(FrameHeader::new_test().write(&mut [0u8; HEADER_BYTES - 1]).is_err());
    }

    impl FrameHeader {
        fn new_test() -> Self {
            Self {
                kind: 0,
                parameter_set: 1,
                xof_id: crate::csprng::mask::MASK_XOF_ID,
                body_bits: 32,
                reading_format: 0,
                device_id: 1,
                key_id: 1,
                sequence: 0,
                message_id: 0,
                chunk_index: 0,
                chunk_count: 1,
                message_length: 0,
            }
        }
    }
}
