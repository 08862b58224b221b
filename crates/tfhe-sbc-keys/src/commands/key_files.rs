//! The key set's files as `issue` and `show` read them back: the client key, the key store and the public
//! key, each checked to belong to the key set of the server key's envelope.

use super::device_parameters::glwe_parameters;
use crate::error::{Error, RESTORE};
use crate::files::{self, CLIENT_KEY_FILE, KEY_STORE_FILE, PUBLIC_KEY_FILE, SERVER_KEY_FILE};
use crate::{KeySetParameters, parameters_name};
use std::path::Path;
use tfhe_sbc_adapter::key_set::client_key::{
    SecretClientKey, SecretIntegerClientKey, read_client_key, read_integer_client_key,
};
use tfhe_sbc_adapter::key_set::envelope::KeyFileEnvelope;
use tfhe_sbc_adapter::key_set::key_store::KeyStore;
use tfhe_sbc_adapter::key_set::short_hex;
use tfhe_sbc_device::files::public_key::decode_public_key_header;

/// The boolean client key of `dir`, checked against the server key's envelope: same key set.
pub(super) fn load_client_key(dir: &Path, server: &KeyFileEnvelope) -> Result<SecretClientKey, Error> {
    let path = dir.join(CLIENT_KEY_FILE);
    let (client, key) = read_client_key(&path)?;
    same_key_set(dir, &path, &client.envelope(), server)?;
    Ok(key)
}

/// The integer client key of `dir`, checked against the server key's envelope: same key set.
pub(super) fn load_integer_client_key(dir: &Path, server: &KeyFileEnvelope) -> Result<SecretIntegerClientKey, Error> {
    let path = dir.join(CLIENT_KEY_FILE);
    let (client, key) = read_integer_client_key(&path)?;
    same_key_set(dir, &path, &client, server)?;
    Ok(key)
}

/// Checks that the client key at `path` (its envelope `client`) and `dir`'s server key (`server`) come from
/// one `init`: same key id, parameters and server key.
fn same_key_set(dir: &Path, path: &Path, client: &KeyFileEnvelope, server: &KeyFileEnvelope) -> Result<(), Error> {
    if client.key_id == server.key_id
        && client.parameters == server.parameters
        && client.server_key_fingerprint == server.server_key_fingerprint
    {
        return Ok(());
    }
    let label = |envelope: &KeyFileEnvelope| match envelope.parameters {
        KeySetParameters::Boolean(set) => format!("key id {:#010x}, {}", envelope.key_id, parameters_name(set)),
        KeySetParameters::Integer => format!("key id {:#010x}", envelope.key_id),
    };
    Err(Error::Mismatch {
        message: format!(
            "{} ({}) and {} ({}) come from different init runs: put the client key and the server key of one key \
             set in --dir",
            path.display(),
            label(client),
            dir.join(SERVER_KEY_FILE).display(),
            label(server),
        ),
    })
}

/// The key store of `dir`, checked to be bound to `server`'s server key.
pub(super) fn load_key_store(dir: &Path, server: &KeyFileEnvelope) -> Result<KeyStore, Error> {
    let path = dir.join(KEY_STORE_FILE);
    let store = KeyStore::read_file(&path)?;
    if store.server_key_fingerprint() != server.server_key_fingerprint {
        return Err(Error::Mismatch {
            message: format!(
                "key store {} is bound to another server key (fingerprint {}; {} is {}): run init again or point \
                 --dir at the directory whose server key it was made for",
                path.display(),
                short_hex(&store.server_key_fingerprint()),
                dir.join(SERVER_KEY_FILE).display(),
                short_hex(&server.server_key_fingerprint),
            ),
        });
    }
    Ok(store)
}

/// The public-key file of `dir`, checked to be a valid public-key file of the key set with parameters
/// `parameters` and key id `key_id` (boolean sets: `u32` body words; the integer set: `u64`).
pub(super) fn load_public_key(dir: &Path, parameters: KeySetParameters, key_id: u32) -> Result<Vec<u8>, Error> {
    let path = dir.join(PUBLIC_KEY_FILE);
    let bytes = files::read(&path, "public key")?;
    let header = decode_public_key_header(&bytes).map_err(|e| {
        Error::bad_file(
            &path,
            format!("not a valid public-key file for {}: {e}", parameters.name()),
            RESTORE,
        )
    })?;
    let expected = glwe_parameters(parameters).id();
    if header.key_id != key_id || header.parameters.id() != expected {
        return Err(Error::Mismatch {
            message: format!(
                "{} (key id {:#010x}, parameter set {}) is not the public key of the key set in {} (key id \
                 {:#010x}, parameter set {}): put the public key of this key set in --dir",
                path.display(),
                header.key_id,
                header.parameters.id().0,
                dir.display(),
                key_id,
                expected.0,
            ),
        });
    }
    Ok(bytes.to_vec())
}
