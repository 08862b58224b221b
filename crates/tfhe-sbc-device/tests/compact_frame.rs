//! Compact bodies on the device: frames carry the top `body_bits` bits of each body
//! coefficient, the header says how many, the body is the full body rounded to nearest, the in-place writer
//! and the two-buffer writer agree at every alignment, and widths below the set's noise-budget minimum are
//! refused.
#![allow(clippy::unwrap_used)]

mod common;

use rand_core::SeedableRng;
use tfhe_sbc_core::compact_body::{round_to_top_bits, unpack_body};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_core::torus::UnsignedTorus;
use tfhe_sbc_device::Error;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::decryption::GlweDecryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{
    FrameCounter, FrameHeader, FrameKind, HEADER_BYTES, PREFIX_BYTES, SEEDED_FRAME_BYTES_1024, TAG_BYTES, frame_bytes,
};

fn credentials() -> DeviceCredentials {
    DeviceCredentials::new(77, 1, MacKey::from_bytes([5; 32]))
}

fn header_of(frame: &[u8]) -> FrameHeader {
    postcard::from_bytes(&frame[PREFIX_BYTES..HEADER_BYTES]).unwrap()
}

/// The seed and the body bytes of a seeded frame.
/// Seals `message`, one chunk, into `frame` through `encryptor` as the test device's next message; returns
/// the frame's length.
fn seal_one_chunk(
    encryptor: &mut dyn FrameEncryptor,
    counter: &mut FrameCounter,
    message: &[u8],
    frame: &mut [u8],
) -> usize {
    assert_eq!(message.len(), encryptor.chunk_bytes(), "one chunk");
    let outgoing = encryptor.begin_message(counter, message.len()).unwrap();
    let chunk = chunks(message, message.len()).next().unwrap();
    encryptor
        .encrypt_frame_into(&credentials(), &outgoing, &chunk, frame)
        .unwrap()
}

/// The mask seed of a seeded `frame`, its body unpacked from `body_bits` bits into `body`.
fn unpacked_body<T: UnsignedTorus>(frame: &[u8], body_bits: u32, body: &mut [T]) -> [u8; MASK_SEED_BYTES] {
    let (seed, body_bytes) = seed_and_body(frame);
    unpack_body(body_bytes, body_bits, body).unwrap();
    seed
}

fn seed_and_body(frame: &[u8]) -> ([u8; MASK_SEED_BYTES], &[u8]) {
    let payload = &frame[HEADER_BYTES..frame.len() - TAG_BYTES];
    (
        payload[..MASK_SEED_BYTES].try_into().unwrap(),
        &payload[MASK_SEED_BYTES..],
    )
}

