//! The firmware API: an encryptor built in place from `EMPTY`, keys that stay in read-only memory or come
//! packed from a credential file, fallible RNGs (rand_core 0.10, and HAL RNGs of rand_core 0.6 / 0.9 through
//! the adapters), and frames encrypted straight into the frame buffer, byte for byte those of the
//! two-buffer path.
#![allow(clippy::unwrap_used)]

mod common;

use rand_core::{SeedableRng, TryCryptoRng, TryRng};
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::entities::{GlweSecretKey, ReadOnlyBytes};
use tfhe_sbc_core::parameters::{ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::Error;
use tfhe_sbc_device::csprng::seeding;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::files::credentials::{KeyMode, credentials_file_bytes, decode_credentials, encode_credentials};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, HEADER_BYTES, SEEDED_FRAME_BYTES_1024, frame_bytes};
use tfhe_sbc_device::product::DefaultProduct;

/// A fallible rand_core 0.10 RNG: a counter that fails after `budget` bytes.
struct Flaky {
    budget: usize,
    next: u8,
}

#[derive(Debug)]
struct FlakyError;

impl core::fmt::Display for FlakyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("TRNG health test failed")
    }
}

impl core::error::Error for FlakyError {}

impl TryRng for Flaky {
    type Error = FlakyError;
    fn try_next_u32(&mut self) -> Result<u32, FlakyError> {
        let mut b = [0; 4];
        self.try_fill_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn try_next_u64(&mut self) -> Result<u64, FlakyError> {
        let mut b = [0; 8];
        self.try_fill_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), FlakyError> {
        if dst.len() > self.budget {
            return Err(FlakyError);
        }
        self.budget -= dst.len();
        for d in dst {
            *d = self.next;
            self.next = self.next.wrapping_add(1);
        }
        Ok(())
    }
}

impl TryCryptoRng for Flaky {}

fn one_chunk_frame(encryptor: &mut GlweEncryptor<1024>, message: &[u8], into: bool) -> Vec<u8> {
    let credentials = DeviceCredentials::new(5, 6, MacKey::from_bytes([8; 32]));
    let mut counter = FrameCounter::new(40);
    let outgoing = encryptor.begin_message(&mut counter, message.len()).unwrap();
    let chunk = chunks(message, 128).next().unwrap();
    let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    let written = if into {
        encryptor
            .encrypt_frame_into(&credentials, &outgoing, &chunk, &mut frame)
            .unwrap()
    } else {
        let mut body = [0u32; 1024];
        encryptor
            .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut frame)
            .unwrap()
    };
    assert_eq!(written, frame.len());
    frame
}

#[test]
fn an_empty_encryptor_refuses_to_encrypt_until_keyed_and_seeded() {
    let mut encryptor = Box::new(GlweEncryptor::<1024>::EMPTY);
    assert!(!encryptor.is_ready());
    assert_eq!(encryptor.noise(), None);
    let mut body = [0u32; 1024];
    assert_eq!(
        encryptor.encrypt_seeded_glwe_ciphertext(&[1], &mut body),
        Err(Error::KeyNotSet)
    );
    let (key, _) = common::key_and_encryptor(3, 4);
    encryptor.set_key(&TFHE_LIB_GLWE_1024, &key).unwrap();
    assert_eq!(
        encryptor.encrypt_seeded_glwe_ciphertext(&[1], &mut body),
        Err(Error::NotSeeded)
    );
    // A failing TRNG leaves it unseeded, with a typed error.
    let mut dead = Flaky { budget: 0, next: 0 };
    assert_eq!(encryptor.seed(&mut dead), Err(Error::RngFailed));
    assert!(!encryptor.is_ready());
    let mut trng = Flaky { budget: 64, next: 0 };
    encryptor.seed(&mut trng).unwrap();
    assert!(encryptor.is_ready());
    encryptor.encrypt_seeded_glwe_ciphertext(&[1], &mut body).unwrap();
    // A later failure does not un-seed it; a later success mixes in.
    assert_eq!(encryptor.seed(&mut dead), Err(Error::RngFailed));
    encryptor.seed(&mut trng).unwrap();
    encryptor.encrypt_seeded_glwe_ciphertext(&[1], &mut body).unwrap();
    // A key of the wrong shape is refused and leaves no key.
    let small = GlweSecretKey::generate_binary(
        [0u8; 512],
        tfhe_sbc_core::dimensions::PolynomialSize(512),
        &mut Blake2bXof::from_seed([5; 32]),
    )
    .unwrap();
    assert_eq!(
        encryptor.set_key(&TFHE_LIB_GLWE_1024, &small),
        Err(Error::PolynomialSizeMismatch {
            expected: 1024,
            found: 512
        })
    );
    assert!(!encryptor.is_ready());
    encryptor.set_key(&TFHE_LIB_GLWE_1024, &key).unwrap();
    assert!(encryptor.is_ready(), "the seed survives a new key");
    encryptor.forget_key();
    assert_eq!(
        encryptor.encrypt_seeded_glwe_ciphertext(&[1], &mut body),
        Err(Error::KeyNotSet)
    );
}

