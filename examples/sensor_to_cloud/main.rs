//! The main job, end to end: several devices encrypt 8-bit sensor readings and send authenticated v2 frames
//! over TCP to one adapter, which authenticates, reassembles, extracts (and key-switches where the set needs
//! it) and computes an encrypted alarm bit "some reading of some device exceeded the threshold" with tfhe-rs
//! gates. The trusted party decrypts the alarm and prints it next to the plaintext answer.
//!
//! By default three devices use per-device keys and one uses the public key, on `TFHE_LIB_PARAMETERS`.
//! `--mode` and `--parameters` select the others (`-- --help`).
//!
//! `--integers` runs the integer job instead (`integers.rs`): meters (per-device and public-key, one fleet
//! meter for comparison) send 16-bit readings that the cloud sums, averages and maximizes as tfhe-rs
//! `FheUint16`/`FheUint32`.
//!
//! Run: `cargo run --release --example sensor_to_cloud` (`-- --integers`)
#![allow(clippy::unwrap_used)]

mod integers;

use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rand_core::{Rng, SeedableRng};
use rayon::prelude::*;
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::server_key::{BinaryBooleanGates, ServerKey};
use tfhe_sbc_adapter::intake::{IntakeConfig, Message, Received};
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet, generate_keys, glwe_key_from_client_key};
use tfhe_sbc_adapter::interop::big_key_per_device::provision_big_key_per_device;
use tfhe_sbc_adapter::interop::boolean_circuits::greater_than_public;
use tfhe_sbc_adapter::interop::{
    BooleanBridge, provision_fleet_device, provision_per_device, public_key_from_client_key,
};
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, DeviceRecord, KeyStore, KeyedIntake};
use tfhe_sbc_adapter::stream::{FrameReader, write_frame};
use tfhe_sbc_core::entities::GlweSecretKeyOwned;
use tfhe_sbc_core::parameters::GlweParameters;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::files::public_key::decode_public_key;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};
use tracing::{debug, info, warn};

/// The command line.
#[derive(Parser, Debug)]
#[command(about = "tfhe-sbc end to end: devices -> TCP -> adapter -> tfhe-rs gates -> trusted party")]
struct Args {
    /// Run the integer job: 16-bit readings into tfhe-rs `FheUint16`, their sum, mean and maximum. `--devices`
    /// meters with `--readings` readings each; `--mode mixed` (the default) uses the secure modes, per-device
    /// and public key, with one fleet meter for comparison (4 meters: 2 per-device, 1 public-key, 1 fleet).
    #[arg(long, conflicts_with_all = ["parameters", "threshold"])]
    integers: bool,
    /// With `--integers`: secret-key frames carry full 64-bit bodies instead of the set's compact 14-bit ones
    /// (public-key frames always do).
    #[arg(long, requires = "integers")]
    full_body: bool,
    /// How the devices encrypt: `mixed` is three per-device devices and one public-key device.
    #[arg(long, value_enum, default_value_t = Mode::Mixed)]
    mode: Mode,
    /// The tfhe-rs boolean parameter set.
    #[arg(long, value_enum, default_value_t = Parameters::TfheLib)]
    parameters: Parameters,
    /// How many devices (modes other than `mixed`; meters with `--integers`).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(1..=16))]
    devices: u8,
    /// 8-bit readings per device (16-bit with `--integers`).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=512))]
    readings: u16,
    /// The alarm fires when some reading is above this.
    #[arg(long, default_value_t = 200)]
    threshold: u8,
    /// Seed of the simulated sensors (the keys and the encryption randomness come from the OS).
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// Key modes (`docs/security.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Three per-device devices and one public-key device.
    Mixed,
    /// Every device holds the client key's GLWE key (the paper's mode).
    Fleet,
    /// Every device has its own key; the cloud key-switches with a per-device key (per bit into the small key
    /// on TFHE_LIB, once per frame into the big key on the KS_PBS sets).
    PerDevice,
    /// Every device holds only the public key.
    PublicKey,
}

