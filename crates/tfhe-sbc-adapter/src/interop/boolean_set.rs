//! tfhe-rs 1.8.2's boolean parameter sets whose GLWE side is one of our named sets ([`BooleanSet`]), and
//! the trusted party's helpers for them: a set's tfhe-rs keys ([`generate_keys`]), the client key's GLWE key
//! for fleet devices ([`glwe_key_from_client_key`], `k * N` bytes), and the check that a server key belongs
//! to a set ([`check_server_key`]).
//!
//! Every one of these sets allows the three key modes (fleet, per-device, public key); the noise each mode
//! adds is in the documentation of its converter.

use super::error::InteropError;
use super::rng_seeder::RngSeeder;
use rand_core::CryptoRng;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::engine::BooleanEngine;
use tfhe::boolean::server_key::ServerKey;
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned};
use zeroize::Zeroize;

pub use super::boolean_parameter_set::BooleanSet;

/// Trusted party: a fresh tfhe-rs boolean `ClientKey` and `ServerKey` for `set`, every secret and every
/// mask drawn from a tfhe-rs engine seeded by 16 bytes of `rng` (the OS in production, a fixed seed in
/// tests). A few seconds for the big-key sets.
pub fn generate_keys<R: CryptoRng + ?Sized>(set: BooleanSet, rng: &mut R) -> (ClientKey, ServerKey) {
    let mut engine = BooleanEngine::new_from_seeder(&mut RngSeeder(rng));
    let client_key = engine.create_client_key(set.tfhe_parameters());
    let server_key = engine.create_server_key(&client_key);
    (client_key, server_key)
}

/// Trusted party: the GLWE secret key of `client_key` (`k * N` bytes, 0 or 1), which every device of a
/// fleet-key deployment holds. Checks that the client key has `set`'s tfhe-rs parameters. The client key
/// is cloned (tfhe-rs gives its keys out only by value) and the copies are zeroized.
pub fn glwe_key_from_client_key(set: BooleanSet, client_key: &ClientKey) -> Result<GlweSecretKeyOwned, InteropError> {
    let (lwe, glwe, parameters) = client_key.clone().into_raw_parts();
    lwe.into_container().zeroize();
    let mut words = glwe.into_container();
    if parameters != set.tfhe_parameters() {
        words.zeroize();
        return Err(InteropError::ClientKeyMismatch);
    }
    if words.len() != set.big_lwe_dimension() {
        words.zeroize();
        return Err(InteropError::BadDeviceKey);
    }
    // A word above 1 becomes a byte above 1 (or wraps to 0 or 1 only above 255): refuse both.
    let not_binary = words.iter().fold(0u32, |acc, &w| acc | (w & !1));
    let mut bytes: Vec<u8> = words.iter().map(|&w| w as u8).collect();
    words.zeroize();
    if not_binary != 0 {
        bytes.zeroize();
        return Err(InteropError::BadDeviceKey);
    }
    GlweSecretKey::from_container(bytes, set.glwe_parameters().polynomial_size())
        .map_err(|_| InteropError::BadDeviceKey)
}

/// Checks that `server_key` has `set`'s shape: the sizes of its key-switching key (`k*N -> n`, `ks_level`
/// levels) and of its bootstrapping key (`n`, `k`, `N`, `pbs_level`). tfhe-rs exposes a server key's
/// order (`KeyswitchBootstrap` or not) only by consuming it; among tfhe-rs's boolean sets these sizes tell
/// them all apart, a custom set built to share one's sizes with the other order would pass.
pub fn check_server_key(set: BooleanSet, server_key: &ServerKey) -> Result<(), InteropError> {
    let key_switching_words = (
        set.key_switching_key_words(),
        server_key.key_switching_key_size_elements(),
    );
    let bootstrapping_elements = (
        set.bootstrapping_key_elements(),
        server_key.bootstrapping_key_size_elements(),
    );
    if key_switching_words.0 == key_switching_words.1 && bootstrapping_elements.0 == bootstrapping_elements.1 {
        Ok(())
    } else {
        Err(InteropError::ServerKeyShape {
            set,
            key_switching_words,
            bootstrapping_elements,
        })
    }
}
