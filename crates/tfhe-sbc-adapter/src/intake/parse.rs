//! [`parse_frame`]: the stateless checks of a frame (prefix, header fields, length, body padding) into a
//! [`ParsedFrame`], and, once authenticated, its ciphertext with the mask expanded.

use super::config::IntakeConfig;
use super::frame::{CompactListFrame, Frame, IntegerFrame, IntegerInput};
use crate::error::IntakeError;
use tfhe_sbc_core::compact_body::unpack_body;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweCiphertextOwned, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::{GlweParameters, IntegerParameters, ParameterSetId};
use tfhe_sbc_core::torus::UnsignedTorus;
use tfhe_sbc_device::csprng::mask::MaskXof;
use tfhe_sbc_device::frame::compact_list::{
    COMPACT_LIST_CHUNK_BYTES, COMPACT_LIST_FRAME_SET, chunk_reading_bytes, compact_list_payload_bytes, value_kind,
};
use tfhe_sbc_device::frame::mac::MacKey;
use tfhe_sbc_device::frame::{
    FORMAT_VERSION, FrameHeader, FrameKind, HEADER_BYTES, MAGIC, PREFIX_BYTES, ReadingFormat, TAG_BYTES, payload_bytes,
};

/// A frame whose prefix, header and length are valid, not yet authenticated ([`parse_frame`]).
#[derive(Clone, Copy, Debug)]
pub struct ParsedFrame<'a> {
    /// The header.
    pub header: FrameHeader,
    /// The header's kind.
    pub kind: FrameKind,
    /// The parameter set the header names.
    pub parameters: GlweParameters,
    /// The XOF a seeded frame's header names for its mask (id 2: BLAKE2b, 3: BLAKE2s); `None` for kinds with
    /// no seed.
    pub mask_xof: Option<MaskXof>,
    authenticated: &'a [u8],
    tag: &'a [u8],
}

