//! `tfhe-sbc-server read`: the trusted party's listing of what the JetStream service committed (the results
//! stream's announcements and the results bucket's frames, `tfhe_sbc_adapter::results`), decrypted with the
//! key set's client key. One line per message on stdout: device id, key mode, message id, first frame number,
//! number of frames, then its readings (an integer set: numbers at the width and in the format its frames
//! state, `--integer-bits` wide when they state none, a compact list at its own width) or its bytes (a boolean set: each message bit decrypted, eight to a byte, in hex).
//!
//! ```text
//! tfhe-sbc-server read --keys keys --client-key keys/client_key.bin --nats nats://127.0.0.1:4222
//! ```
//!
//! One store may hold several key sets' messages (one service serves them side by side, or several ran on
//! it in turn): an announcement whose device, key id or parameter set is not in this key store is listed as
//! another key set's, counted and skipped. A message
//! whose stored frames do not verify under this key set (or whose announcement does not) is listed with
//! the reason and the listing goes on; the command then ends with an error naming how many did.

mod announcements;
mod decrypted;

use crate::nats_connection::NatsConnection;
use announcements::within;
use async_nats::jetstream;
use decrypted::{boolean_contents, integer_contents};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet};
use tfhe_sbc_adapter::interop::integer::{IntegerBridge, ReadingBits};
use tfhe_sbc_adapter::interop::{BooleanBridge, Converter, Input};
use tfhe_sbc_adapter::key_set::KeySetParameters;
use tfhe_sbc_adapter::key_set::client_key::{read_client_key, read_integer_client_key};
use tfhe_sbc_adapter::key_set::files::{KEY_STORE_FILE, SERVER_KEY_FILE};
use tfhe_sbc_adapter::key_set::server_key::{read_integer_server_key, read_server_key, read_server_key_envelope};
use tfhe_sbc_adapter::key_store::{KeyMode, KeyStore};
use tfhe_sbc_adapter::keyed_intake::KeyedIntake;
use tfhe_sbc_adapter::results::MessageCommitted;
use tfhe_sbc_adapter::results::reader::ResultsReader;
use tracing::info;

/// `tfhe-sbc-server read`: list and decrypt the messages the service committed to its NATS store.
#[derive(clap::Args, Debug)]
pub struct ReadArgs {
    /// The key set directory (server_key.bin, key_store.bin) whose messages are decrypted.
    #[arg(long, value_name = "DIR")]
    keys: PathBuf,
    /// The key set's client key (client_key.bin): the trusted party's, never a server's.
    #[arg(long, value_name = "FILE")]
    client_key: PathBuf,
    /// The NATS server(s) of the service (e.g. nats://127.0.0.1:4222).
    #[arg(long, value_name = "URL")]
    nats: String,
    /// Only this device's messages.
    #[arg(long, value_name = "ID")]
    device: Option<u64>,
    /// List at most this many messages (of every key set), in the order they were announced (committed): a
    /// device's messages committed by different workers may be announced in another order than sent.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max: usize,
    /// An integer key set: the width of the readings of GLWE frames whose reading format states none (8, 16,
    /// 32 or 64; frames of a stated format and compact lists carry their own).
    #[arg(long, value_name = "BITS", default_value_t = 16)]
    integer_bits: u32,
    /// Seconds any one NATS read may take (an announcement batch, a message's frames) before the listing
    /// ends with an error.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = crate::cli_values::at_least_one::<u64>)]
    read_timeout: u64,
    #[command(flatten)]
    connection: NatsConnection,
}

/// What one announcement on the results stream is, for this key store.
enum Announced {
    /// A message of this key set, its announcement verified.
    Ours(MessageCommitted, KeyMode),
    /// A message whose device, key id or parameter set this key store does not hold.
    OtherKeySet(MessageCommitted),
    /// A record that names this key set but does not verify: the reason.
    Unverified(MessageCommitted, String),
    /// Bytes that are no announcement at all.
    Undecodable,
}

/// What the key store holds of a device, to tell its announcements from another key set's.
struct Device {
    key_id: u32,
    parameter_set: u16,
    mode: KeyMode,
}

/// What the listing counted.
#[derive(Default)]
struct Tally {
    listed: usize,
    other_key_set: usize,
    failed: usize,
    undecodable: usize,
}

