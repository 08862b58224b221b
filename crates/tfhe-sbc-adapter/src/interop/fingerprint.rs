//! Server key fingerprints: BLAKE2b-256 of a server key's key-switching key (its words, little-endian,
//! after a domain string), what a `KeyStore` is bound to so that it is never used with another key set.

use super::error::InteropError;
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use tfhe::boolean::server_key::ServerKey;
use tfhe::core_crypto::prelude::LweKeyswitchKeyOwned;
use tfhe::shortint::atomic_pattern::AtomicPatternServerKey;

/// The fingerprint of a boolean server key (BLAKE2b-256 of its key-switching key): what a `KeyStore`
/// records so that it is never used with another key set.
pub fn server_key_fingerprint(server_key: &ServerKey) -> [u8; 32] {
    let (_, key_switching_key, _) = server_key.clone().into_raw_parts();
    fingerprint(&key_switching_key)
}

/// The fingerprint of a boolean key-switching key (domain `"tfhe-sbc server key fingerprint v1"`).
pub(crate) fn fingerprint(key_switching_key: &LweKeyswitchKeyOwned<u32>) -> [u8; 32] {
    hash_words(b"tfhe-sbc server key fingerprint v1", key_switching_key.as_ref())
}

/// A fingerprint of a high-level integer server key: BLAKE2b-256 of its key-switching key (domain
/// `"tfhe-sbc integer server key fingerprint v1"`), the key every per-device key switch must land beside.
/// A key store of integer devices is bound to it, as a boolean one is to [`server_key_fingerprint`].
/// Errors if the key is not a standard classic-PBS key.
pub fn integer_server_key_fingerprint(server_key: &tfhe::ServerKey) -> Result<[u8; 32], InteropError> {
    let integer: &tfhe::integer::ServerKey = server_key.as_ref();
    let shortint: &tfhe::shortint::ServerKey = integer.as_ref();
    let AtomicPatternServerKey::Standard(ap) = &shortint.atomic_pattern else {
        return Err(InteropError::UnsupportedAtomicPattern);
    };
    Ok(hash_words(
        b"tfhe-sbc integer server key fingerprint v1",
        ap.key_switching_key.as_ref(),
    ))
}

/// A machine word whose little-endian bytes are hashed.
trait LeWord: Copy {
    /// Its little-endian bytes, appended to `out`.
    fn extend_le(self, out: &mut Vec<u8>);
}

impl LeWord for u32 {
    fn extend_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl LeWord for u64 {
    fn extend_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// BLAKE2b-256 of `domain` then every word of `words`, little-endian, hashed 16 KiB at a time.
fn hash_words<W: LeWord>(domain: &[u8], words: &[W]) -> [u8; 32] {
    const CHUNK_BYTES: usize = 16 * 1024;
    let mut hasher = Blake2b::<U32>::new();
    hasher.update(domain);
    let mut bytes = Vec::with_capacity(CHUNK_BYTES);
    for chunk in words.chunks(CHUNK_BYTES / size_of::<W>()) {
        bytes.clear();
        chunk.iter().for_each(|word| word.extend_le(&mut bytes));
        hasher.update(&bytes);
    }
    hasher.finalize().into()
}
