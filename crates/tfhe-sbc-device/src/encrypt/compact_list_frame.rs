//! [`CompactListFrameEncryptor`]: tfhe-rs `CompactCiphertextList`s sealed into authenticated frames
//! ([`crate::frame::compact_list`], kind 3), one list per chunk of readings, through the one
//! [`FrameEncryptor`] seam, so that the Pi client sends them as it sends every other mode's frames (the
//! device is known to the cloud, replays are refused, acknowledgements verify under its MAC key).
//!
//! The list is written straight into the frame buffer; `u16`/`u32` readings are decoded from the chunk's
//! little-endian bytes into one stack array, wiped after the list is written.

use crate::compact_list::CompactReading;
use crate::encrypt::compact_list::CompactListNttEncryptor;
use crate::encrypt::frame_encryptor::FrameEncryptor;
use crate::error::{Error, Result};
use crate::frame::compact_list::{
    COMPACT_LIST_CHUNK_BYTES, COMPACT_LIST_FRAME_SET, MAX_COMPACT_LIST_FRAME_BYTES, compact_list_frame_bytes,
    compact_list_payload_bytes, value_kind,
};
use crate::frame::mac::{DeviceCredentials, TAG_BYTES};
use crate::frame::message::Chunk;
use crate::frame::{FrameHeader, FrameKind, HEADER_BYTES, OutgoingMessage};
use crate::product::NegacyclicProductPlan;
use negacyclic_ntt::NttPlan64;
use tfhe_sbc_core::parameters::ParameterSetId;
use zeroize::Zeroize;

/// The compact-list encryptor ([`CompactListNttEncryptor`], 128 KiB: build it in place on the heap or in a
/// `static`) and the readings' width: seals each chunk of [`COMPACT_LIST_CHUNK_BYTES`] reading bytes as one
/// list in one frame. Its [`FrameEncryptor::frame_body_bits`] is the readings' width, as the frame header's
/// `body_bits` is.
pub struct CompactListFrameEncryptor<P: NegacyclicProductPlan<2048, Torus = u64> = NttPlan64> {
    /// The list encryptor: set its key and seed it in place.
    pub list: CompactListNttEncryptor<P>,
    value_bits: u32,
}

impl<P: NegacyclicProductPlan<2048, Torus = u64>> CompactListFrameEncryptor<P> {
    /// No key, an unseeded CSPRNG, `u8` readings: all zero bytes but the width.
    pub const EMPTY: Self = Self {
        list: CompactListNttEncryptor::<P>::EMPTY,
        value_bits: 8,
    };

    /// Sets the readings' width: 8, 16 or 32 bits ([`Error::UnsupportedReadingWidth`] otherwise).
    pub fn set_value_bits(&mut self, value_bits: u32) -> Result<()> {
        value_kind(value_bits).ok_or(Error::UnsupportedReadingWidth(value_bits))?;
        self.value_bits = value_bits;
        Ok(())
    }

    /// The readings' width in bits.
    pub fn value_bits(&self) -> u32 {
        self.value_bits
    }

    /// Encrypts the readings of `bytes` (little-endian `T`s) as one list into `out`.
    fn encrypt_readings<T: CompactReading + Default + Zeroize, const MAX: usize>(
        &mut self,
        bytes: &[u8],
        out: &mut [u8],
        from_le: fn(&[u8]) -> T,
    ) -> Result<usize> {
        let mut readings = [T::default(); MAX];
        let count = bytes.len() / size_of::<T>();
        for (reading, le) in readings.iter_mut().zip(bytes.chunks_exact(size_of::<T>())) {
            *reading = from_le(le);
        }
        let written = self.list.encrypt_list(&readings[..count], out);
        readings.zeroize();
        written
    }
}

impl<P: NegacyclicProductPlan<2048, Torus = u64>> core::fmt::Debug for CompactListFrameEncryptor<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CompactListFrameEncryptor")
            .field("list", &self.list)
            .field("value_bits", &self.value_bits)
            .finish()
    }
}

impl<P: NegacyclicProductPlan<2048, Torus = u64>> FrameEncryptor for CompactListFrameEncryptor<P> {
    fn chunk_bytes(&self) -> usize {
        COMPACT_LIST_CHUNK_BYTES
    }

    fn frame_kind(&self) -> FrameKind {
        FrameKind::CompactList
    }

    fn frame_parameter_set(&self) -> ParameterSetId {
        COMPACT_LIST_FRAME_SET
    }

    fn frame_mask_xof_id(&self) -> u8 {
        0
    }

    /// A whole chunk's frame (a last, shorter chunk's is shorter).
    fn frame_len(&self) -> usize {
        compact_list_frame_bytes(self.value_bits, COMPACT_LIST_CHUNK_BYTES)
    }

    fn frame_buffer_len(&self) -> usize {
        MAX_COMPACT_LIST_FRAME_BYTES
    }

    fn frame_body_bits(&self) -> u32 {
        self.value_bits
    }

    fn compact_body_bits(&self) -> u32 {
        self.value_bits
    }

    /// The readings' width ([`Self::set_value_bits`]).
    fn set_frame_body_bits(&mut self, body_bits: u32) -> Result<()> {
        self.set_value_bits(body_bits)
    }

    fn is_ready_to_seal(&self) -> bool {
        self.list.is_ready()
    }

    fn encrypt_frame_into(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        message.check_chunk(chunk)?;
        let reading_bytes = self.value_bits as usize / 8;
        let payload = compact_list_payload_bytes(self.value_bits, chunk.bytes.len()).ok_or(Error::PartialReading {
            reading_bytes,
            found: chunk.bytes.len(),
        })?;
        if !(message.message_length() as usize).is_multiple_of(reading_bytes) {
            return Err(Error::PartialReading {
                reading_bytes,
                found: message.message_length() as usize,
            });
        }
        let total = HEADER_BYTES + payload + TAG_BYTES;
        let out = out.get_mut(..total).ok_or(Error::BufferTooSmall)?;
        let mut header = FrameHeader::new(
            FrameKind::CompactList,
            0,
            COMPACT_LIST_FRAME_SET,
            credentials,
            message,
            chunk,
        )?;
        header.body_bits = self.value_bits as u8;
        header.write(out)?;
        let (authenticated, tag) = out.split_at_mut(HEADER_BYTES + payload);
        let list = &mut authenticated[HEADER_BYTES..];
        let written = match self.value_bits {
            8 => self.list.encrypt_list(chunk.bytes, list),
            16 => self.encrypt_readings::<u16, { COMPACT_LIST_CHUNK_BYTES / 2 }>(chunk.bytes, list, |b| {
                u16::from_le_bytes([b[0], b[1]])
            }),
            _ => self.encrypt_readings::<u32, { COMPACT_LIST_CHUNK_BYTES / 4 }>(chunk.bytes, list, |b| {
                u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            }),
        };
        if let Err(e) = written {
            authenticated.zeroize();
            return Err(e);
        }
        debug_assert_eq!(written, Ok(payload));
        tag.copy_from_slice(&credentials.mac_key().tag(authenticated));
        Ok(total)
    }
}
