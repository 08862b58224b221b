//! Host tests of the firmware's runs: their inputs tied to the device crate's pinned KAT, each run's frames
//! decrypted, and the digests build.rs computed.

use crate::kat_inputs::*;
use crate::probe::{Phase, Probe};
use crate::run::{Encryptor, PACKED_KEY, run};
use negacyclic_ntt::NttPlan64;
use rand_core::SeedableRng;
use sha2::{Digest, Sha256};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, unpack_secret_key};
use tfhe_sbc_core::parameters::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::csprng::xof::{Blake2bXof, DeviceXof};
use tfhe_sbc_device::encrypt::glwe_encryption::decrypt_seeded_glwe_phase;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::mac::TAG_BYTES;
use tfhe_sbc_device::frame::{HEADER_BYTES, SEEDED_FRAME_BYTES_1024};
use tfhe_sbc_device::product::NegacyclicProductPlan;
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;

/// Records the phases, in order, and the frames.
#[derive(Default)]
struct Record {
    phases: Vec<(Phase, bool)>,
    frames: Vec<Vec<u8>>,
}

impl Probe for Record {
    fn start(&mut self, phase: Phase) {
        self.phases.push((phase, true));
    }
    fn end(&mut self, phase: Phase) {
        self.phases.push((phase, false));
    }
    fn frame(&mut self, index: usize, bytes: &[u8]) {
        assert_eq!(index, self.frames.len());
        self.frames.push(bytes.to_vec());
    }
}

impl Record {
    /// Runs `run` on `encryptor` (empty) with a frame buffer of `frame_bytes`, checks its digest against
    /// `expected` (build.rs's) and that it reported each of `phases` once, start before end, in order;
    /// returns what it recorded.
    fn of<E: ?Sized, const D: usize>(
        encryptor: &mut E,
        frame_bytes: usize,
        run: impl FnOnce(&mut E, &mut [u8], &mut Record) -> Result<[u8; D], &'static str>,
        expected: [u8; D],
        phases: &[Phase],
    ) -> Record {
        let mut frame = vec![0u8; frame_bytes];
        let mut record = Record::default();
        assert_eq!(run(encryptor, &mut frame, &mut record).unwrap(), expected);
        let reported: Vec<(Phase, bool)> = phases.iter().flat_map(|&p| [(p, true), (p, false)]).collect();
        assert_eq!(record.phases, reported);
        record
    }
}

/// The device KAT's key and encryptor (`crates/tfhe-sbc-device/tests/common`), built the plain way.
fn kat_key_and_encryptor() -> (GlweSecretKey<[u8; 1024]>, Box<GlweEncryptor<1024>>) {
    let params = TFHE_LIB_GLWE_1024;
    let key = GlweSecretKey::generate_binary(
        [0u8; 1024],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed(KEY_SEED),
    )
    .unwrap();
    let encryptor = Box::new(GlweEncryptor::<1024>::new(&params, &key, DeviceXof::from_seed(RNG_SEED)).unwrap());
    (key, encryptor)
}

/// The firmware's run, on the host: it reproduces the digest build.rs computed with the plain API, reports
/// each phase once (start before end), and frame 0 carries exactly the device KAT's first encryption
/// (its mask seed and body).
#[test]
fn the_firmware_run_matches_build_rs_and_the_device_kat() {
    let record = Record::of(
        &mut *Box::new(Encryptor::EMPTY),
        SEEDED_FRAME_BYTES_1024,
        run,
        crate::expected::EXPECTED_DIGEST,
        &[Phase::Construct, Phase::Encrypt, Phase::Frame],
    );

    let (_key, mut kat) = kat_key_and_encryptor();
    let mut body = [0u32; 1024];
    let seed = kat.encrypt_seeded_glwe_ciphertext(&MESSAGE, &mut body).unwrap();
    let payload = &record.frames[0][HEADER_BYTES..HEADER_BYTES + 32 + 4096];
    assert_eq!(&payload[..32], &seed[..]);
    let words: Vec<u32> = payload[32..]
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    assert_eq!(words, body);
    assert_ne!(record.frames[0], record.frames[1]);
}