impl ParsedFrame<'_> {
    /// The payload (between the header and the tag).
    pub fn payload(&self) -> &[u8] {
        &self.authenticated[HEADER_BYTES..]
    }

    /// The tag.
    pub fn tag(&self) -> &[u8] {
        self.tag
    }

    /// Whether the tag is the MAC of the frame under `key` (constant-time comparison).
    pub fn verify_mac(&self, key: &MacKey) -> bool {
        key.verify(self.authenticated, self.tag)
    }

    /// The sequence number of chunk 0 of this frame's message.
    pub fn first_sequence(&self) -> u64 {
        // parse_frame checked sequence >= chunk_index.
        self.header.sequence - u64::from(self.header.chunk_index)
    }

    /// Expands the mask (seeded) or reads it (full) into a fresh ciphertext of exactly `(k + 1) N` words.
    /// Intake calls it only after the MAC verified.
    pub(crate) fn to_frame(self) -> Frame {
        let k = self.parameters.glwe_dimension().0;
        let n = self.parameters.polynomial_size().0;
        let (kind, xof) = (self.kind, self.mask_xof);
        let ciphertext = self.ciphertext(k, |payload, mask| match kind {
            FrameKind::Seeded => seeded_xof(xof).expand_mask_u32(&seed(payload), mask),
            FrameKind::Full | FrameKind::PublicKey => read_words(&payload[..4 * k * n], mask),
            FrameKind::CompactList => unreachable!("a compact list has no GLWE ciphertext: boolean sets refuse it"),
        });
        Frame {
            header: self.header,
            kind: self.kind,
            parameters: self.parameters,
            ciphertext,
        }
    }

    /// The integer set's input of this frame: a compact-list frame's list bytes, or
    /// [`Self::to_integer_frame`]. Only after the MAC verified.
    pub(crate) fn to_integer_input(self, parameters: IntegerParameters) -> IntegerInput {
        if self.kind == FrameKind::CompactList {
            IntegerInput::CompactList(CompactListFrame {
                header: self.header,
                list: self.payload().to_vec(),
            })
        } else {
            IntegerInput::Frame(self.to_integer_frame(parameters))
        }
    }

    /// Expands the `u64` mask of a seeded integer frame (or reads it, 8-byte little-endian words, from a
    /// full or public-key frame) and reads its `u64` body (words, or their top `body_bits` bits packed) into
    /// a fresh ciphertext of exactly `2N` words. Only after the MAC verified.
    pub(crate) fn to_integer_frame(self, parameters: IntegerParameters) -> IntegerFrame {
        let n = self.parameters.polynomial_size().0;
        let (kind, xof) = (self.kind, self.mask_xof);
        IntegerFrame {
            header: self.header,
            parameters,
            ciphertext: self.ciphertext(1, |payload, mask| match kind {
                FrameKind::Seeded => seeded_xof(xof).expand_mask(&seed(payload), mask),
                FrameKind::Full | FrameKind::PublicKey => read_words(&payload[..8 * n], mask),
                FrameKind::CompactList => unreachable!("to_integer_input keeps compact lists as bytes"),
            }),
        }
    }

    /// A fresh ciphertext of `(k + 1) N` words: `fill_mask` writes the `k N` mask words from the payload,
    /// the body is unpacked from the payload's tail (after the seed, or after the full mask).
    fn ciphertext<T: UnsignedTorus>(
        &self,
        k: usize,
        fill_mask: impl FnOnce(&[u8], &mut [T]),
    ) -> GlweCiphertextOwned<T> {
        let n = self.parameters.polynomial_size().0;
        let mut data = vec![T::ZERO; (k + 1) * n];
        let (mask, body) = data.split_at_mut(k * n);
        let payload = self.payload();
        fill_mask(payload, mask);
        let mask_bytes = match self.kind {
            FrameKind::Seeded => MASK_SEED_BYTES,
            FrameKind::Full | FrameKind::PublicKey => T::BYTES * k * n,
            FrameKind::CompactList => unreachable!("a compact list has no GLWE ciphertext"),
        };
        unpack_body(&payload[mask_bytes..], u32::from(self.header.body_bits), body)
            .unwrap_or_else(|_| unreachable!("parse_frame checked the body's width, length and padding"));
        GlweCiphertext::from_container(data, self.parameters.polynomial_size())
            .unwrap_or_else(|_| unreachable!("(k + 1) N words for a set of size N"))
    }
}

/// The mask XOF of a seeded frame: [`parse_frame`] set it from the header's id.
fn seeded_xof(xof: Option<MaskXof>) -> MaskXof {
    xof.unwrap_or_else(|| unreachable!("parse_frame names a mask XOF for every seeded frame"))
}

/// The XOF a frame of `kind` names with `xof_id`: a seeded frame's mask XOF (2 or 3), none (0) for the kinds
/// with no seed; any other id is [`IntakeError::UnsupportedXof`].
fn expected_xof(kind: FrameKind, xof_id: u8) -> Result<Option<MaskXof>, IntakeError> {
    match kind {
        FrameKind::Seeded => MaskXof::from_id(xof_id)
            .map(Some)
            .ok_or(IntakeError::UnsupportedXof(xof_id)),
        FrameKind::Full | FrameKind::PublicKey | FrameKind::CompactList if xof_id == 0 => Ok(None),
        FrameKind::Full | FrameKind::PublicKey | FrameKind::CompactList => Err(IntakeError::UnsupportedXof(xof_id)),
    }
}

/// The mask seed at the start of a seeded frame's payload.
fn seed(payload: &[u8]) -> [u8; MASK_SEED_BYTES] {
    let mut seed = [0u8; MASK_SEED_BYTES];
    seed.copy_from_slice(&payload[..MASK_SEED_BYTES]);
    seed
}

/// Little-endian torus words (`u32` or `u64`) from a full mask.
fn read_words<T: UnsignedTorus>(bytes: &[u8], out: &mut [T]) {
    for (w, b) in out.iter_mut().zip(bytes.chunks_exact(T::BYTES)) {
        *w = T::from_le_slice(b);
    }
}

