//! A fixed-seed known-answer test: a fixed key seed and a fixed RNG seed give a fixed ciphertext, pinned by
//! its SHA-256 digest. CI runs this natively and under qemu for aarch64: the same digest must come out on
//! both (the FFT product is exact, the Ziggurat tables are built identically, the XOF is portable).
#![allow(clippy::unwrap_used)]

use rand_core::SeedableRng;
use sha2::{Digest, Sha256};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::xof::Blake2bXof;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn fixed_seeds_give_a_fixed_ciphertext() {
    let params = TFHE_LIB_GLWE_1024;
    let key = GlweSecretKey::generate_binary(
        [0u8; 1024],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed([0x11; 32]),
    )
    .unwrap();
    let mut encryptor = GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([0x22; 32])).unwrap();
    let message: Vec<u8> = (0..128u8).collect();

    let mut hasher = Sha256::new();
    let mut body = [0u32; 1024];
    let seed = encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body).unwrap();
    hasher.update(seed);
    body.iter().for_each(|w| hasher.update(w.to_le_bytes()));
    let mut full = GlweCiphertext::from_container([0u32; 2048], params.polynomial_size()).unwrap();
    encryptor.encrypt_glwe_ciphertext(&message, &mut full).unwrap();
    full.as_slice().iter().for_each(|w| hasher.update(w.to_le_bytes()));
    let digest = hex(&hasher.finalize());
    println!("ciphertext digest: {digest}");
    assert_eq!(
        digest,
        "28cf88d5938b9c8442674ab6f0cbfccbeefe8811933df7bb57cde50e63c6ba03"
    );
}