/// The integer KAT key (from `INTEGER_KEY_SEED`, what build.rs packs into flash and publishes) and its
/// spectrum through the integer runs' product.
fn integer_kat_key() -> (GlweSecretKey<Vec<u8>>, Vec<[u32; 3]>) {
    use crate::integer_run::{N, Product};
    let key = GlweSecretKey::generate_binary(
        vec![0u8; N],
        MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().polynomial_size(),
        &mut Blake2bXof::from_seed(INTEGER_KEY_SEED),
    )
    .unwrap();
    let mut spectrum = vec![[0u32; 3]; N];
    compute_glwe_key_spectrum(&<Product as NegacyclicProductPlan<N>>::PLAN, &key, &mut spectrum).unwrap();
    (key, spectrum)
}

/// The `u8` readings a decrypted phase's radix blocks round to (the integer set's encoding).
fn integer_readings(phase: &[u64]) -> Vec<u8> {
    let encoding = MESSAGE_2_CARRY_2_TUNIFORM_2M128.encoding();
    phase
        .chunks_exact(encoding.blocks_per_value(8).unwrap())
        .map(|blocks| u8::try_from(encoding.decode_value(blocks).unwrap()).unwrap())
        .collect()
}

/// The integer run, on the host: it reproduces build.rs's digest (computed with `set_key`, `set_rng` and
/// `encrypt_frame_into`), frame 0 carries exactly what `encrypt_u8` gives for the same key and
/// seed, and frames 0 (full body) and 2 (compact body) decrypt to the 512 readings.
#[test]
fn the_integer_run_matches_build_rs_and_decrypts_to_the_readings() {
    use crate::integer_run::{self, N};
    use tfhe_sbc_core::compact_body::{packed_body_bytes, unpack_body};
    use tfhe_sbc_core::entities::MASK_SEED_BYTES;
    use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;

    let record = Record::of(
        &mut *Box::new(integer_run::Encryptor::EMPTY),
        integer_run::FRAME_BYTES,
        integer_run::run,
        integer_run::EXPECTED_DIGEST,
        &[Phase::Construct, Phase::Encrypt, Phase::Frame, Phase::CompactFrame],
    );
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let compact_bits = params.glwe().compact_body_bits();
    assert!(compact_bits < 64);
    let lengths: Vec<usize> = record.frames.iter().map(Vec::len).collect();
    assert_eq!(
        lengths,
        [
            16_479,
            16_479,
            HEADER_BYTES + MASK_SEED_BYTES + packed_body_bytes(N, compact_bits) + TAG_BYTES
        ]
    );

    let (key, spectrum) = integer_kat_key();
    let mut packed = [0u8; N / 8];
    tfhe_sbc_core::entities::pack_secret_key(key.as_bytes(), &mut packed).unwrap();
    assert_eq!(
        packed,
        integer_run::PACKED_KEY,
        "the packed key in flash is the KAT key"
    );
    let mut plain = Box::new(IntegerEncryptor::<N>::EMPTY);
    plain.set_key(&params, &key).unwrap();
    plain.set_rng(DeviceXof::from_seed(INTEGER_RNG_SEED));
    let mut body = vec![0u64; N];
    let seed = plain.encrypt_u8(&INTEGER_READINGS, &mut body).unwrap();
    let payload = &record.frames[0][HEADER_BYTES..HEADER_BYTES + MASK_SEED_BYTES + 8 * N];
    assert_eq!(&payload[..MASK_SEED_BYTES], &seed[..]);
    let words: Vec<u64> = payload[MASK_SEED_BYTES..]
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect();
    assert_eq!(words, body);
    assert_ne!(record.frames[0], record.frames[1]);

    // Decrypt frames 0 and 2: the phase b - a * s, rounded to the radix blocks, gives back the readings.
    let plan = <NttPlan64 as NegacyclicProductPlan<N>>::PLAN;
    let decrypt = |frame: &[u8], body_bits: u32| -> Vec<u8> {
        let payload = &frame[HEADER_BYTES..frame.len() - TAG_BYTES];
        let seed: [u8; MASK_SEED_BYTES] = payload[..MASK_SEED_BYTES].try_into().unwrap();
        let mut body = vec![0u64; N];
        unpack_body(&payload[MASK_SEED_BYTES..], body_bits, &mut body).unwrap();
        let (mut phase, mut scratch) = (vec![0u64; N], vec![[0u32; 3]; N]);
        decrypt_seeded_glwe_phase::<tfhe_sbc_device::csprng::DeviceConstruction, _>(
            &plan,
            &spectrum,
            &seed,
            &body,
            &mut phase,
            &mut scratch,
        )
        .unwrap();
        integer_readings(&phase)
    };
    assert_eq!(decrypt(&record.frames[0], 64), INTEGER_READINGS);
    assert_eq!(decrypt(&record.frames[2], compact_bits), INTEGER_READINGS);
}

