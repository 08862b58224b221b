//! The fleet's sum, computed from the JetStream service's store: every committed message of an integer key
//! set (`tfhe-sbc-keys init --parameters integer`) read back with the adapter's results reader, each reading
//! an `FheUint16`, all of them added with tfhe-rs under the server key. The sum stays encrypted;
//! `--demo-client-key` (the trusted party's key, never on a real server) decrypts it for the demonstration.
//!
//! ```text
//! bash scripts/local-service.sh keys &                        # nats-server + gateway + workers
//! tfhe-sbc-client --credentials keys/devices/7.tsdc --server 127.0.0.1:7700 --format u16 ...
//! cargo run --release --example fleet_sum -- --keys keys --nats nats://127.0.0.1:4222 \
//!     --demo-client-key keys/client_key.bin
//! ```

use clap::Parser;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use tfhe::prelude::FheDecrypt;
use tfhe::{FheUint16, FheUint16Id};
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::integer::{IntegerBridge, ReadingBits};
use tfhe_sbc_adapter::key_set::KeySetParameters;
use tfhe_sbc_adapter::key_set::client_key::read_integer_client_key;
use tfhe_sbc_adapter::key_set::files::{KEY_STORE_FILE, SERVER_KEY_FILE};
use tfhe_sbc_adapter::key_set::server_key::read_integer_server_key;
use tfhe_sbc_adapter::key_store::{KeyStore, KeyedIntake};
use tfhe_sbc_adapter::results::RESULTS_STREAM;
use tfhe_sbc_adapter::results::reader::ResultsReader;

/// The encrypted sum of every 16-bit reading the fleet's committed messages hold.
#[derive(Parser)]
struct Args {
    /// The integer key set directory (server_key.bin, key_store.bin).
    #[arg(long)]
    keys: PathBuf,
    /// The NATS server of the service.
    #[arg(long, default_value = "nats://127.0.0.1:4222")]
    nats: String,
    /// Only this device's messages.
    #[arg(long)]
    device: Option<u64>,
    /// Demonstrations only: decrypt the sum with the trusted party's client key.
    #[arg(long)]
    demo_client_key: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
        .and_then(|runtime| runtime.block_on(run(&args)))
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("fleet_sum: error: {message}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: &Args) -> Result<(), String> {
    let (_, server_key) = read_integer_server_key(&args.keys.join(SERVER_KEY_FILE)).map_err(|e| e.to_string())?;
    tfhe::set_server_key(server_key.clone());
    let bridge = IntegerBridge::new(server_key)
        .map_err(|e| e.to_string())?
        .with_reading_bits(ReadingBits::from_bits(16).ok_or("16-bit readings")?);
    let store = KeyStore::read_file(&args.keys.join(KEY_STORE_FILE)).map_err(|e| e.to_string())?;
    // The key id of each device of this key set: one store may hold several key sets' messages.
    let key_ids: HashMap<u64, u32> = store.iter().map(|r| (r.device_id(), r.key_id())).collect();
    let keyed = KeyedIntake::new(IntakeConfig::default(), store, bridge).map_err(|e| e.to_string())?;
    let client = async_nats::connect(&args.nats)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", args.nats))?;
    // Every device's announcements before the read: those that do not open under this key store (another
    // key set's, or repeats) are not returned by `messages`, only counted here.
    let announced = match args.device {
        None => {
            let stream = async_nats::jetstream::new(client.clone())
                .get_stream(RESULTS_STREAM)
                .await;
            Some(stream.map_err(|e| e.to_string())?.cached_info().state.messages as usize)
        }
        Some(_) => None,
    };
    let reader = ResultsReader::connect(client, keyed).await.map_err(|e| e.to_string())?;
    let integer_set = KeySetParameters::Integer.id().0;
    let messages = reader
        .messages(args.device, 1_000_000)
        .await
        .map_err(|e| e.to_string())?;
    let mut sum: Option<FheUint16> = None;
    let (mut count, mut other_key_set) = (0usize, 0usize);
    for message in &messages {
        // A message of another key set (its key id, or its parameter set, not this key store's): skipped.
        if key_ids.get(&message.device_id) != Some(&message.key_id) || message.parameter_set != integer_set {
            other_key_set += 1;
            continue;
        }
        for frame in reader.load(message).await.map_err(|e| e.to_string())? {
            for reading in reader
                .keyed()
                .frame_readings::<FheUint16Id>(&frame)
                .map_err(|e| e.to_string())?
            {
                count += 1;
                sum = Some(match sum {
                    Some(total) => total + reading,
                    None => reading,
                });
            }
        }
    }
    let skipped = other_key_set + announced.map_or(0, |announced| announced.saturating_sub(messages.len()));
    println!(
        "{} messages, {count} readings summed under encryption (mod 2^16); {skipped} announcements of another key \
         set (or repeated) skipped",
        messages.len() - other_key_set
    );
    if let (Some(sum), Some(path)) = (&sum, &args.demo_client_key) {
        let (_, client_key) = read_integer_client_key(path).map_err(|e| e.to_string())?;
        let clear: u16 = sum.decrypt(client_key.get());
        println!("demo: the sum decrypts to {clear}");
    }
    Ok(())
}
