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

use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;

#[test]
fn fixed_seeds_give_a_fixed_ciphertext() {
    let params = TFHE_LIB_GLWE_1024;
    let (_key, mut encryptor) = common::key_and_encryptor(0x11, 0x22);
    let message: Vec<u8> = (0..128u8).collect();

    let mut body = [0u32; 1024];
    let seed = encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body).unwrap();
    let mut full = GlweCiphertext::from_container([0u32; 2048], params.polynomial_size()).unwrap();
    encryptor.encrypt_glwe_ciphertext(&message, &mut full).unwrap();
    let digest = common::kat_digest(&seed, body.iter().chain(full.as_slice()).copied(), u32::to_le_bytes);
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
    let digest = common::kat_digest(&[], body, u32::to_le_bytes);
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
    use tfhe_sbc_device::encrypt::decryption::GlweDecryptor;
    use tfhe_sbc_device::frame::message::message_bit;

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
    use tfhe_sbc_device::csprng::mask::mask_block;
    use tfhe_sbc_device::frame::message::message_bit;

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

/// The encryption core run with an explicit product: what `GlweEncryptor` does around
/// `encrypt_seeded_glwe_ciphertext_assign` (encode the bits, encrypt, erase the XOF's key), so that the
/// known answers above can be checked through the integer NTT as well as through the default FFT.
mod through_a_product {
    use super::*;
    use rand_core::SeedableRng;
    use tfhe_sbc_core::encoding::encode_bool;
    use tfhe_sbc_core::entities::GlweSecretKey;
    use tfhe_sbc_device::csprng::xof::Blake2bXof;
    use tfhe_sbc_device::encrypt::glwe_encryption::{
        encrypt_glwe_ciphertext_assign, encrypt_seeded_glwe_ciphertext_assign,
    };
    use tfhe_sbc_device::frame::message::message_bit;
    use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
    use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;
    use tfhe_sbc_device::product::{NegacyclicProduct, NegacyclicProductPlan};

    pub const N: usize = 1024;

    pub fn key(seed: u8) -> GlweSecretKey<[u8; N]> {
        let params = TFHE_LIB_GLWE_1024;
        GlweSecretKey::generate_binary(
            [0u8; N],
            params.polynomial_size(),
            &mut Blake2bXof::from_seed([seed; 32]),
        )
        .unwrap()
    }

    pub fn key_spectrum<P: NegacyclicProductPlan<N>>(key: &GlweSecretKey<[u8; N]>) -> Vec<P::Spectral> {
        let mut spectrum = vec![P::SPECTRAL_ZERO; N];
        compute_glwe_key_spectrum(&P::PLAN, key, &mut spectrum).unwrap();
        spectrum
    }

    pub fn encode(message: &[u8], body: &mut [u32]) {
        for (i, b) in body.iter_mut().enumerate() {
            *b = encode_bool::<u32>(message_bit(message, i));
        }
    }

    /// The digest of `fixed_seeds_give_a_fixed_ciphertext`, computed through product `P`.
    pub fn outer_digest<P: NegacyclicProductPlan<N> + NegacyclicProduct<Torus = u32>>() -> String {
        let params = TFHE_LIB_GLWE_1024;
        let spectrum = key_spectrum::<P>(&key(0x11));
        let noise = DeviceNoise::for_parameters(&params, NoiseSampling::ConstantTime).unwrap();
        let mut rng = Blake2bXof::from_seed([0x22; 32]);
        let mut scratch = vec![P::SPECTRAL_ZERO; N];
        let message: Vec<u8> = (0..128u8).collect();

        let mut seeded_body = [0u32; N];
        encode(&message, &mut seeded_body);
        let seed = encrypt_seeded_glwe_ciphertext_assign::<tfhe_sbc_device::csprng::Blake2bCounter, _, _>(
            &P::PLAN,
            &spectrum,
            &noise,
            &mut seeded_body,
            &mut scratch,
            &mut rng,
        )
        .unwrap();
        rng.ratchet();
        let (mut mask, mut body) = ([0u32; N], [0u32; N]);
        encode(&message, &mut body);
        encrypt_glwe_ciphertext_assign::<tfhe_sbc_device::csprng::Blake2bCounter, _, _>(
            &P::PLAN,
            &spectrum,
            &noise,
            &mut mask,
            &mut body,
            &mut scratch,
            &mut rng,
        )
        .unwrap();
        rng.ratchet();
        let words = seeded_body.iter().chain(&mask).chain(&body).copied();
        common::kat_digest(&seed, words, u32::to_le_bytes)
    }
}

/// The outer known answer through the integer NTT (the Cortex-M default) and through the FFT, run by the
/// same core: both give the pinned digest, so the NTT changes no ciphertext.
#[test]
fn ntt_product_gives_the_same_fixed_ciphertext() {
    use negacyclic_fft::Plan;
    use negacyclic_ntt::NttPlan32;

    let fft = through_a_product::outer_digest::<Plan>();
    let ntt = through_a_product::outer_digest::<NttPlan32>();
    let pinned = "14ce7dece9ab06189cd670a92e34aed8cd84a61af3f7e7448fd9ba5bf7a34f52";
    assert_eq!(
        fft, pinned,
        "the core through the FFT reproduces the encryptor's known answer"
    );
    assert_eq!(ntt, pinned, "the core through the NTT");
}

/// The inner known answer (fixed key, mask seed and noise) through the integer NTT.
#[cfg(feature = "hazmat")]
#[test]
fn ntt_product_gives_the_same_inner_ciphertext() {
    use negacyclic_ntt::NttPlan32;
    use tfhe_sbc_device::encrypt::glwe_encryption::encrypt_seeded_glwe_ciphertext_with_randomness_assign;
    use tfhe_sbc_device::product::{NegacyclicProduct, NegacyclicProductPlan};
    use through_a_product::{N, encode, key, key_spectrum};

    let spectrum = key_spectrum::<NttPlan32>(&key(0x11));
    let message: Vec<u8> = (0..128u8).map(|b| b.wrapping_mul(29)).collect();
    let mut body = [0u32; N];
    encode(&message, &mut body);
    let mut scratch = vec![<NttPlan32 as NegacyclicProduct>::SPECTRAL_ZERO; N];
    encrypt_seeded_glwe_ciphertext_with_randomness_assign::<tfhe_sbc_device::csprng::Blake2bCounter, _>(
        &<NttPlan32 as NegacyclicProductPlan<N>>::PLAN,
        &spectrum,
        &[0x33; 32],
        &fixed_noise(),
        &mut body,
        &mut scratch,
    )
    .unwrap();
    assert_eq!(
        common::kat_digest(&[], body, u32::to_le_bytes),
        "fed698ad6fc58ba7115c66a0c5d1eb5bfc234ebaf256a15bf437f8bb287cfed5"
    );
}
