//! The integer main job: meters encrypt 16-bit readings on tfhe-rs's default integer set (u64 torus,
//! N = 2048) and send v2 frames over TCP, in one of three key modes (`docs/security.md`):
//! * per-device: the meter's own key (`IntegerEncryptor`), seeded frames with the set's compact 14-bit body
//!   unless told otherwise (`--full-body`: 64 bits); the cloud switches each frame once, GLWE to GLWE, with
//!   the meter's `IntegerDeviceKsk`, then extracts;
//! * public key: the key set's public key only (`IntegerPublicKeyEncryptor`, nothing that decrypts),
//!   public-key frames (kind 2: mask and body in full, 64-bit words); the cloud only extracts;
//! * fleet (the paper's mode, for comparison): the client key's GLWE key, seeded compact frames, extraction.
//!
//! The adapter opens the frames with `Intake::receive_integer` and turns them into tfhe-rs `FheUint16`s
//! (`IntegerExtractor`). The cloud computes, with tfhe-rs's high-level API, the encrypted sum (as
//! `FheUint32`: it cannot overflow), the mean (the sum divided by the public count) and the maximum; the
//! trusted party decrypts them and checks each against the answer computed in the clear. The report gives
//! bytes and times per meter and per mode.
//!
//! Used by the example (`sensor_to_cloud --integers`) and by `tests/integer_main_job.rs`, which runs it in
//! the test profile.

use rand_core::{Rng, SeedableRng};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};
use tfhe::prelude::*;
use tfhe::safe_serialization::safe_serialized_size;
use tfhe::{ClientKey, ConfigBuilder, FheUint16, FheUint16Id, FheUint32, Seed, set_server_key};
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig, IntegerFrame};
use tfhe_sbc_adapter::interop::glwe_ksk::keyswitch_frame;
use tfhe_sbc_adapter::interop::glwe_ksk_spectra::GlweKskSpectra;
use tfhe_sbc_adapter::interop::integer::per_device::IntegerDeviceKsk;
use tfhe_sbc_adapter::interop::integer::public_key::integer_public_key_from_client_key;
use tfhe_sbc_adapter::interop::integer::{IntegerExtractor, glwe_key_from_client_key};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_adapter::stream::{FrameReader, write_frame};
use tfhe_sbc_core::entities::{GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::files::public_key::public_key_body;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};

/// The meters' reading width.
const READING_BITS: u32 = 16;
/// The frames' key id.
const KEY_ID: u32 = 1;
/// The first meter's device id.
const FIRST_ID: u64 = 200;
/// The polynomial size of the integer set.
const N: usize = 2048;

/// How a meter's key relates to the tfhe-rs client key (`docs/security.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyMode {
    /// The meter holds the client key's GLWE key: intake is extraction only; one stolen meter decrypts every
    /// fleet meter's traffic.
    Fleet,
    /// The meter holds its own key: the cloud switches each frame once into the client key's GLWE key with
    /// the meter's seeded GLWE key-switching key, then extracts.
    PerDevice,
    /// The meter holds only the key set's public key (under the client key's GLWE key): nothing that
    /// decrypts; its frames carry the mask in full, and the cloud only extracts.
    PublicKey,
}

impl KeyMode {
    /// Every mode, in the order the report lists them.
    pub const ALL: [Self; 3] = [Self::PerDevice, Self::PublicKey, Self::Fleet];
}

/// The meters' modes by default for `meters` meters: the secure modes, per-device and public key, and one
/// fleet meter for comparison (1 meter: per-device; 2: per-device and public key; `n >= 3`: `n - 2`
/// per-device, one public-key and one fleet meter).
pub fn default_meters(meters: usize) -> Vec<KeyMode> {
    let mut modes = vec![KeyMode::PerDevice; meters.max(1)];
    if meters >= 2 {
        modes[meters - 1] = KeyMode::PublicKey;
    }
    if meters >= 3 {
        modes[meters - 2] = KeyMode::PublicKey;
        modes[meters - 1] = KeyMode::Fleet;
    }
    modes
}

