//! The whole server-side intake of one 1024-bit frame (MAC check, header decode, mask expansion, sample
//! extraction of every bit, key switch of every bit into the tfhe-rs small key), in fleet mode (the server
//! key's key switch) and per-device mode (the device's own key, decompressed on use behind the LRU cache:
//! warm, and cold with the decompression in the timing), on 1 and 2 rayon threads, and with each of the
//! bridge's key-switching strategies. Frames per second per core are printed with a ratio table.
//!
//! Run: `cargo bench --bench intake` (`cargo test --bench intake` runs every case once).
#![allow(clippy::unwrap_used)]

mod common;

use criterion::{BatchSize, Criterion, SamplingMode};
use rand_core::SeedableRng;
use std::hint::black_box;
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};
use tfhe::boolean::client_key::ClientKey;
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::boolean_set::{BooleanSet, generate_keys};
use tfhe_sbc_adapter::interop::{
    BooleanBridge, DeviceKsk, DeviceSecrets, KEYSWITCH_BLOCK, KeySwitchStrategy, provision_fleet_device,
    provision_per_device,
};
use tfhe_sbc_adapter::key_store::{KeyStore, KeyedIntake};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, SEEDED_FRAME_BYTES_1024};

const GROUP: &str = "intake_frame_1024_bits";
const PARTS: &str = "intake_parts";
const FLEET: u64 = 1;
const PER_DEVICE: u64 = 2;
const REFERENCE: &str = "fleet, tfhe-rs keyswitch_lwe_ciphertext serial, 1 thread";

/// A device that encrypts a fresh 128-byte message into one seeded v2 frame per call.
struct Device {
    secrets: DeviceSecrets,
    encryptor: Box<GlweEncryptor<1024>>,
    counter: FrameCounter,
}

impl Device {
    fn new(secrets: DeviceSecrets, seed: u8) -> Self {
        let encryptor = Box::new(
            GlweEncryptor::<1024>::new(&TFHE_LIB_GLWE_1024, &secrets.key, Blake2bXof::from_seed([seed; 32])).unwrap(),
        );
        Self {
            secrets,
            encryptor,
            counter: FrameCounter::new(0),
        }
    }

    fn frame(&mut self) -> Vec<u8> {
        let message = [0xA5u8; 128];
        let outgoing = self.encryptor.begin_message(&mut self.counter, message.len()).unwrap();
        let chunk = chunks(&message, 128).next().unwrap();
        let mut body = [0u32; 1024];
        let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
        let len = self
            .encryptor
            .encrypt_seeded_frame(&self.secrets.credentials, &outgoing, &chunk, &mut body, &mut frame)
            .unwrap();
        frame.truncate(len);
        frame
    }

    /// The same device for a second intake (its own sequence numbers there).
    fn fork(&self, seed: u8) -> Self {
        let credentials = tfhe_sbc_device::frame::mac::DeviceCredentials::new(
            self.secrets.credentials.device_id(),
            self.secrets.credentials.key_id(),
            tfhe_sbc_device::frame::mac::MacKey::from_slice(self.secrets.credentials.mac_key().as_bytes()).unwrap(),
        );
        let key = tfhe_sbc_core::entities::GlweSecretKey::from_container(
            self.secrets.key.as_bytes().to_vec(),
            self.secrets.key.polynomial_size(),
        )
        .unwrap();
        Self::new(DeviceSecrets { key, credentials }, seed)
    }
}

struct Setup {
    client_key: ClientKey,
    /// One keyed intake per thread count (1, 2), each with both devices, and the devices' twins for it.
    intakes: Vec<(usize, KeyedIntake<BooleanBridge>, Device, Device)>,
}

