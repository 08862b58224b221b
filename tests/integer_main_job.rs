//! The integer main job (`sensor_to_cloud --integers`) in the test profile: a fleet, a per-device and a
//! public-key meter send 16-bit readings as v2 frames over loopback TCP; the cloud computes their sum
//! (`FheUint32`), mean and maximum with tfhe-rs; the decrypted answers must equal the clear ones. The
//! secret-key frames carry the set's compact (14-bit) body, as the example sends by default; the public-key
//! frame carries mask and body in full (kind 2, 64-bit words).
//! The job is the example's own module, so CI checks what the example prints.
#![allow(clippy::unwrap_used)]

#[path = "../examples/sensor_to_cloud/integers/mod.rs"]
mod integers;

use integers::{JobConfig, KeyMode, compact_body_bits, default_meters, run};
use tfhe_sbc_device::frame::{FrameKind, frame_bytes};

#[test]
fn integer_main_job_decrypts_the_clear_answers() {
    let config = JobConfig {
        meters: vec![KeyMode::Fleet, KeyMode::PerDevice, KeyMode::PublicKey],
        readings: 3,
        sensor_seed: 0x5E_2026,
        key_seed: Some(0x1D_0010),
        body_bits: compact_body_bits(),
    };
    let report = run(&config);
    report.print();

    // Every meter's readings arrived, in one frame each: compact for the secret-key meters (14-bit body:
    // 3,679 bytes), the public-key frame in full (32,831 bytes).
    assert_eq!(report.meters.len(), 3);
    let compact = frame_bytes(FrameKind::Seeded, 1, 2048, 64, compact_body_bits());
    assert!(compact < frame_bytes(FrameKind::Seeded, 1, 2048, 64, 64));
    let public_key_frame = frame_bytes(FrameKind::PublicKey, 1, 2048, 64, 64);
    assert_eq!(public_key_frame, 32_831);
    for meter in &report.meters {
        assert_eq!(meter.readings.len(), 3);
        let expected = match meter.mode {
            KeyMode::PublicKey => public_key_frame,
            KeyMode::Fleet | KeyMode::PerDevice => compact,
        };
        assert_eq!((meter.frames, meter.frame_bytes), (1, expected), "{:?}", meter.mode);
    }
    assert_eq!(report.public_key_bytes, 16_443);
    // The example's default meters: the secure modes, one fleet meter for comparison.
    assert_eq!(
        default_meters(4),
        [
            KeyMode::PerDevice,
            KeyMode::PerDevice,
            KeyMode::PublicKey,
            KeyMode::Fleet
        ]
    );
    // The answers, recomputed here from the readings, and the decryptions equal to them. 9 readings: the
    // mean is a real division (not a shift), and the readings are spread enough that the sum overflows u16
    // with this seed (checked, so a seed change cannot make the test weaker silently).
    let all: Vec<u64> = report
        .meters
        .iter()
        .flat_map(|m| m.readings.iter().map(|&r| u64::from(r)))
        .collect();
    let sum: u64 = all.iter().sum();
    assert!(
        sum > u64::from(u16::MAX),
        "sum {sum} fits u16: pick another sensor seed"
    );
    let expected = [sum, sum / all.len() as u64, *all.iter().max().unwrap()];
    assert_eq!(report.answers.len(), expected.len());
    for (answer, expected) in report.answers.iter().zip(expected) {
        assert_eq!(answer.expected, expected, "{}", answer.name);
        assert_eq!(answer.decrypted, expected, "{}: decrypted", answer.name);
    }
    assert!(report.all_correct());
}
