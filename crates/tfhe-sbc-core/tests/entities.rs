//! Entities: shapes, storage genericity, key hygiene.

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use tfhe_sbc_core::Error;
use tfhe_sbc_core::dimensions::{GlweDimension, LweDimension, PolynomialSize};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, LweCiphertext};

#[test]
fn glwe_ciphertext_views_over_arrays_and_slices() {
    let mut data = [0u32; 2 * 64];
    data[64] = 7;
    let ct = GlweCiphertext::from_container(&data[..], PolynomialSize(64)).unwrap();
    assert_eq!(ct.glwe_dimension(), GlweDimension(1));
    assert_eq!(ct.body()[0], 7);
    assert_eq!(ct.mask().len(), 64);
    let mut owned = GlweCiphertext::from_container(data, PolynomialSize(64)).unwrap();
    let (mask, body) = owned.mask_and_body_mut();
    mask[0] = 1;
    body[1] = 2;
    assert_eq!(owned.as_slice()[0], 1);
    assert_eq!(owned.as_slice()[65], 2);
    assert!(matches!(
        GlweCiphertext::<u32, _>::from_container(&data[..100], PolynomialSize(64)),
        Err(Error::WrongLength { .. })
    ));
    assert!(GlweCiphertext::<u32, _>::from_container(&data[..64], PolynomialSize(64)).is_err());
}

#[test]
fn lwe_ciphertext_layout() {
    let ct = LweCiphertext::from_container([1u32, 2, 3]).unwrap();
    assert_eq!(ct.lwe_dimension(), LweDimension(2));
    assert_eq!(ct.mask(), &[1, 2]);
    assert_eq!(ct.body(), 3);
    assert!(LweCiphertext::<u32, _>::from_container([1u32]).is_err());
}

#[test]
fn key_generation_is_binary_and_balanced() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let key = GlweSecretKey::generate_binary([0u8; 4096], PolynomialSize(1024), &mut rng).unwrap();
    assert_eq!(key.glwe_dimension(), GlweDimension(4));
    assert!(key.as_bytes().iter().all(|&b| b <= 1));
    let ones: usize = key.as_bytes().iter().map(|&b| usize::from(b)).sum();
    // 4096 fair bits: 2048 +- 5 * 32.
    assert!((ones as i64 - 2048).abs() < 160, "{ones} ones");
}

#[test]
fn key_debug_is_redacted() {
    let key = GlweSecretKey::from_container([1u8; 64], PolynomialSize(64)).unwrap();
    let text = format!("{key:?}");
    assert!(text.contains("redacted"), "{text}");
    assert!(!text.contains("[1, 1"), "{text}");
}

#[test]
fn key_zeroizes_on_drop() {
    let mut buffer = [1u8; 64];
    {
        let key = GlweSecretKey::from_container(&mut buffer[..], PolynomialSize(64)).unwrap();
        assert_eq!(key.as_bytes()[0], 1);
    }
    assert_eq!(buffer, [0u8; 64]);
}

#[test]
fn malformed_keys_are_rejected_and_wiped() {
    let mut buffer = [1u8; 64];
    buffer[3] = 2;
    assert_eq!(
        GlweSecretKey::from_container(&mut buffer[..], PolynomialSize(64)).unwrap_err(),
        Error::NonBinaryKey
    );
    assert_eq!(buffer, [0u8; 64]);
    assert!(matches!(
        GlweSecretKey::from_container([0u8; 100], PolynomialSize(64)),
        Err(Error::WrongLength { .. })
    ));
}
