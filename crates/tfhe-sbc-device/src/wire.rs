//! Wire format v2: authenticated frames, written into a caller slice. Specified in `docs/wire-format.md`.
//!
//! ```text
//! magic "TSBC" | version 2 | header (42 bytes, fixed) | payload (fixed by the set and body_bits) | tag (16 bytes)
//! ```
//!
//! The header is the postcard encoding of [`FrameHeader`], every integer fixed-width little-endian
//! (`postcard::fixint::le`), so every header has the same size and every frame of a given kind, parameter
//! set and body width has the same size: [`frame_bytes`], [`seeded_frame_bytes`], [`full_frame_bytes`]. Torus
//! words travel as raw little-endian bytes, a compact body as its top bits packed
//! ([`tfhe_sbc_core::compact_body`]). The tag is the [`frame_mac`](crate::frame_mac) of every byte before it.
//!
//! Frame identity and freshness: each frame names its device and key ([`DeviceCredentials`]), a per-device
//! monotonic sequence number and a message id ([`FrameCounter`], [`OutgoingMessage`]). The chunks of one
//! message carry the same message id and consecutive sequence numbers.
//!
//! Version 1 (no identity, no MAC) is gone: receivers reject it.

use crate::encryption::GlweEncryptor;
use crate::error::{Error, Result};
use crate::frame_mac::{DeviceCredentials, MacKey};
use crate::mask::MASK_XOF_ID;
use crate::message::Chunk;
use crate::product::NegacyclicProductPlan;
use serde::{Deserialize, Serialize};
use tfhe_sbc_core::compact_body::{pack_body, pack_body_in_place};
use tfhe_sbc_core::entities::{GlweCiphertext, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::ParameterSetId;
use tfhe_sbc_core::torus::UnsignedTorus;

pub use crate::frame_mac::TAG_BYTES;

/// The first four bytes of every frame.
pub const MAGIC: [u8; 4] = *b"TSBC";
/// The version of this wire format.
pub const FORMAT_VERSION: u8 = 2;
/// The magic and the version: the bytes every version shares, read before anything else.
pub const PREFIX_BYTES: usize = 5;
/// The encoded [`FrameHeader`] (after the prefix): kind 1, parameter set 2, XOF id 1, body bits 1, flags 1,
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
    /// Public-key encryption, mask in full: `mask | body`. Reserved for the public-key mode (issue \[E\]).
    PublicKey = 2,
}

impl FrameKind {
    /// The kind with this wire value, if any.
    pub const fn from_u8(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::Seeded),
            1 => Some(Self::Full),
            2 => Some(Self::PublicKey),
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
    /// The XOF that expands a seeded mask ([`MASK_XOF_ID`]); 0 for kinds with no seed.
    pub xof_id: u8,
    /// How many top bits of each body coefficient travel: the torus width, or fewer for a compact body
    /// ([`tfhe_sbc_core::compact_body`]).
    pub body_bits: u8,
    /// Reserved, 0.
    pub flags: u8,
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
    /// device `credentials`.
    pub fn new(
        kind: FrameKind,
        parameter_set: ParameterSetId,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
    ) -> Result<Self> {
        let sequence = message.sequence_of(chunk.index, chunk.count)?;
        Ok(Self {
            kind: kind.to_u8(),
            parameter_set: parameter_set.0,
            xof_id: if kind == FrameKind::Seeded { MASK_XOF_ID } else { 0 },
            body_bits: 32,
            flags: 0,
            device_id: credentials.device_id(),
            key_id: credentials.key_id(),
            sequence,
            message_id: message.message_id,
            chunk_index: chunk.index,
            chunk_count: chunk.count,
            message_length: message.message_length,
        })
    }

