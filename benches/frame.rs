//! The cost of authenticated frames (wire format v2) at `N = 1024`, against the seeded encryption measured
//! in the same run: the device's frame MAC (keyed BLAKE2b-128 over the 4175 bytes before the tag), a whole
//! `encrypt_seeded_frame`, and the server's side (constant-time MAC check; the whole authenticated
//! `Intake::receive` with the mask expansion).
//!
//! Run: `cargo bench --bench frame`
#![allow(clippy::unwrap_used)]

mod common;

use criterion::{BatchSize, Criterion, Throughput};
use std::hint::black_box;
use std::time::Instant;
use tfhe_sbc_adapter::intake::{IntakeConfig, parse_frame};
use tfhe_sbc_device::csprng::mask::expand_mask_u32;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey, TAG_BYTES};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, SEEDED_FRAME_BYTES_1024};
use tfhe_sbc_device::noise::NoiseSampling;

use common::N;

const GROUP: &str = "frame_v2_1024";
const ENCRYPT: &str = "seeded encryption (no frame)";
const MAC: &str = "frame MAC: tag of 4175 bytes";
const FRAME: &str = "encrypt_seeded_frame (encryption, header, MAC)";
const VERIFY: &str = "server: parse_frame + MAC check";
const EXPAND: &str = "server: mask expansion (1024 words)";
const RECEIVE: &str = "server: Intake::receive (all of it)";

fn bench(c: &mut Criterion) {
    let mut encryptor = common::encryptor(NoiseSampling::ConstantTime, 2);
    let credentials = DeviceCredentials::new(1, 1, MacKey::from_bytes([3; 32]));
    let message = [0xA5u8; N / 8];
    let chunk = chunks(&message, N / 8).next().unwrap();
    let mut counter = FrameCounter::new(0);
    let mut body = [0u32; N];
    let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];

    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Bytes(SEEDED_FRAME_BYTES_1024 as u64));
    common::bench_seeded(&mut group, ENCRYPT, &mut encryptor);
    group.bench_function(FRAME, |b| {
        b.iter(|| {
            let outgoing = encryptor.begin_message(&mut counter, message.len()).unwrap();
            encryptor
                .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut frame)
                .unwrap()
        })
    });
    let authenticated = frame.len() - TAG_BYTES;
    group.bench_function(MAC, |b| {
        b.iter(|| credentials.mac_key().tag(black_box(&frame[..authenticated])))
    });
    let config = IntakeConfig::default();
    group.bench_function(VERIFY, |b| {
        b.iter(|| {
            let parsed = parse_frame(black_box(&frame), &config).unwrap();
            assert!(parsed.verify_mac(credentials.mac_key()));
        })
    });
    let mut mask = vec![0u32; N];
    let seed: [u8; 32] = frame[47..79].try_into().unwrap();
    group.bench_function(EXPAND, |b| {
        b.iter(|| expand_mask_u32::<tfhe_sbc_device::csprng::DeviceConstruction>(black_box(&seed), &mut mask))
    });
    let now = Instant::now();
    group.bench_function(RECEIVE, |b| {
        b.iter_batched(
            common::one_device_intake,
            |mut intake| {
                intake.receive(black_box(&frame), now).unwrap();
                intake
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn main() {
    common::run(bench);
    common::print_ratio_table(
        "Authenticated frames, N = 1024, 4191-byte seeded frame (ratio = time / seeded encryption)",
        GROUP,
        &[ENCRYPT, MAC, FRAME, VERIFY, EXPAND, RECEIVE],
        ENCRYPT,
    );
}
