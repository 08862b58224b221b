//! The compact-list capability of an integer key set: tfhe-rs's own compact public-key encryption
//! (its `CompactCiphertextList`). `init --parameters integer --compact-list` builds the tfhe-rs keys with
//! [`compact_list_config`] (the client key gains a dedicated compact private key, the server key the casting
//! key), makes tfhe-rs's `CompactPublicKey` and writes its raw `[a | b]` as the device file
//! `compact_public_key.tscp` ([`compact_public_key_file`], format `tfhe_sbc_device::files::compact_public_key`);
//! `issue --mode compact-list` reads it back, checked against the key set ([`load_compact_public_key`]).

use crate::KeySetParameters;
use crate::error::provisioning;
use crate::error::{Error, RESTORE};
use crate::files::{self, COMPACT_PUBLIC_KEY_FILE};
use std::path::Path;
use tfhe::shortint::parameters::PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
use tfhe_sbc_adapter::key_set::envelope::KeyFileEnvelope;
use tfhe_sbc_adapter::key_set::short_hex;
use tfhe_sbc_device::encrypt::compact_list::COMPACT_PKE_N;
use tfhe_sbc_device::files::compact_public_key::{
    COMPACT_PUBLIC_KEY_FILE_BYTES, CompactKeyBinding, decode_compact_public_key_file, encode_compact_public_key_file,
};

/// The tfhe-rs names of the compact-list capability, for messages: the public-key set and the casting set.
pub(super) const COMPACT_LIST_SETS: &str = "PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, cast by PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128";

/// The high-level configuration of an integer key set that takes compact lists (the adapter's
/// [`tfhe_sbc_adapter::interop::integer::compact_list::compact_list_config`]).
pub(super) fn compact_list_config() -> tfhe::Config {
    tfhe_sbc_adapter::interop::integer::compact_list::compact_list_config()
}

/// tfhe-rs's `CompactPublicKey` of `client_key` (built with [`compact_list_config`]), expanded to its raw
/// `[a | b]` (`2 N` words; `CompactPublicKey::new` keeps it uncompressed, so nothing is re-derived here), as
/// the device's compact public-key file bound to the key set of key id `key_id` and server key fingerprint
/// `server_key_fingerprint`.
pub(super) fn compact_public_key_file(
    client_key: &tfhe::ClientKey,
    key_id: u32,
    server_key_fingerprint: [u8; 32],
) -> Result<Vec<u8>, Error> {
    let public = tfhe::CompactPublicKey::try_new(client_key).map_err(provisioning)?;
    if public.parameters() != PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 {
        return Err(Error::Provisioning {
            message: "the compact public key is not of PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128".to_owned(),
        });
    }
    let (integer, _tag) = public.into_raw_parts();
    let (lwe_key, _parameters) = integer.into_raw_parts().into_raw_parts();
    let words = lwe_key.into_container();
    if words.len() != 2 * COMPACT_PKE_N {
        return Err(Error::Provisioning {
            message: format!(
                "the compact public key has {} words, not {}",
                words.len(),
                2 * COMPACT_PKE_N
            ),
        });
    }
    let binding = CompactKeyBinding {
        key_set_parameters: KeySetParameters::Integer.id(),
        key_id,
        server_key_fingerprint,
    };
    let mut file = vec![0u8; COMPACT_PUBLIC_KEY_FILE_BYTES];
    encode_compact_public_key_file(&binding, &words, &mut file).map_err(provisioning)?;
    Ok(file)
}

/// The compact public-key file of `dir`, checked to be a valid file (`decode_compact_public_key_file`) of
/// the key set of `server` (its parameter set, key id and server key fingerprint). A key set made without
/// `--compact-list` has none: an error that says so.
pub(super) fn load_compact_public_key(dir: &Path, server: &KeyFileEnvelope) -> Result<Vec<u8>, Error> {
    let path = dir.join(COMPACT_PUBLIC_KEY_FILE);
    if server.parameters != KeySetParameters::Integer {
        return Err(Error::BadArgument {
            message: format!(
                "the key set in {} is of the boolean set {}: compact-list devices need an integer key set made with \
                 init --parameters integer --compact-list",
                dir.display(),
                server.parameters.name()
            ),
        });
    }
    if !path.exists() {
        return Err(Error::BadArgument {
            message: format!(
                "the key set in {} has no {COMPACT_PUBLIC_KEY_FILE}: it was made without --compact-list, so its \
                 server key has no casting key; make a key set with init --parameters integer --compact-list",
                dir.display()
            ),
        });
    }
    let bytes = files::read(&path, "compact public key")?;
    let decoded = decode_compact_public_key_file(&bytes)
        .map_err(|e| Error::bad_file(&path, format!("not a valid compact public-key file: {e}"), RESTORE))?;
    let binding = decoded.binding;
    if binding.key_set_parameters != server.parameters.id()
        || decoded
            .for_key_set(server.key_id, Some(&server.server_key_fingerprint))
            .is_err()
    {
        return Err(Error::Mismatch {
            message: format!(
                "{} (key id {:#010x}, server key {}) is not the compact public key of the key set in {} (key id \
                 {:#010x}, server key {}): put the compact public key of this key set in --dir",
                path.display(),
                binding.key_id,
                short_hex(&binding.server_key_fingerprint),
                dir.display(),
                server.key_id,
                short_hex(&server.server_key_fingerprint),
            ),
        });
    }
    Ok(bytes.to_vec())
}