    /// The header's [`FrameKind`], if its kind value is one.
    pub const fn frame_kind(&self) -> Option<FrameKind> {
        FrameKind::from_u8(self.kind)
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
}

/// The bytes of a body of `n` coefficients of which the top `body_bits` bits travel, bit-packed:
/// `ceil(n * body_bits / 8)`.
pub const fn body_bytes(n: usize, body_bits: u32) -> usize {
    tfhe_sbc_core::compact_body::packed_body_bytes(n, body_bits)
}

/// The exact payload length of a `kind` frame for a set with GLWE dimension `k`, polynomial size `n` and a
/// `torus_bits`-bit torus, of which `body_bits` travel per body coefficient.
pub const fn payload_bytes(kind: FrameKind, k: usize, n: usize, torus_bits: u32, body_bits: u32) -> usize {
    let mask = match kind {
        FrameKind::Seeded => MASK_SEED_BYTES,
        FrameKind::Full | FrameKind::PublicKey => k * n * (torus_bits as usize / 8),
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

fn write_words(words: &[u32], out: &mut [u8]) {
    for (bytes, word) in out.chunks_exact_mut(4).zip(words) {
        bytes.copy_from_slice(&word.to_le_bytes());
    }
}

/// Writes `header`, then `prefix` (a seed, or nothing), the `mask` words, the `body` words (their top
/// `header.body_bits` bits, [`pack_body`]), then the tag under `mac_key`.
fn write_frame(
    header: &FrameHeader,
    prefix: &[u8],
    mask: &[u32],
    body: &[u32],
    mac_key: &MacKey,
    out: &mut [u8],
) -> Result<usize> {
    let body_bits = u32::from(header.body_bits);
    let payload = prefix.len() + 4 * mask.len() + body_bytes(body.len(), body_bits);
    let total = HEADER_BYTES + payload + TAG_BYTES;
    let out = out.get_mut(..total).ok_or(Error::BufferTooSmall)?;
    header.write(out)?;
    let (authenticated, tag) = out.split_at_mut(total - TAG_BYTES);
    let (prefix_out, rest) = authenticated[HEADER_BYTES..].split_at_mut(prefix.len());
    prefix_out.copy_from_slice(prefix);
    let (mask_out, body_out) = rest.split_at_mut(4 * mask.len());
    write_words(mask, mask_out);
    pack_body(body, body_bits, body_out)?;
    tag.copy_from_slice(&mac_key.tag(authenticated));
    Ok(total)
}

/// Writes a seeded frame (`header | seed | body | tag`) into `out`; returns its length. The header is taken
/// as given: this is the low-level encoder, [`GlweEncryptor::encrypt_seeded_frame`] fills it in.
pub fn write_seeded_frame(
    header: &FrameHeader,
    seed: &[u8; MASK_SEED_BYTES],
    body: &[u32],
    mac_key: &MacKey,
    out: &mut [u8],
) -> Result<usize> {
    write_frame(header, seed, &[], body, mac_key, out)
}

/// Writes a full frame (`header | mask | body | tag`) into `out`; returns its length.
pub fn write_full_frame(
    header: &FrameHeader,
    mask: &[u32],
    body: &[u32],
    mac_key: &MacKey,
    out: &mut [u8],
) -> Result<usize> {
    write_frame(header, &[], mask, body, mac_key, out)
}

/// Writes a frame whose payload is computed in the frame buffer itself: `header | prefix | words | tag`,
/// where `fill` computes the `words` payload words (as native `u32`) and returns the `PREFIX` bytes that go
/// before them (a seeded frame's mask seed; nothing for a full frame). Returns the frame's length. No
/// buffer besides `out` is used.
///
/// The words are not 4-aligned in the frame (the header is 47 bytes), so `fill` runs on a 4-aligned
/// window starting up to 3 bytes before their place (a checked `bytemuck` cast, no `unsafe` here); the
/// words are then made little-endian in place and moved to their place with `copy_within`, and the header
/// and the prefix are written after, since the window overlaps them. On an error from `fill` the frame is
/// incomplete and must not be sent.
pub fn write_frame_in_place<const PREFIX: usize, F>(
    header: &FrameHeader,
    words: usize,
    mac_key: &MacKey,
    out: &mut [u8],
    fill: F,
) -> Result<usize>
where
    F: FnOnce(&mut [u32]) -> Result<[u8; PREFIX]>,
{
    write_words_in_place(header, words, mac_key, out, fill)
}

/// [`write_frame_in_place`] for 64-bit torus words (issue \[G\]): `fill` computes the `words` payload words
/// as native `u64` in an 8-aligned window starting up to 7 bytes before their place; they travel as 8-byte
/// little-endian words (`docs/wire-format.md`). Returns the frame's length.
pub fn write_frame_in_place_u64<const PREFIX: usize, F>(
    header: &FrameHeader,
    words: usize,
    mac_key: &MacKey,
    out: &mut [u8],
    fill: F,
) -> Result<usize>
where
    F: FnOnce(&mut [u64]) -> Result<[u8; PREFIX]>,
{
    write_words_in_place(header, words, mac_key, out, fill)
}

/// A payload word: travels little-endian.
trait PayloadWord: bytemuck::Pod + UnsignedTorus {
    fn to_le_word(self) -> Self;
}

impl PayloadWord for u32 {
    fn to_le_word(self) -> Self {
        self.to_le()
    }
}

impl PayloadWord for u64 {
    fn to_le_word(self) -> Self {
        self.to_le()
    }
}

/// [`write_frame_in_place`] for words of type `W`: the window is aligned to `size_of::<W>()` and starts
/// within `size_of::<W>() - 1` bytes before the words' place.
fn write_words_in_place<const PREFIX: usize, W: PayloadWord, F>(
    header: &FrameHeader,
    words: usize,
    mac_key: &MacKey,
    out: &mut [u8],
    fill: F,
) -> Result<usize>
where
    F: FnOnce(&mut [W]) -> Result<[u8; PREFIX]>,
{
    let size = size_of::<W>();
    let body_bits = u32::from(header.body_bits);
    let offset = HEADER_BYTES + PREFIX;
    // The words are computed at full width first, so the buffer must hold them all; the frame is shorter
    // when the body is compact.
    let full_payload_end = offset + size * words;
    let out = out
        .get_mut(..full_payload_end + TAG_BYTES)
        .ok_or(Error::BufferTooSmall)?;
    // The first aligned position at or after `offset - (size - 1)`.
    let window_start = (offset - (size - 1)..=offset)
        .find(|&i| (out.as_ptr() as usize).wrapping_add(i).is_multiple_of(size))
        .ok_or(Error::BufferTooSmall)?;
    let window = &mut out[window_start..window_start + size * words];
    let aligned: &mut [W] = bytemuck::try_cast_slice_mut(window).map_err(|_| Error::BufferTooSmall)?;
    let prefix = fill(aligned)?;
    for w in aligned.iter_mut() {
        *w = w.to_le_word();
    }
    // A compact body is packed at the start of the window (each word is read before its bytes are
    // overwritten), then moved to its place.
    let body_len = if body_bits == W::BITS {
        size * words
    } else {
        pack_body_in_place::<W>(window, words, body_bits)?
    };
    out.copy_within(window_start..window_start + body_len, offset);
    let payload_end = offset + body_len;
    header.write(out)?;
    out[HEADER_BYTES..offset].copy_from_slice(&prefix);
    let (authenticated, rest) = out.split_at_mut(payload_end);
    rest[..TAG_BYTES].copy_from_slice(&mac_key.tag(authenticated));
    Ok(payload_end + TAG_BYTES)
}

/// The device's frame counter: hands out strictly increasing sequence numbers in `[next, end)`.
///
/// Sequence numbers must never repeat for a device, across reboots too: the server drops a repeated or
/// too-old number as a replay. Either
/// * persist a high-water mark: at boot read `h`, write `h + B` to flash, run [`FrameCounter::with_limit`]`(h,
///   h + B)`; when [`Error::SequenceExhausted`] comes, write `end + B` and call
///   [`FrameCounter::extend_limit`] (one flash write per `B` frames), or
/// * keep a persistent boot counter and use [`FrameCounter::from_boot_counter`]: the upper 32 bits are the
///   boot count, the lower 32 count frames within the boot.
///
/// Not `Clone`: two copies would hand out the same numbers.
#[derive(Debug, PartialEq, Eq)]
pub struct FrameCounter {
    next: u64,
    end: u64,
}

impl FrameCounter {
    /// A counter starting at `next`, limited only by `u64::MAX`.
    pub const fn new(next: u64) -> Self {
        Self { next, end: u64::MAX }
    }

    /// A counter handing out `[next, end)`.
    pub const fn with_limit(next: u64, end: u64) -> Self {
        Self { next, end }
    }

    /// A counter for boot number `boot`: `[boot * 2^32, (boot + 1) * 2^32)`.
    pub const fn from_boot_counter(boot: u32) -> Self {
        let start = (boot as u64) << 32;
        Self {
            next: start,
            end: start | 0xFFFF_FFFF,
        }
    }

    /// The next sequence number this counter hands out.
    pub const fn next_sequence(&self) -> u64 {
        self.next
    }

    /// How many sequence numbers are left before [`Error::SequenceExhausted`].
    pub const fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.next)
    }

    /// Raises the limit to `end` (after persisting it); a lower `end` is ignored.
    pub fn extend_limit(&mut self, end: u64) {
        self.end = self.end.max(end);
    }

    /// Reserves the sequence numbers of a message of `message_length` bytes cut into chunks of
    /// `chunk_bytes` (`N / 8`) bytes, as [`crate::message::chunks`] cuts it: chunk `i` gets sequence
    /// `first + i`, and the message id is the low 32 bits of `first`.
    pub fn begin_message(&mut self, message_length: usize, chunk_bytes: usize) -> Result<OutgoingMessage> {
        if chunk_bytes == 0 {
            return Err(Error::WrongLength { expected: 1, found: 0 });
        }
        let length = u32::try_from(message_length).map_err(|_| Error::MessageTooLarge)?;
        let chunk_count =
            u32::try_from(message_length.div_ceil(chunk_bytes).max(1)).map_err(|_| Error::MessageTooLarge)?;
        if self.remaining() < u64::from(chunk_count) {
            return Err(Error::SequenceExhausted);
        }
        let first = self.next;
        self.next += u64::from(chunk_count);
        Ok(OutgoingMessage {
            message_id: first as u32,
            first_sequence: first,
            chunk_count,
            chunk_bytes,
            message_length: length,
        })
    }
}

/// The sequence numbers and message id reserved for one message ([`FrameCounter::begin_message`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutgoingMessage {
    message_id: u32,
    first_sequence: u64,
    chunk_count: u32,
    chunk_bytes: usize,
    message_length: u32,
}

