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
//!     16     32  server key fingerprint (tfhe_sbc_adapter::interop::server_key_fingerprint of a boolean
//!                server key, interop::integer::integer_server_key_fingerprint of an integer one: binds a
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
//! In memory, the client key's encoding is built in a [`Zeroizing`] buffer sized in advance, and
//! [`SecretClientKey`] wipes the key's containers on drop. tfhe-rs's own `ClientKey` does not zeroize, and
//! deserializing goes through tfhe-rs's versioned form, so a freed copy of the key can remain on the heap
//! (as `docs/security.md` says of any moved value).

use crate::KeySetParameters;
use crate::error::{Error, POINT_AT_INIT_DIR, RESTORE};
use bincode::Options;
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use std::path::Path;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::server_key::ServerKey;
use tfhe::{Unversionize, Versionize};
use tfhe_sbc_adapter::interop::big_key::{BooleanSet, check_server_key};
use tfhe_sbc_adapter::interop::integer::glwe_key_from_client_key as integer_glwe_key;
use tfhe_sbc_adapter::interop::integer::integer_server_key_fingerprint;
use tfhe_sbc_adapter::interop::integer::per_device::{IntegerRefresher, client_key_parameters};
use tfhe_sbc_core::parameters::ParameterSetId;
use zeroize::{Zeroize, Zeroizing};

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
    const fn to_u8(self) -> u8 {
        match self {
            Self::ClientKey => 1,
            Self::ServerKey => 2,
        }
    }

    const fn from_u8(id: u8) -> Option<Self> {
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

/// A tfhe-rs `ClientKey` whose secret containers are wiped when it is dropped. Not `Clone`; `Debug` is
/// redacted.
pub struct SecretClientKey(Option<ClientKey>);

impl SecretClientKey {
    /// Takes ownership of `key`.
    pub fn new(key: ClientKey) -> Self {
        Self(Some(key))
    }

    /// Takes ownership of `key` after checking that it has `set`'s tfhe-rs parameters and keys of their
    /// shapes (tfhe-rs would panic on a mismatch later); on error the key is wiped.
    pub fn checked(key: ClientKey, set: BooleanSet) -> Result<Self, String> {
        let (lwe, glwe, parameters) = key.into_raw_parts();
        let expected = set.tfhe_parameters();
        let problem = if parameters != expected {
            Some(format!(
                "the client key's tfhe-rs parameters are not {}",
                set.tfhe_name()
            ))
        } else if lwe.lwe_dimension() != expected.lwe_dimension
            || glwe.glwe_dimension() != expected.glwe_dimension
            || glwe.polynomial_size() != expected.polynomial_size
            || glwe.as_ref().len() != set.big_lwe_dimension()
        {
            Some("the client key's secret keys do not have its parameters' shapes".to_owned())
        } else {
            None
        };
        match problem {
            None => Ok(Self::new(ClientKey::new_from_raw_parts(lwe, glwe, parameters))),
            Some(problem) => {
                lwe.into_container().zeroize();
                glwe.into_container().zeroize();
                Err(problem)
            }
        }
    }

    /// The key.
    pub fn get(&self) -> &ClientKey {
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("the key is taken only on drop"))
    }
}

impl Drop for SecretClientKey {
    fn drop(&mut self) {
        if let Some(key) = self.0.take() {
            let (lwe, glwe, _) = key.into_raw_parts();
            lwe.into_container().zeroize();
            glwe.into_container().zeroize();
        }
    }
}

impl core::fmt::Debug for SecretClientKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecretClientKey(<redacted>)")
    }
}

/// A tfhe-rs high-level `ClientKey` of the integer set whose secret keys (GLWE and LWE) are wiped when it is
/// dropped. Not `Clone`; `Debug` is redacted.
pub struct SecretIntegerClientKey(Option<tfhe::ClientKey>);

impl SecretIntegerClientKey {
    /// Takes ownership of `key`.
    pub fn new(key: tfhe::ClientKey) -> Self {
        Self(Some(key))
    }

