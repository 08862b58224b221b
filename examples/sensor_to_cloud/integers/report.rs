//! What the integer job measured and how it prints: per meter, per key mode, the wire sizes, the peer
//! (tfhe-rs's own encryption), the homomorphic operations and the decrypted answers beside the clear ones.

use super::{KeyMode, N, READING_BITS, compact_body_bits};
use std::time::Duration;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::frame::{FrameKind, frame_bytes};

/// One meter's figures.
pub struct MeterReport {
    /// Device id.
    pub id: u64,
    /// Key mode.
    pub mode: KeyMode,
    /// The readings in the clear (what the trusted party checks against).
    pub readings: Vec<u16>,
    /// Frames sent.
    pub frames: usize,
    /// Frame bytes sent (without the 4-byte stream length prefix).
    pub frame_bytes: usize,
    /// Device time to encrypt and authenticate the frames.
    pub encryption: Duration,
    /// Adapter time in `Intake::receive_integer` for this meter's frames.
    pub intake: Duration,
    /// Adapter time to turn the frames into `FheUint16` (extraction, after one GLWE key switch per frame
    /// for a per-device meter).
    pub extraction: Duration,
}

/// One decrypted answer beside the clear one.
pub struct Answer {
    /// What it is.
    pub name: &'static str,
    /// The trusted party's decryption of the cloud's result.
    pub decrypted: u64,
    /// The same computed in the clear.
    pub expected: u64,
}

/// Everything the run measured.
pub struct JobReport {
    /// Body bits the frames carried.
    pub body_bits: u32,
    /// tfhe-rs key generation (client key, server key).
    pub keygen: Duration,
    /// Meter credentials and keys, per-device key-switching keys and the public key included.
    pub provisioning: Duration,
    /// Bytes of the integer public-key file every public-key meter holds (0 without public-key meters).
    pub public_key_bytes: usize,
    /// Cloud: decompressing the per-device key-switching keys (once per meter, before its frames).
    pub ksk_decompression: Duration,
    /// Stored bytes of one per-device key-switching key (0 without per-device meters).
    pub ksk_stored_bytes: usize,
    /// Per meter.
    pub meters: Vec<MeterReport>,
    /// Homomorphic operations, in order, with their times.
    pub ops: Vec<(String, Duration)>,
    /// Peer, same run: tfhe-rs's `ClientKey` encrypting one meter's readings as `FheUint16` (time).
    pub peer_encryption: Duration,
    /// Serialized bytes (tfhe-rs `safe_serialize`) of one device-made `FheUint16` and of one encrypted by
    /// tfhe-rs's `ClientKey`.
    pub value_bytes: (u64, u64),
    /// The first `max` of the tree on device-made `FheUint16`s, and one `max` on two tfhe-rs encryptions.
    pub max_op: (Duration, Duration),
    /// Decryption of all answers.
    pub decryption: Duration,
    /// The answers.
    pub answers: Vec<Answer>,
}

impl JobReport {
    /// Whether every decrypted answer equals the clear one.
    pub fn all_correct(&self) -> bool {
        self.answers.iter().all(|a| a.decrypted == a.expected)
    }

