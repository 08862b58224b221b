//! Validated intake of device frames (`docs/wire-format.md`): bytes from the network in, a checked GLWE
//! ciphertext out, or a typed [`IntakeError`].
//!
//! Intake never panics on any input and allocates only after the header has been validated, exactly the
//! `2N` words a ciphertext of the declared (known) parameter set needs: no length field of the input is
//! ever used to size an allocation.

use crate::error::IntakeError;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweCiphertextOwned, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use tfhe_sbc_device::mask::{MASK_XOF_ID, expand_mask_u32};
use tfhe_sbc_device::wire::{FORMAT_VERSION, FrameHeader, FrameKind, MAGIC};

/// A validated frame: its header, its parameter set, and the full ciphertext (a seeded mask expanded).
#[derive(Clone, Debug)]
pub struct Frame {
    /// The validated header.
    pub header: FrameHeader,
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

/// Decodes and validates the header only, without touching the payload.
pub fn decode_header(bytes: &[u8]) -> Result<(FrameHeader, GlweParameters, &[u8]), IntakeError> {
    // Check the magic first, so that garbage gets the most useful error.
    if bytes.len() >= 4 && bytes[..4] != MAGIC {
        return Err(IntakeError::BadMagic([bytes[0], bytes[1], bytes[2], bytes[3]]));
    }
    let (header, payload): (FrameHeader, &[u8]) =
        postcard::take_from_bytes(bytes).map_err(IntakeError::MalformedHeader)?;
    if header.magic != MAGIC {
        return Err(IntakeError::BadMagic(header.magic));
    }
    if header.version != FORMAT_VERSION {
        return Err(IntakeError::UnsupportedVersion(header.version));
    }
    let parameters = GlweParameters::from_id(ParameterSetId(header.parameter_set))
        .ok_or(IntakeError::UnknownParameterSet(header.parameter_set))?;
    if parameters.torus_bits() != 32 || parameters.glwe_dimension().0 != 1 {
        return Err(IntakeError::UnsupportedParameterSet(header.parameter_set));
    }
    if header.xof_id != MASK_XOF_ID {
        return Err(IntakeError::UnsupportedXof(header.xof_id));
    }
    if header.chunk_count == 0 {
        return Err(IntakeError::ZeroChunkCount);
    }
    if header.chunk_index >= header.chunk_count {
        return Err(IntakeError::ChunkIndexOutOfRange {
            index: header.chunk_index,
            count: header.chunk_count,
        });
    }
    let chunk_bytes = (parameters.polynomial_size().0 / 8) as u64;
    let (length, count) = (u64::from(header.message_length), u64::from(header.chunk_count));
    // The message fills count - 1 chunks and part of the last; an empty message travels as one chunk.
    let consistent =
        length <= count * chunk_bytes && (length > (count - 1) * chunk_bytes || (length == 0 && count == 1));
    if !consistent {
        return Err(IntakeError::InconsistentMessageLength {
            message_length: header.message_length,
            chunk_count: header.chunk_count,
            chunk_bytes: chunk_bytes as u32,
        });
    }
    Ok((header, parameters, payload))
}

/// The exact payload length of a frame of `kind` for polynomial size `n`.
pub fn payload_len(kind: FrameKind, n: usize) -> usize {
    match kind {
        FrameKind::Seeded => MASK_SEED_BYTES + 4 * n,
        FrameKind::Full => 8 * n,
    }
}

/// Decodes and validates a whole frame, and expands a seeded mask.
pub fn decode_frame(bytes: &[u8]) -> Result<Frame, IntakeError> {
    let (header, parameters, payload) = decode_header(bytes)?;
    let n = parameters.polynomial_size().0;
    let expected = payload_len(header.kind, n);
    if payload.len() != expected {
        return Err(IntakeError::WrongPayloadLength {
            expected,
            found: payload.len(),
        });
    }
    // Sized by the known parameter set, never by the input.
    let mut data = vec![0u32; 2 * n];
    let (mask, body) = data.split_at_mut(n);
    let body_bytes = match header.kind {
        FrameKind::Seeded => {
            let (seed, rest) = payload.split_at(MASK_SEED_BYTES);
            let mut seed_array = [0u8; MASK_SEED_BYTES];
            seed_array.copy_from_slice(seed);
            expand_mask_u32(&seed_array, mask);
            rest
        }
        FrameKind::Full => {
            let (mask_bytes, rest) = payload.split_at(4 * n);
            read_words(mask_bytes, mask);
            rest
        }
    };
    read_words(body_bytes, body);
    let ciphertext = GlweCiphertext::from_container(data, parameters.polynomial_size()).map_err(|_| {
        IntakeError::WrongPayloadLength {
            expected,
            found: payload.len(),
        }
    })?;
    Ok(Frame {
        header,
        parameters,
        ciphertext,
    })
}

fn read_words(bytes: &[u8], out: &mut [u32]) {
    for (w, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
}