    /// Takes ownership of `key` after checking that it has the integer set's tfhe-rs parameters
    /// (`PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`'s shape) and a GLWE key the devices can take; on
    /// error the key is wiped.
    pub fn checked(key: tfhe::ClientKey) -> Result<Self, String> {
        let key = Self::new(key);
        client_key_parameters(key.get()).map_err(|e| format!("the client key is not of the integer set: {e}"))?;
        integer_glwe_key(key.get()).map_err(|e| format!("the client key's GLWE key is unusable: {e}"))?;
        Ok(key)
    }

    /// The key.
    pub fn get(&self) -> &tfhe::ClientKey {
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("the key is taken only on drop"))
    }
}

impl Drop for SecretIntegerClientKey {
    fn drop(&mut self) {
        if let Some(key) = self.0.take() {
            let (integer, ..) = key.into_raw_parts();
            let shortint = integer.into_raw_parts();
            if let tfhe::shortint::client_key::atomic_pattern::AtomicPatternClientKey::Standard(ap) =
                shortint.atomic_pattern
            {
                let (glwe, lwe, ..) = ap.into_raw_parts();
                glwe.into_container().zeroize();
                lwe.into_container().zeroize();
            }
        }
    }
}

impl core::fmt::Debug for SecretIntegerClientKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecretIntegerClientKey(<redacted>)")
    }
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