#[test]
fn boolean_compact_frames_are_the_rounded_full_body() {
    let bits = TFHE_LIB_GLWE_1024.compact_body_bits();
    assert_eq!(bits, 11);
    let (key, mut full) = common::key_and_encryptor(3, 4);
    let (_, mut compact) = common::key_and_encryptor(3, 4);
    let (_, mut legacy) = common::key_and_encryptor(3, 4);
    compact.set_body_bits(bits).unwrap();
    legacy.set_body_bits(bits).unwrap();
    assert_eq!((full.body_bits(), compact.body_bits()), (32, 11));
    assert_eq!(compact.seeded_frame_len(), 47 + 32 + 1408 + 16);
    assert_eq!(
        compact.seeded_frame_len(),
        frame_bytes(FrameKind::Seeded, 1, 1024, 32, 11)
    );
    let credentials = credentials();
    let message: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
    let mut counters = [FrameCounter::new(10), FrameCounter::new(10), FrameCounter::new(10)];
    let outgoing = full.begin_message(&mut counters[0], message.len()).unwrap();
    compact.begin_message(&mut counters[1], message.len()).unwrap();
    legacy.begin_message(&mut counters[2], message.len()).unwrap();
    let mut decryptor = GlweDecryptor::<1024>::new(&key).unwrap();
    let mut full_frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    // One spare byte in front, so that the compact frame can start at every alignment.
    let mut buffer = vec![0u8; SEEDED_FRAME_BYTES_1024 + 4];
    let mut legacy_frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    let mut legacy_body = [0u32; 1024];
    for (i, chunk) in chunks(&message, 128).enumerate() {
        let full_len = full
            .encrypt_frame_into(&credentials, &outgoing, &chunk, &mut full_frame)
            .unwrap();
        assert_eq!(full_len, SEEDED_FRAME_BYTES_1024);
        let offset = i % 4;
        let out = &mut buffer[offset..];
        let len = compact
            .encrypt_frame_into(&credentials, &outgoing, &chunk, out)
            .unwrap();
        assert_eq!(len, compact.seeded_frame_len());
        let frame = &out[..len];
        let legacy_len = legacy
            .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut legacy_body, &mut legacy_frame)
            .unwrap();
        assert_eq!(frame, &legacy_frame[..legacy_len], "chunk {i} at offset {offset}");
        let header = header_of(frame);
        assert_eq!(header.body_bits, 11);
        assert_eq!(header, header_of(&full_frame).with_body_bits(11));
        // Same seed, and each body coefficient the full one rounded to its top 11 bits.
        let mut body = [0u32; 1024];
        let seed = unpacked_body(frame, 11, &mut body);
        let (full_seed, full_body_bytes) = seed_and_body(&full_frame[..full_len]);
        assert_eq!(seed, full_seed);
        for (j, (&c, w)) in body.iter().zip(full_body_bytes.chunks_exact(4)).enumerate() {
            let exact = u32::from_le_bytes(w.try_into().unwrap());
            assert_eq!(c, (round_to_top_bits(exact, 11) as u32) << 21, "coefficient {j}");
            assert!(c.wrapping_sub(exact).wrapping_add(1 << 20) <= 1 << 21);
        }
        // The compact body decrypts to the chunk's bits.
        let mut phase = [0u32; 1024];
        decryptor.decrypt_seeded_phase_parts(&seed, &body, &mut phase).unwrap();
        for (j, &p) in phase.iter().enumerate() {
            let expected = chunk.bytes.get(j / 8).is_some_and(|b| (b >> (j % 8)) & 1 == 1);
            // +1/8 for 1, -1/8 for 0: the sign of the phase.
            assert_eq!((p as i32) > 0, expected, "chunk {i} bit {j}");
        }
        // Every body bit and the padding are covered: the tag is over the compact frame.
        assert_eq!(frame.len(), HEADER_BYTES + 32 + 1408 + TAG_BYTES);
    }
}

trait WithBodyBits {
    fn with_body_bits(self, bits: u8) -> Self;
}

impl WithBodyBits for FrameHeader {
    fn with_body_bits(mut self, bits: u8) -> Self {
        self.body_bits = bits;
        self
    }
}

#[test]
fn body_bits_are_checked_against_the_set() {
    let mut empty = Box::new(tfhe_sbc_device::encrypt::secret_key::GlweEncryptor::<1024>::EMPTY);
    assert_eq!(empty.set_body_bits(11), Err(Error::KeyNotSet));
    assert_eq!(empty.body_bits(), 32);
    let (key, mut encryptor) = common::key_and_encryptor(1, 2);
    for bad in [0, 1, 10, 33, 64] {
        assert!(
            matches!(
                encryptor.set_body_bits(bad),
                Err(Error::Core(tfhe_sbc_core::Error::UnsupportedBodyBits { .. }))
            ),
            "{bad} bits"
        );
        assert_eq!(encryptor.body_bits(), 32, "a refused width leaves the body full");
    }
    for good in [11, 20, 31, 32] {
        encryptor.set_body_bits(good).unwrap();
        assert_eq!(encryptor.body_bits(), good);
    }
    encryptor.set_body_bits(11).unwrap();
    encryptor.set_key(&TFHE_LIB_GLWE_1024, &key).unwrap();
    assert_eq!(encryptor.body_bits(), 32, "a new key starts with the full body");
}

