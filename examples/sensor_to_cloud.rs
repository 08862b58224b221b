//! End to end: a device encrypts 8-bit sensor readings as authenticated seeded TRLWE frames (wire format v2:
//! device id, key id, sequence numbers, MAC) and sends them over TCP to an adapter service, which
//! authenticates and reassembles them (`Intake`), extracts the bits, key-switches them into tfhe-rs boolean
//! ciphertexts and computes an encrypted alarm bit "some reading exceeded the threshold". The trusted party
//! decrypts the alarm and prints it next to the plaintext answer.
//!
//! Run: `cargo run --release --example sensor_to_cloud` (`-- --help` for options).
#![allow(clippy::unwrap_used)]

use rand_core::{Rng, SeedableRng};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Instant;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::server_key::{BinaryBooleanGates, ServerKey};
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig, Received};
use tfhe_sbc_adapter::interop::{BooleanBridge, device_key_from_client_key, generate_boolean_keys};
use tfhe_sbc_adapter::keyfile::{decode_key_file, encode_key_file};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_adapter::stream::{FrameReader, write_frame};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::frame_mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::message::chunks;
use tfhe_sbc_device::wire::{FrameCounter, SEEDED_FRAME_BYTES_1024};
use tfhe_sbc_device::xof::Blake2bXof;

const HELP: &str = "sensor_to_cloud: device -> TCP -> adapter -> tfhe-rs, end to end

USAGE: cargo run --release --example sensor_to_cloud -- [OPTIONS]

OPTIONS:
  --readings <N>     number of 8-bit readings the device sends (default 16, 1..=1024)
  --threshold <T>    alarm when some reading is above T (default 200, 0..=255)
  --seed <S>         seed of the simulated sensor (default 42)
  -h, --help         this text";

struct Options {
    readings: usize,
    threshold: u8,
    seed: u64,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        readings: 16,
        threshold: 200,
        seed: 42,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{HELP}");
                std::process::exit(0);
            }
            "--readings" => {
                options.readings = value("--readings")?.parse().map_err(|e| format!("--readings: {e}"))?;
                if !(1..=1024).contains(&options.readings) {
                    return Err("--readings must be in 1..=1024".into());
                }
            }
            "--threshold" => {
                options.threshold = value("--threshold")?.parse().map_err(|e| format!("--threshold: {e}"))?
            }
            "--seed" => options.seed = value("--seed")?.parse().map_err(|e| format!("--seed: {e}"))?,
            other => return Err(format!("unknown option {other}\n\n{HELP}")),
        }
    }
    Ok(options)
}

/// `x > t` for an encrypted 8-bit `x` (bits little-endian) and a public threshold `t`, from gates.
fn greater_than_public(server_key: &ServerKey, x: &[Ciphertext], t: u8) -> Ciphertext {
    let mut gt = server_key.trivial_encrypt(false);
    for (j, xj) in x.iter().enumerate() {
        // Where t's bit is 0, x_j = 1 makes x greater; where it is 1, x_j = 0 makes it smaller.
        gt = if (t >> j) & 1 == 0 {
            server_key.or(xj, &gt)
        } else {
            server_key.and(xj, &gt)
        };
    }
    gt
}