fn setup() -> Setup {
    let t = Instant::now();
    let (client_key, server_key) = generate_keys(BooleanSet::TfheLib, &mut Blake2bXof::from_seed([0x1B; 32]));
    let mut rng = Blake2bXof::from_seed([0x1E; 32]);
    let (fleet, fleet_record) = provision_fleet_device(&client_key, FLEET, 1, &mut rng).unwrap();
    let (own, own_record) = provision_per_device(&client_key, PER_DEVICE, 7, &mut rng).unwrap();
    let mut store = KeyStore::new(&server_key);
    store.insert(fleet_record).unwrap();
    store.insert(own_record).unwrap();
    let file = store.encode();
    let (fleet, own) = (Device::new(fleet, 1), Device::new(own, 2));
    let intakes = [1usize, 2]
        .into_iter()
        .map(|threads| {
            let bridge = BooleanBridge::new(&server_key)
                .unwrap()
                .with_thread_count(NonZeroUsize::new(threads).unwrap())
                .unwrap();
            let intake = KeyedIntake::new(IntakeConfig::default(), KeyStore::decode(&file).unwrap(), bridge).unwrap();
            (
                threads,
                intake,
                fleet.fork(10 + threads as u8),
                own.fork(20 + threads as u8),
            )
        })
        .collect();
    eprintln!(
        "[setup] tfhe-rs keys, 2 devices, key store of {} bytes, 2 bridges: {:.1?}",
        file.len(),
        t.elapsed()
    );
    Setup { client_key, intakes }
}

fn label(mode: &str, strategy: KeySwitchStrategy, threads: usize) -> String {
    let strategy = match strategy {
        KeySwitchStrategy::Serial => "tfhe-rs keyswitch_lwe_ciphertext serial",
        KeySwitchStrategy::ParIter => "par_iter over ciphertexts",
        KeySwitchStrategy::ParKeyswitch => "tfhe-rs par_keyswitch_lwe_ciphertext",
        KeySwitchStrategy::Blocked => "blocked, SIMD",
    };
    format!(
        "{mode}, {strategy}, {threads} thread{}",
        if threads == 1 { "" } else { "s" }
    )
}

/// The cases: (mode, device, strategy, threads, cold cache).
fn cases() -> Vec<(&'static str, u64, KeySwitchStrategy, usize, bool)> {
    use KeySwitchStrategy::*;
    vec![
        ("fleet", FLEET, Serial, 1, false),
        ("fleet", FLEET, Blocked, 1, false),
        ("fleet", FLEET, ParIter, 2, false),
        ("fleet", FLEET, ParKeyswitch, 2, false),
        ("fleet", FLEET, Blocked, 2, false),
        ("per-device warm", PER_DEVICE, Blocked, 1, false),
        ("per-device warm", PER_DEVICE, Blocked, 2, false),
        ("per-device cold", PER_DEVICE, Blocked, 2, true),
    ]
}