/// The integer public-key run, on the host: it reproduces build.rs's digest (computed with
/// `set_integer_public_key` on the body's words, `set_rng` and `encrypt_frame_into`), the file in flash is
/// a public key of the integer KAT key under the frames' key id (its phase under that key is TUniform(17)
/// noise), frame 0 carries exactly what `encrypt_u8` gives for the same key and seed, and both frames
/// decrypt to the 512 readings under the secret key behind the public key.
#[test]
fn the_integer_public_key_run_matches_build_rs_and_decrypts_to_the_readings() {
    use crate::integer_public_key_run::{self, N, PUBLIC_KEY_FILE};
    use tfhe_sbc_device::encrypt::glwe_encryption::decrypt_glwe_phase;
    use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
    use tfhe_sbc_device::files::public_key::decode_public_key;
    use tfhe_sbc_device::frame::{FrameKind, frame_bytes};

    let record = Record::of(
        &mut *Box::new(integer_public_key_run::Encryptor::EMPTY),
        integer_public_key_run::FRAME_BYTES,
        integer_public_key_run::run,
        integer_public_key_run::EXPECTED_DIGEST,
        &[Phase::Construct, Phase::Encrypt, Phase::Frame],
    );
    let lengths: Vec<usize> = record.frames.iter().map(Vec::len).collect();
    assert_eq!(lengths, [32_831, 32_831]);
    assert_eq!(lengths[0], frame_bytes(FrameKind::PublicKey, 1, N, 64, 64));

    // The file: a public key of the integer KAT key, under the frames' key id.
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let mut pk_body = vec![0u64; N];
    let header = decode_public_key(&PUBLIC_KEY_FILE, &mut pk_body).unwrap();
    assert_eq!(header.key_id, KEY_ID);
    assert_eq!(header.parameters.id(), params.glwe().id());
    let (_, spectrum) = integer_kat_key();
    let plan = <NttPlan64 as NegacyclicProductPlan<N>>::PLAN;
    let (mut phase, mut scratch) = (vec![0u64; N], vec![[0u32; 3]; N]);
    decrypt_seeded_glwe_phase::<tfhe_sbc_device::csprng::Blake2bCounter, _>(
        &plan,
        &spectrum,
        &header.seed,
        &pk_body,
        &mut phase,
        &mut scratch,
    )
    .unwrap();
    assert!(phase.iter().all(|&e| (e as i64).unsigned_abs() <= 1 << 17));
    assert!(phase.iter().any(|&e| e != 0));

    // Frame 0 is the plain encryptor's `encrypt_u8` for the same key and CSPRNG seed.
    let mut plain = Box::new(IntegerPublicKeyEncryptor::<N>::EMPTY);
    plain.set_integer_public_key(&params, &header.seed, &pk_body).unwrap();
    plain.set_rng(DeviceXof::from_seed(INTEGER_RNG_SEED));
    let (mut mask, mut body) = (vec![0u64; N], vec![0u64; N]);
    plain.encrypt_u8(&INTEGER_READINGS, &mut mask, &mut body).unwrap();
    let words = |frame: &[u8]| -> Vec<u64> {
        frame[HEADER_BYTES..frame.len() - TAG_BYTES]
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
            .collect()
    };
    let frame_0 = words(&record.frames[0]);
    assert_eq!(frame_0[..N], mask[..]);
    assert_eq!(frame_0[N..], body[..]);
    assert_ne!(record.frames[0], record.frames[1]);

    // Both frames decrypt to the readings: the phase b - a * s, rounded to the radix blocks.
    for frame in &record.frames {
        let words = words(frame);
        decrypt_glwe_phase(&plan, &spectrum, &words[..N], &words[N..], &mut phase, &mut scratch).unwrap();
        assert_eq!(integer_readings(&phase), INTEGER_READINGS);
    }
}

