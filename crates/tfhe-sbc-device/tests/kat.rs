//! A fixed-seed known-answer test: a fixed key seed and a fixed RNG seed give a fixed ciphertext, pinned by
//! its SHA-256 digest. CI runs this natively and under qemu for aarch64: the same digest must come out on
//! both (the FFT product is exact, the Ziggurat tables are built identically, the XOF is portable).
#![allow(clippy::unwrap_used)]

mod common;

use sha2::{Digest, Sha256};
use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn fixed_seeds_give_a_fixed_ciphertext() {
    let params = TFHE_LIB_GLWE_1024;
    let (_key, mut encryptor) = common::key_and_encryptor(0x11, 0x22);
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