/// The header fields of the first [`HEADER_BYTES`] of `bytes`, decoded but not validated (what an
/// acknowledgement names, or what a gateway looks up before reading a frame's body); `None` if they do not
/// decode.
pub fn header_of(bytes: &[u8]) -> Option<FrameHeader> {
    FrameHeader::read(bytes)
}

/// Validates everything about a frame that needs no key and no state: prefix, header fields, length. Never
/// allocates. The tag is not checked: use [`Intake`](super::Intake) for that.
pub fn parse_frame<'a>(bytes: &'a [u8], config: &IntakeConfig) -> Result<ParsedFrame<'a>, IntakeError> {
    // Magic and version first: they are the only bytes every version shares.
    if let Some(magic) = bytes.first_chunk::<4>()
        && *magic != MAGIC
    {
        return Err(IntakeError::BadMagic(*magic));
    }
    let Some(&version) = bytes.get(4) else {
        return Err(IntakeError::Truncated {
            needed: PREFIX_BYTES,
            found: bytes.len(),
        });
    };
    if version != FORMAT_VERSION {
        return Err(IntakeError::UnsupportedVersion(version));
    }
    let Some(fields) = bytes.get(PREFIX_BYTES..HEADER_BYTES) else {
        return Err(IntakeError::Truncated {
            needed: HEADER_BYTES,
            found: bytes.len(),
        });
    };
    let header: FrameHeader = postcard::from_bytes(fields).map_err(IntakeError::MalformedHeader)?;
    let format = header
        .format_of_readings()
        .ok_or(IntakeError::UnknownReadingFormat(header.reading_format))?;
    if !format.whole_readings(header.message_length as usize) {
        return Err(IntakeError::PartialReadings {
            message_length: header.message_length,
            reading_bytes: format.reading_bytes() as u8,
        });
    }
    let kind = header.frame_kind().ok_or(IntakeError::UnknownFrameKind(header.kind))?;
    match kind {
        FrameKind::Seeded => {}
        FrameKind::Full if config.allow_full_frames => {}
        FrameKind::Full => return Err(IntakeError::FullFrameRejected),
        // Whether this device may send it is decided after the MAC (`Intake::receive`).
        FrameKind::PublicKey | FrameKind::CompactList => {}
    }
    let parameters = GlweParameters::from_id(ParameterSetId(header.parameter_set))
        .ok_or(IntakeError::UnknownParameterSet(header.parameter_set))?;
    if kind == FrameKind::CompactList {
        return parse_compact_list_frame(bytes, header, parameters, config);
    }
    let (torus_bits, k, n) = (
        parameters.torus_bits(),
        parameters.glwe_dimension().0,
        parameters.polynomial_size().0,
    );
    // 32-bit boolean sets, and the 64-bit sets with an integer encoding.
    let chunk_bytes = match (torus_bits, IntegerParameters::from_id(parameters.id())) {
        (32, _) => n / 8,
        (64, Some(integer)) if k == 1 && integer.block_bits() == 2 => n / 4,
        _ => return Err(IntakeError::UnsupportedParameterSet(header.parameter_set)),
    };
    let mask_xof = expected_xof(kind, header.xof_id)?;
    // Compact bodies: from the set's noise-budget minimum up to the torus width.
    let body_bits = u32::from(header.body_bits);
    if parameters.check_body_bits(body_bits).is_err() {
        return Err(IntakeError::UnsupportedBodyBits {
            found: header.body_bits,
            min: parameters.compact_body_bits() as u8,
            max: torus_bits as u8,
        });
    }
    check_chunking(&header, chunk_bytes, config)?;
    let expected = HEADER_BYTES + payload_bytes(kind, k, n, torus_bits, body_bits) + TAG_BYTES;
    if bytes.len() != expected {
        return Err(IntakeError::WrongFrameLength {
            expected,
            found: bytes.len(),
        });
    }
    let (authenticated, tag) = bytes.split_at(expected - TAG_BYTES);
    // One encoding per body: the unused bits of a packed body's last byte are 0.
    let used_bits = (n * body_bits as usize) % 8;
    if used_bits != 0 && authenticated.last().is_some_and(|&last| last >> used_bits != 0) {
        return Err(IntakeError::NonZeroBodyPadding);
    }
    Ok(ParsedFrame {
        header,
        kind,
        parameters,
        mask_xof,
        authenticated,
        tag,
    })
}

