//! Integer frames from the real device: `IntegerEncryptor` (u64 torus, `NttPlan64`,
//! TUniform(17)) writes v2 frames, [`Intake::receive_integer`] checks and opens them, and with feature `tfhe`
//! `IntegerExtractor` turns them into `FheUint8/16/32` that tfhe-rs computes on (sum, max, a comparison, a
//! multiplication) and the tfhe-rs `ClientKey` decrypts.
#![allow(clippy::unwrap_used)]

use rand_core::SeedableRng;
use std::time::Instant;
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig, IntegerFrame};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};

const DEVICE: u64 = 0x1D_0004;

fn credentials() -> DeviceCredentials {
    DeviceCredentials::new(DEVICE, 3, MacKey::from_bytes([0x4B; 32]))
}

fn intake() -> Intake {
    let mut registry = DeviceRegistry::new();
    registry.register(credentials()).unwrap();
    Intake::new(IntakeConfig::default(), registry)
}

fn encryptor(key: &GlweSecretKeyOwned, seed: u8) -> Box<IntegerEncryptor> {
    let mut e = Box::new(IntegerEncryptor::<2048>::EMPTY);
    e.set_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, key).unwrap();
    e.seed_from_bytes(&mut [seed; 32]);
    e
}

/// The frames of one message of reading bytes.
fn frames(enc: &mut IntegerEncryptor, counter: &mut FrameCounter, bytes: &[u8]) -> Vec<Vec<u8>> {
    let credentials = credentials();
    let outgoing = enc.begin_message(counter, bytes.len()).unwrap();
    chunks(bytes, IntegerEncryptor::<2048>::MESSAGE_BYTES)
        .map(|chunk| {
            let mut out = vec![0u8; IntegerEncryptor::<2048>::SEEDED_FRAME_BYTES];
            enc.encrypt_frame_into(&credentials, &outgoing, &chunk, &mut out)
                .unwrap();
            out
        })
        .collect()
}

#[test]
fn intake_checks_integer_frames() {
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let key = GlweSecretKey::generate_binary(
        vec![0u8; 2048],
        params.glwe().polynomial_size(),
        &mut Blake2bXof::from_seed([1; 32]),
    )
    .unwrap();
    let mut enc = encryptor(&key, 2);
    let mut counter = FrameCounter::new(100);
    let bytes: Vec<u8> = (0..600u32).map(|i| (i * 7) as u8).collect();
    let sent = frames(&mut enc, &mut counter, &bytes);
    assert_eq!(sent.len(), 2);
    assert!(
        sent.iter()
            .all(|f| f.len() == frame_bytes(FrameKind::Seeded, 1, 2048, 64, 64))
    );
    let mut intake = intake();

    // The boolean path refuses integer frames; nothing is consumed.
    assert!(matches!(
        intake.receive(&sent[0], Instant::now()),
        Err(IntakeError::UnsupportedParameterSet(4))
    ));
    // Every byte is authenticated: a flipped body bit, a flipped seed bit, a flipped header bit.
    for at in [9usize, 60, 5000, sent[0].len() - 1] {
        let mut bad = sent[0].clone();
        bad[at] ^= 1;
        assert!(intake.receive_integer(&bad).is_err(), "flipped byte {at} accepted");
    }
    // Exact lengths.
    assert!(matches!(
        intake.receive_integer(&sent[0][..sent[0].len() - 1]),
        Err(IntakeError::WrongFrameLength { .. })
    ));
    let mut longer = sent[0].clone();
    longer.push(0);
    assert!(matches!(
        intake.receive_integer(&longer),
        Err(IntakeError::WrongFrameLength { .. })
    ));

    let opened: Vec<IntegerFrame> = sent.iter().map(|f| intake.receive_integer(f).unwrap()).collect();
    assert_eq!(opened[0].chunk_message_bytes(), 512);
    assert_eq!(opened[1].chunk_message_bytes(), 88);
    assert_eq!((opened[0].readings(16), opened[1].readings(32)), (256, 22));
    assert_eq!(opened[1].header.sequence, 101);
    // Replays are refused.
    assert!(matches!(
        intake.receive_integer(&sent[0]),
        Err(IntakeError::Replayed { .. })
    ));

    // The ciphertext decrypts to the readings under the device key: b - <a, s>, rounded per block.
    let encoding = params.encoding();
    for (frame, expected) in opened.iter().zip(bytes.chunks(512)) {
        let ct = &frame.ciphertext;
        let (mask, body) = (ct.mask(), ct.body());
        let s = key.as_bytes();
        let n = 2048;
        let mut decoded = Vec::new();
        for blocks in 0..expected.len() {
            let mut words = [0u64; 4];
            for (j, w) in words.iter_mut().enumerate() {
                let i = 4 * blocks + j;
                // Coefficient i of the negacyclic product a * s.
                let mut dot = 0u64;
                for (t, &st) in s.iter().enumerate() {
                    if st == 1 {
                        let (idx, neg) = if t <= i { (i - t, false) } else { (n + i - t, true) };
                        dot = if neg {
                            dot.wrapping_sub(mask[idx])
                        } else {
                            dot.wrapping_add(mask[idx])
                        };
                    }
                }
                *w = body[i].wrapping_sub(dot);
            }
            decoded.push(encoding.decode_value(&words).unwrap() as u8);
        }
        assert_eq!(decoded, expected);
    }
}