#[test]
fn integer_compact_frames_are_the_rounded_full_body() {
    const N: usize = 2048;
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let bits = params.glwe().compact_body_bits();
    assert_eq!(bits, 14);
    let key = common::secret_key(&params.glwe(), 8);
    let make = || {
        let mut e = Box::new(IntegerEncryptor::<N>::EMPTY);
        assert_eq!(e.set_body_bits(14), Err(Error::KeyNotSet));
        e.set_key(&params, &key).unwrap();
        e.seed_from_bytes(&mut [9; 32]);
        e
    };
    let (mut full, mut compact) = (make(), make());
    for bad in [13, 65, 0] {
        assert!(compact.set_body_bits(bad).is_err(), "{bad} bits");
    }
    compact.set_body_bits(bits).unwrap();
    assert_eq!(compact.seeded_frame_len(), 47 + 32 + 3584 + 16);
    let credentials = credentials();
    let readings: Vec<u8> = (0..=255u8).chain(0..=255).collect();
    let mut counters = [FrameCounter::new(0), FrameCounter::new(0)];
    let outgoing = full.begin_message(&mut counters[0], readings.len()).unwrap();
    compact.begin_message(&mut counters[1], readings.len()).unwrap();
    let chunk = chunks(&readings, IntegerEncryptor::<N>::MESSAGE_BYTES).next().unwrap();
    let mut full_frame = vec![0u8; IntegerEncryptor::<N>::SEEDED_FRAME_BYTES];
    let full_len = full
        .encrypt_frame_into(&credentials, &outgoing, &chunk, &mut full_frame)
        .unwrap();
    for offset in 0..8 {
        let mut again = make();
        again.set_body_bits(bits).unwrap();
        again.begin_message(&mut FrameCounter::new(0), readings.len()).unwrap();
        let mut buffer = vec![0u8; IntegerEncryptor::<N>::SEEDED_FRAME_BYTES + 8];
        let len = again
            .encrypt_frame_into(&credentials, &outgoing, &chunk, &mut buffer[offset..])
            .unwrap();
        assert_eq!(len, 3679);
        let frame = &buffer[offset..offset + len];
        assert_eq!(header_of(frame).body_bits, 14);
        let mut body = vec![0u64; N];
        let seed = unpacked_body(frame, 14, &mut body);
        let (full_seed, full_body_bytes) = seed_and_body(&full_frame[..full_len]);
        assert_eq!(seed, full_seed);
        for (j, (&c, w)) in body.iter().zip(full_body_bytes.chunks_exact(8)).enumerate() {
            let exact = u64::from_le_bytes(w.try_into().unwrap());
            assert_eq!(c, round_to_top_bits(exact, 14) << 50, "offset {offset} coefficient {j}");
        }
    }
    // Per u8 reading, seed, header and tag amortized over a full frame (512 readings): 7.19 bytes.
    assert!(compact.seeded_frame_len() * 100 / 512 <= 720);
}

/// The measured noise of compact ciphertexts is the fresh noise plus a uniform rounding error of variance
/// `step^2 / 12`: boolean (11 bits, 16,384 coefficients) and integer (14 bits, 8,192 coefficients) within 5%
/// of that model (the estimator's relative standard deviation is about 0.7% and 1%: a 5-sigma threshold).
/// The variance of `errors` (torus units) is the model's within 5%: `fresh` noise plus the uniform rounding of
/// a `body_bits`-bit body, `2^(-2 body_bits) / 12`.
fn assert_compact_noise(what: &str, errors: &[f64], fresh: f64, body_bits: i32) {
    let count = errors.len() as f64;
    let (sum, sum2) = errors
        .iter()
        .fold((0f64, 0f64), |(sum, sum2), &e| (sum + e, sum2 + e * e));
    let variance = sum2 / count - (sum / count).powi(2);
    let rounding = 2f64.powi(-2 * body_bits) / 12.0;
    let model = fresh + rounding;
    println!(
        "{what}, {body_bits}-bit body: error std 2^{:.3} measured, 2^{:.3} modelled (fresh 2^{:.2}, rounding 2^{:.3})",
        variance.sqrt().log2(),
        model.sqrt().log2(),
        fresh.sqrt().log2(),
        rounding.sqrt().log2()
    );
    assert!((variance / model - 1.0).abs() < 0.05, "{variance} vs {model}");
}

