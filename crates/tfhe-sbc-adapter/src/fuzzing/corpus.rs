//! The intake fuzz target's seed corpus: real frames of the two fuzz devices from fixed seeds
//! ([`seed_corpus`]), made by simulated devices.

use super::devices::{FUZZ_DEVICE_ID_2, fuzz_credentials, fuzz_public_key_credentials};
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::frame::HEADER_BYTES;
use tfhe_sbc_device::frame::mac::DeviceCredentials;

/// A simulated fuzz device (keys and randomness from fixed seeds) for [`seed_corpus`].
pub(super) struct SeedDevice {
    encryptor: Box<tfhe_sbc_device::encrypt::secret_key::GlweEncryptor<1024>>,
    credentials: DeviceCredentials,
    pub(super) counter: tfhe_sbc_device::frame::FrameCounter,
}

impl SeedDevice {
    pub(super) fn new(credentials: DeviceCredentials, seed: u8) -> Self {
        use rand_core::SeedableRng;
        use tfhe_sbc_core::entities::GlweSecretKey;
        use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
        use tfhe_sbc_device::csprng::xof::Blake2bXof;
        let params = TFHE_LIB_GLWE_1024;
        let key = GlweSecretKey::generate_binary(
            vec![0u8; 1024],
            params.polynomial_size(),
            &mut Blake2bXof::from_seed([seed; 32]),
        )
        .unwrap_or_else(|e| unreachable!("a valid key buffer: {e}"));
        let encryptor = tfhe_sbc_device::encrypt::secret_key::GlweEncryptor::<1024>::new(
            &params,
            &key,
            Blake2bXof::from_seed([seed.wrapping_add(1); 32]),
        )
        .unwrap_or_else(|e| unreachable!("the named set: {e}"));
        Self {
            encryptor: Box::new(encryptor),
            credentials,
            counter: tfhe_sbc_device::frame::FrameCounter::new(0),
        }
    }

    /// The frames of one message with a compact body of `body_bits` bits.
    fn compact_frames(&mut self, message: &[u8], body_bits: u32) -> Vec<Vec<u8>> {
        self.encryptor
            .set_body_bits(body_bits)
            .unwrap_or_else(|e| unreachable!("a width the set allows: {e}"));
        let frames = self.frames(message, false);
        self.encryptor
            .set_body_bits(32)
            .unwrap_or_else(|e| unreachable!("the full width: {e}"));
        frames
    }

    /// The frames of one message, seeded or full.
    pub(super) fn frames(&mut self, message: &[u8], full: bool) -> Vec<Vec<u8>> {
        use tfhe_sbc_core::entities::GlweCiphertext;
        use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
        use tfhe_sbc_device::frame::{FULL_FRAME_BYTES_1024, SEEDED_FRAME_BYTES_1024};
        let outgoing = self
            .encryptor
            .begin_message(&mut self.counter, message.len())
            .unwrap_or_else(|e| unreachable!("{e}"));
        let mut body = [0u32; 1024];
        let mut ciphertext = GlweCiphertext::from_container(vec![0u32; 2048], TFHE_LIB_GLWE_1024.polynomial_size())
            .unwrap_or_else(|e| unreachable!("{e}"));
        tfhe_sbc_device::frame::message::chunks(message, 128)
            .map(|chunk| {
                let result = if full {
                    let mut out = vec![0u8; FULL_FRAME_BYTES_1024];
                    self.encryptor
                        .encrypt_full_frame(&self.credentials, &outgoing, &chunk, &mut ciphertext, &mut out)
                        .map(|_| out)
                } else {
                    let mut out = vec![0u8; SEEDED_FRAME_BYTES_1024];
                    self.encryptor
                        .encrypt_seeded_frame(&self.credentials, &outgoing, &chunk, &mut body, &mut out)
                        .map(|len| {
                            out.truncate(len);
                            out
                        })
                };
                result.unwrap_or_else(|e| unreachable!("{e}"))
            })
            .collect()
    }
}

fn length_delimited(frames: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for frame in frames {
        crate::stream::write_frame(&mut out, frame).unwrap_or_else(|e| unreachable!("a Vec: {e}"));
    }
    out
}

