//! The envelope of the tfhe-rs key files (`client_key.bin`, `server_key.bin`): versioned, with the key
//! set's parameter set, key id and server key fingerprint, and a BLAKE2b-256 integrity check, so that a
//! wrong, truncated or corrupt file gets a one-line error before tfhe-rs sees a byte of it.
//!
//! # Format, version 1
//! ```text
//! offset  bytes
//!      0      8  magic "TSBCKEYF"
//!      8      1  version = 1
//!      9      1  kind: 1 = client key, 2 = server key
//!     10      2  parameter set id, u16 LE (tfhe_sbc_core::parameters::ParameterSetId): 1 to 3 a boolean
//!                set (tfhe::boolean keys), 4 the integer set (tfhe's high-level ClientKey / ServerKey)
//!     12      4  key id, u32 LE (the key set's: frames under it carry it)
//!     16     32  server key fingerprint (crate::interop::server_key_fingerprint of a boolean
//!                server key, crate::interop::integer::integer_server_key_fingerprint of an integer one: binds a
//!                client key, a server key and a key store together)
//!     48      8  payload length L, u64 LE
//!     56      L  payload: bincode (fixed-width integers, little-endian) of tfhe-rs's versioned key
//!                (`tfhe::Versionize`), so that a later tfhe-rs can still read it
//! 56 + L     32  BLAKE2b-256 of bytes 0 .. 56 + L
//! ```
//!
//! The check catches corruption and mix-ups, not forgery: whoever can write the file can recompute it. The
//! client key file's secrecy is the file system's (mode 0600).
//!
//! The server key file is read and written by [`super::server_key`], the client key file by
//! [`super::client_key`].

use super::KeySetParameters;
use super::error::{KeySetError, POINT_AT_INIT_DIR, RESTORE, bad};
use crate::interop::big_key::BooleanSet;
use bincode::Options;
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use std::path::Path;
use tfhe::{Unversionize, Versionize};
use tfhe_sbc_core::parameters::ParameterSetId;
use zeroize::Zeroizing;

/// The first bytes of a key file.
pub const KEY_FILE_MAGIC: [u8; 8] = *b"TSBCKEYF";
/// The key file format version this code writes and reads.
pub const KEY_FILE_VERSION: u8 = 1;
/// The bytes before the payload.
pub const HEADER_BYTES: usize = 56;
/// The integrity check's bytes.
pub const CHECK_BYTES: usize = 32;
/// The largest payload read: 1 GiB (a `TFHE_LIB_PARAMETERS` server key is about 83 MB).
pub const MAX_PAYLOAD_BYTES: u64 = 1 << 30;

/// What a key file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// The tfhe-rs `ClientKey`: secret.
    ClientKey,
    /// The tfhe-rs `ServerKey`: public (the cloud's).
    ServerKey,
}

impl KeyKind {
    /// Its byte in the header.
    pub const fn to_u8(self) -> u8 {
        match self {
            Self::ClientKey => 1,
            Self::ServerKey => 2,
        }
    }

    /// The kind with this header byte.
    pub const fn from_u8(id: u8) -> Option<Self> {
        match id {
            1 => Some(Self::ClientKey),
            2 => Some(Self::ServerKey),
            _ => None,
        }
    }

    /// Its name in messages.
    pub const fn name(self) -> &'static str {
        match self {
            Self::ClientKey => "client key",
            Self::ServerKey => "server key",
        }
    }
}

/// A key file's header: which key set the key belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyFileHeader {
    /// What the file holds.
    pub kind: KeyKind,
    /// The tfhe-rs boolean parameter set.
    pub set: BooleanSet,
    /// The key set's key id.
    pub key_id: u32,
    /// The fingerprint of the key set's server key.
    pub server_key_fingerprint: [u8; 32],
}

