//! The integrity check of the device's key files (public key, credentials): unkeyed BLAKE2b-128 under a
//! per-format personalization. It catches corruption and mix-ups between formats, not forgery.

/// The bytes of a check.
pub(crate) const CHECK_BYTES: usize = 16;

/// BLAKE2b-128 of `bytes` with no key and the 16-byte `personalization` (the device's own BLAKE2b, the XOF's
/// compression: `blake2b_lanes::blake2b`).
pub(crate) fn file_check(personalization: &[u8; 16], bytes: &[u8]) -> [u8; CHECK_BYTES] {
    crate::csprng::lanes::blake2b::<CHECK_BYTES>(personalization, &[], bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blake2::Blake2bMac;
    use blake2::digest::consts::U16;
    use blake2::digest::{FixedOutput, Update};

    /// The check is RustCrypto's unkeyed, personalized BLAKE2b-128, at every block boundary.
    #[test]
    fn check_is_rustcrypto_blake2b() {
        let bytes: [u8; 600] = core::array::from_fn(|i| (i * 13 + 1) as u8);
        for len in [0, 1, 127, 128, 129, 256, 257, 600] {
            let mut reference = Blake2bMac::<U16>::new_with_salt_and_personal(None, &[], b"TFHE-SBC test v1").unwrap();
            reference.update(&bytes[..len]);
            let mut expected = [0u8; CHECK_BYTES];
            reference.finalize_into((&mut expected).into());
            assert_eq!(file_check(b"TFHE-SBC test v1", &bytes[..len]), expected, "length {len}");
        }
    }
}