/// The seed corpus of the intake fuzz target (`fuzz/corpus/intake_v2`): real frames of the two fuzz
/// devices, from fixed seeds, as `(file name, bytes)`. Written by `cargo run --example make_fuzz_corpus`;
/// `tests/fuzz_corpus.rs` checks the checked-in files are exactly these (so a change to the mask XOF or
/// to the encryption shows up as a stale corpus).
pub fn seed_corpus() -> Vec<(&'static str, Vec<u8>)> {
    let [first, second] = fuzz_credentials();
    let mut a = SeedDevice::new(first, 0x11);
    let mut b = SeedDevice::new(second, 0x21);
    let single = a.frames(b"fuzz", false).remove(0);
    let empty = a.frames(b"", false).remove(0);
    let two = a.frames(&[0xC3; 200], false);
    let full = a.frames(b"full", true).remove(0);
    let b_single = b.frames(b"second device", false).remove(0);
    let mut a_named_b = single.clone();
    a_named_b[11..19].copy_from_slice(&FUZZ_DEVICE_ID_2.to_le_bytes());
    let mut version_1 = single.clone();
    version_1[4] = 1;
    let three = a.frames(&[0x3C; 300], false);
    let reordered = a.frames(&[0x77; 256], false);
    let a_long = a.frames(&[0x01; 200], false);
    let b_long = b.frames(&[0x02; 200], false);
    let a_short = a.frames(b"short", false);
    let a_more: Vec<Vec<Vec<u8>>> = (0..3).map(|i| a.frames(&[i; 130], false)).collect();
    let b_full = b.frames(&[0x55; 130], true);
    let compact = a.compact_frames(&[0x99; 200], 11);
    let integer = integer_seed_frame(&fuzz_credentials()[0], b"fuzz readings");
    let integer_public_key = integer_public_key_seed_frame(b"public-key readings");
    vec![
        ("seeded-single", single.clone()),
        ("seeded-empty-message", empty),
        ("seeded-chunk0", two[0].clone()),
        ("seeded-chunk1", two[1].clone()),
        ("full-single", full),
        ("device2-seeded", b_single),
        ("maced-as-a-named-b", a_named_b),
        ("version-1", version_1),
        ("header-only", single[..HEADER_BYTES].to_vec()),
        ("garbage", b"GET / HTTP/1.1\r\nHost: tfhe-sbc\r\n\r\n".to_vec()),
        ("stream-message", length_delimited(&[&three[0], &three[1], &three[2]])),
        (
            "stream-reordered-and-replayed",
            length_delimited(&[&reordered[1], &reordered[0], &reordered[0], &reordered[1]]),
        ),
        (
            // a_long[1] arrives 5 s after a_long[0]: expired (limit 3 s). The a_more messages hit the
            // per-device limit of 2 open messages, b_long the total of 3.
            "stream-interleaved-limits-expiry",
            length_delimited(&[
                &a_long[0],
                &b_long[0],
                &a_short[0],
                &a_more[0][0],
                &a_more[1][0],
                &a_long[1],
                &b_long[1],
                &a_more[2][0],
                &a_more[2][1],
            ]),
        ),
        ("stream-full-two-chunks", length_delimited(&[&b_full[0], &b_full[1]])),
        ("compact-11-bit-chunk0", compact[0].clone()),
        ("stream-compact-message", length_delimited(&[&compact[0], &compact[1]])),
        ("integer-compact-14-bit", integer),
        ("integer-public-key", integer_public_key),
        ("integer-compact-list", compact_list_seed_frame(&[7, 0, 255, 255, 0, 1])),
    ]
}

/// One compact-list frame (kind 3: a tfhe-rs `CompactCiphertextList` of three `u16` readings) from the
/// public-key fuzz device, under a compact public key of pseudo-random words (the fuzzer only needs the
/// frame's shape: nobody decrypts it).
fn compact_list_seed_frame(readings: &[u8]) -> Vec<u8> {
    use rand_core::{Rng, SeedableRng};
    use tfhe_sbc_device::csprng::xof::Blake2bXof;
    use tfhe_sbc_device::encrypt::{CompactListFrameEncryptor, FrameEncryptor};
    use tfhe_sbc_device::frame::compact_list::MAX_COMPACT_LIST_FRAME_BYTES;
    let mut rng = Blake2bXof::from_seed([0x51; 32]);
    let key: Vec<u64> = (0..2 * 2048).map(|_| rng.next_u64()).collect();
    let mut encryptor = Box::new(CompactListFrameEncryptor::<negacyclic_ntt::NttPlan64>::EMPTY);
    encryptor
        .set_value_bits(16)
        .unwrap_or_else(|e| unreachable!("a list width: {e}"));
    encryptor
        .list
        .set_public_key(&key)
        .unwrap_or_else(|e| unreachable!("uniform words are no degenerate key: {e}"));
    encryptor.list.seed_from_bytes(&mut [0x52; 32]);
    let outgoing = encryptor
        .begin_message(&mut tfhe_sbc_device::frame::FrameCounter::new(1 << 22), readings.len())
        .unwrap_or_else(|e| unreachable!("{e}"));
    let chunk = tfhe_sbc_device::frame::message::chunks(readings, encryptor.chunk_bytes())
        .next()
        .unwrap_or_else(|| unreachable!("one chunk"));
    let mut out = vec![0u8; MAX_COMPACT_LIST_FRAME_BYTES];
    let len = encryptor
        .encrypt_frame_into(&fuzz_public_key_credentials(), &outgoing, &chunk, &mut out)
        .unwrap_or_else(|e| unreachable!("{e}"));
    out.truncate(len);
    out
}