#[test]
fn seeding_in_place_equals_seeding_by_value() {
    let (key, _) = common::key_and_encryptor(3, 4);
    let params = TFHE_LIB_GLWE_1024;
    // In place: 32 bytes from the RNG key the CSPRNG, exactly as `try_from_crypto_rng` does.
    let mut in_place = Box::new(GlweEncryptor::<1024>::EMPTY);
    in_place.set_key(&params, &key).unwrap();
    in_place.seed(&mut Flaky { budget: 32, next: 7 }).unwrap();
    let by_value = seeding::try_from_crypto_rng(&mut Flaky { budget: 32, next: 7 }).unwrap();
    assert!(seeding::try_from_crypto_rng(&mut Flaky { budget: 31, next: 7 }).is_err());
    let mut hosted = Box::new(GlweEncryptor::<1024>::new(&params, &key, by_value).unwrap());
    let message = [0x42u8; 100];
    assert_eq!(
        one_chunk_frame(&mut in_place, &message, true),
        one_chunk_frame(&mut hosted, &message, true)
    );
    // From bytes, in place: the same stream as `Blake2bXof::from_seed`, and the bytes are wiped.
    let mut from_bytes = Box::new(GlweEncryptor::<1024>::EMPTY);
    from_bytes.set_key(&params, &key).unwrap();
    let mut seed = [0x77u8; 32];
    from_bytes.seed_from_bytes(&mut seed);
    assert_eq!(seed, [0; 32]);
    let mut from_seed = Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([0x77; 32])).unwrap());
    assert_eq!(
        one_chunk_frame(&mut from_bytes, &message, true),
        one_chunk_frame(&mut from_seed, &message, true)
    );
}