fn bench(c: &mut Criterion) {
    let mut s = setup();
    let mut group = c.benchmark_group(GROUP);
    // About 0.1 to 1 s per frame: flat sampling, 10 samples of one frame each.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(100));
    group.measurement_time(Duration::from_secs(1));
    for (mode, device_id, strategy, threads, cold) in cases() {
        let (_, intake, fleet, own) = s.intakes.iter_mut().find(|(t, ..)| *t == threads).unwrap();
        let bridge = std::sync::Arc::clone(intake.converter());
        let client_key = &s.client_key;
        group.bench_function(label(mode, strategy, threads), |b| {
            b.iter_batched(
                || {
                    if cold {
                        bridge.clear_cache();
                    } else {
                        bridge.prefetch(device_id).unwrap();
                    }
                    if device_id == FLEET { fleet.frame() } else { own.frame() }
                },
                |frame| {
                    let message = intake.receive(&frame, Instant::now()).unwrap().into_message().unwrap();
                    bridge
                        .frames_to_booleans_with(strategy, message.device_id, message.key_id, &message.frames)
                        .unwrap()
                },
                BatchSize::PerIteration,
            );
        });
        // Once per case: the switched bits decrypt (0xA5 = bits 1,0,1,0,0,1,0,1 from the low bit).
        let frame = if device_id == FLEET { fleet.frame() } else { own.frame() };
        let message = intake.receive(&frame, Instant::now()).unwrap().into_message().unwrap();
        let bits = black_box(
            bridge
                .frames_to_booleans_with(strategy, message.device_id, message.key_id, &message.frames)
                .unwrap(),
        );
        assert_eq!(bits.len(), 1024);
        for (i, ct) in bits.iter().enumerate().step_by(37) {
            assert_eq!(client_key.decrypt(ct), (0xA5u8 >> (i % 8)) & 1 == 1, "bit {i}");
        }
    }
    group.finish();

    let mut group = c.benchmark_group(PARTS);
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(100));
    group.measurement_time(Duration::from_secs(1));
    for (threads, intake, fleet, _) in &mut s.intakes {
        let bridge = std::sync::Arc::clone(intake.converter());
        group.bench_function(format!("decompress a per-device key, {threads} thread(s)"), |b| {
            b.iter(|| {
                bridge.clear_cache();
                bridge.prefetch(PER_DEVICE).unwrap();
            })
        });
        if *threads == 1 {
            group.bench_function("receive only (MAC, header, mask expansion)", |b| {
                b.iter_batched(
                    || fleet.frame(),
                    |frame| intake.receive(&frame, Instant::now()).unwrap(),
                    BatchSize::PerIteration,
                )
            });
        }
    }
    group.finish();
    println!(
        "per-device key: {} bytes stored (seeded), {} bytes decompressed",
        32 * 1024 + 16,
        DeviceKsk::decompressed_bytes()
    );
}

fn simd() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "AVX-512F";
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return "AVX2";
        }
    }
    "baseline"
}

fn main() {
    common::run(bench);
    let labels: Vec<(String, usize)> = cases()
        .into_iter()
        .map(|(mode, _, strategy, threads, _)| (label(mode, strategy, threads), threads))
        .collect();
    let ids: Vec<&str> = labels.iter().map(|(l, _)| l.as_str()).collect();
    println!(
        "\n\"blocked, SIMD\": the bridge's kernel, the key read once per {KEYSWITCH_BLOCK} ciphertexts, compiled for \
         AVX-512F / AVX2 / baseline and picked at run time (this CPU: {})",
        simd()
    );
    common::print_ratio_table(
        "Whole intake of one 1024-bit frame: MAC, decode, extract, key switch (ratio = time / tfhe-rs serial)",
        GROUP,
        &ids,
        REFERENCE,
    );
    println!("\nFrames per second per core (1 / (median x threads))");
    println!("| {:<64} | {:>10} | {:>16} |", "case", "frames/s", "frames/s per core");
    println!("|{:-<66}|{:->12}|{:->18}|", "", "", "");
    for (id, threads) in &labels {
        if let Some(ns) = common::median_ns(GROUP, id) {
            let fps = 1e9 / ns;
            println!("| {:<64} | {:>10.2} | {:>16.2} |", id, fps, fps / *threads as f64);
        }
    }
    let scaling = |mode: &str| {
        let one = common::median_ns(GROUP, &label(mode, KeySwitchStrategy::Blocked, 1))?;
        let two = common::median_ns(GROUP, &label(mode, KeySwitchStrategy::Blocked, 2))?;
        Some(one / two)
    };
    for mode in ["fleet", "per-device warm"] {
        if let Some(speedup) = scaling(mode) {
            println!("{mode}: 2 threads are {speedup:.2}x as fast as 1 (ideal 2.00)");
        }
    }
    common::print_ratio_table(
        "Intake parts (ratio = time / receive only)",
        PARTS,
        &[
            "receive only (MAC, header, mask expansion)",
            "decompress a per-device key, 1 thread(s)",
            "decompress a per-device key, 2 thread(s)",
        ],
        "receive only (MAC, header, mask expansion)",
    );
}