fn encode<T: Versionize>(key: &T, header: &KeyFileEnvelope) -> Result<Zeroizing<Vec<u8>>, Error> {
    let versioned = key.versionize();
    let provisioning = |e: bincode::Error| Error::Provisioning {
        message: format!("the {} does not serialize: {e}", header.kind.name()),
    };
    let payload = bincode_options().serialized_size(&versioned).map_err(provisioning)?;
    let payload_len = usize::try_from(payload).map_err(|_| Error::Provisioning {
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

/// The client key file's bytes (secret: wiped on drop).
pub fn encode_client_key(key: &ClientKey, header: &KeyFileHeader) -> Result<Zeroizing<Vec<u8>>, Error> {
    debug_assert_eq!(header.kind, KeyKind::ClientKey);
    encode(key, &header.envelope())
}

/// The server key file's bytes.
pub fn encode_server_key(key: &ServerKey, header: &KeyFileHeader) -> Result<Vec<u8>, Error> {
    debug_assert_eq!(header.kind, KeyKind::ServerKey);
    // Public: no need to wipe, and moving out of the Zeroizing wrapper copies nothing.
    encode(key, &header.envelope()).map(|mut bytes| core::mem::take(&mut *bytes))
}

/// The integer set's client key file's bytes (the high-level `tfhe::ClientKey`; secret: wiped on drop).
pub fn encode_integer_client_key(key: &tfhe::ClientKey, header: &KeyFileEnvelope) -> Result<Zeroizing<Vec<u8>>, Error> {
    debug_assert_eq!(header.kind, KeyKind::ClientKey);
    encode(key, header)
}

/// The integer set's server key file's bytes (the high-level `tfhe::ServerKey`).
pub fn encode_integer_server_key(key: &tfhe::ServerKey, header: &KeyFileEnvelope) -> Result<Vec<u8>, Error> {
    debug_assert_eq!(header.kind, KeyKind::ServerKey);
    encode(key, header).map(|mut bytes| core::mem::take(&mut *bytes))
}

fn bad(path: &Path, problem: String, fix: &'static str) -> Error {
    Error::BadFile {
        path: path.to_owned(),
        problem,
        fix,
    }
}

/// Checks a boolean key file (magic, version, kind, a boolean parameter set, length, integrity) and returns
/// its header and payload. `path` names the file in errors.
pub fn decode_header<'a>(path: &Path, bytes: &'a [u8], expected: KeyKind) -> Result<(KeyFileHeader, &'a [u8]), Error> {
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
) -> Result<(KeyFileEnvelope, &'a [u8]), Error> {
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

fn decode_payload<T: Unversionize>(path: &Path, payload: &[u8], kind: KeyKind) -> Result<T, Error> {
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

/// Reads and checks the client key file at `path`: its header, and a key with the header's parameters.
pub fn read_client_key(path: &Path) -> Result<(KeyFileHeader, SecretClientKey), Error> {
    let bytes = crate::files::read(path, "client key")?;
    let (header, payload) = decode_header(path, &bytes, KeyKind::ClientKey)?;
    let key = decode_payload::<ClientKey>(path, payload, KeyKind::ClientKey)?;
    let key = SecretClientKey::checked(key, header.set).map_err(|problem| bad(path, problem, RESTORE))?;
    Ok((header, key))
}

/// Reads and checks the server key file at `path`: its header, and a key of the header's parameter set
/// whose fingerprint is the header's.
pub fn read_server_key(path: &Path) -> Result<(KeyFileHeader, ServerKey), Error> {
    let bytes = crate::files::read(path, "server key")?;
    let (header, payload) = decode_header(path, &bytes, KeyKind::ServerKey)?;
    let key: ServerKey = decode_payload(path, payload, KeyKind::ServerKey)?;
    drop(bytes);
    check_server_key(header.set, &key).map_err(|e| bad(path, e.to_string(), RESTORE))?;
    if tfhe_sbc_adapter::interop::server_key_fingerprint(&key) != header.server_key_fingerprint {
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
pub fn read_server_key_header(path: &Path) -> Result<KeyFileHeader, Error> {
    let bytes = crate::files::read(path, "server key")?;
    decode_header(path, &bytes, KeyKind::ServerKey).map(|(header, _)| header)
}

/// Reads and checks the server key file's envelope only (integrity included), of a boolean or an integer key
/// set, without deserializing the key: what `issue` and `show` need to know of it.
pub fn read_server_key_envelope(path: &Path) -> Result<KeyFileEnvelope, Error> {
    let bytes = crate::files::read(path, "server key")?;
    decode_envelope(path, &bytes, KeyKind::ServerKey).map(|(envelope, _)| envelope)
}

/// The envelope of an integer key file, or an error naming the boolean set it holds instead.
fn integer_envelope<'a>(path: &Path, bytes: &'a [u8], kind: KeyKind) -> Result<(KeyFileEnvelope, &'a [u8]), Error> {
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

/// Reads and checks the integer set's client key file at `path`: its envelope, and a high-level key of the
/// integer set.
pub fn read_integer_client_key(path: &Path) -> Result<(KeyFileEnvelope, SecretIntegerClientKey), Error> {
    let bytes = crate::files::read(path, "client key")?;
    let (envelope, payload) = integer_envelope(path, &bytes, KeyKind::ClientKey)?;
    let key = decode_payload::<tfhe::ClientKey>(path, payload, KeyKind::ClientKey)?;
    let key = SecretIntegerClientKey::checked(key).map_err(|problem| bad(path, problem, RESTORE))?;
    Ok((envelope, key))
}

/// Reads and checks the integer set's server key file at `path`: its envelope, and a high-level key of the
/// integer set whose fingerprint is the envelope's.
pub fn read_integer_server_key(path: &Path) -> Result<(KeyFileEnvelope, tfhe::ServerKey), Error> {
    let bytes = crate::files::read(path, "server key")?;
    let (envelope, payload) = integer_envelope(path, &bytes, KeyKind::ServerKey)?;
    let key: tfhe::ServerKey = decode_payload(path, payload, KeyKind::ServerKey)?;
    drop(bytes);
    IntegerRefresher::new(&key).map_err(|e| bad(path, e.to_string(), RESTORE))?;
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

/// A short hexadecimal form of a fingerprint, for messages.
pub fn short_hex(fingerprint: &[u8; 32]) -> String {
    fingerprint[..8].iter().map(|b| format!("{b:02x}")).collect()
}