impl KeyFileHeader {
    /// The envelope of a boolean key file.
    pub fn envelope(&self) -> KeyFileEnvelope {
        KeyFileEnvelope {
            kind: self.kind,
            parameters: KeySetParameters::Boolean(self.set),
            key_id: self.key_id,
            server_key_fingerprint: self.server_key_fingerprint,
        }
    }
}

/// A key file's header for any key set, boolean or integer: what `issue` and `show` read first to know which
/// kind of key set a directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyFileEnvelope {
    /// What the file holds.
    pub kind: KeyKind,
    /// The key set's parameters.
    pub parameters: KeySetParameters,
    /// The key set's key id.
    pub key_id: u32,
    /// The fingerprint of the key set's server key.
    pub server_key_fingerprint: [u8; 32],
}

fn bincode_options() -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_little_endian()
        .with_limit(MAX_PAYLOAD_BYTES)
        .reject_trailing_bytes()
}

fn check(bytes: &[u8]) -> [u8; CHECK_BYTES] {
    Blake2b::<U32>::digest(bytes).into()
}

pub(crate) fn encode<T: Versionize>(key: &T, header: &KeyFileEnvelope) -> Result<Zeroizing<Vec<u8>>, KeySetError> {
    let versioned = key.versionize();
    let provisioning = |e: bincode::Error| KeySetError::Encode {
        message: format!("the {} does not serialize: {e}", header.kind.name()),
    };
    let payload = bincode_options().serialized_size(&versioned).map_err(provisioning)?;
    let payload_len = usize::try_from(payload).map_err(|_| KeySetError::Encode {
        message: format!("the {} is too large to serialize", header.kind.name()),
    })?;
    // Sized in advance: serializing into it never reallocates, so no copy of a secret is left behind.
    let mut out = Zeroizing::new(Vec::with_capacity(HEADER_BYTES + payload_len + CHECK_BYTES));
    out.extend_from_slice(&KEY_FILE_MAGIC);
    out.push(KEY_FILE_VERSION);
    out.push(header.kind.to_u8());
    out.extend_from_slice(&header.parameters.id().0.to_le_bytes());
    out.extend_from_slice(&header.key_id.to_le_bytes());
    out.extend_from_slice(&header.server_key_fingerprint);
    out.extend_from_slice(&payload.to_le_bytes());
    bincode_options()
        .serialize_into(&mut *out, &versioned)
        .map_err(provisioning)?;
    let digest = check(&out);
    out.extend_from_slice(&digest);
    Ok(out)
}

/// Checks a boolean key file (magic, version, kind, a boolean parameter set, length, integrity) and returns
/// its header and payload. `path` names the file in errors.
pub fn decode_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    expected: KeyKind,
) -> Result<(KeyFileHeader, &'a [u8]), KeySetError> {
    let (envelope, payload) = decode_envelope(path, bytes, expected)?;
    match envelope.parameters {
        KeySetParameters::Boolean(set) => Ok((
            KeyFileHeader {
                kind: envelope.kind,
                set,
                key_id: envelope.key_id,
                server_key_fingerprint: envelope.server_key_fingerprint,
            },
            payload,
        )),
        KeySetParameters::Integer => Err(bad(
            path,
            format!("holds the {} of an integer key set, not a boolean one", expected.name()),
            "give this command a boolean key set (tfhe-sbc-keys handles both)",
        )),
    }
}

