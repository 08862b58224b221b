//! The main job, end to end: several devices encrypt 8-bit sensor readings and send authenticated v2 frames
//! over TCP to one adapter, which authenticates, reassembles, extracts (and key-switches where the set needs
//! it) and computes an encrypted alarm bit "some reading of some device exceeded the threshold" with tfhe-rs
//! gates. The trusted party decrypts the alarm and prints it next to the plaintext answer.
//!
//! By default three devices use per-device keys and one uses the public key, on `TFHE_LIB_PARAMETERS`.
//! `--mode` and `--parameters` select the others (`-- --help`).
//!
//! `--integers` runs the integer job instead (`integers/`): meters (per-device and public-key, one fleet
//! meter for comparison) send 16-bit readings that the cloud sums, averages and maximizes as tfhe-rs
//! `FheUint16`/`FheUint32`.
//!
//! Run: `cargo run --release --example sensor_to_cloud` (`-- --integers`)
#![allow(clippy::unwrap_used)]

mod devices;
mod integers;

use clap::{Parser, ValueEnum};
use devices::DeviceReport;
use indicatif::{ProgressBar, ProgressStyle};
use rand_core::{Rng, SeedableRng};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::server_key::BinaryBooleanGates;
use tfhe_sbc_adapter::intake::{IntakeConfig, Received};
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet, generate_keys};
use tfhe_sbc_adapter::interop::boolean_circuits::greater_than_public;
use tfhe_sbc_adapter::interop::{BooleanBridge, Converter, Messages};
use tfhe_sbc_adapter::key_store::{KeyStore, KeyedIntake};
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
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
    /// DEFAULT_PARAMETERS_KS_PBS: N = 512, k = 3, 128 bits, no key switch at intake for fleet and public-key
    /// devices, one GLWE key switch per frame for per-device ones.
    #[value(name = "ks-pbs-512")]
    KsPbs512,
    /// PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS: N = 1024, k = 2, 128 bits, no key switch at intake for fleet and public-key
    /// devices, one GLWE key switch per frame for per-device ones.
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
        mode @ (Mode::Fleet | Mode::PerDevice | Mode::PublicKey) => vec![mode; usize::from(args.devices)],
    }
}

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
    let message = format!("[trusted party] generating tfhe-rs boolean keys ({set:?})");
    // indicatif draws only on a terminal: to a log or a pipe, the step as one line.
    if !std::io::stderr().is_terminal() {
        eprintln!("{message} ...");
    }
    spinner.set_message(message);
    spinner.enable_steady_tick(Duration::from_millis(100));
    let t = Instant::now();
    let mut os = tfhe_sbc_device::csprng::seeding::from_os_entropy().unwrap();
    let (client_key, server_key) = generate_keys(set, &mut os);
    spinner.finish_and_clear();
    println!("[trusted party] tfhe-rs keys for {set:?} in {:.2?}", t.elapsed());

    let t = Instant::now();
    let mut store = KeyStore::new(&server_key);
    let credential_files = devices::provision(set, &modes, &client_key, &mut store, &mut os);
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
        let config = IntakeConfig::default();
        let received = match set {
            BooleanSet::TfheLib => {
                let bridge = BooleanBridge::new(&server_key).unwrap();
                // Steady state: the per-device key-switching keys are decompressed before the frames arrive
                // (the first use of a key costs about 45 ms on 2 cores; benches/intake.rs measures it).
                for id in (0..device_count as u64).map(|i| devices::FIRST_ID + i) {
                    if bridge.key_mode(id).is_some() {
                        bridge.prefetch(id).unwrap();
                    }
                }
                receive_all(KeyedIntake::new(config, store, bridge).unwrap(), frames)
            }
            BooleanSet::DefaultKsPbs | BooleanSet::ErrorProb2m165KsPbs => {
                let bridge = BigKeyBridge::for_server_key(set, &server_key).unwrap();
                receive_all(KeyedIntake::new(config, store, bridge).unwrap(), frames)
            }
        };
        (received, server_key)
    });

    // Devices: each in its own thread, over its own connection.
    let readings = usize::from(args.readings);
    let devices: Vec<_> = credential_files
        .into_iter()
        .enumerate()
        .map(|(i, file)| {
            let mut sensor = Blake2bXof::seed_from_u64(args.seed.wrapping_add(i as u64));
            let values: Vec<u8> = (0..readings).map(|_| 20 + (sensor.next_u32() % 200) as u8).collect();
            std::thread::spawn(move || devices::run_device(&file, values, address))
        })
        .collect();
    let reports: Vec<DeviceReport> = devices.into_iter().map(|d| d.join().unwrap()).collect();
    let (received, server_key) = adapter.join().unwrap();

    // Per-device report.
    println!(
        "\n device | mode       | readings | frames | bytes sent | per-bit TLWE bytes | encryption | intake per bit"
    );
    let mut all_bits: Vec<Ciphertext> = Vec::new();
    for (report, mode) in reports.iter().zip(&modes) {
        let (_, _, bits, cost) = received
            .iter()
            .find(|(id, ..)| *id == report.id)
            .expect("every message arrived");
        let lwe_bytes = 8 * report.readings.len() * (params.glwe_dimension().0 * params.polynomial_size().0 + 1) * 4;
        println!(
            " {:>6} | {:<10} | {:>8} | {:>6} | {:>10} | {:>18} | {:>10.2?} | {:>10.2?}",
            report.id,
            format!("{mode:?}"),
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
    if !std::io::stderr().is_terminal() {
        eprintln!("[adapter] tfhe-rs gates on {readings_total} readings ...");
    }
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

/// The adapter's intake thread: every frame from `frames` through `intake` (authenticated, reassembled),
/// each completed message converted into gate inputs by the set's converter; with the intake time of the
/// message's last frame and its conversion.
fn receive_all<C: Converter<Unit = Messages, Output = Vec<Ciphertext>>>(
    mut intake: KeyedIntake<C>,
    frames: mpsc::Receiver<Vec<u8>>,
) -> Vec<(u64, usize, Vec<Ciphertext>, Duration)> {
    let mut received = Vec::new();
    for frame in frames {
        let t = Instant::now();
        let message = match intake.receive(&frame, t) {
            Ok(Received::Complete(message)) => message,
            Ok(_) => continue,
            Err(e) => {
                warn!(error = %e, "frame rejected");
                continue;
            }
        };
        match intake.convert(&message) {
            Ok(bits) => {
                let cost = t.elapsed();
                info!(device = message.device_id, bits = bits.len(), ?cost, "message complete");
                received.push((message.device_id, frame.len(), bits, cost));
            }
            Err(e) => warn!(device = message.device_id, error = %e, "message not converted"),
        }
    }
    received
}