/// tfhe-rs boolean parameter sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Parameters {
    /// TFHE_LIB_PARAMETERS: N = 1024, k = 1, about 120 bits, a key switch per bit at intake.
    TfheLib,
    /// DEFAULT_PARAMETERS_KS_PBS: N = 512, k = 3, 128 bits, no key switch at intake.
    #[value(name = "ks-pbs-512")]
    KsPbs512,
    /// PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS: N = 1024, k = 2, 128 bits, no key switch at intake.
    #[value(name = "ks-pbs-1024")]
    KsPbs1024,
}

impl Parameters {
    fn set(self) -> BooleanSet {
        match self {
            Self::TfheLib => BooleanSet::TfheLib,
            Self::KsPbs512 => BooleanSet::DefaultKsPbs,
            Self::KsPbs1024 => BooleanSet::ErrorProb2m165KsPbs,
        }
    }
}

/// The mode each device runs in.
fn device_modes(args: &Args) -> Vec<Mode> {
    match args.mode {
        Mode::Mixed => vec![Mode::PerDevice, Mode::PerDevice, Mode::PerDevice, Mode::PublicKey],
        mode => vec![mode; usize::from(args.devices)],
    }
}

/// What one device is given at provisioning.
enum Provisioned {
    SecretKey(GlweSecretKeyOwned, DeviceCredentials),
    PublicKey([u8; 32], Vec<u32>, DeviceCredentials),
}

/// What the device reports after sending.
struct DeviceReport {
    id: u64,
    mode: Mode,
    readings: Vec<u8>,
    frames: usize,
    bytes: usize,
    encryption: Duration,
}

const KEY_ID: u32 = 1;