/// The rest of [`parse_frame`] for a compact-list frame (`tfhe_sbc_device::frame::compact_list`): the
/// integer set, no XOF, a reading width lists take, whole readings, and the exact length of the chunk's
/// list. The list's own structure is tfhe-rs's to check when it is expanded.
fn parse_compact_list_frame<'a>(
    bytes: &'a [u8],
    header: FrameHeader,
    parameters: GlweParameters,
    config: &IntakeConfig,
) -> Result<ParsedFrame<'a>, IntakeError> {
    if parameters.id() != COMPACT_LIST_FRAME_SET {
        return Err(IntakeError::UnsupportedParameterSet(header.parameter_set));
    }
    let mask_xof = expected_xof(FrameKind::CompactList, header.xof_id)?;
    let value_bits = u32::from(header.body_bits);
    if value_kind(value_bits).is_none() {
        return Err(IntakeError::UnsupportedReadingWidth(header.body_bits));
    }
    let format = header
        .format_of_readings()
        .unwrap_or_else(|| unreachable!("parse_frame checked the reading format"));
    if format != ReadingFormat::Bytes && format.reading_bytes() * 8 != value_bits as usize {
        return Err(IntakeError::ReadingFormatWidth {
            format: header.reading_format,
            width_bits: header.body_bits,
        });
    }
    check_chunking(&header, COMPACT_LIST_CHUNK_BYTES, config)?;
    let reading_bytes = header.body_bits / 8;
    if !header.message_length.is_multiple_of(u32::from(reading_bytes)) {
        return Err(IntakeError::PartialReadings {
            message_length: header.message_length,
            reading_bytes,
        });
    }
    let payload = compact_list_payload_bytes(value_bits, chunk_reading_bytes(&header))
        .unwrap_or_else(|| unreachable!("a checked width, whole readings, at most one chunk"));
    let expected = HEADER_BYTES + payload + TAG_BYTES;
    if bytes.len() != expected {
        return Err(IntakeError::WrongFrameLength {
            expected,
            found: bytes.len(),
        });
    }
    let (authenticated, tag) = bytes.split_at(expected - TAG_BYTES);
    Ok(ParsedFrame {
        header,
        kind: FrameKind::CompactList,
        parameters,
        mask_xof,
        authenticated,
        tag,
    })
}

fn check_chunking(header: &FrameHeader, chunk_bytes: usize, config: &IntakeConfig) -> Result<(), IntakeError> {
    let (index, count) = (header.chunk_index, header.chunk_count);
    if count == 0 {
        return Err(IntakeError::ZeroChunkCount);
    }
    if index >= count {
        return Err(IntakeError::ChunkIndexOutOfRange { index, count });
    }
    if count > config.max_chunks_per_message {
        return Err(IntakeError::TooManyChunks {
            count,
            limit: config.max_chunks_per_message,
        });
    }
    let chunk_bytes = chunk_bytes as u64;
    let (length, count64) = (u64::from(header.message_length), u64::from(count));
    // The message fills count - 1 chunks and part of the last; an empty message travels as one chunk.
    let consistent =
        length <= count64 * chunk_bytes && (length > (count64 - 1) * chunk_bytes || (length == 0 && count == 1));
    if !consistent {
        return Err(IntakeError::InconsistentMessageLength {
            message_length: header.message_length,
            chunk_count: count,
            chunk_bytes: chunk_bytes as u32,
        });
    }
    // Chunk i has sequence first + i: first must be >= 0 and the last chunk's number must exist.
    let first = header.sequence.checked_sub(u64::from(index));
    if first.and_then(|f| f.checked_add(count64 - 1)).is_none() {
        return Err(IntakeError::SequenceOutOfRange {
            sequence: header.sequence,
            chunk_index: index,
        });
    }
    Ok(())
}
