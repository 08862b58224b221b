//! Encrypt then decrypt: random messages, seeded and full forms, N = 1024 and a small N. Frames: tests/frame.rs.
#![allow(clippy::unwrap_used)]

mod common;

use proptest::prelude::*;
use rand_core::SeedableRng;
use tfhe_sbc_core::dimensions::{GlweDimension, PolynomialSize};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, SeededGlweCiphertext};
use tfhe_sbc_core::parameters::{GlweParameters, NoiseDistribution, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::Error;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;

fn key<const N: usize>(seed: u8) -> GlweSecretKey<[u8; N]> {
    GlweSecretKey::generate_binary([0u8; N], PolynomialSize(N), &mut Blake2bXof::from_seed([seed; 32])).unwrap()
}

/// A toy size (N = 64 is far below the security floor), for tests only.
fn small_params() -> GlweParameters {
    toy_params(32, 1, libm::ldexp(1.0, -25))
}

/// A toy set of N = 64 on a `torus_bits`-bit torus, GLWE dimension `k`, Gaussian noise of `std_dev`.
fn toy_params(torus_bits: u32, k: usize, std_dev: f64) -> GlweParameters {
    let noise = NoiseDistribution::Gaussian { std_dev };
    GlweParameters::new_allow_insecure(torus_bits, PolynomialSize(64), GlweDimension(k), noise).unwrap()
}

fn round_trip<const N: usize>(params: &GlweParameters, message: &[u8], seeds: (u8, u8)) -> (Vec<u8>, Vec<u8>) {
    let key = key::<N>(seeds.0);
    let mut encryptor = GlweEncryptor::<N>::new(params, &key, Blake2bXof::from_seed([seeds.1; 32])).unwrap();
    let mut decryptor = GlweDecryptor::<N>::new(&key).unwrap();
    let mut padded = message.to_vec();
    padded.resize(N / 8, 0);

    let mut body = [0u32; N];
    let seed = encryptor.encrypt_seeded_glwe_ciphertext(message, &mut body).unwrap();
    let seeded = SeededGlweCiphertext::from_parts(seed, &body[..], PolynomialSize(N)).unwrap();
    let mut phase = [0u32; N];
    decryptor.decrypt_seeded_phase(&seeded, &mut phase).unwrap();
    let mut from_seeded = vec![0u8; N / 8];
    decode_bits(&phase, &mut from_seeded).unwrap();

    let mut full = GlweCiphertext::from_container(vec![0u32; 2 * N], PolynomialSize(N)).unwrap();
    encryptor.encrypt_glwe_ciphertext(message, &mut full).unwrap();
    let from_full = common::decrypted(&mut decryptor, full.mask(), full.body());
    assert_eq!(from_seeded, padded);
    (from_seeded, from_full)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_1024(message in prop::collection::vec(any::<u8>(), 0..=128), k in any::<u8>(), r in any::<u8>()) {
        let (seeded, full) = round_trip::<1024>(&TFHE_LIB_GLWE_1024, &message, (k, r));
        prop_assert_eq!(&seeded[..message.len()], &message[..]);
        prop_assert_eq!(seeded, full);
    }

    #[test]
    fn round_trip_64(message in prop::collection::vec(any::<u8>(), 0..=8), k in any::<u8>(), r in any::<u8>()) {
        let (seeded, full) = round_trip::<64>(&small_params(), &message, (k, r));
        prop_assert_eq!(&seeded[..message.len()], &message[..]);
        prop_assert_eq!(seeded, full);
    }
}

#[test]
fn mismatches_are_typed_errors() {
    let key64 = key::<64>(1);
    let rng = || Blake2bXof::from_seed([0; 32]);
    assert!(matches!(
        GlweEncryptor::<1024>::new(&TFHE_LIB_GLWE_1024, &key64, rng()),
        Err(Error::PolynomialSizeMismatch {
            expected: 1024,
            found: 64
        })
    ));
    assert!(matches!(
        GlweEncryptor::<1024>::new(&small_params(), &key::<1024>(1), rng()),
        Err(Error::PolynomialSizeMismatch {
            expected: 1024,
            found: 64
        })
    ));
    let p64 = toy_params(64, 1, 1e-12);
    assert!(matches!(
        GlweEncryptor::<64>::new(&p64, &key64, rng()),
        Err(Error::Core(_))
    ));
    let k2 = toy_params(32, 2, 1e-9);
    assert!(matches!(
        GlweEncryptor::<64>::new(&k2, &key64, rng()),
        Err(Error::UnsupportedGlweDimension(2))
    ));
    let mut enc = GlweEncryptor::<64>::new(&small_params(), &key64, rng()).unwrap();
    let mut body = [0u32; 64];
    assert_eq!(
        enc.encrypt_seeded_glwe_ciphertext(&[0; 9], &mut body),
        Err(Error::MessageTooLong { capacity: 8, found: 9 })
    );
    assert_eq!(
        enc.encrypt_seeded_glwe_ciphertext(&[0; 8], &mut body[..63]),
        Err(Error::WrongLength {
            expected: 64,
            found: 63
        })
    );
    assert!(format!("{enc:?}").contains("GlweEncryptor") && !format!("{enc:?}").contains("scratch"));
}
