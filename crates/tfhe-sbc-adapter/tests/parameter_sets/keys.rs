//! The tfhe-rs keys of each big-key set, made once per test binary, and what is read with them.

use rand_core::SeedableRng;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::server_key::ServerKey;
use tfhe::core_crypto::prelude::{LweCiphertextOwned, LweSecretKeyView, decrypt_lwe_ciphertext};
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet, generate_keys, glwe_key_from_client_key};
use tfhe_sbc_core::entities::GlweSecretKeyOwned;
use tfhe_sbc_device::csprng::xof::Blake2bXof;

/// A set's tfhe-rs keys (from a fixed seed), the exported GLWE key and the bridge.
pub struct Keys {
    pub client: ClientKey,
    pub server: ServerKey,
    pub glwe_key: GlweSecretKeyOwned,
    pub bridge: BigKeyBridge,
    pub generation: Duration,
}

impl Keys {
    pub fn new(set: BooleanSet) -> Self {
        let start = Instant::now();
        let (client, server) = generate_keys(set, &mut Blake2bXof::from_seed([40 + tag(set); 32]));
        let generation = start.elapsed();
        let glwe_key = glwe_key_from_client_key(set, &client).unwrap();
        assert_eq!(glwe_key.as_bytes().len(), set.big_lwe_dimension());
        let bridge = BigKeyBridge::for_server_key(set, &server).unwrap();
        Self {
            client,
            server,
            glwe_key,
            bridge,
            generation,
        }
    }

    /// The big key (the GLWE key read flat) as tfhe-rs holds it.
    pub fn big_key(&self) -> LweSecretKeyView<'_, u32> {
        self.client.encryption_key_and_noise().0
    }
}

/// One key set per parameter set for the whole file: generation takes seconds.
pub fn keys(set: BooleanSet) -> &'static Keys {
    static K3: OnceLock<Keys> = OnceLock::new();
    static K2: OnceLock<Keys> = OnceLock::new();
    match set {
        BooleanSet::DefaultKsPbs => K3.get_or_init(|| Keys::new(set)),
        BooleanSet::ErrorProb2m165KsPbs => K2.get_or_init(|| Keys::new(set)),
        BooleanSet::TfheLib => unreachable!("only the big-key sets"),
    }
}

/// A small number per set, for seeds and ids.
pub fn tag(set: BooleanSet) -> u8 {
    match set {
        BooleanSet::DefaultKsPbs => 2,
        BooleanSet::ErrorProb2m165KsPbs => 3,
        BooleanSet::TfheLib => 1,
    }
}

/// The `i`-th bit of `message`, least-significant bit of each byte first.
pub fn bit(message: &[u8], i: usize) -> bool {
    message[i / 8] >> (i % 8) & 1 == 1
}

/// The phase of a big-key tfhe-rs ciphertext.
pub fn big_phase(keys: &Keys, lwe: &LweCiphertextOwned<u32>) -> u32 {
    decrypt_lwe_ciphertext(&keys.big_key(), lwe).0
}
