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

mod meter;
mod report;

use indicatif::{ProgressBar, ProgressStyle};
use meter::{MeterKey, Provisioned, Sent, run_meter};
use rand_core::{Rng, SeedableRng};
pub use report::{Answer, JobReport, MeterReport};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::net::TcpListener;
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
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

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
    let progress = step("[trusted party] generating tfhe-rs's integer keys (ClientKey, ServerKey)");
    let t = Instant::now();
    let tfhe_config = ConfigBuilder::default().build();
    let client_key = match config.key_seed {
        Some(seed) => ClientKey::generate_with_seed(tfhe_config, Seed(u128::from(seed))),
        None => ClientKey::generate(tfhe_config),
    };
    let server_key = client_key.generate_server_key();
    let keygen = t.elapsed();
    progress.finish_and_clear();

    // Trusted party: per meter, MAC credentials (the adapter gets a copy) and a key: the meter's own with a
    // seeded key-switching key for the cloud (per-device), the key set's public key (one for all public-key
    // meters), or the client key's GLWE key (fleet).
    let progress =
        step("[trusted party] provisioning the meters (MAC keys, per-device keys and their KSKs, public key)");
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
    progress.finish_and_clear();
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
    let progress = step(&format!(
        "[meters] {meters} meters encrypting and sending {} readings each",
        config.readings
    ));
    let senders: Vec<_> = provisioned
        .into_iter()
        .zip(clear.clone())
        .map(|(meter, readings)| std::thread::spawn(move || run_meter(meter, &readings, body_bits, address)))
        .collect();
    let sent: Vec<Sent> = senders.into_iter().map(|s| s.join().expect("meter thread")).collect();
    let mut opened = adapter.join().expect("adapter thread");
    opened.sort_by_key(|(f, _)| (f.header.device_id, f.header.sequence));
    progress.finish_and_clear();
    let progress = step("[adapter] frames to FheUint16 (extraction; a GLWE key switch per per-device frame)");

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
    progress.finish_and_clear();

    // Cloud: tfhe-rs's high-level API on the readings of every meter.
    set_server_key(server_key);
    let total = readings.len();
    let mut ops = Vec::new();
    let progress = step(&format!("[cloud] tfhe-rs on {total} readings: cast, sum, mean, max"));
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
    progress.set_message(format!(
        "[cloud] tfhe-rs: max of {total} FheUint16 ({} max ops)",
        total - 1
    ));
    let t = Instant::now();
    let (max, first_max) = tree_max(readings);
    ops.push((format!("max of {total} FheUint16 ({} max ops)", total - 1), t.elapsed()));
    progress.set_message("[cloud] tfhe-rs's own encryption of one meter's readings (the peer)".to_owned());

    // Peers in the same run: tfhe-rs's own encryption of one meter's readings, and one max on it.
    let first = &reports[0].readings;
    // Warm, as the meter's time is: one encryption first, not timed.
    let _ = FheUint16::encrypt(first[0], &client_key);
    let t = Instant::now();
    let own: Vec<FheUint16> = first.iter().map(|&r| FheUint16::encrypt(r, &client_key)).collect();
    let peer_encryption = t.elapsed();
    let value_bytes_tfhe = safe_serialized_size(&own[0]).expect("serializable");
    let t = Instant::now();
    let _ = own[0].max(&own[own.len().min(2) - 1]);
    let peer_max = t.elapsed();
    progress.finish_and_clear();

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

/// A spinner on standard error for one long step, with its elapsed time (drawn only on a terminal; to a
/// log or a pipe, the step's message as one line, so that a redirected run still shows where it is).
fn step(message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        eprintln!("{message} ...");
    }
    let spinner = ProgressBar::new_spinner()
        .with_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("a valid template"));
    spinner.set_message(message.to_owned());
    spinner.enable_steady_tick(Duration::from_millis(100));
    spinner
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