#[test]
fn keys_in_read_only_memory_and_packed_keys_give_the_same_frames() {
    let params = TFHE_LIB_GLWE_1024;
    let (key, _) = common::key_and_encryptor(11, 12);
    let bits: Vec<u8> = key.as_bytes().to_vec();
    let mut packed = [0u8; 128];
    pack_secret_key(&bits, &mut packed).unwrap();
    let message: Vec<u8> = (0..128u8).collect();

    let mut reference = Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([13; 32])).unwrap());
    let expected = one_chunk_frame(&mut reference, &message, false);

    // Read-only key bytes (e.g. in flash): only read, not wiped on drop.
    let read_only = GlweSecretKey::from_container(ReadOnlyBytes(&bits), params.polynomial_size()).unwrap();
    let mut from_flash = Box::new(GlweEncryptor::<1024>::EMPTY);
    from_flash.set_key(&params, &read_only).unwrap();
    from_flash.set_rng(Blake2bXof::from_seed([13; 32]));
    drop(read_only);
    assert_eq!(bits, key.as_bytes(), "a read-only key is left as it was");
    assert_eq!(one_chunk_frame(&mut from_flash, &message, true), expected);

    // Packed, straight from a credential file's bytes.
    let credentials = DeviceCredentials::new(5, 6, MacKey::from_bytes([8; 32]));
    let mut file = vec![0u8; credentials_file_bytes(KeyMode::PerDeviceSecretKey, &params)];
    encode_credentials(KeyMode::PerDeviceSecretKey, &params, &credentials, &packed, &mut file).unwrap();
    let decoded = decode_credentials(&file).unwrap();
    let mut from_packed = Box::new(GlweEncryptor::<1024>::EMPTY);
    from_packed
        .set_packed_key(&decoded.parameters, decoded.key_material)
        .unwrap();
    from_packed.set_rng(Blake2bXof::from_seed([13; 32]));
    assert_eq!(one_chunk_frame(&mut from_packed, &message, true), expected);

    // Wrong lengths and sets are typed errors.
    assert_eq!(
        from_packed.set_packed_key(&params, &packed[..127]),
        Err(Error::WrongLength {
            expected: 128,
            found: 127
        })
    );
    assert!(
        from_packed
            .set_packed_key(&ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, &packed)
            .is_err()
    );
    assert!(!from_packed.is_ready());

    // The decryptor takes read-only keys too.
    let read_only = GlweSecretKey::from_container(ReadOnlyBytes(&bits), params.polynomial_size()).unwrap();
    let mut decryptor = Box::new(GlweDecryptor::<1024>::EMPTY);
    let mut phase = [0u32; 1024];
    assert_eq!(
        decryptor.decrypt_seeded_phase_parts(&[0; 32], &[0; 1024], &mut phase),
        Err(Error::KeyNotSet)
    );
    decryptor.set_key(&read_only).unwrap();
    let seed: [u8; 32] = expected[HEADER_BYTES..HEADER_BYTES + 32].try_into().unwrap();
    let body: Vec<u32> = expected[HEADER_BYTES + 32..HEADER_BYTES + 32 + 4096]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    decryptor.decrypt_seeded_phase_parts(&seed, &body, &mut phase).unwrap();
    let mut decrypted = [0u8; 128];
    decode_bits(&phase, &mut decrypted).unwrap();
    assert_eq!(decrypted[..], message[..]);
}

#[test]
fn frames_encrypted_into_the_buffer_are_those_of_the_two_buffer_path_at_every_alignment() {
    let params = TFHE_LIB_GLWE_1024;
    let (key, _) = common::key_and_encryptor(21, 22);
    let credentials = DeviceCredentials::new(5, 6, MacKey::from_bytes([8; 32]));
    let message: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
    for misalignment in 0..8 {
        let mut two_buffers =
            Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([23; 32])).unwrap());
        let mut direct = Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([23; 32])).unwrap());
        let (mut c1, mut c2) = (FrameCounter::new(9), FrameCounter::new(9));
        let o1 = two_buffers.begin_message(&mut c1, message.len()).unwrap();
        let o2 = direct.begin_message(&mut c2, message.len()).unwrap();
        let mut body = [0u32; 1024];
        let mut expected = vec![0u8; SEEDED_FRAME_BYTES_1024];
        // A larger buffer, the frame starting `misalignment` bytes in: every alignment of the body window.
        let mut buffer = vec![0xEEu8; SEEDED_FRAME_BYTES_1024 + 8];
        for chunk in chunks(&message, 128) {
            let n1 = two_buffers
                .encrypt_seeded_frame(&credentials, &o1, &chunk, &mut body, &mut expected)
                .unwrap();
            let n2 = direct
                .encrypt_frame_into(&credentials, &o2, &chunk, &mut buffer[misalignment..])
                .unwrap();
            assert_eq!((n1, n2), (SEEDED_FRAME_BYTES_1024, SEEDED_FRAME_BYTES_1024));
            assert_eq!(
                buffer[misalignment..misalignment + n2],
                expected[..],
                "misalignment {misalignment}"
            );
            assert!(
                buffer[..misalignment].iter().all(|&b| b == 0xEE),
                "wrote before the frame"
            );
            assert!(
                buffer[misalignment + n2..].iter().all(|&b| b == 0xEE),
                "wrote after the frame"
            );
        }
    }
    // Too small a buffer is a typed error, not a panic.
    let mut encryptor = Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([23; 32])).unwrap());
    let outgoing = encryptor.begin_message(&mut FrameCounter::new(0), 1).unwrap();
    let chunk = chunks(&[1], 128).next().unwrap();
    let mut short = vec![0u8; SEEDED_FRAME_BYTES_1024 - 1];
    assert_eq!(
        encryptor.encrypt_frame_into(&credentials, &outgoing, &chunk, &mut short),
        Err(Error::BufferTooSmall)
    );
}