    /// Prints the figures and the answers.
    pub fn print(&self) {
        let capacity = IntegerEncryptor::<N>::MESSAGE_BYTES * 8 / READING_BITS as usize;
        println!(
            "[trusted party] tfhe-rs integer keys (PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128) in {:.2?}",
            self.keygen
        );
        let mut keys = Vec::new();
        if self.ksk_stored_bytes > 0 {
            keys.push(format!(
                "a per-device key-switching key stores {} B",
                self.ksk_stored_bytes
            ));
        }
        if self.public_key_bytes > 0 {
            keys.push(format!(
                "the public key is {} B (one for every public-key meter, inside its credential file)",
                self.public_key_bytes
            ));
        }
        println!(
            "[trusted party] provisioned {} meters in {:.2?} ({}){}",
            self.meters.len(),
            self.provisioning,
            summary(&self.meters),
            keys.iter().map(|k| format!("; {k}")).collect::<String>()
        );
        if self.ksk_stored_bytes > 0 {
            println!(
                "[adapter] per-device key-switching keys decompressed in {:.2?} ({} KiB each)",
                self.ksk_decompression,
                2 * self.ksk_stored_bytes / 1024
            );
        }
        println!(
            "\n meter | mode      | readings | frames | frame bytes | B/reading | encryption | intake    | to FheUint16 | per reading"
        );
        for m in &self.meters {
            println!(
                " {:>5} | {:<9} | {:>8} | {:>6} | {:>11} | {:>9.1} | {:>10.2?} | {:>9.2?} | {:>12.2?} | {:>11.2?}",
                m.id,
                format!("{:?}", m.mode),
                m.readings.len(),
                m.frames,
                m.frame_bytes,
                m.frame_bytes as f64 / m.readings.len() as f64,
                m.encryption,
                m.intake,
                m.extraction,
                m.extraction / m.readings.len() as u32
            );
        }
        println!(
            "\n mode      | meters | frames | frame bytes | B/reading | encryption/frame | intake/frame | to FheUint16/reading"
        );
        for mode in KeyMode::ALL {
            let meters: Vec<&MeterReport> = self.meters.iter().filter(|m| m.mode == mode).collect();
            let frames: usize = meters.iter().map(|m| m.frames).sum();
            let readings: usize = meters.iter().map(|m| m.readings.len()).sum();
            if frames == 0 || readings == 0 {
                continue;
            }
            let bytes: usize = meters.iter().map(|m| m.frame_bytes).sum();
            let total = |time: fn(&MeterReport) -> Duration| meters.iter().map(|m| time(m)).sum::<Duration>();
            println!(
                " {:<9} | {:>6} | {:>6} | {:>11} | {:>9.1} | {:>16.2?} | {:>12.2?} | {:>20.2?}",
                format!("{mode:?}"),
                meters.len(),
                frames,
                bytes,
                bytes as f64 / readings as f64,
                total(|m| m.encryption) / frames as u32,
                total(|m| m.intake) / frames as u32,
                total(|m| m.extraction) / readings as u32,
            );
        }
        println!(
            "\n[wire] secret-key frames carried {}-bit bodies. One frame holds up to {capacity} u16 readings:",
            self.body_bits
        );
        let this_run = self.meters.first().map_or(0, |m| m.readings.len().min(capacity)).max(1);
        let mut widths = vec![64, compact_body_bits()];
        if !widths.contains(&self.body_bits) {
            widths.push(self.body_bits);
        }
        let mut kinds: Vec<(String, usize)> = widths
            .into_iter()
            .map(|bits| {
                let label = format!(
                    "seeded, {bits}-bit body ({})",
                    if bits == 64 { "full" } else { "compact" }
                );
                (label, frame_bytes(FrameKind::Seeded, 1, N, 64, bits))
            })
            .collect();
        kinds.push((
            "public key, mask and body in full".to_owned(),
            IntegerPublicKeyEncryptor::<N>::PUBLIC_KEY_FRAME_BYTES,
        ));
        for (label, frame) in kinds {
            println!(
                "  {label:<33}: {frame:>6} B per frame, {:>6.1} B per reading when full, {:>7.1} B per reading with \
                 {this_run} in a frame",
                frame as f64 / capacity as f64,
                frame as f64 / this_run as f64
            );
        }
        let readings = self.meters.first().map_or(0, |m| m.readings.len());
        let encryption = self.meters.first().map_or(Duration::ZERO, |m| m.encryption);
        println!(
            "[peer] tfhe-rs ClientKey FheUint16::encrypt x {readings}, warm: {:.2?} (the meter's frames, warm: {:.2?}, {:.1}x); one \
             FheUint16 serialized: {} B device-made, {} B tfhe-rs-encrypted",
            self.peer_encryption,
            encryption,
            self.peer_encryption.as_secs_f64() / encryption.as_secs_f64().max(1e-9),
            self.value_bytes.0,
            self.value_bytes.1
        );
        println!("\n[cloud] tfhe-rs high-level API:");
        for (name, t) in &self.ops {
            println!("  {name:<52} {t:>10.2?}");
        }
        println!(
            "  one max: {:.2?} on device-made FheUint16, {:.2?} on tfhe-rs encryptions ({:.2}x)",
            self.max_op.0,
            self.max_op.1,
            self.max_op.0.as_secs_f64() / self.max_op.1.as_secs_f64().max(1e-9)
        );
        println!(
            "\n[trusted party] decrypted {} answers in {:.2?}:",
            self.answers.len(),
            self.decryption
        );
        for a in &self.answers {
            println!(
                "  {:<40} encrypted result {:>10}   plaintext answer {:>10}   {}",
                a.name,
                a.decrypted,
                a.expected,
                if a.decrypted == a.expected { "correct" } else { "WRONG" }
            );
        }
    }
}

fn summary(meters: &[MeterReport]) -> String {
    KeyMode::ALL
        .iter()
        .filter_map(|mode| {
            let n = meters.iter().filter(|m| m.mode == *mode).count();
            (n > 0).then(|| format!("{n} {mode:?}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