/// One integer public-key frame (the mask in full, `u64` words) from the public-key fuzz device, under a
/// public key made from fixed seeds.
fn integer_public_key_seed_frame(readings: &[u8]) -> Vec<u8> {
    use negacyclic_ntt::NttPlan64;
    use rand_core::SeedableRng;
    use tfhe_sbc_core::entities::GlweSecretKey;
    use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    use tfhe_sbc_device::csprng::xof::Blake2bXof;
    use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
    use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
    use tfhe_sbc_device::noise::DeviceNoise;
    use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;
    type Encryptor = IntegerPublicKeyEncryptor<2048>;
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let mut rng = Blake2bXof::from_seed([0x41; 32]);
    let key = GlweSecretKey::generate_binary(vec![0u8; 2048], params.glwe().polynomial_size(), &mut rng)
        .unwrap_or_else(|e| unreachable!("a valid key buffer: {e}"));
    let plan = NttPlan64::new::<2048>();
    let mut spectrum = vec![[0u32; 3]; 2048];
    compute_glwe_key_spectrum(&plan, &key, &mut spectrum).unwrap_or_else(|e| unreachable!("{e}"));
    let noise = DeviceNoise::for_tuniform_parameters(&params.glwe()).unwrap_or_else(|e| unreachable!("{e}"));
    let (mut body, mut scratch) = (vec![0u64; 2048], vec![[0u32; 3]; 2048]);
    let seed = generate_seeded_glwe_public_key(&plan, &spectrum, &noise, &mut body, &mut scratch, &mut rng)
        .unwrap_or_else(|e| unreachable!("{e}"));
    let mut encryptor = Box::new(Encryptor::EMPTY);
    encryptor
        .set_integer_public_key(&params, &seed, &body)
        .unwrap_or_else(|e| unreachable!("a real public key: {e}"));
    encryptor.seed_from_bytes(&mut [0x42; 32]);
    let outgoing = encryptor
        .begin_message(&mut tfhe_sbc_device::frame::FrameCounter::new(1 << 21), readings.len())
        .unwrap_or_else(|e| unreachable!("{e}"));
    let chunk = tfhe_sbc_device::frame::message::chunks(readings, Encryptor::READING_BYTES)
        .next()
        .unwrap_or_else(|| unreachable!("one chunk"));
    let mut out = vec![0u8; Encryptor::PUBLIC_KEY_FRAME_BYTES];
    let len = encryptor
        .encrypt_frame_into(&fuzz_public_key_credentials(), &outgoing, &chunk, &mut out)
        .unwrap_or_else(|e| unreachable!("{e}"));
    out.truncate(len);
    out
}

/// One compact (14-bit) seeded frame of the 64-bit integer set from the fuzz device `credentials`, from
/// fixed seeds.
fn integer_seed_frame(credentials: &DeviceCredentials, readings: &[u8]) -> Vec<u8> {
    use rand_core::SeedableRng;
    use tfhe_sbc_core::entities::GlweSecretKey;
    use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    use tfhe_sbc_device::csprng::xof::Blake2bXof;
    use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let key = GlweSecretKey::generate_binary(
        vec![0u8; 2048],
        params.glwe().polynomial_size(),
        &mut Blake2bXof::from_seed([0x31; 32]),
    )
    .unwrap_or_else(|e| unreachable!("a valid key buffer: {e}"));
    let mut encryptor = Box::new(IntegerEncryptor::<2048>::EMPTY);
    encryptor
        .set_key(&params, &key)
        .unwrap_or_else(|e| unreachable!("the named set: {e}"));
    encryptor.seed_from_bytes(&mut [0x32; 32]);
    encryptor
        .set_body_bits(params.glwe().compact_body_bits())
        .unwrap_or_else(|e| unreachable!("the set's width: {e}"));
    let outgoing = encryptor
        .begin_message(&mut tfhe_sbc_device::frame::FrameCounter::new(1 << 20), readings.len())
        .unwrap_or_else(|e| unreachable!("{e}"));
    let chunk = tfhe_sbc_device::frame::message::chunks(readings, IntegerEncryptor::<2048>::MESSAGE_BYTES)
        .next()
        .unwrap_or_else(|| unreachable!("one chunk"));
    let mut out = vec![0u8; IntegerEncryptor::<2048>::SEEDED_FRAME_BYTES];
    let len = encryptor
        .encrypt_frame_into(credentials, &outgoing, &chunk, &mut out)
        .unwrap_or_else(|e| unreachable!("{e}"));
    out.truncate(len);
    out
}