/// The compact-list run, on the host: the streaming form reproduces the digest build.rs computed with the
/// NTT form, pinned here; the key in flash is the one `COMPACT_KEY_SEED` expands to; both lists (64 and
/// 512 readings) have tfhe-rs's sizes and decrypt to the readings under the secret key behind the key, as
/// tfhe-rs expands them (LWE `j` of a bin: mask `mask * X^j`, body `body_j`).
#[test]
fn the_compact_list_run_matches_build_rs_and_decrypts_to_the_readings() {
    use crate::compact_key::compact_key_pair;
    use crate::compact_list_run::{self, COMPACT_PUBLIC_KEY};
    use tfhe_sbc_device::compact_list::{
        CompactReading, ListLayout, PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 as PARAMS,
    };
    use tfhe_sbc_device::encrypt::compact_list::compact_list_bytes;
    use tfhe_sbc_device::encrypt::decryption::decrypt_compact_list_phases;

    let record = Record::of(
        &mut *Box::new(compact_list_run::Encryptor::EMPTY),
        compact_list_run::FRAME_BYTES,
        compact_list_run::run,
        compact_list_run::EXPECTED_DIGEST,
        &[Phase::Construct, Phase::List64, Phase::List512],
    );
    let hex: String = compact_list_run::EXPECTED_DIGEST
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hex, "c6da222f381096dc701393a46585b2a853e33b2101ccfd3380c7bf9eac3821e2");
    let lengths: Vec<usize> = record.frames.iter().map(Vec::len).collect();
    // 211 + 8 (2048 + LWEs) + 16 values: tfhe-rs 1.8.2's own sizes for packed lists of 64 and 512 u8.
    assert_eq!(lengths, [18_643, 32_979]);
    assert_eq!(lengths[0], compact_list_bytes::<u8>(COMPACT_SHORT_READINGS));

    let (s, key) = compact_key_pair(COMPACT_KEY_SEED);
    let key_bytes: Vec<u8> = key.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(key_bytes == COMPACT_PUBLIC_KEY.0, "the key in flash is the seed's key");
    for (list, count) in record
        .frames
        .iter()
        .zip([COMPACT_SHORT_READINGS, INTEGER_READINGS.len()])
    {
        let layout = ListLayout::new(&PARAMS, u8::KIND, count).unwrap();
        let mut phases = vec![0; layout.lwes()];
        decrypt_compact_list_phases(&layout, list, &s, &mut phases).unwrap();
        let delta = PARAMS.delta();
        let nibbles: Vec<u64> = phases
            .iter()
            .map(|&phase| {
                let rounded = phase.wrapping_add(delta / 2) / delta;
                assert!(rounded < 16, "padding bit set");
                rounded
            })
            .collect();
        let readings: Vec<u8> = (0..count)
            .map(|v| {
                (0..4).fold(0u8, |acc, b| {
                    acc | (((nibbles[2 * v + b / 2] >> (2 * (b % 2))) & 3) as u8) << (2 * b)
                })
            })
            .collect();
        assert_eq!(readings, INTEGER_READINGS[..count]);
    }
}

/// The packed key build.rs put in flash is the KAT key.
#[test]
fn the_packed_key_is_the_kat_key() {
    let (key, _) = kat_key_and_encryptor();
    let mut bits = [0u8; 1024];
    unpack_secret_key(&PACKED_KEY, &mut bits).unwrap();
    assert_eq!(&bits, key.as_bytes());
}

/// The firmware's inputs are the device crate's KAT inputs: they reproduce its pinned SHA-256 digest
/// (`crates/tfhe-sbc-device/tests/kat.rs`, `fixed_seeds_give_a_fixed_ciphertext`).
#[test]
fn inputs_reproduce_the_device_kat() {
    let params = TFHE_LIB_GLWE_1024;
    let (_key, mut encryptor) = kat_key_and_encryptor();
    let mut hasher = Sha256::new();
    let mut body = [0u32; 1024];
    let seed = encryptor.encrypt_seeded_glwe_ciphertext(&MESSAGE, &mut body).unwrap();
    hasher.update(seed);
    body.iter().for_each(|w| hasher.update(w.to_le_bytes()));
    let mut full = GlweCiphertext::from_container([0u32; 2048], params.polynomial_size()).unwrap();
    encryptor.encrypt_glwe_ciphertext(&MESSAGE, &mut full).unwrap();
    full.as_slice().iter().for_each(|w| hasher.update(w.to_le_bytes()));
    let digest: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        digest,
        "14ce7dece9ab06189cd670a92e34aed8cd84a61af3f7e7448fd9ba5bf7a34f52"
    );
}
