//! The frame MAC of wire format v2 ([`crate::frame`]): keyed BLAKE2b with a 16-byte digest.
//!
//! `tag = BLAKE2b-128(key = the device's 32-byte MAC key, salt = empty, personalization =
//! "TFHE-SBC MAC v2.", message = every byte of the frame before the tag)`. This is RFC 7693's keyed mode
//! (the key padded to one 128-byte block and compressed first) with the digest length set to 16 in the
//! parameter block, so it is not a truncation of the 64-byte MAC: a 16-byte tag and a 64-byte tag under the
//! same key are unrelated.
//!
//! Verification compares in constant time. The MAC state, which after the key block is enough to forge tags,
//! is wiped after each tag. The BLAKE2b is the device's own (`blake2b_lanes::blake2b`, the XOF's compression),
//! checked against the RustCrypto `blake2` crate by the tests below.

use rand_core::CryptoRng;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// The length of a device's MAC key.
pub const MAC_KEY_BYTES: usize = 32;
/// The length of a frame tag.
pub const TAG_BYTES: usize = 16;
/// The BLAKE2b personalization of the frame MAC (16 bytes, the most BLAKE2b takes).
pub const MAC_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC MAC v2.";

/// A device's 32-byte frame-MAC key. Shared by the device and the server's registry, and nobody else.
///
/// Zeroized on drop, not `Clone`, and `Debug` prints no key material. Like every `ZeroizeOnDrop` value, only
/// its final location is wiped: construct it where it will live.
pub struct MacKey([u8; MAC_KEY_BYTES]);

impl MacKey {
    /// The key with these bytes. The caller should wipe its own copy of `bytes` (e.g. the buffer the key
    /// was read from flash into).
    pub const fn from_bytes(bytes: [u8; MAC_KEY_BYTES]) -> Self {
        Self(bytes)
    }

    /// The key in `bytes`, which must be exactly [`MAC_KEY_BYTES`] long.
    pub fn from_slice(bytes: &[u8]) -> crate::Result<Self> {
        let mut key = Self([0; MAC_KEY_BYTES]);
        crate::Error::check_length(MAC_KEY_BYTES, bytes.len())?;
        key.0.copy_from_slice(bytes);
        Ok(key)
    }

    /// A fresh random key (for provisioning: the trusted party draws one per device).
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut key = Self([0; MAC_KEY_BYTES]);
        rng.fill_bytes(&mut key.0);
        key
    }

    /// The key bytes, to store in the device's provisioning record. Handle with care.
    pub fn as_bytes(&self) -> &[u8; MAC_KEY_BYTES] {
        &self.0
    }

    /// The tag of `authenticated` (a frame without its tag).
    pub fn tag(&self, authenticated: &[u8]) -> [u8; TAG_BYTES] {
        self.tag_with(MAC_PERSONALIZATION, authenticated)
    }

    /// The tag of `message` under this key with another BLAKE2b `personalization` (another domain: the
    /// acknowledgement records' tags).
    pub(crate) fn tag_with(&self, personalization: &[u8; 16], message: &[u8]) -> [u8; TAG_BYTES] {
        crate::csprng::lanes::blake2b::<TAG_BYTES>(personalization, &self.0, message)
    }

    /// Whether `tag` is the tag of `authenticated`, compared in constant time. A `tag` of any length other
    /// than [`TAG_BYTES`] is rejected.
    pub fn verify(&self, authenticated: &[u8], tag: &[u8]) -> bool {
        if tag.len() != TAG_BYTES {
            return false;
        }
        let expected = self.tag(authenticated);
        // Every byte is compared: the OR of the differences, read once at the end.
        let difference = expected.iter().zip(tag).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        core::hint::black_box(difference) == 0
    }
}

impl Drop for MacKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl ZeroizeOnDrop for MacKey {}

impl core::fmt::Debug for MacKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MacKey(<redacted>)")
    }
}