fn main() {
    let options = parse_options().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let params = TFHE_LIB_GLWE_1024;

    // Trusted party: tfhe-rs keys, and the device key file.
    println!("[trusted party] generating tfhe-rs boolean keys (TFHE_LIB_PARAMETERS), this takes a few seconds...");
    let t = Instant::now();
    let (client_key, server_key) = generate_boolean_keys();
    let key_file = encode_key_file(&device_key_from_client_key(&client_key).unwrap(), &params);
    println!(
        "[trusted party] keys ready in {:.2?}; device key file: {} bytes",
        t.elapsed(),
        key_file.len()
    );
    // Provisioning: the device's id, its key id, and a random MAC key shared with the adapter's registry.
    const DEVICE_ID: u64 = 0x5E50_0001;
    const KEY_ID: u32 = 1;
    let device_mac_key = MacKey::generate(&mut tfhe_sbc_device::seeding::from_os_entropy().unwrap());
    let mut registry = DeviceRegistry::new();
    registry
        .register(DeviceCredentials::new(
            DEVICE_ID,
            KEY_ID,
            MacKey::from_bytes(*device_mac_key.as_bytes()),
        ))
        .unwrap();

    // Adapter service: a TCP listener on loopback, in its own thread.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let readings_count = options.readings;
    let threshold = options.threshold;
    let adapter = std::thread::spawn(move || {
        let (socket, _) = listener.accept().unwrap();
        let bridge = BooleanBridge::new(&server_key).unwrap();
        let mut reader = FrameReader::new(socket);
        // Authenticated intake: MAC per device, replay window, reassembly of the multi-chunk message.
        let mut intake = Intake::new(IntakeConfig::default(), registry);
        let (mut received_bytes, mut frames, mut bits) = (0usize, 0usize, Vec::new());
        let t = Instant::now();
        while let Some(bytes) = reader.next_frame().unwrap() {
            received_bytes += bytes.len() + 4;
            frames += 1;
            let now = Instant::now();
            match intake.receive(bytes, now) {
                Ok(Received::Complete(message)) => {
                    for frame in &message.frames {
                        let n_bits = 8 * frame.chunk_message_bytes();
                        bits.extend((0..n_bits).map(|i| BooleanBridge::extract(&frame.ciphertext, i)));
                    }
                }
                Ok(Received::Pending { .. }) => {}
                Err(e) => eprintln!("[adapter] frame rejected: {e}"),
            }
            for dropped in intake.evict_expired(now) {
                eprintln!("[adapter] {dropped}");
            }
        }
        println!(
            "[adapter] received {received_bytes} bytes in {frames} frames, authenticated, reassembled and extracted \
             {} TLWE in {:.2?}",
            bits.len(),
            t.elapsed()
        );
        assert_eq!(bits.len(), 8 * readings_count, "every reading arrived");
        let t = Instant::now();
        let switched: Vec<Ciphertext> = bits.iter().map(|lwe| bridge.key_switch(lwe)).collect();
        println!(
            "[adapter] key-switched {} ciphertexts 1024 -> 630 in {:.2?}",
            switched.len(),
            t.elapsed()
        );
        let t = Instant::now();
        let mut alarm = server_key.trivial_encrypt(false);
        for (k, reading) in switched.chunks_exact(8).enumerate() {
            let above = greater_than_public(&server_key, reading, threshold);
            alarm = server_key.or(&alarm, &above);
            if (k + 1) % 4 == 0 || k + 1 == readings_count {
                print!(
                    "\r[adapter] tfhe-rs gates: {}/{readings_count} readings compared",
                    k + 1
                );
                std::io::stdout().flush().unwrap();
            }
        }
        println!(
            "\n[adapter] {} bootstrapped gates in {:.2?}",
            9 * readings_count,
            t.elapsed()
        );
        alarm
    });

    // Device: load the key file, encrypt the readings, send the frames.
    let (device_key, _) = decode_key_file(&key_file).unwrap();
    let mut sensor = Blake2bXof::seed_from_u64(options.seed);
    let readings: Vec<u8> = (0..options.readings)
        .map(|_| 20 + (sensor.next_u32() % 200) as u8)
        .collect();
    let t = Instant::now();
    let mut encryptor = Box::new(
        GlweEncryptor::<1024>::new(
            &params,
            &device_key,
            tfhe_sbc_device::seeding::from_os_entropy().unwrap(),
        )
        .unwrap(),
    );
    let credentials = DeviceCredentials::new(DEVICE_ID, KEY_ID, device_mac_key);
    // Sequence numbers never repeat: firmware restores the counter from a persisted high-water mark or a
    // boot counter; this run is boot 0.
    let mut counter = FrameCounter::from_boot_counter(0);
    let mut body = [0u32; 1024];
    let mut frame = [0u8; SEEDED_FRAME_BYTES_1024];
    let mut socket = TcpStream::connect(address).unwrap();
    let mut sent = 0;
    let message = encryptor.begin_message(&mut counter, readings.len()).unwrap();
    for chunk in chunks(&readings, 128) {
        let len = encryptor
            .encrypt_seeded_frame(&credentials, &message, &chunk, &mut body, &mut frame)
            .unwrap();
        write_frame(&mut socket, &frame[..len]).unwrap();
        sent += len + 4;
    }
    drop(socket);
    let bits = 8 * readings.len();
    println!(
        "[device] encrypted {} readings ({bits} bits) and sent {sent} bytes in {:.2?}; per-bit TLWE would send {} bytes \
         under the 1024 key ({} under the 630 key): {:.0}x less",
        readings.len(),
        t.elapsed(),
        bits * 1025 * 4,
        bits * 631 * 4,
        (bits * 1025 * 4) as f64 / sent as f64
    );

    // Trusted party: decrypt the alarm.
    let alarm = adapter.join().unwrap();
    let decrypted = client_key.decrypt(&alarm);
    let expected = readings.iter().any(|&r| r > options.threshold);
    println!("[trusted party] readings: {readings:?}");
    println!(
        "[trusted party] alarm (some reading > {}): encrypted result {decrypted}, plaintext answer {expected} -> {}",
        options.threshold,
        if decrypted == expected { "correct" } else { "WRONG" }
    );
    assert_eq!(decrypted, expected);
}
