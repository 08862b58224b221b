//! The server key file (`server_key.bin`, mode 0644, the cloud's): a tfhe-rs `ServerKey` in the key file
//! envelope ([`super::envelope`]), boolean or integer, checked on reading against its header's parameter
//! set and server key fingerprint.

use super::envelope::{
    KeyFileEnvelope, KeyFileHeader, KeyKind, decode_envelope, decode_header, decode_payload, encode, integer_envelope,
};
use super::error::{KeySetError, RESTORE, bad};
use super::files::read;
use crate::interop::big_key::check_server_key;
use crate::interop::integer::integer_server_key_fingerprint;
use crate::interop::integer::per_device::check_server_key as check_integer_server_key;
use std::path::Path;
use tfhe::boolean::server_key::ServerKey;

/// The server key file's bytes.
pub fn encode_server_key(key: &ServerKey, header: &KeyFileHeader) -> Result<Vec<u8>, KeySetError> {
    debug_assert_eq!(header.kind, KeyKind::ServerKey);
    // Public: no need to wipe, and moving out of the Zeroizing wrapper copies nothing.
    encode(key, &header.envelope()).map(|mut bytes| core::mem::take(&mut *bytes))
}

/// The integer set's server key file's bytes (the high-level `tfhe::ServerKey`).
pub fn encode_integer_server_key(key: &tfhe::ServerKey, header: &KeyFileEnvelope) -> Result<Vec<u8>, KeySetError> {
    debug_assert_eq!(header.kind, KeyKind::ServerKey);
    encode(key, header).map(|mut bytes| core::mem::take(&mut *bytes))
}

/// Reads and checks the server key file at `path`: its header, and a key of the header's parameter set
/// whose fingerprint is the header's.
pub fn read_server_key(path: &Path) -> Result<(KeyFileHeader, ServerKey), KeySetError> {
    let bytes = read(path, "server key")?;
    let (header, payload) = decode_header(path, &bytes, KeyKind::ServerKey)?;
    let key: ServerKey = decode_payload(path, payload, KeyKind::ServerKey)?;
    drop(bytes);
    check_server_key(header.set, &key).map_err(|e| bad(path, e.to_string(), RESTORE))?;
    if crate::interop::server_key_fingerprint(&key) != header.server_key_fingerprint {
        return Err(bad(
            path,
            "the server key's fingerprint is not its header's".to_owned(),
            RESTORE,
        ));
    }
    Ok((header, key))
}

/// Reads and checks a boolean server key file's envelope only (integrity included), without deserializing
/// the key.
pub fn read_server_key_header(path: &Path) -> Result<KeyFileHeader, KeySetError> {
    let bytes = read(path, "server key")?;
    decode_header(path, &bytes, KeyKind::ServerKey).map(|(header, _)| header)
}

/// Reads and checks the server key file's envelope only (integrity included), of a boolean or an integer key
/// set, without deserializing the key: what `issue` and `show` need to know of it.
pub fn read_server_key_envelope(path: &Path) -> Result<KeyFileEnvelope, KeySetError> {
    let bytes = read(path, "server key")?;
    decode_envelope(path, &bytes, KeyKind::ServerKey).map(|(envelope, _)| envelope)
}

/// Reads and checks the integer set's server key file at `path`: its envelope, and a high-level key of the
/// integer set whose fingerprint is the envelope's.
pub fn read_integer_server_key(path: &Path) -> Result<(KeyFileEnvelope, tfhe::ServerKey), KeySetError> {
    let bytes = read(path, "server key")?;
    let (envelope, payload) = integer_envelope(path, &bytes, KeyKind::ServerKey)?;
    let key: tfhe::ServerKey = decode_payload(path, payload, KeyKind::ServerKey)?;
    drop(bytes);
    check_integer_server_key(&key).map_err(|e| bad(path, e.to_string(), RESTORE))?;
    let fingerprint = integer_server_key_fingerprint(&key).map_err(|e| bad(path, e.to_string(), RESTORE))?;
    if fingerprint != envelope.server_key_fingerprint {
        return Err(bad(
            path,
            "the server key's fingerprint is not its header's".to_owned(),
            RESTORE,
        ));
    }
    Ok((envelope, key))
}