fn main() {
    let args = Args::parse();
    // RUST_LOG if set, else warnings only.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .init();
    if args.integers {
        run_integers(&args);
        return;
    }
    let modes = device_modes(&args);
    let set = args.parameters.set();
    let params = set.glwe_parameters();

    // Trusted party: tfhe-rs keys, then each device's credentials.
    let spinner =
        ProgressBar::new_spinner().with_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").unwrap());
    spinner.set_message(format!("[trusted party] generating tfhe-rs boolean keys ({set:?})"));
    spinner.enable_steady_tick(Duration::from_millis(100));
    let t = Instant::now();
    let mut os = tfhe_sbc_device::csprng::seeding::from_os_entropy().unwrap();
    let (client_key, server_key) = generate_keys(set, &mut os);
    spinner.finish_and_clear();
    println!("[trusted party] tfhe-rs keys for {set:?} in {:.2?}", t.elapsed());

    let t = Instant::now();
    let mut store = KeyStore::new(&server_key);
    let mut provisioned = Vec::new();
    let public_key = modes
        .contains(&Mode::PublicKey)
        .then(|| make_public_key(set, &params, &client_key, &mut os));
    for (i, &mode) in modes.iter().enumerate() {
        let id = 100 + i as u64;
        match (mode, set) {
            (Mode::PerDevice, _) | (Mode::Fleet, BooleanSet::TfheLib) => {
                let (secrets, record) = match mode {
                    // On the big-key sets: the device's own key of the set's shape, switched into the big key
                    // once per frame at intake.
                    Mode::PerDevice if set.is_big_key() => {
                        provision_big_key_per_device(set, &client_key, id, KEY_ID, &mut os).unwrap()
                    }
                    Mode::PerDevice => provision_per_device(&client_key, id, KEY_ID, &mut os).unwrap(),
                    _ => provision_fleet_device(&client_key, id, KEY_ID, &mut os).unwrap(),
                };
                store.insert(record).unwrap();
                provisioned.push(Provisioned::SecretKey(secrets.key, secrets.credentials));
            }
            (Mode::Fleet, _) => {
                let key = glwe_key_from_client_key(set, &client_key).unwrap();
                let (device, server) = credential_pair(id, &mut os);
                let record = DeviceRecord::with_parameter_set(server, params.id(), DeviceKeyMaterial::Fleet).unwrap();
                store.insert(record).unwrap();
                provisioned.push(Provisioned::SecretKey(key, device));
            }
            (Mode::PublicKey, _) => {
                let (seed, body) = public_key.as_ref().unwrap();
                let (device, server) = credential_pair(id, &mut os);
                let record =
                    DeviceRecord::with_parameter_set(server, params.id(), DeviceKeyMaterial::PublicKey).unwrap();
                store.insert(record).unwrap();
                provisioned.push(Provisioned::PublicKey(*seed, body.clone(), device));
            }
            (Mode::Mixed, _) => unreachable!("expanded by device_modes"),
        }
    }
    println!(
        "[trusted party] provisioned {} devices in {:.2?} ({})",
        modes.len(),
        t.elapsed(),
        summary(&modes)
    );

    // Adapter: a TCP listener on loopback; one reader thread per connection feeds the intake thread.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let device_count = modes.len();
    let device_ids: Vec<u64> = (0..device_count as u64).map(|i| 100 + i).collect();
    let adapter = std::thread::spawn(move || {
        let (sender, frames) = mpsc::channel::<Vec<u8>>();
        for _ in 0..device_count {
            let (socket, peer) = listener.accept().unwrap();
            debug!(%peer, "device connected");
            let sender = sender.clone();
            std::thread::spawn(move || {
                let mut reader = FrameReader::new(socket);
                loop {
                    match reader.next_frame() {
                        Ok(Some(frame)) => sender.send(frame.to_vec()).unwrap(),
                        Ok(None) => break,
                        Err(e) => {
                            warn!(%peer, error = %e, "connection dropped");
                            break;
                        }
                    }
                }
            });
        }
        drop(sender);
        let mut intake = AdapterIntake::new(set, store, &server_key);
        // Steady state: the per-device key-switching keys are decompressed before the frames arrive (the
        // first use of a key costs about 45 ms on 2 cores; benches/intake.rs measures it).
        intake.prefetch(&device_ids);
        let mut received = Vec::new();
        for frame in frames {
            let t = Instant::now();
            match intake.receive(&frame) {
                Ok(Some((message, bits))) => {
                    let cost = t.elapsed();
                    info!(device = message.device_id, bits = bits.len(), ?cost, "message complete");
                    received.push((message.device_id, frame.len(), bits, cost));
                }
                Ok(None) => {}
                Err(e) => warn!(error = %e, "frame rejected"),
            }
        }
        (received, server_key)
    });

    // Devices: each in its own thread, over its own connection.
    let readings = usize::from(args.readings);
    let devices: Vec<_> = provisioned
        .into_iter()
        .zip(&modes)
        .enumerate()
        .map(|(i, (provisioned, &mode))| {
            let mut sensor = Blake2bXof::seed_from_u64(args.seed.wrapping_add(i as u64));
            let values: Vec<u8> = (0..readings).map(|_| 20 + (sensor.next_u32() % 200) as u8).collect();
            std::thread::spawn(move || run_device(set, &params, mode, provisioned, values, address))
        })
        .collect();
    let reports: Vec<DeviceReport> = devices.into_iter().map(|d| d.join().unwrap()).collect();
    let (received, server_key) = adapter.join().unwrap();

    // Per-device report.
    println!(
        "\n device | mode       | readings | frames | bytes sent | per-bit TLWE bytes | encryption | intake per bit"
    );
    let mut all_bits: Vec<Ciphertext> = Vec::new();
    for report in &reports {
        let (_, _, bits, cost) = received
            .iter()
            .find(|(id, ..)| *id == report.id)
            .expect("every message arrived");
        let lwe_bytes = 8 * report.readings.len() * (params.glwe_dimension().0 * params.polynomial_size().0 + 1) * 4;
        println!(
            " {:>6} | {:<10} | {:>8} | {:>6} | {:>10} | {:>18} | {:>10.2?} | {:>10.2?}",
            report.id,
            format!("{:?}", report.mode),
            report.readings.len(),
            report.frames,
            report.bytes,
            lwe_bytes,
            report.encryption,
            *cost / bits.len() as u32
        );
        all_bits.extend(bits.iter().cloned());
    }

    // Cloud: the alarm with tfhe-rs gates, readings compared in parallel.
    let readings_total = all_bits.len() / 8;
    let bar = ProgressBar::new(readings_total as u64).with_style(
        ProgressStyle::with_template("[adapter] tfhe-rs gates {bar:30} {pos}/{len} readings {elapsed}").unwrap(),
    );
    let t = Instant::now();
    let above: Vec<Ciphertext> = all_bits
        .par_chunks_exact(8)
        .map(|reading| {
            let gt = greater_than_public(&server_key, reading, args.threshold);
            bar.inc(1);
            gt
        })
        .collect();
    let alarm = above
        .into_iter()
        .reduce(|a, b| server_key.or(&a, &b))
        .unwrap_or_else(|| server_key.trivial_encrypt(false));
    bar.finish_and_clear();
    println!(
        "\n[adapter] {} bootstrapped gates on {readings_total} readings from {} devices in {:.2?}",
        9 * readings_total - 1,
        reports.len(),
        t.elapsed()
    );

    // Trusted party: decrypt the alarm.
    let decrypted = client_key.decrypt(&alarm);
    let expected = reports.iter().flat_map(|r| &r.readings).any(|&r| r > args.threshold);
    println!(
        "[trusted party] alarm (some reading > {}): encrypted result {decrypted}, plaintext answer {expected} -> {}",
        args.threshold,
        if decrypted == expected { "correct" } else { "WRONG" }
    );
    assert_eq!(decrypted, expected);
}