/// What to run.
#[derive(Clone, Debug)]
pub struct JobConfig {
    /// Each meter's key mode (one meter per entry).
    pub meters: Vec<KeyMode>,
    /// 16-bit readings per meter.
    pub readings: usize,
    /// Seed of the simulated sensors.
    pub sensor_seed: u64,
    /// `Some(seed)`: every key and all encryption randomness from fixed seeds (tests); `None`: from the OS.
    pub key_seed: Option<u64>,
    /// Body bits the secret-key meters' frames carry: 64 (full body) or down to the set's
    /// `compact_body_bits()` (14). Public-key frames always carry the full body.
    pub body_bits: u32,
}

/// The set's compact body width (14 bits), which the example sends by default.
pub fn compact_body_bits() -> u32 {
    MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().compact_body_bits()
}

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
            "[peer] tfhe-rs ClientKey FheUint16::encrypt x {readings}: {:.2?} (the meter's frame: {:.2?}, {:.1}x); one \
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

/// The key a meter is given at provisioning.
enum MeterKey {
    /// Its own GLWE key or the client key's (fleet).
    Secret(GlweSecretKeyOwned),
    /// The key set's public-key file (shared by every public-key meter).
    Public(Arc<Vec<u8>>),
}

/// What a meter is given at provisioning: its key and its frame credentials.
struct Provisioned {
    key: MeterKey,
    credentials: DeviceCredentials,
    encryption_seed: [u8; 32],
}

/// What a meter reports after sending.
struct Sent {
    id: u64,
    frames: usize,
    frame_bytes: usize,
    encryption: Duration,
}

/// A source of randomness for keys and seeds: fixed or the OS's.
fn key_rng(config: &JobConfig, stream: u64) -> Blake2bXof {
    match config.key_seed {
        Some(seed) => Blake2bXof::seed_from_u64(seed ^ stream.rotate_left(32)),
        None => tfhe_sbc_device::csprng::seeding::from_os_entropy().expect("OS entropy"),
    }
}

