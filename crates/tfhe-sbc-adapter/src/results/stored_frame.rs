//! A committed frame as the workers store it under its [`frame_key`](super::frame_key) in the results
//! bucket: the device's frame, byte for byte, followed by a 16-byte **binding tag** under the device's MAC
//! key (the key store's, which the service holds) over a domain, the device id and the frame's own MAC tag.
//!
//! ```text
//! frame (wire format v2, its MAC included) | binding tag (16 bytes): MAC of
//!   "TSST stored v1\0\0" | device id u64 LE | the frame's MAC tag
//! ```
//!
//! The frame's MAC shows that the device sent it; the binding shows that the service admitted it under its
//! number. A worker binds only the frame its device's ledger admitted (another frame under that number,
//! from a board whose counter went back, is dead-lettered unbound), so a reader that checks the binding
//! decrypts under each number the readings the device was answered "accepted" for, whatever a client of
//! the NATS store wrote there: an authentic but never admitted frame (read from the dead-letter stream,
//! say) put under an admitted frame's name does not open. NATS is a store the service does not trust.

use tfhe_sbc_device::frame::ack::frame_tag;
use tfhe_sbc_device::frame::mac::{MacKey, TAG_BYTES};

/// The domain of a binding tag: neither a frame's magic ("TSBC"), a ledger's ("TSLG") nor an
/// announcement's ("TSAN").
const STORED_DOMAIN: &[u8; 16] = b"TSST stored v1\0\0";

/// What a binding tag authenticates, for the frame of MAC tag `mac_tag` of device `device_id`.
fn bound(device_id: u64, mac_tag: &[u8; TAG_BYTES]) -> [u8; STORED_DOMAIN.len() + 8 + TAG_BYTES] {
    let mut message = [0u8; STORED_DOMAIN.len() + 8 + TAG_BYTES];
    message[..STORED_DOMAIN.len()].copy_from_slice(STORED_DOMAIN);
    message[STORED_DOMAIN.len()..STORED_DOMAIN.len() + 8].copy_from_slice(&device_id.to_le_bytes());
    message[STORED_DOMAIN.len() + 8..].copy_from_slice(mac_tag);
    message
}

/// The value a worker stores for `frame`, which device `device_id`'s ledger admitted; `None` for bytes too
/// short to be a frame.
pub fn seal_stored_frame(key: &MacKey, device_id: u64, frame: &[u8]) -> Option<Vec<u8>> {
    let mac_tag = frame_tag(frame)?;
    let mut value = Vec::with_capacity(frame.len() + TAG_BYTES);
    value.extend_from_slice(frame);
    value.extend_from_slice(&key.tag(&bound(device_id, mac_tag)));
    Some(value)
}

/// The frame in a stored `value` of device `device_id`, if its binding verifies under the device's key
/// (constant-time comparison); `None` for anything a worker of this service did not bind (the frame's own
/// MAC is the caller's to check).
pub fn open_stored_frame<'a>(key: &MacKey, device_id: u64, value: &'a [u8]) -> Option<&'a [u8]> {
    let split = value.len().checked_sub(TAG_BYTES)?;
    let (frame, tag) = value.split_at(split);
    key.verify(&bound(device_id, frame_tag(frame)?), tag).then_some(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binding_opens_only_for_its_frame_device_and_key() {
        let key = MacKey::from_bytes([7; 32]);
        let frame: Vec<u8> = (0..100u8).collect();
        let value = seal_stored_frame(&key, 3, &frame).unwrap();
        assert_eq!(open_stored_frame(&key, 3, &value), Some(&frame[..]));
        // Another device, another key, the bare frame, another frame with this binding: refused.
        assert_eq!(open_stored_frame(&key, 4, &value), None);
        assert_eq!(open_stored_frame(&MacKey::from_bytes([8; 32]), 3, &value), None);
        assert_eq!(open_stored_frame(&key, 3, &frame), None);
        let mut other = frame.clone();
        *other.last_mut().unwrap() ^= 1;
        other.extend_from_slice(&value[frame.len()..]);
        assert_eq!(open_stored_frame(&key, 3, &other), None);
        assert_eq!(open_stored_frame(&key, 3, &value[..10]), None);
        assert_eq!(seal_stored_frame(&key, 3, &frame[..TAG_BYTES - 1]), None);
    }
}
