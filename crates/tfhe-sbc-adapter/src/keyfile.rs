//! Versioned key files for the device key: what the trusted party writes and the device provisioning
//! reads.
//!
//! Layout (postcard): `(magic "TSBK", version u8, parameter set u16, N coefficients as raw bytes 0/1)`.
//! Buffers holding key bytes are zeroized when dropped.

use serde::ser::SerializeTuple;
use serde::{Serialize, Serializer};
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use zeroize::Zeroizing;

/// The first bytes of a key file.
pub const KEY_FILE_MAGIC: [u8; 4] = *b"TSBK";
/// The key-file format version.
pub const KEY_FILE_VERSION: u8 = 1;

struct RawBytes<'a>(&'a [u8]);

impl Serialize for RawBytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tuple = serializer.serialize_tuple(self.0.len())?;
        for b in self.0 {
            tuple.serialize_element(b)?;
        }
        tuple.end()
    }
}

/// Serializes `key` for `parameters` into a zeroizing buffer.
pub fn encode_key_file(key: &GlweSecretKeyOwned, parameters: &GlweParameters) -> Zeroizing<Vec<u8>> {
    let header = (KEY_FILE_MAGIC, KEY_FILE_VERSION, parameters.id().0);
    let mut out = Zeroizing::new(vec![0u8; 16 + key.as_bytes().len()]);
    let used = postcard::to_slice(&(header, RawBytes(key.as_bytes())), &mut out[..])
        .map(|s| s.len())
        .unwrap_or_else(|_| unreachable!("the buffer is sized for the header and the key"));
    out.truncate(used);
    out
}

/// Why a key file was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyFileError {
    /// Not a key file, or a version this adapter does not read, or a malformed header.
    BadHeader,
    /// The parameter set is unknown.
    UnknownParameterSet(u16),
    /// The key bytes do not have the parameter set's length, or are not all 0 or 1.
    BadKey,
}

impl core::fmt::Display for KeyFileError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadHeader => f.write_str("not a tfhe-sbc key file of a supported version"),
            Self::UnknownParameterSet(id) => write!(f, "key file names unknown parameter set {id}"),
            Self::BadKey => f.write_str("key bytes have the wrong length or are not binary"),
        }
    }
}

impl std::error::Error for KeyFileError {}

/// Reads a key file back: the key and its parameter set.
pub fn decode_key_file(bytes: &[u8]) -> Result<(GlweSecretKeyOwned, GlweParameters), KeyFileError> {
    let ((magic, version, id), rest): (([u8; 4], u8, u16), &[u8]) =
        postcard::take_from_bytes(bytes).map_err(|_| KeyFileError::BadHeader)?;
    if magic != KEY_FILE_MAGIC || version != KEY_FILE_VERSION {
        return Err(KeyFileError::BadHeader);
    }
    let parameters = GlweParameters::from_id(ParameterSetId(id)).ok_or(KeyFileError::UnknownParameterSet(id))?;
    let n = parameters.polynomial_size().0 * parameters.glwe_dimension().0;
    if rest.len() != n {
        return Err(KeyFileError::BadKey);
    }
    let key =
        GlweSecretKey::from_container(rest.to_vec(), parameters.polynomial_size()).map_err(|_| KeyFileError::BadKey)?;
    Ok((key, parameters))
}