/// Checks a key file of any key set (magic, version, kind, parameter set, length, integrity) and returns its
/// envelope and payload. `path` names the file in errors.
pub fn decode_envelope<'a>(
    path: &Path,
    bytes: &'a [u8],
    expected: KeyKind,
) -> Result<(KeyFileEnvelope, &'a [u8]), KeySetError> {
    let what = expected.name();
    if bytes.len() >= KEY_FILE_MAGIC.len() && bytes[..KEY_FILE_MAGIC.len()] != KEY_FILE_MAGIC {
        return Err(bad(
            path,
            format!("not a tfhe-sbc key file (bad magic), expected the {what}"),
            POINT_AT_INIT_DIR,
        ));
    }
    if bytes.len() < HEADER_BYTES + CHECK_BYTES {
        return Err(bad(
            path,
            format!("the {what} file is truncated ({} bytes)", bytes.len()),
            RESTORE,
        ));
    }
    let version = bytes[8];
    if version != KEY_FILE_VERSION {
        return Err(bad(
            path,
            format!("key file version {version}, this build reads version {KEY_FILE_VERSION}"),
            "use the tfhe-sbc-keys release that wrote it",
        ));
    }
    let payload = u64::from_le_bytes(bytes[48..56].try_into().unwrap_or([0xff; 8]));
    let expected_len = usize::try_from(payload)
        .ok()
        .and_then(|p| p.checked_add(HEADER_BYTES + CHECK_BYTES));
    if expected_len != Some(bytes.len()) {
        let problem = match expected_len {
            Some(len) if len > bytes.len() => {
                format!("the {what} file is truncated ({} of {len} bytes)", bytes.len())
            }
            _ => format!(
                "the {what} file is corrupt (its length field does not match its {} bytes)",
                bytes.len()
            ),
        };
        return Err(bad(path, problem, RESTORE));
    }
    let (content, digest) = bytes.split_at(bytes.len() - CHECK_BYTES);
    if check(content)[..] != *digest {
        return Err(bad(
            path,
            format!("the {what} file is corrupt (integrity check failed)"),
            RESTORE,
        ));
    }
    let kind = KeyKind::from_u8(bytes[9])
        .ok_or_else(|| bad(path, format!("unknown key kind {}", bytes[9]), POINT_AT_INIT_DIR))?;
    if kind != expected {
        return Err(bad(
            path,
            format!("holds the {}, not the {what}", kind.name()),
            POINT_AT_INIT_DIR,
        ));
    }
    let set_id = u16::from_le_bytes([bytes[10], bytes[11]]);
    let parameters = KeySetParameters::from_id(ParameterSetId(set_id)).ok_or_else(|| {
        bad(
            path,
            format!("parameter set {set_id} is not one this build supports"),
            "use the tfhe-sbc-keys release that wrote it",
        )
    })?;
    let mut key_id = [0u8; 4];
    key_id.copy_from_slice(&bytes[12..16]);
    let mut server_key_fingerprint = [0u8; 32];
    server_key_fingerprint.copy_from_slice(&bytes[16..48]);
    Ok((
        KeyFileEnvelope {
            kind,
            parameters,
            key_id: u32::from_le_bytes(key_id),
            server_key_fingerprint,
        },
        &content[HEADER_BYTES..],
    ))
}

pub(crate) fn decode_payload<T: Unversionize>(path: &Path, payload: &[u8], kind: KeyKind) -> Result<T, KeySetError> {
    let versioned: T::VersionedOwned = bincode_options().deserialize(payload).map_err(|e| {
        bad(
            path,
            format!("the {} does not deserialize: {e}", kind.name()),
            "it passed its integrity check, so it was written by an incompatible build: run init again",
        )
    })?;
    T::unversionize(versioned).map_err(|e| {
        bad(
            path,
            format!("the {} does not unversionize: {e}", kind.name()),
            "use the tfhe-sbc-keys release that wrote it",
        )
    })
}

/// The envelope of an integer key file, or an error naming the boolean set it holds instead.
pub(crate) fn integer_envelope<'a>(
    path: &Path,
    bytes: &'a [u8],
    kind: KeyKind,
) -> Result<(KeyFileEnvelope, &'a [u8]), KeySetError> {
    let (envelope, payload) = decode_envelope(path, bytes, kind)?;
    if envelope.parameters != KeySetParameters::Integer {
        return Err(bad(
            path,
            format!(
                "holds the {} of the boolean set {}, not of the integer set",
                kind.name(),
                envelope.parameters.name()
            ),
            POINT_AT_INIT_DIR,
        ));
    }
    Ok((envelope, payload))
}