impl OutgoingMessage {
    /// The message id every chunk carries.
    pub const fn message_id(&self) -> u32 {
        self.message_id
    }

    /// The sequence number of chunk 0.
    pub const fn first_sequence(&self) -> u64 {
        self.first_sequence
    }

    /// The number of chunks.
    pub const fn chunk_count(&self) -> u32 {
        self.chunk_count
    }

    /// The message length in bytes.
    pub const fn message_length(&self) -> u32 {
        self.message_length
    }

    /// The sequence number of chunk `index` of `count`, if that chunk is one of this message's.
    fn sequence_of(&self, index: u32, count: u32) -> Result<u64> {
        if count != self.chunk_count || index >= count {
            return Err(Error::ChunkNotInMessage { index, count });
        }
        Ok(self.first_sequence + u64::from(index))
    }

    /// Checks that `chunk` is chunk `chunk.index` of this message, bytes included.
    pub(crate) fn check_chunk(&self, chunk: &Chunk<'_>) -> Result<u64> {
        let sequence = self.sequence_of(chunk.index, chunk.count)?;
        let start = chunk.index as usize * self.chunk_bytes;
        let expected = (self.message_length as usize)
            .saturating_sub(start)
            .min(self.chunk_bytes);
        if chunk.bytes.len() != expected {
            return Err(Error::ChunkNotInMessage {
                index: chunk.index,
                count: chunk.count,
            });
        }
        Ok(sequence)
    }
}

