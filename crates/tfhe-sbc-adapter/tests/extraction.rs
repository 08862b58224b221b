//! Sample extraction: every extracted TLWE decrypts (under the key read flat) to its message bit, the lazy
//! and parallel versions agree with the contiguous one, and extraction adds no noise.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Instant;
use tfhe_sbc_adapter::extraction::{LazyExtractor, extract_all_lwe_samples, extract_lwe_sample};
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_core::encoding::{decode_bool, encode_bool};
use tfhe_sbc_core::entities::LweCiphertext;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decrypt_lwe_phase};
use tfhe_sbc_device::frame::message::message_bit;

#[test]
fn all_extracted_samples_decrypt_with_unchanged_noise() {
    let mut device = common::Device::new(5, 1);
    let message: Vec<u8> = (0..128u32).map(|i| (i * 31 + 7) as u8).collect();
    let frames = device.seeded_frames(&message);
    // Authenticated intake, as a server would run it.
    let mut intake = common::intake(IntakeConfig::default(), &[&device]);
    let received = common::receive_message(&mut intake, &frames, Instant::now());
    let glwe = &received.frames[0].ciphertext;
    let key = &device.key;

    // The GLWE phases, for comparing noise.
    let mut decryptor = Box::new(GlweDecryptor::<1024>::new(key).unwrap());
    let mut phase = [0u32; 1024];
    decryptor.decrypt_phase(glwe.mask(), glwe.body(), &mut phase).unwrap();

    let mut all = vec![0u32; 1024 * 1025];
    extract_all_lwe_samples(glwe, &mut all);
    for (i, lwe) in all.chunks_exact(1025).enumerate() {
        let lwe_phase = decrypt_lwe_phase(key, &LweCiphertext::from_container(lwe).unwrap()).unwrap();
        // Extraction adds no noise: the LWE phase equals the GLWE phase exactly.
        assert_eq!(lwe_phase, phase[i], "coefficient {i}");
        assert_eq!(decode_bool(lwe_phase), message_bit(&message, i), "coefficient {i}");
        let noise = lwe_phase.wrapping_sub(encode_bool::<u32>(message_bit(&message, i))) as i32;
        assert!(noise.abs() < 128 * 8, "coefficient {i}: noise {noise}");
    }

    // One at a time and lazily: the same words.
    let mut one = vec![0u32; 1025];
    for i in [0, 1, 511, 1023] {
        extract_lwe_sample(glwe, i, &mut one);
        assert_eq!(one, all[i * 1025..(i + 1) * 1025]);
    }
    let lazy: Vec<Vec<u32>> = LazyExtractor::new(glwe).collect();
    assert_eq!(lazy.len(), 1024);
    assert_eq!(lazy.concat(), all);
    let mut it = LazyExtractor::new(glwe);
    assert_eq!(it.nth(700).unwrap(), all[700 * 1025..701 * 1025]);
    assert_eq!(it.len(), 323);
    assert!(LazyExtractor::new(glwe).get(1024).is_none());
}

#[cfg(feature = "rayon")]
#[test]
fn parallel_batch_matches() {
    let mut device = common::Device::new(6, 2);
    let frames = device.seeded_frames(&[9u8; 512]);
    let mut intake = common::intake(IntakeConfig::default(), &[&device]);
    let frames: Vec<_> = common::receive_message(&mut intake, &frames, Instant::now())
        .frames
        .into_iter()
        .map(|f| f.ciphertext)
        .collect();
    assert_eq!(frames.len(), 4);
    let mut outputs = vec![vec![0u32; 1024 * 1025]; frames.len()];
    tfhe_sbc_adapter::extraction::extract_all_lwe_samples_par(&frames, &mut outputs);
    for (glwe, out) in frames.iter().zip(&outputs) {
        let mut expected = vec![0u32; 1024 * 1025];
        extract_all_lwe_samples(glwe, &mut expected);
        assert_eq!(&expected, out);
    }
}