#[test]
fn compact_noise_is_fresh_noise_plus_uniform_rounding() {
    // Boolean.
    let (key, mut encryptor) = common::key_and_encryptor(12, 13);
    encryptor.set_body_bits(11).unwrap();
    let mut decryptor = GlweDecryptor::<1024>::new(&key).unwrap();
    let mut counter = FrameCounter::new(0);
    let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    let mut rng = Blake2bXof::from_seed([14; 32]);
    let mut errors = Vec::new();
    for _ in 0..16 {
        let mut message = [0u8; 128];
        rand_core::Rng::fill_bytes(&mut rng, &mut message);
        let len = seal_one_chunk(&mut *encryptor, &mut counter, &message, &mut frame);
        let mut body = [0u32; 1024];
        let seed = unpacked_body(&frame[..len], 11, &mut body);
        let mut phase = [0u32; 1024];
        decryptor.decrypt_seeded_phase_parts(&seed, &body, &mut phase).unwrap();
        for (j, &p) in phase.iter().enumerate() {
            let encoded: u32 = if (message[j / 8] >> (j % 8)) & 1 == 1 {
                1 << 29
            } else {
                7 << 29
            };
            let error = f64::from(p.wrapping_sub(encoded) as i32) / 2f64.powi(32);
            errors.push(error);
        }
    }
    assert_compact_noise("boolean", &errors, TFHE_LIB_GLWE_1024.noise_variance(), 11);

    // Integer.
    const N: usize = 2048;
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let key = common::secret_key(&params.glwe(), 15);
    let mut encryptor = Box::new(IntegerEncryptor::<N>::EMPTY);
    encryptor.set_key(&params, &key).unwrap();
    encryptor.seed_from_bytes(&mut [16; 32]);
    encryptor.set_body_bits(14).unwrap();
    let plan = <negacyclic_ntt::NttPlan64 as tfhe_sbc_device::product::NegacyclicProductPlan<N>>::PLAN;
    let mut spectrum = vec![[0u32; 3]; N];
    tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum(&plan, &key, &mut spectrum).unwrap();
    let mut scratch = vec![[0u32; 3]; N];
    let mut frame = vec![0u8; IntegerEncryptor::<N>::SEEDED_FRAME_BYTES];
    let mut errors = Vec::new();
    for _ in 0..4 {
        let mut readings = [0u8; 512];
        rand_core::Rng::fill_bytes(&mut rng, &mut readings);
        let len = seal_one_chunk(&mut *encryptor, &mut counter, &readings, &mut frame);
        let mut body = vec![0u64; N];
        let seed = unpacked_body(&frame[..len], 14, &mut body);
        let mut phase = vec![0u64; N];
        tfhe_sbc_device::encrypt::glwe_encryption::decrypt_seeded_glwe_phase::<
            tfhe_sbc_device::csprng::DeviceConstruction,
            _,
        >(&plan, &spectrum, &seed, &body, &mut phase, &mut scratch)
        .unwrap();
        for (j, &p) in phase.iter().enumerate() {
            let block = u64::from(readings[j / 4] >> (2 * (j % 4))) & 3;
            let error = p.wrapping_sub(block << 59) as i64 as f64 / 2f64.powi(64);
            errors.push(error);
        }
    }
    assert_compact_noise("integer", &errors, params.glwe().noise_variance(), 14);
}