#[test]
fn public_key_frames_into_the_buffer_match_the_two_buffer_path() {
    use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
    use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let params = TFHE_LIB_GLWE_1024;
    let (key, _) = common::key_and_encryptor(31, 32);
    let plan = <DefaultProduct as NegacyclicProductPlan<1024>>::PLAN;
    let mut spectrum = vec![0f64; 1024];
    tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum(&plan, &key, &mut spectrum).unwrap();
    let noise = DeviceNoise::for_parameters(&params, NoiseSampling::ConstantTime).unwrap();
    let (mut pk_body, mut scratch) = (vec![0u32; 1024], vec![0f64; 1024]);
    let pk_seed = generate_seeded_glwe_public_key(
        &plan,
        &spectrum,
        &noise,
        &mut pk_body,
        &mut scratch,
        &mut Blake2bXof::from_seed([33; 32]),
    )
    .unwrap();
    let credentials = DeviceCredentials::new(5, 6, MacKey::from_bytes([8; 32]));
    let message = [0x5Au8; 128];
    let size = frame_bytes(FrameKind::PublicKey, 1, 1024, 32, 32);
    for misalignment in 0..4 {
        let mut a = Box::new(
            PublicKeyEncryptor::<1024>::new(&params, &pk_seed, &pk_body, Blake2bXof::from_seed([34; 32])).unwrap(),
        );
        let mut b = Box::new(PublicKeyEncryptor::<1024>::EMPTY);
        b.set_public_key(&params, &pk_seed, &pk_body).unwrap();
        b.set_rng(Blake2bXof::from_seed([34; 32]));
        let mut counter = FrameCounter::new(0);
        let outgoing = counter.begin_message(message.len(), 128).unwrap();
        let chunk = chunks(&message, 128).next().unwrap();
        let (mut mask, mut body) = (vec![0u32; 1024], [0u32; 1024]);
        let mut expected = vec![0u8; size];
        a.encrypt_public_key_frame(&credentials, &outgoing, &chunk, &mut mask, &mut body, &mut expected)
            .unwrap();
        let mut buffer = vec![0u8; size + 4];
        let n = b
            .encrypt_frame_into(&credentials, &outgoing, &chunk, &mut buffer[misalignment..])
            .unwrap();
        assert_eq!(n, size);
        assert_eq!(buffer[misalignment..misalignment + n], expected[..]);
    }
    // Four spectra of N f64 (or [u32; 2]) and the CSPRNG, plus at most 32 bytes of plan, noise, id and flags
    // (their padding differs between targets: 32 on x86_64, 16 on aarch64).
    let encryptor_size = size_of::<PublicKeyEncryptor<1024>>();
    let floor = 4 * 8 * 1024 + size_of::<Blake2bXof>();
    assert!(
        (floor..=floor + 32).contains(&encryptor_size),
        "update the size the public-key encryptor documents: {encryptor_size}"
    );
    let mut empty = Box::new(PublicKeyEncryptor::<1024>::EMPTY);
    assert_eq!(
        empty.encrypt_glwe_ciphertext(&message, &mut [0; 1024], &mut [0; 1024]),
        Err(Error::KeyNotSet)
    );
    assert_eq!(empty.seed(&mut Flaky { budget: 0, next: 0 }), Err(Error::RngFailed));
}

/// An encryptor built in place with a key and no seed yet, for the HAL RNG adapters to seed.
#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
fn keyed_unseeded_encryptor() -> Box<GlweEncryptor<1024>> {
    let (key, _) = common::key_and_encryptor(3, 4);
    let mut encryptor = Box::new(GlweEncryptor::<1024>::EMPTY);
    encryptor.set_key(&TFHE_LIB_GLWE_1024, &key).unwrap();
    encryptor
}

