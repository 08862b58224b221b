//! The client key file (`client_key.bin`, mode 0600, the trusted party's only): a tfhe-rs `ClientKey` in
//! the key file envelope ([`super::envelope`]), boolean or integer, and the wrappers that wipe it on drop.
//!
//! In memory, the client key's encoding is built in a [`Zeroizing`] buffer sized in advance, and
//! [`SecretClientKey`] wipes the key's containers on drop. tfhe-rs's own `ClientKey` does not zeroize, and
//! deserializing goes through tfhe-rs's versioned form, so a freed copy of the key can remain on the heap
//! (as of any value Rust moves).

use super::envelope::{
    KeyFileEnvelope, KeyFileHeader, KeyKind, decode_header, decode_payload, encode, integer_envelope,
};
use super::error::{KeySetError, RESTORE, bad};
use super::files::read;
use crate::interop::big_key::BooleanSet;
use crate::interop::integer::glwe_key_from_client_key as integer_glwe_key;
use crate::interop::integer::per_device::client_key_parameters;
use std::path::Path;
use tfhe::boolean::client_key::ClientKey;
use zeroize::{Zeroize, Zeroizing};

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

/// A tfhe-rs high-level `ClientKey` of the integer set whose secret keys (GLWE and LWE, and the dedicated
/// compact private key of a key set made for compact lists) are wiped when it is dropped. Not `Clone`; `Debug` is redacted.
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
            let (integer, compact, ..) = key.into_raw_parts();
            // The dedicated compact private key of a key set made for compact lists.
            if let Some((compact, _)) = compact {
                let (lwe, _) = compact.into_raw_parts().into_raw_parts();
                lwe.into_container().zeroize();
            }
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

/// The client key file's bytes (secret: wiped on drop).
pub fn encode_client_key(key: &ClientKey, header: &KeyFileHeader) -> Result<Zeroizing<Vec<u8>>, KeySetError> {
    debug_assert_eq!(header.kind, KeyKind::ClientKey);
    encode(key, &header.envelope())
}

/// The integer set's client key file's bytes (the high-level `tfhe::ClientKey`; secret: wiped on drop).
pub fn encode_integer_client_key(
    key: &tfhe::ClientKey,
    header: &KeyFileEnvelope,
) -> Result<Zeroizing<Vec<u8>>, KeySetError> {
    debug_assert_eq!(header.kind, KeyKind::ClientKey);
    encode(key, header)
}

/// Reads and checks the client key file at `path`: its header, and a key with the header's parameters.
pub fn read_client_key(path: &Path) -> Result<(KeyFileHeader, SecretClientKey), KeySetError> {
    let bytes = read(path, "client key")?;
    let (header, payload) = decode_header(path, &bytes, KeyKind::ClientKey)?;
    let key = decode_payload::<ClientKey>(path, payload, KeyKind::ClientKey)?;
    let key = SecretClientKey::checked(key, header.set).map_err(|problem| bad(path, problem, RESTORE))?;
    Ok((header, key))
}

/// Reads and checks the integer set's client key file at `path`: its envelope, and a high-level key of the
/// integer set.
pub fn read_integer_client_key(path: &Path) -> Result<(KeyFileEnvelope, SecretIntegerClientKey), KeySetError> {
    let bytes = read(path, "client key")?;
    let (envelope, payload) = integer_envelope(path, &bytes, KeyKind::ClientKey)?;
    let key = decode_payload::<tfhe::ClientKey>(path, payload, KeyKind::ClientKey)?;
    let key = SecretIntegerClientKey::checked(key).map_err(|problem| bad(path, problem, RESTORE))?;
    Ok((envelope, key))
}
