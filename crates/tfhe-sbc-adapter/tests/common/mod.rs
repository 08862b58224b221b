//! Shared test fixtures: a device that produces real frames.
#![allow(dead_code, clippy::unwrap_used)]

use rand_core::SeedableRng;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::message::chunks;
use tfhe_sbc_device::wire::{FrameHeader, FrameKind, MAX_SEEDED_FRAME_BYTES_1024, encode_full_frame};
use tfhe_sbc_device::xof::Blake2bXof;

/// A device key and encryptor with fixed seeds.
pub fn device(seed: u8) -> (GlweSecretKeyOwned, Box<GlweEncryptor<1024>>) {
    let params = TFHE_LIB_GLWE_1024;
    let key = GlweSecretKey::generate_binary(
        vec![0u8; 1024],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed([seed; 32]),
    )
    .unwrap();
    let encryptor =
        Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([seed.wrapping_add(1); 32])).unwrap());
    (key, encryptor)
}

/// The seeded frames of `message`.
pub fn seeded_frames(encryptor: &mut GlweEncryptor<1024>, message: &[u8]) -> Vec<Vec<u8>> {
    let mut body = [0u32; 1024];
    let mut out = vec![0u8; MAX_SEEDED_FRAME_BYTES_1024];
    chunks(message, 128)
        .map(|chunk| {
            let len = encryptor
                .encrypt_seeded_frame(&chunk, message.len(), &mut body, &mut out)
                .unwrap();
            out[..len].to_vec()
        })
        .collect()
}

/// One full frame of a short message.
pub fn full_frame(encryptor: &mut GlweEncryptor<1024>, message: &[u8]) -> Vec<u8> {
    let chunk = chunks(message, 128).next().unwrap();
    let mut ct = GlweCiphertext::from_container(vec![0u32; 2048], TFHE_LIB_GLWE_1024.polynomial_size()).unwrap();
    encryptor.encrypt_glwe_ciphertext(chunk.bytes, &mut ct).unwrap();
    let header = FrameHeader::new(TFHE_LIB_GLWE_1024.id(), FrameKind::Full, &chunk, message.len()).unwrap();
    let mut out = vec![0u8; 9000];
    let len = encode_full_frame(&header, ct.mask(), ct.body(), &mut out)
        .unwrap()
        .len();
    out.truncate(len);
    out
}