/// Device-encrypted readings -> frames -> intake -> `IntegerExtractor` -> `FheUint8/16/32`; tfhe-rs
/// computes; its `ClientKey` decrypts.
#[cfg(feature = "tfhe")]
#[test]
fn device_readings_compute_in_tfhe_rs() {
    use tfhe::prelude::*;
    use tfhe::{ClientKey, ConfigBuilder, FheUint8Id, FheUint16Id, FheUint32Id, Seed, set_server_key};
    use tfhe_sbc_adapter::interop::integer::{IntegerExtractor, glwe_key_from_client_key};

    let t = Instant::now();
    let client_key = ClientKey::generate_with_seed(ConfigBuilder::default().build(), Seed(0x1D_0004));
    set_server_key(client_key.generate_server_key());
    eprintln!("tfhe-rs keys: {:.1} s", t.elapsed().as_secs_f64());
    // The device key is the client key's GLWE key (fleet mode), as the device's key bytes.
    let device_key = glwe_key_from_client_key(&client_key).unwrap();
    let mut enc = encryptor(&device_key, 9);
    let mut counter = FrameCounter::new(0);
    let mut intake = intake();
    let extractor = IntegerExtractor::new();
    let mut open = |bytes: &[u8]| -> Vec<IntegerFrame> {
        frames(&mut enc, &mut counter, bytes)
            .iter()
            .map(|f| intake.receive_integer(f).unwrap())
            .collect()
    };

    // u8: a full frame of 512 readings; compute on three of them.
    let r8: Vec<u8> = (0..512u32).map(|i| (i * 151 + 17) as u8).collect();
    let f8 = open(&r8);
    assert_eq!((f8.len(), f8[0].readings(8)), (1, 512));
    let all8 = extractor
        .extract_readings::<FheUint8Id, _>(&f8[0].ciphertext, 0, 512)
        .unwrap();
    for (i, &r) in r8.iter().enumerate().step_by(37) {
        let d: u8 = all8[i].decrypt(&client_key);
        assert_eq!(d, r, "u8 reading {i}");
    }
    let (a, b, c) = (&all8[3], &all8[4], &all8[5]);
    let sum: u8 = (a + b + c).decrypt(&client_key);
    assert_eq!(sum, r8[3].wrapping_add(r8[4]).wrapping_add(r8[5]));
    let max: u8 = a.max(b).decrypt(&client_key);
    assert_eq!(max, r8[3].max(r8[4]));
    let gt: bool = a.gt(b).decrypt(&client_key);
    assert_eq!(gt, r8[3] > r8[4]);
    let product: u8 = (a * c).decrypt(&client_key);
    assert_eq!(product, r8[3].wrapping_mul(r8[5]));

    // u16: 300 readings over two frames (256 + 44).
    let r16: Vec<u16> = (0..300u32).map(|i| (i * 40_503 + 11) as u16).collect();
    let bytes16: Vec<u8> = r16.iter().flat_map(|r| r.to_le_bytes()).collect();
    let f16 = open(&bytes16);
    assert_eq!((f16.len(), f16[0].readings(16), f16[1].readings(16)), (2, 256, 44));
    let x = extractor
        .extract_readings::<FheUint16Id, _>(&f16[0].ciphertext, 255, 1)
        .unwrap();
    let y = extractor
        .extract_readings::<FheUint16Id, _>(&f16[1].ciphertext, 43, 1)
        .unwrap();
    let (x, y) = (&x[0], &y[0]);
    let (px, py) = (r16[255], r16[299]);
    let dx: u16 = x.decrypt(&client_key);
    assert_eq!(dx, px);
    let dy: u16 = y.decrypt(&client_key);
    assert_eq!(dy, py);
    let sum: u16 = (x + y).decrypt(&client_key);
    assert_eq!(sum, px.wrapping_add(py));
    let max: u16 = x.max(y).decrypt(&client_key);
    assert_eq!(max, px.max(py));
    let le: bool = x.le(y).decrypt(&client_key);
    assert_eq!(le, px <= py);

    // u32: 128 readings, one frame.
    let r32: Vec<u32> = (0..128u32).map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0x5bd1_e995).collect();
    let bytes32: Vec<u8> = r32.iter().flat_map(|r| r.to_le_bytes()).collect();
    let f32s = open(&bytes32);
    assert_eq!(f32s[0].readings(32), 128);
    let v = extractor
        .extract_readings::<FheUint32Id, _>(&f32s[0].ciphertext, 126, 2)
        .unwrap();
    let (p, q) = (r32[126], r32[127]);
    let dp: u32 = v[0].decrypt(&client_key);
    assert_eq!(dp, p);
    let sum: u32 = (&v[0] + &v[1]).decrypt(&client_key);
    assert_eq!(sum, p.wrapping_add(q));
    let lt: bool = v[0].lt(&v[1]).decrypt(&client_key);
    assert_eq!(lt, p < q);
    eprintln!("end to end: {:.1} s", t.elapsed().as_secs_f64());
}