impl<const N: usize, const K: usize, P: NegacyclicProductPlan<N, Torus = u32>> GlweEncryptor<N, K, P> {
    /// Reserves the sequence numbers of a `message_length`-byte message in chunks of `N / 8` bytes
    /// ([`FrameCounter::begin_message`]).
    pub fn begin_message(&self, counter: &mut FrameCounter, message_length: usize) -> Result<OutgoingMessage> {
        counter.begin_message(message_length, N / 8)
    }

    /// Encrypts `chunk` of `message` as a seeded ciphertext straight into the frame buffer `out` (at least
    /// [`seeded_frame_bytes`]`(N)` bytes: 4191 at `N = 1024`) and authenticates it: the body is computed in
    /// `out` itself ([`write_frame_in_place`]), so the frame buffer is the only buffer. Returns the frame's
    /// length, [`Self::seeded_frame_len`] (with the body bits of [`Self::set_body_bits`]). The frame is byte for byte what
    /// [`Self::encrypt_seeded_frame`] writes.
    pub fn encrypt_seeded_frame_into(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        out: &mut [u8],
    ) -> Result<usize> {
        message.check_chunk(chunk)?;
        if out.len() < seeded_frame_bytes(N) {
            return Err(Error::BufferTooSmall);
        }
        let mut header = FrameHeader::new(FrameKind::Seeded, self.parameter_set(), credentials, message, chunk)?;
        header.body_bits = self.body_bits() as u8;
        write_frame_in_place(&header, N, credentials.mac_key(), out, |body| {
            self.encrypt_seeded_glwe_ciphertext(chunk.bytes, body)
        })
    }

