//! The integrity check of the device's key files (public key, credentials): unkeyed BLAKE2b-128 under a
//! per-format personalization. It catches corruption and mix-ups between formats, not forgery.

use blake2::Blake2bMac;
use blake2::digest::consts::U16;
use blake2::digest::{FixedOutput, Update};

/// The bytes of a check.
pub(crate) const CHECK_BYTES: usize = 16;

/// BLAKE2b-128 of `bytes` with no key and the 16-byte `personalization`.
pub(crate) fn file_check(personalization: &[u8; 16], bytes: &[u8]) -> [u8; CHECK_BYTES] {
    let mut hasher = Blake2bMac::<U16>::new_with_salt_and_personal(None, &[], personalization)
        .unwrap_or_else(|_| unreachable!("no key and a 16-byte personalization are valid"));
    hasher.update(bytes);
    let mut out = [0u8; CHECK_BYTES];
    hasher.finalize_into((&mut out).into());
    out
}