/// What identifies a device on the wire and authenticates its frames: its id, the id of the key its
/// ciphertexts are encrypted under, and its MAC key. Provisioned by the trusted party; the server's registry
/// holds the same record.
///
/// Not `Clone` (it holds the MAC key); `Debug` redacts the key.
#[derive(Debug)]
pub struct DeviceCredentials {
    device_id: u64,
    key_id: u32,
    mac_key: MacKey,
}

impl DeviceCredentials {
    /// The credentials of device `device_id`, whose ciphertexts are under key `key_id`.
    pub const fn new(device_id: u64, key_id: u32, mac_key: MacKey) -> Self {
        Self {
            device_id,
            key_id,
            mac_key,
        }
    }

    /// The device id carried in every frame.
    pub const fn device_id(&self) -> u64 {
        self.device_id
    }

    /// The key id carried in every frame.
    pub const fn key_id(&self) -> u32 {
        self.key_id
    }

    /// The frame-MAC key.
    pub const fn mac_key(&self) -> &MacKey {
        &self.mac_key
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blake2::digest::consts::U16;
    use blake2::digest::{Digest, Mac};
    use blake2::{Blake2b, Blake2bMac};

    #[test]
    fn tag_is_keyed_personalized_and_verifies() {
        let key = MacKey::from_bytes([7; 32]);
        let tag = key.tag(b"frame bytes");
        assert!(key.verify(b"frame bytes", &tag));
        assert!(!key.verify(b"frame bytez", &tag));
        assert!(!key.verify(b"frame bytes", &tag[..15]));
        assert!(!MacKey::from_bytes([8; 32]).verify(b"frame bytes", &tag));
        // Not an unkeyed hash, not the unpersonalized MAC.
        let plain = Blake2b::<U16>::digest(b"frame bytes");
        assert_ne!(&tag[..], &plain[..]);
        let mut unpersonalized = Blake2bMac::<U16>::new_with_salt_and_personal(Some(&[7; 32]), &[], &[]).unwrap();
        unpersonalized.update(b"frame bytes");
        assert_ne!(&tag[..], &unpersonalized.finalize().into_bytes()[..]);
    }

    /// The tag is RustCrypto's keyed, personalized BLAKE2b-128, at every block boundary.
    #[test]
    fn tag_is_rustcrypto_blake2b_mac() {
        let message: [u8; 600] = core::array::from_fn(|i| (i * 31 + 7) as u8);
        for len in [0, 1, 8, 127, 128, 129, 255, 256, 257, 383, 384, 385, 600] {
            let key = MacKey::from_bytes(core::array::from_fn(|i| i as u8 ^ 0x5c));
            let mut reference =
                Blake2bMac::<U16>::new_with_salt_and_personal(Some(key.as_bytes()), &[], MAC_PERSONALIZATION).unwrap();
            Mac::update(&mut reference, &message[..len]);
            assert_eq!(
                key.tag(&message[..len])[..],
                reference.finalize().into_bytes()[..],
                "length {len}"
            );
        }
    }

    #[test]
    fn key_construction_and_debug() {
        assert!(MacKey::from_slice(&[1; 31]).is_err());
        let key = MacKey::from_slice(&[0xAB; 32]).unwrap();
        assert_eq!(key.as_bytes(), &[0xAB; 32]);
        let credentials = DeviceCredentials::new(5, 6, key);
        let mut text = [0u8; 256];
        let mut cursor = Cursor(&mut text, 0);
        core::fmt::write(&mut cursor, format_args!("{credentials:?}")).unwrap();
        let written = cursor.1;
        let s = core::str::from_utf8(&text[..written]).unwrap();
        assert!(s.contains("redacted") && !s.contains("171") && !s.contains("ab"), "{s}");
    }

    struct Cursor<'a>(&'a mut [u8], usize);

    impl core::fmt::Write for Cursor<'_> {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            let end = self.1 + s.len();
            self.0
                .get_mut(self.1..end)
                .ok_or(core::fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.1 = end;
            Ok(())
        }
    }
}
