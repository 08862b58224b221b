//! Shared test fixtures.
#![allow(dead_code, clippy::unwrap_used)]

pub mod painted_stack;

use rand_core::SeedableRng;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::{GlweParameters, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;

/// A binary key of `params`' shape (`k * N` coefficients) generated from `[seed; 32]`.
pub fn secret_key(params: &GlweParameters, seed: u8) -> GlweSecretKey<Vec<u8>> {
    let len = params.glwe_dimension().0 * params.polynomial_size().0;
    GlweSecretKey::generate_binary(
        vec![0u8; len],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed([seed; 32]),
    )
    .unwrap()
}

/// The message bytes the GLWE ciphertext `(mask, body)` decrypts to under `decryptor`: its phase, decoded bit
/// by bit.
pub fn decrypted<const N: usize, const K: usize>(
    decryptor: &mut GlweDecryptor<N, K>,
    mask: &[u32],
    body: &[u32],
) -> Vec<u8> {
    let mut phase = vec![0u32; N];
    decryptor.decrypt_phase(mask, body, &mut phase).unwrap();
    let mut bytes = vec![0u8; N / 8];
    decode_bits(&phase, &mut bytes).unwrap();
    bytes
}

/// A ciphertext's known-answer digest: the SHA-256, in hex, of `seed` and then of every word of `words` as its
/// little-endian bytes (`le_bytes`).
pub fn kat_digest<W, const B: usize>(
    seed: &[u8],
    words: impl IntoIterator<Item = W>,
    le_bytes: fn(W) -> [u8; B],
) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(seed);
    words.into_iter().for_each(|w| hasher.update(le_bytes(w)));
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A `TFHE_LIB_GLWE_1024` key generated from `key_seed` and an encryptor whose XOF is seeded with
/// `rng_seed` (boxed, so that the test thread's stack stays small).
pub fn key_and_encryptor(key_seed: u8, rng_seed: u8) -> (GlweSecretKey<[u8; 1024]>, Box<GlweEncryptor<1024>>) {
    let params = TFHE_LIB_GLWE_1024;
    let key = GlweSecretKey::generate_binary(
        [0u8; 1024],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed([key_seed; 32]),
    )
    .unwrap();
    let encryptor = Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([rng_seed; 32])).unwrap());
    (key, encryptor)
}

/// The readings of `value_bits` bits in the first `count` values' blocks of an integer-set phase (the
/// set's radix decoding, nearest multiple of `delta`).
pub fn decode_readings(phase: &[u64], value_bits: u32, count: usize) -> Vec<u64> {
    let encoding = tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128.encoding();
    let blocks = encoding.blocks_per_value(value_bits).unwrap();
    phase[..count * blocks]
        .chunks_exact(blocks)
        .map(|b| encoding.decode_value(b).unwrap())
        .collect()
}

/// Checks an integer-set frame (`frame`, its whole length) against what it must be (kind, parameter set 4, a
/// full 64-bit body, `sequence`) and its MAC under `credentials`; returns its payload as little-endian `u64`
/// words after `prefix` bytes (a seeded frame's 32-byte seed, nothing for a public-key frame).
pub fn integer_frame_words(
    frame: &[u8],
    credentials: &tfhe_sbc_device::frame::mac::DeviceCredentials,
    kind: tfhe_sbc_device::frame::FrameKind,
    sequence: u64,
    prefix: usize,
) -> Vec<u64> {
    use tfhe_sbc_device::frame::{FrameHeader, HEADER_BYTES, TAG_BYTES};
    let len = frame.len();
    let (header, _): (FrameHeader, _) = postcard::take_from_bytes(&frame[5..HEADER_BYTES]).unwrap();
    assert_eq!(
        (
            header.frame_kind(),
            header.parameter_set,
            header.body_bits,
            header.sequence
        ),
        (Some(kind), 4, 64, sequence)
    );
    assert!(
        credentials
            .mac_key()
            .verify(&frame[..len - TAG_BYTES], &frame[len - TAG_BYTES..])
    );
    frame[HEADER_BYTES + prefix..len - TAG_BYTES]
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect()
}