/// Runs the whole job: keys, meters, TCP, intake, tfhe-rs, decryption.
pub fn run(config: &JobConfig) -> JobReport {
    // Trusted party: tfhe-rs's default integer keys.
    let t = Instant::now();
    let tfhe_config = ConfigBuilder::default().build();
    let client_key = match config.key_seed {
        Some(seed) => ClientKey::generate_with_seed(tfhe_config, Seed(u128::from(seed))),
        None => ClientKey::generate(tfhe_config),
    };
    let server_key = client_key.generate_server_key();
    let keygen = t.elapsed();

    // Trusted party: per meter, MAC credentials (the adapter gets a copy) and a key: the meter's own with a
    // seeded key-switching key for the cloud (per-device), the key set's public key (one for all public-key
    // meters), or the client key's GLWE key (fleet).
    let t = Instant::now();
    let mut rng = key_rng(config, 0);
    let fleet_key = glwe_key_from_client_key(&client_key).expect("the default config is the integer set");
    let public_key = config
        .meters
        .contains(&KeyMode::PublicKey)
        .then(|| Arc::new(integer_public_key_from_client_key(&client_key, KEY_ID, &mut rng).expect("the integer set")));
    let public_key_bytes = public_key.as_ref().map_or(0, |k| k.len());
    let mut registry = DeviceRegistry::new();
    let mut device_ksks: Vec<(u64, IntegerDeviceKsk)> = Vec::new();
    let mut provisioned = Vec::new();
    for (i, &mode) in config.meters.iter().enumerate() {
        let id = FIRST_ID + i as u64;
        let mac = MacKey::generate(&mut rng);
        let cloud_copy = DeviceCredentials::new(id, KEY_ID, MacKey::from_bytes(*mac.as_bytes()));
        match mode {
            // A public-key meter may send only public-key frames.
            KeyMode::PublicKey => registry.register_public_key(cloud_copy),
            KeyMode::Fleet | KeyMode::PerDevice => registry.register(cloud_copy),
        }
        .expect("fresh ids");
        let key = match mode {
            KeyMode::Fleet => MeterKey::Secret(
                GlweSecretKey::from_container(fleet_key.as_bytes().to_vec(), fleet_key.polynomial_size())
                    .expect("same shape"),
            ),
            KeyMode::PerDevice => {
                let key = GlweSecretKey::generate_binary(vec![0u8; N], fleet_key.polynomial_size(), &mut rng)
                    .expect("N = 2048");
                let ksk = IntegerDeviceKsk::generate(&key, &client_key, &mut rng).expect("binary key of the set");
                device_ksks.push((id, ksk));
                MeterKey::Secret(key)
            }
            KeyMode::PublicKey => MeterKey::Public(public_key.clone().expect("made for public-key meters")),
        };
        let mut encryption_seed = [0u8; 32];
        key_rng(config, 1 + i as u64).fill_bytes(&mut encryption_seed);
        provisioned.push(Provisioned {
            key,
            credentials: DeviceCredentials::new(id, KEY_ID, mac),
            encryption_seed,
        });
    }
    drop(fleet_key);
    let provisioning = t.elapsed();
    let ksk_stored_bytes = device_ksks.first().map_or(0, |(_, k)| k.stored_bytes());

    // Cloud: the per-device keys decompressed and transformed ahead of their frames (steady state).
    let t = Instant::now();
    let ksks: HashMap<u64, GlweKskSpectra> = device_ksks.iter().map(|(id, ksk)| (*id, ksk.spectra())).collect();
    let ksk_decompression = t.elapsed();

    // Adapter: a TCP listener on loopback; one reader thread per connection feeds the intake thread.
    let listener = TcpListener::bind("127.0.0.1:0").expect("loopback");
    let address = listener.local_addr().expect("bound");
    let meters = config.meters.len();
    let adapter = std::thread::spawn(move || {
        let (sender, frames) = mpsc::channel::<Vec<u8>>();
        for _ in 0..meters {
            let (socket, _) = listener.accept().expect("a meter connects");
            let sender = sender.clone();
            std::thread::spawn(move || {
                let mut reader = FrameReader::new(socket);
                loop {
                    match reader.next_frame() {
                        Ok(Some(frame)) => sender.send(frame.to_vec()).expect("intake thread alive"),
                        Ok(None) => break,
                        Err(e) => {
                            eprintln!("[adapter] connection dropped: {e}");
                            break;
                        }
                    }
                }
            });
        }
        drop(sender);
        let mut intake = Intake::new(IntakeConfig::default(), registry);
        let mut opened: Vec<(IntegerFrame, Duration)> = Vec::new();
        for frame in frames {
            let t = Instant::now();
            match intake.receive_integer(&frame) {
                Ok(integer) => opened.push((integer, t.elapsed())),
                Err(e) => eprintln!("[adapter] frame rejected: {e}"),
            }
        }
        opened
    });

    // Meters: each in its own thread, over its own connection.
    let clear: Vec<Vec<u16>> = (0..meters)
        .map(|i| {
            let mut sensor = Blake2bXof::seed_from_u64(config.sensor_seed.wrapping_add(i as u64));
            (0..config.readings).map(|_| sensor.next_u32() as u16).collect()
        })
        .collect();
    let body_bits = config.body_bits;
    let senders: Vec<_> = provisioned
        .into_iter()
        .zip(clear.clone())
        .map(|(meter, readings)| std::thread::spawn(move || run_meter(meter, &readings, body_bits, address)))
        .collect();
    let sent: Vec<Sent> = senders.into_iter().map(|s| s.join().expect("meter thread")).collect();
    let mut opened = adapter.join().expect("adapter thread");
    opened.sort_by_key(|(f, _)| (f.header.device_id, f.header.sequence));

    // Adapter: frames to FheUint16, per meter in reading order.
    let extractor = IntegerExtractor::new();
    let mut readings: Vec<FheUint16> = Vec::new();
    let mut reports = Vec::new();
    for ((s, mode), values) in sent.iter().zip(&config.meters).zip(clear) {
        let frames: Vec<&(IntegerFrame, Duration)> =
            opened.iter().filter(|(f, _)| f.header.device_id == s.id).collect();
        let t = Instant::now();
        let mut count = 0;
        for (frame, _) in &frames {
            let n = frame.readings(READING_BITS);
            let cts = match mode {
                // Under the client key's GLWE key already: extraction only.
                KeyMode::Fleet | KeyMode::PublicKey => {
                    extractor.extract_readings_par::<FheUint16Id, _>(&frame.ciphertext, 0, n)
                }
                KeyMode::PerDevice => {
                    let switched = keyswitch_frame(&ksks[&s.id], &frame.ciphertext).expect("the set's shape");
                    extractor.extract_readings_par::<FheUint16Id, _>(&switched, 0, n)
                }
            }
            .expect("the frame holds n readings");
            count += cts.len();
            readings.extend(cts);
        }
        let extraction = t.elapsed();
        assert_eq!(count, values.len(), "meter {}: readings received", s.id);
        reports.push(MeterReport {
            id: s.id,
            mode: *mode,
            readings: values,
            frames: s.frames,
            frame_bytes: s.frame_bytes,
            encryption: s.encryption,
            intake: frames.iter().map(|(_, t)| *t).sum(),
            extraction,
        });
    }
    drop(ksks);

    // Cloud: tfhe-rs's high-level API on the readings of every meter.
    set_server_key(server_key);
    let total = readings.len();
    let mut ops = Vec::new();
    let t = Instant::now();
    let wide: Vec<FheUint32> = readings.iter().map(|r| r.clone().cast_into()).collect();
    ops.push((format!("cast {total} FheUint16 -> FheUint32"), t.elapsed()));
    let t = Instant::now();
    let sum: FheUint32 = wide.iter().sum();
    ops.push((format!("sum of {total} FheUint32"), t.elapsed()));
    let t = Instant::now();
    let mean = &sum / total as u32;
    ops.push((format!("mean: FheUint32 sum / {total} (scalar division)"), t.elapsed()));
    let value_bytes_device = safe_serialized_size(&readings[0]).expect("serializable");
    let t = Instant::now();
    let (max, first_max) = tree_max(readings);
    ops.push((format!("max of {total} FheUint16 ({} max ops)", total - 1), t.elapsed()));

    // Peers in the same run: tfhe-rs's own encryption of one meter's readings, and one max on it.
    let first = &reports[0].readings;
    let t = Instant::now();
    let own: Vec<FheUint16> = first.iter().map(|&r| FheUint16::encrypt(r, &client_key)).collect();
    let peer_encryption = t.elapsed();
    let value_bytes_tfhe = safe_serialized_size(&own[0]).expect("serializable");
    let t = Instant::now();
    let _ = own[0].max(&own[own.len().min(2) - 1]);
    let peer_max = t.elapsed();

    // Trusted party: decrypt and check against the clear answers.
    let t = Instant::now();
    let sum_d: u32 = sum.decrypt(&client_key);
    let mean_d: u32 = mean.decrypt(&client_key);
    let max_d: u16 = max.decrypt(&client_key);
    let decryption = t.elapsed();
    let all: Vec<u16> = reports.iter().flat_map(|m| m.readings.iter().copied()).collect();
    let sum_clear: u64 = all.iter().map(|&r| u64::from(r)).sum();
    let answers = vec![
        Answer {
            name: "sum (FheUint32)",
            decrypted: u64::from(sum_d),
            expected: sum_clear,
        },
        Answer {
            name: "mean, rounded down (FheUint32)",
            decrypted: u64::from(mean_d),
            expected: sum_clear / all.len() as u64,
        },
        Answer {
            name: "maximum (FheUint16)",
            decrypted: u64::from(max_d),
            expected: u64::from(all.iter().copied().max().unwrap_or(0)),
        },
    ];
    JobReport {
        body_bits: config.body_bits,
        keygen,
        provisioning,
        public_key_bytes,
        ksk_decompression,
        ksk_stored_bytes,
        meters: reports,
        ops,
        peer_encryption,
        value_bytes: (value_bytes_device, value_bytes_tfhe),
        max_op: (first_max, peer_max),
        decryption,
        answers,
    }
}