    /// Encrypts `chunk` of `message` as a seeded ciphertext and writes the authenticated frame into `out`
    /// (at least [`seeded_frame_bytes`]`(N)` bytes), using `body` as the body buffer. Returns the frame's
    /// length, [`Self::seeded_frame_len`]. [`Self::encrypt_seeded_frame_into`] needs no body buffer.
    pub fn encrypt_seeded_frame(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        body: &mut [u32; N],
        out: &mut [u8],
    ) -> Result<usize> {
        message.check_chunk(chunk)?;
        if out.len() < self.seeded_frame_len() {
            return Err(Error::BufferTooSmall);
        }
        let mut header = FrameHeader::new(FrameKind::Seeded, self.parameter_set(), credentials, message, chunk)?;
        header.body_bits = self.body_bits() as u8;
        let seed = self.encrypt_seeded_glwe_ciphertext(chunk.bytes, body)?;
        write_seeded_frame(&header, &seed, body, credentials.mac_key(), out)
    }

    /// Encrypts `chunk` of `message` with a full mask into `ciphertext` and writes the authenticated full
    /// frame into `out` (at least [`frame_bytes`]`(FrameKind::Full, K, N, 32, 32)` bytes; [`full_frame_bytes`]`(N)`
    /// at `K = 1`). The paper's form, for comparisons: receivers reject it by default.
    pub fn encrypt_full_frame<C: AsRef<[u32]> + AsMut<[u32]>>(
        &mut self,
        credentials: &DeviceCredentials,
        message: &OutgoingMessage,
        chunk: &Chunk<'_>,
        ciphertext: &mut GlweCiphertext<u32, C>,
        out: &mut [u8],
    ) -> Result<usize> {
        message.check_chunk(chunk)?;
        if out.len() < frame_bytes(FrameKind::Full, K, N, 32, 32) {
            return Err(Error::BufferTooSmall);
        }
        let header = FrameHeader::new(FrameKind::Full, self.parameter_set(), credentials, message, chunk)?;
        self.encrypt_glwe_ciphertext(chunk.bytes, ciphertext)?;
        write_full_frame(
            &header,
            ciphertext.mask(),
            ciphertext.body(),
            credentials.mac_key(),
            out,
        )
    }
}

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
                flags: fill,
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
                xof_id: MASK_XOF_ID,
                body_bits: 32,
                flags: 0,
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

    #[test]
    fn counter_reserves_consecutive_numbers() {
        let mut counter = FrameCounter::with_limit(10, 14);
        let m = counter.begin_message(300, 128).unwrap();
        assert_eq!((m.first_sequence(), m.chunk_count(), m.message_id()), (10, 3, 10));
        assert_eq!(counter.next_sequence(), 13);
        assert_eq!(counter.begin_message(300, 128), Err(Error::SequenceExhausted));
        let empty = counter.begin_message(0, 128).unwrap();
        assert_eq!((empty.first_sequence(), empty.chunk_count()), (13, 1));
        assert_eq!(counter.remaining(), 0);
        counter.extend_limit(100);
        counter.extend_limit(50);
        assert_eq!(counter.remaining(), 86);
        let boot = FrameCounter::from_boot_counter(3);
        assert_eq!((boot.next_sequence(), boot.remaining()), (3 << 32, 0xFFFF_FFFF));
        let last = FrameCounter::from_boot_counter(u32::MAX);
        assert_eq!(last.remaining(), 0xFFFF_FFFF);
        assert_eq!(m.sequence_of(2, 3), Ok(12));
        assert!(m.sequence_of(3, 3).is_err() && m.sequence_of(0, 4).is_err());
        assert!(FrameCounter::new(0).begin_message(1, 0).is_err());
    }
}