/// The integer job (`--integers`): exits non-zero if a decrypted answer is wrong.
fn run_integers(args: &Args) {
    let devices = usize::from(args.devices);
    let meters = match args.mode {
        Mode::Mixed => integers::default_meters(devices),
        Mode::Fleet => vec![integers::KeyMode::Fleet; devices],
        Mode::PerDevice => vec![integers::KeyMode::PerDevice; devices],
        Mode::PublicKey => vec![integers::KeyMode::PublicKey; devices],
    };
    let config = integers::JobConfig {
        meters,
        readings: usize::from(args.readings),
        sensor_seed: args.seed,
        key_seed: None,
        body_bits: if args.full_body {
            64
        } else {
            integers::compact_body_bits()
        },
    };
    let t = Instant::now();
    let report = integers::run(&config);
    report.print();
    println!("\n[integer job] {:.2?} in all", t.elapsed());
    if !report.all_correct() {
        std::process::exit(1);
    }
}

fn summary(modes: &[Mode]) -> String {
    [Mode::Fleet, Mode::PerDevice, Mode::PublicKey]
        .iter()
        .filter_map(|m| {
            let n = modes.iter().filter(|x| *x == m).count();
            (n > 0).then(|| format!("{n} {m:?}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A device's credentials and the adapter's copy of them.
fn credential_pair(id: u64, rng: &mut Blake2bXof) -> (DeviceCredentials, DeviceCredentials) {
    let mac = MacKey::generate(rng);
    let copy = MacKey::from_bytes(*mac.as_bytes());
    (
        DeviceCredentials::new(id, KEY_ID, mac),
        DeviceCredentials::new(id, KEY_ID, copy),
    )
}

/// The trusted party's seeded public key under the client key's GLWE key, as the device reads it.
fn make_public_key(
    set: BooleanSet,
    params: &GlweParameters,
    client_key: &ClientKey,
    rng: &mut Blake2bXof,
) -> ([u8; 32], Vec<u32>) {
    let file = public_key_from_client_key(set, client_key, KEY_ID, rng).unwrap();
    let mut body = vec![0u32; params.polynomial_size().0];
    let header = decode_public_key(&file, &mut body).unwrap();
    (header.seed, body)
}

/// One device: encrypts its readings as one message and sends the frames.
fn run_device(
    set: BooleanSet,
    params: &GlweParameters,
    mode: Mode,
    provisioned: Provisioned,
    readings: Vec<u8>,
    address: std::net::SocketAddr,
) -> DeviceReport {
    let frames = match set {
        BooleanSet::TfheLib => encrypt_frames::<1024, 1>(params, provisioned, &readings),
        BooleanSet::DefaultKsPbs => encrypt_frames::<512, 3>(params, provisioned, &readings),
        _ => encrypt_frames::<1024, 2>(params, provisioned, &readings),
    };
    let (id, frames, encryption) = frames;
    let mut socket = TcpStream::connect(address).unwrap();
    let mut bytes = 0;
    for frame in &frames {
        write_frame(&mut socket, frame).unwrap();
        bytes += frame.len() + 4;
    }
    DeviceReport {
        id,
        mode,
        readings,
        frames: frames.len(),
        bytes,
        encryption,
    }
}

/// The frames of `readings` (one message), and the time the encryption took.
fn encrypt_frames<const N: usize, const K: usize>(
    params: &GlweParameters,
    provisioned: Provisioned,
    readings: &[u8],
) -> (u64, Vec<Vec<u8>>, Duration) {
    // Sequence numbers never repeat: firmware restores the counter from a persisted high-water mark or a
    // boot counter; this run is boot 0.
    let mut counter = FrameCounter::from_boot_counter(0);
    let rng = tfhe_sbc_device::csprng::seeding::from_os_entropy().unwrap();
    let mut body = [0u32; N];
    let t = Instant::now();
    let mut frames = Vec::new();
    let id = match provisioned {
        Provisioned::SecretKey(key, credentials) => {
            let mut encryptor = Box::new(GlweEncryptor::<N, K>::new(params, &key, rng).unwrap());
            let message = encryptor.begin_message(&mut counter, readings.len()).unwrap();
            let mut out = vec![0u8; frame_bytes(FrameKind::Seeded, K, N, 32, 32)];
            for chunk in chunks(readings, N / 8) {
                let len = encryptor
                    .encrypt_seeded_frame(&credentials, &message, &chunk, &mut body, &mut out)
                    .unwrap();
                frames.push(out[..len].to_vec());
            }
            credentials.device_id()
        }
        Provisioned::PublicKey(seed, pk_body, credentials) => {
            let mut encryptor = Box::new(PublicKeyEncryptor::<N, K>::new(params, &seed, &pk_body, rng).unwrap());
            let message = counter.begin_message(readings.len(), N / 8).unwrap();
            let mut mask = vec![0u32; K * N];
            let mut out = vec![0u8; frame_bytes(FrameKind::PublicKey, K, N, 32, 32)];
            for chunk in chunks(readings, N / 8) {
                let len = encryptor
                    .encrypt_public_key_frame(&credentials, &message, &chunk, &mut mask, &mut body, &mut out)
                    .unwrap();
                frames.push(out[..len].to_vec());
            }
            credentials.device_id()
        }
    };
    (id, frames, t.elapsed())
}

/// The adapter's keyed intake for the chosen set: with a key switch per bit (TFHE_LIB), or extraction only.
enum AdapterIntake {
    KeySwitched(KeyedIntake<BooleanBridge>),
    BigKey(KeyedIntake<BigKeyBridge>),
}

impl AdapterIntake {
    fn new(set: BooleanSet, store: KeyStore, server_key: &ServerKey) -> Self {
        let config = IntakeConfig::default();
        if set == BooleanSet::TfheLib {
            let bridge = BooleanBridge::new(server_key).unwrap();
            Self::KeySwitched(KeyedIntake::new(config, store, bridge).unwrap())
        } else {
            let bridge = BigKeyBridge::for_server_key(set, server_key).unwrap();
            Self::BigKey(KeyedIntake::new(config, store, bridge).unwrap())
        }
    }

    /// Decompresses the per-device key-switching keys of `devices` ahead of use.
    fn prefetch(&self, devices: &[u64]) {
        if let Self::KeySwitched(intake) = self {
            for &id in devices {
                if intake.converter().key_mode(id).is_some() {
                    intake.converter().prefetch(id).unwrap();
                }
            }
        }
    }

    /// The gate inputs of a completed message.
    fn receive(&mut self, frame: &[u8]) -> Result<Option<(Message, Vec<Ciphertext>)>, String> {
        let now = Instant::now();
        let received = match self {
            Self::KeySwitched(intake) => intake.receive(frame, now),
            Self::BigKey(intake) => intake.receive(frame, now),
        }
        .map_err(|e| e.to_string())?;
        let Received::Complete(message) = received else {
            return Ok(None);
        };
        let bits = match self {
            Self::KeySwitched(intake) => intake.convert(&message),
            Self::BigKey(intake) => intake.convert(&message),
        }
        .map_err(|e| e.to_string())?;
        Ok(Some((message, bits)))
    }
}