/// Runs the command; an error if the listing could not be made, or if any message failed verification.
pub fn run(args: &ReadArgs) -> Result<(), String> {
    let bits = ReadingBits::from_bits(args.integer_bits)
        .ok_or_else(|| format!("--integer-bits {}: give 8, 16, 32 or 64", args.integer_bits))?;
    if args.max == 0 {
        return Err("--max 0: give 1 or more messages".to_owned());
    }
    let server_key_path = args.keys.join(SERVER_KEY_FILE);
    let envelope = read_server_key_envelope(&server_key_path).map_err(|e| e.to_string())?;
    let store_path = args.keys.join(KEY_STORE_FILE);
    let store = KeyStore::read_file(&store_path).map_err(|e| e.to_string())?;
    if store.server_key_fingerprint() != envelope.server_key_fingerprint {
        return Err(format!(
            "{} belongs to another server key than {}: give --keys the directory of one key set",
            store_path.display(),
            server_key_path.display()
        ));
    }
    let not_its_key = || {
        format!(
            "--client-key {} is not the client key of the key set in {}",
            args.client_key.display(),
            args.keys.display()
        )
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    let tally = runtime.block_on(async {
        match envelope.parameters {
            KeySetParameters::Integer => {
                let (header, client_key) = read_integer_client_key(&args.client_key).map_err(|e| e.to_string())?;
                let (_, server_key) = read_integer_server_key(&server_key_path).map_err(|e| e.to_string())?;
                if header.server_key_fingerprint != envelope.server_key_fingerprint {
                    return Err(not_its_key());
                }
                let bridge = IntegerBridge::new(server_key)
                    .map_err(|e| e.to_string())?
                    .with_reading_bits(bits);
                list(args, store, bridge, |keyed, inputs| {
                    integer_contents(keyed, inputs, client_key.get())
                })
                .await
            }
            KeySetParameters::Boolean(set) => {
                let (header, client_key) = read_client_key(&args.client_key).map_err(|e| e.to_string())?;
                let (_, server_key) = read_server_key(&server_key_path).map_err(|e| e.to_string())?;
                if header.server_key_fingerprint != envelope.server_key_fingerprint {
                    return Err(not_its_key());
                }
                let decrypt = |bit: &tfhe::boolean::ciphertext::Ciphertext| client_key.get().decrypt(bit);
                // The small-key set, and the big-key sets.
                match set {
                    BooleanSet::TfheLib => {
                        let bridge = BooleanBridge::new(&server_key).map_err(|e| e.to_string())?;
                        list(args, store, bridge, |keyed, inputs| {
                            boolean_contents(keyed, inputs, decrypt)
                        })
                        .await
                    }
                    BooleanSet::DefaultKsPbs | BooleanSet::ErrorProb2m165KsPbs => {
                        let bridge = BigKeyBridge::for_server_key(set, &server_key).map_err(|e| e.to_string())?;
                        list(args, store, bridge, |keyed, inputs| {
                            boolean_contents(keyed, inputs, decrypt)
                        })
                        .await
                    }
                }
            }
        }
    })?;
    println!(
        "{} messages of this key set, {} of another key set (skipped), {} failed verification{}",
        tally.listed,
        tally.other_key_set,
        tally.failed,
        match tally.undecodable {
            0 => String::new(),
            n => format!(", {n} records on the results stream that are no announcement (skipped)"),
        }
    );
    match tally.failed {
        0 => Ok(()),
        failed => Err(format!(
            "{failed} of {} messages of this key set failed verification (listed above)",
            tally.listed + failed
        )),
    }
}

/// Lists the store's messages with the key set of `store` and `converter`; `contents` converts and
/// decrypts one message's inputs into its line's tail.
async fn list<C: Converter>(
    args: &ReadArgs,
    store: KeyStore,
    converter: C,
    contents: impl Fn(&KeyedIntake<C>, Vec<Input<C>>) -> Result<String, String>,
) -> Result<Tally, String> {
    let devices: HashMap<u64, Device> = store
        .iter()
        .map(|record| {
            let device = Device {
                key_id: record.key_id(),
                parameter_set: record.parameter_set().0,
                mode: record.mode(),
            };
            (record.device_id(), device)
        })
        .collect();
    let keyed = KeyedIntake::new(IntakeConfig::default(), store, converter).map_err(|e| e.to_string())?;
    let patience = Duration::from_secs(args.read_timeout.max(1));
    let inbox = crate::nats_connection::inbox_prefix(tfhe_sbc_adapter::results::DEFAULT_PREFIX);
    let client = args
        .connection
        .connect(&args.nats, &inbox)
        .await
        .map_err(|e| e.to_string())?;
    let js = jetstream::new(client.clone());
    let reader = within(
        patience,
        "open the results bucket",
        ResultsReader::connect(client, keyed),
    )
    .await?
    .map_err(|e| e.to_string())?;
    let records = announcements::read(&js, args.device, args.max, patience).await?;
    info!("{} announcements on the results stream", records.len());
    let progress = Progress::new(records.len());
    let mut tally = Tally::default();
    for bytes in &records {
        match classify(bytes, &devices, &reader) {
            Announced::Ours(message, mode) => {
                let head = message_head(&message, Some(mode));
                let loaded = within(patience, "load a message's frames", reader.load(&message)).await?;
                match loaded
                    .map_err(|e| e.to_string())
                    .and_then(|inputs| contents(reader.keyed(), inputs))
                {
                    Ok(tail) => {
                        tally.listed += 1;
                        println!("{head}: {tail}");
                    }
                    Err(reason) => {
                        tally.failed += 1;
                        println!("{head}: FAILED verification: {reason}");
                    }
                }
            }
            Announced::OtherKeySet(message) => {
                tally.other_key_set += 1;
                println!(
                    "{}: key id {:#010x}, parameter set {}, of another key set (not in this key store): skipped",
                    message_head(&message, None),
                    message.key_id,
                    message.parameter_set
                );
            }
            Announced::Unverified(message, reason) => {
                tally.failed += 1;
                println!("{}: FAILED verification: {reason}", message_head(&message, None));
            }
            Announced::Undecodable => tally.undecodable += 1,
        }
        progress.step();
    }
    progress.finish();
    Ok(tally)
}

/// "device D (mode) message M: first frame S, N frames".
fn message_head(message: &MessageCommitted, mode: Option<KeyMode>) -> String {
    let mode = mode.map_or(String::new(), |mode| format!(" ({})", mode.name()));
    let frames = match message.chunk_count {
        1 => "1 frame".to_owned(),
        n => format!("{n} frames"),
    };
    format!(
        "device {}{mode} message {}: first frame {}, {frames}",
        message.device_id, message.message_id, message.first_sequence
    )
}

/// What `bytes` (one announcement) is for the key store's `devices`. A message is this key set's only if
/// the key store has its device under its key id and parameter set: any other is another key set's (a
/// device of another set, or of another development key set, whose MAC key and key id are the same for a
/// device id in every development set: `tfhe-sbc-keys issue --unsafe-dev-credential`), never a failure.
fn classify<C: Converter>(bytes: &[u8], devices: &HashMap<u64, Device>, reader: &ResultsReader<C>) -> Announced {
    let Some(record) = bytes.get(..MessageCommitted::BYTES).and_then(MessageCommitted::decode) else {
        return Announced::Undecodable;
    };
    let mode = match devices.get(&record.device_id) {
        Some(device) if device.key_id == record.key_id && device.parameter_set == record.parameter_set => device.mode,
        Some(_) | None => return Announced::OtherKeySet(record),
    };
    match MessageCommitted::open(bytes, |id| reader.keyed().intake().mac_key(id)) {
        Some(opened) => Announced::Ours(opened, mode),
        None => Announced::Unverified(
            record,
            "the announcement's tag does not verify under the device's MAC key".to_owned(),
        ),
    }
}

/// A progress bar on stderr, drawn only once the listing has taken more than a moment.
struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: std::cell::Cell<bool>,
}

impl Progress {
    fn new(total: usize) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} messages, {elapsed}") {
            bar.set_style(style);
        }
        Self {
            bar,
            started: Instant::now(),
            shown: std::cell::Cell::new(false),
        }
    }

    fn step(&self) {
        if !self.shown.get() && self.started.elapsed() > Duration::from_secs(1) {
            self.shown.set(true);
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.inc(1);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