/// A HAL's rand_core 0.6 RNG through the [`seeding::Rng06`] adapter.
#[cfg(feature = "rand_core_06")]
mod hal06 {
    use super::*;

    /// A rand_core 0.6 HAL-style RNG: fails with a code once its budget is spent.
    struct Hal06 {
        budget: usize,
    }

    impl rand_core_06::RngCore for Hal06 {
        fn next_u32(&mut self) -> u32 {
            rand_core_06::impls::next_u32_via_fill(self)
        }
        fn next_u64(&mut self) -> u64 {
            rand_core_06::impls::next_u64_via_fill(self)
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            self.try_fill_bytes(dest).unwrap();
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core_06::Error> {
            if dest.len() > self.budget {
                let code = core::num::NonZeroU32::new(rand_core_06::Error::CUSTOM_START + 5).unwrap();
                return Err(rand_core_06::Error::from(code));
            }
            self.budget -= dest.len();
            dest.fill(0x61);
            Ok(())
        }
    }

    impl rand_core_06::CryptoRng for Hal06 {}

    #[test]
    fn a_rand_core_06_hal_rng_seeds_through_the_adapter() {
        use tfhe_sbc_device::csprng::seeding::{HalRngError, Rng06};
        let mut encryptor = keyed_unseeded_encryptor();
        let mut failing = Hal06 { budget: 31 };
        assert_eq!(encryptor.seed(&mut Rng06(&mut failing)), Err(Error::RngFailed));
        let mut bytes = [0u8; 32];
        let error = Rng06(&mut failing).try_fill_bytes(&mut bytes).unwrap_err();
        assert_eq!(
            error,
            HalRngError {
                code: core::num::NonZeroU32::new(rand_core_06::Error::CUSTOM_START + 5)
            }
        );
        assert!(error.to_string().contains("hardware RNG failed"));
        let mut working = Hal06 { budget: 32 };
        encryptor.seed(&mut Rng06(&mut working)).unwrap();
        assert!(encryptor.is_ready());
        // The adapter hands out the HAL's bytes unchanged.
        let mut working = Hal06 { budget: 8 };
        assert_eq!(Rng06(&mut working).try_next_u64().unwrap(), 0x6161_6161_6161_6161);
    }
}

/// A HAL's rand_core 0.9 RNG through the [`seeding::Rng09`] adapter.
#[cfg(feature = "rand_core_09")]
mod hal09 {
    use super::*;

    /// A rand_core 0.9 HAL-style fallible RNG: [`Flaky`] behind the older trait.
    struct Hal09(Flaky);

    impl Hal09 {
        /// Bytes 0x62, 0x63, ... until `budget` bytes are out.
        fn new(budget: usize) -> Self {
            Self(Flaky { budget, next: 0x62 })
        }
    }

    impl rand_core_09::TryRngCore for Hal09 {
        type Error = FlakyError;
        fn try_next_u32(&mut self) -> Result<u32, FlakyError> {
            self.0.try_next_u32()
        }
        fn try_next_u64(&mut self) -> Result<u64, FlakyError> {
            self.0.try_next_u64()
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), FlakyError> {
            self.0.try_fill_bytes(dst)
        }
    }

    impl rand_core_09::TryCryptoRng for Hal09 {}

    #[test]
    fn a_rand_core_09_hal_rng_seeds_through_the_adapter() {
        use tfhe_sbc_device::csprng::seeding::Rng09;
        let mut encryptor = keyed_unseeded_encryptor();
        assert_eq!(encryptor.seed(&mut Rng09(Hal09::new(0))), Err(Error::RngFailed));
        assert!(!encryptor.is_ready());
        encryptor.seed(&mut Rng09(Hal09::new(32))).unwrap();
        assert!(encryptor.is_ready());
        let mut working = Rng09(Hal09::new(4));
        assert_eq!(working.try_next_u32().unwrap(), 0x6564_6362);
        assert!(working.try_next_u32().is_err());
        assert!(seeding::try_from_crypto_rng(&mut Rng09(Hal09::new(32))).is_ok());
    }
}
