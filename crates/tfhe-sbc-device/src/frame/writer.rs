//! Frame writers: header, payload and tag into a caller slice, from separate buffers or computed in place.

use crate::error::{Error, Result};
use crate::frame::header::{FrameHeader, HEADER_BYTES, body_bytes};
use crate::frame::mac::{MacKey, TAG_BYTES};
use tfhe_sbc_core::compact_body::{pack_body, pack_body_in_place};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::torus::UnsignedTorus;

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
/// as given: this is the low-level encoder, [`crate::encrypt::GlweEncryptor::encrypt_seeded_frame`] fills it in.
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

/// A torus word of a frame's payload: `u32` or `u64`, travelling little-endian.
pub trait PayloadWord: bytemuck::Pod + UnsignedTorus {
    /// The word in little-endian byte order.
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

/// Writes a frame whose payload is computed in the frame buffer itself: `header | prefix | words | tag`,
/// where `fill` computes the `words` payload words (as native `W`: `u32` on the 32-bit torus, `u64` on the
/// 64-bit one) and returns the `PREFIX` bytes that go before them (a seeded frame's mask seed; nothing for a
/// full frame). Returns the frame's length. No buffer besides `out` is used.
///
/// The words are not aligned in the frame (the header is 47 bytes), so `fill` runs on a window aligned to
/// `size_of::<W>()` starting up to `size_of::<W>() - 1` bytes before their place (a checked `bytemuck` cast,
/// no `unsafe` here); the words are then made little-endian in place (the wire format's byte order), a compact body
/// is packed, and they are moved to their place with `copy_within`; the header and the prefix are written
/// after, since the window overlaps them. On an error from `fill` the frame is incomplete and must not be
/// sent.
pub fn write_frame_in_place<W: PayloadWord, const PREFIX: usize, F>(
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
