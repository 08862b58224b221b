//! What every known-answer run reports: its measured [`Phase`]s, the [`Probe`] that hears about them and
//! about each frame, and the [`frame_digest`] that checks a frame. The runs ([`crate::run`],
//! [`crate::integer_run`], [`crate::integer_public_key_run`], [`crate::compact_list_run`]) and the frame
//! seams they share ([`crate::frames`]) all import it; it imports none of them.

use crate::kat_inputs::DIGEST_KEY;
use tfhe_sbc_device::frame::mac::MacKey;

/// A measured phase of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Setting the key (its spectrum, from the packed key in flash) and keying the CSPRNG in the empty
    /// encryptor.
    Construct,
    /// One seeded encryption, its body computed inside the frame buffer.
    Encrypt,
    /// One whole frame: `encrypt_frame_into` (the encryption, the header and the MAC).
    Frame,
    /// One whole frame with a compact body (the integer run only): `encrypt_frame_into` after
    /// `set_body_bits(compact_body_bits())` (the encryption, rounding and packing the body, header, MAC).
    CompactFrame,
    /// The compact-list run ([`crate::compact_list_run`]): one tfhe-rs list of 64 `u8` readings
    /// (`encrypt_list`: header, encryption, trailer, into the list buffer).
    List64,
    /// The compact-list run: one tfhe-rs list of 512 `u8` readings.
    List512,
}

/// What the run reports around each phase, and each frame it writes.
pub trait Probe {
    /// `phase` starts.
    fn start(&mut self, phase: Phase);
    /// `phase` ended.
    fn end(&mut self, phase: Phase);
    /// Frame `index` (0, 1, and 2 in the integer run; list 0 and 1 in the compact-list run) was written.
    fn frame(&mut self, _index: usize, _bytes: &[u8]) {}
}

/// The digest of one frame: BLAKE2b-128 keyed with the public [`DIGEST_KEY`], through the device crate's own
/// frame MAC code, so that checking adds no hash to flash and no hash state to the encryptions' stack.
/// build.rs computes the same on the host.
#[inline(never)]
pub fn frame_digest(frame: &[u8]) -> [u8; 16] {
    MacKey::from_bytes(DIGEST_KEY).tag(frame)
}
