//! Fixed-seed known-answer tests, pinned by SHA-256 digests. CI runs them natively and under qemu for
//! aarch64: the same digests must come out on both (the FFT product is exact, the XOF is portable).
//!
//! Two levels, after ml-kem's split between the inner deterministic encryption and the outer one that draws
//! its randomness:
//! * inner (feature `hazmat`): fixed key, fixed mask seed and fixed noise; the digest pins the mask
//!   expansion, the product and the encoding, whatever the sampler;
//! * outer: fixed key seed and CSPRNG seed; the digest also pins how the encryption consumes the secret
//!   stream (mask seed first, then the noise, then a key erasure), so it changes when a sampler does.
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
        "14ce7dece9ab06189cd670a92e34aed8cd84a61af3f7e7448fd9ba5bf7a34f52"
    );
}

/// A fixed noise vector covering TUniform(8)'s whole range [-256, 256].
#[cfg(feature = "hazmat")]
fn fixed_noise() -> [u32; 1024] {
    core::array::from_fn(|i| ((i as i64 * 389) % 513 - 256) as i32 as u32)
}

#[cfg(feature = "hazmat")]
#[test]
fn explicit_randomness_gives_a_fixed_ciphertext() {
    let (_key, mut encryptor) = common::key_and_encryptor(0x11, 0x22);
    let message: Vec<u8> = (0..128u8).map(|b| b.wrapping_mul(29)).collect();
    let mut body = [0u32; 1024];
    encryptor
        .encrypt_seeded_glwe_ciphertext_with_randomness(&message, &[0x33; 32], &fixed_noise(), &mut body)
        .unwrap();
    let mut hasher = Sha256::new();
    body.iter().for_each(|w| hasher.update(w.to_le_bytes()));
    let digest = hex(&hasher.finalize());
    println!("inner ciphertext digest: {digest}");
    assert_eq!(
        digest,
        "fed698ad6fc58ba7115c66a0c5d1eb5bfc234ebaf256a15bf437f8bb287cfed5"
    );
}

/// Decryption gives back exactly the noise that went in: `b - a*s - Delta*m = e` coefficient for
/// coefficient (the product is exact, the encoding is the documented one).
#[cfg(feature = "hazmat")]
#[test]
fn explicit_noise_comes_back_exactly() {
    use tfhe_sbc_core::encoding::encode_bool;
    use tfhe_sbc_device::decryption::GlweDecryptor;
    use tfhe_sbc_device::message::message_bit;

    let (key, mut encryptor) = common::key_and_encryptor(0x44, 0x55);
    let mut decryptor = Box::new(GlweDecryptor::<1024>::new(&key).unwrap());
    let message: Vec<u8> = (0..128u8).map(|b| b ^ 0x5a).collect();
    let noise = fixed_noise();
    let mut body = [0u32; 1024];
    let mut phase = [0u32; 1024];
    for seed in [[0u8; 32], [0xff; 32], [0x12; 32]] {
        encryptor
            .encrypt_seeded_glwe_ciphertext_with_randomness(&message, &seed, &noise, &mut body)
            .unwrap();
        decryptor.decrypt_seeded_phase_parts(&seed, &body, &mut phase).unwrap();
        for (i, (&p, &e)) in phase.iter().zip(&noise).enumerate() {
            assert_eq!(
                p.wrapping_sub(encode_bool::<u32>(message_bit(&message, i))),
                e,
                "coefficient {i}"
            );
        }
    }
}

/// The inner encryption against an independent reference: the mask from the RustCrypto `blake2` crate
/// (`mask_block`), the product by the schoolbook negacyclic convolution in wrapping integers, then the
/// encoding `+-1/8` and the noise.
#[cfg(feature = "hazmat")]
#[test]
fn explicit_randomness_matches_a_schoolbook_reference() {
    use tfhe_sbc_device::mask::mask_block;
    use tfhe_sbc_device::message::message_bit;

    let (key, mut encryptor) = common::key_and_encryptor(0x66, 0x77);
    let message: Vec<u8> = (0..100u8).map(|b| b.wrapping_mul(77)).collect(); // 800 bits, the rest padding
    let noise = fixed_noise();
    let seed = [0x99u8; 32];
    let mut body = [0u32; 1024];
    encryptor
        .encrypt_seeded_glwe_ciphertext_with_randomness(&message, &seed, &noise, &mut body)
        .unwrap();

    let mut stream = Vec::with_capacity(4096);
    for i in 0..64u64 {
        let mut block = [0u8; 64];
        mask_block(&seed, i, &mut block);
        stream.extend_from_slice(&block);
    }
    let a: Vec<u32> = stream
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    let s = key.as_bytes();
    for j in 0..1024 {
        // (a * s)_j = sum_{i <= j} a_{j-i} s_i - sum_{i > j} a_{1024+j-i} s_i
        let mut acc = 0u32;
        for (i, &si) in s.iter().enumerate() {
            let term = if i <= j {
                a[j - i]
            } else {
                a[1024 + j - i].wrapping_neg()
            };
            acc = acc.wrapping_add(term.wrapping_mul(u32::from(si)));
        }
        let encoding: u32 = if message_bit(&message, j) { 1 << 29 } else { 7 << 29 };
        let expected = acc.wrapping_add(encoding).wrapping_add(noise[j]);
        assert_eq!(body[j], expected, "coefficient {j}");
    }
}