/// The maximum of `values` by pairwise rounds (each `max` parallel inside tfhe-rs; running a round's pairs
/// on rayon's pool as well was no faster on 2 cores), and the time of the first `max`.
fn tree_max(mut values: Vec<FheUint16>) -> (FheUint16, Duration) {
    let mut first = None;
    while values.len() > 1 {
        let mut next = Vec::with_capacity(values.len().div_ceil(2));
        let mut pairs = values.chunks_exact(2);
        for pair in pairs.by_ref() {
            let t = Instant::now();
            next.push(pair[0].max(&pair[1]));
            first.get_or_insert(t.elapsed());
        }
        next.extend(pairs.remainder().iter().cloned());
        values = next;
    }
    (values.pop().expect("at least one reading"), first.unwrap_or_default())
}

/// One meter: encrypts its readings (little-endian bytes) as one message and sends its frames: seeded
/// integer frames with `body_bits`-bit bodies under a secret key, or public-key frames (full bodies).
fn run_meter(meter: Provisioned, readings: &[u16], body_bits: u32, address: SocketAddr) -> Sent {
    let Provisioned {
        key,
        credentials,
        mut encryption_seed,
    } = meter;
    let mut encryptor: Box<dyn FrameEncryptor> = match key {
        MeterKey::Secret(key) => {
            let mut encryptor = Box::new(IntegerEncryptor::<N>::EMPTY);
            encryptor
                .set_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &key)
                .expect("a key of the set");
            drop(key);
            encryptor.set_body_bits(body_bits).expect("a width the set allows");
            encryptor.seed_from_bytes(&mut encryption_seed);
            encryptor
        }
        MeterKey::Public(file) => {
            // As from a credential file: the key set's public key, bound to the meter's key id.
            let (header, body) = public_key_body(&file, credentials.key_id()).expect("the key set's public key");
            let mut encryptor = Box::new(IntegerPublicKeyEncryptor::<N>::EMPTY);
            encryptor
                .set_integer_public_key_le_bytes(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &header.seed, body)
                .expect("a public key of the set");
            encryptor.seed_from_bytes(&mut encryption_seed);
            encryptor
        }
    };
    // Sequence numbers never repeat: firmware restores the counter from a persisted high-water mark or a
    // boot counter; this run is boot 0.
    let mut counter = FrameCounter::from_boot_counter(0);
    let bytes: Vec<u8> = readings.iter().flat_map(|r| r.to_le_bytes()).collect();
    let t = Instant::now();
    let message = encryptor.begin_message(&mut counter, bytes.len()).expect("counter");
    let frames: Vec<Vec<u8>> = chunks(&bytes, encryptor.chunk_bytes())
        .map(|chunk| {
            // A secret-key frame's full body is computed in the frame buffer before it is compacted.
            let mut out = vec![0u8; encryptor.frame_buffer_len()];
            let len = encryptor
                .encrypt_frame_into(&credentials, &message, &chunk, &mut out)
                .expect("encrypts");
            out.truncate(len);
            out
        })
        .collect();
    let encryption = t.elapsed();
    let mut socket = TcpStream::connect(address).expect("adapter listening");
    for frame in &frames {
        write_frame(&mut socket, frame).expect("sent");
    }
    Sent {
        id: credentials.device_id(),
        frames: frames.len(),
        frame_bytes: frames.iter().map(Vec::len).sum(),
        encryption,
    }
}
