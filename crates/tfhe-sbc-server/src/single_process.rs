//! The single-process server (without `--nats`): one key set, the network (`net`), the intake thread and
//! the tfhe-rs thread (`pipeline`), the replay state on disk (`replay_state`); conversion into tfhe-rs
//! values with the key set's converter.

use crate::cli::Cli;
use crate::conversion_queue::{ConversionQueue, QueueLimits};
use crate::net;
use crate::pipeline;
use crate::replay_state::ReplayState;
use pipeline::{Counts, Demo, InputBytes};
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, OnceLock, mpsc};
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet};
use tfhe_sbc_adapter::interop::integer::{IntegerBridge, ReadingBits};
use tfhe_sbc_adapter::interop::{BooleanBridge, Converter, Input};
use tfhe_sbc_adapter::key_set::KeySetParameters;
use tfhe_sbc_adapter::key_set::client_key::{read_client_key, read_integer_client_key};
use tfhe_sbc_adapter::key_set::development::development_warning;
use tfhe_sbc_adapter::key_set::files::{CLIENT_KEY_FILE, KEY_STORE_FILE, SERVER_KEY_FILE};
use tfhe_sbc_adapter::key_set::server_key::{read_integer_server_key, read_server_key, read_server_key_envelope};
use tfhe_sbc_adapter::key_set::{parameters_name, short_hex};
use tfhe_sbc_adapter::key_store::KeyStore;
use tfhe_sbc_adapter::keyed_intake::KeyedIntake;
use tokio::sync::oneshot;
use tracing::{info, warn};

/// The key store of `dir`, bound to the server key with `fingerprint`.
fn load_key_store(dir: &Path, fingerprint: &[u8; 32]) -> Result<KeyStore, String> {
    let path = dir.join(KEY_STORE_FILE);
    let store = KeyStore::read_file(&path).map_err(|e| e.to_string())?;
    if let Some(warning) = development_warning(&store, &path) {
        warn!("{warning}");
    }
    if store.server_key_fingerprint() != *fingerprint {
        return Err(format!(
            "{} belongs to another server key (fingerprint {}, {} is {}): give --keys the directory of one key set",
            path.display(),
            short_hex(&store.server_key_fingerprint()),
            dir.join(SERVER_KEY_FILE).display(),
            short_hex(fingerprint)
        ));
    }
    Ok(store)
}

pub fn run(cli: &Cli) -> Result<(), String> {
    // The options first: a mistake there is reported before the keys are read.
    cli.intake_config()?;
    // The key set.
    let server_key_path = cli.key_set()?.join(SERVER_KEY_FILE);
    let envelope = read_server_key_envelope(&server_key_path).map_err(|e| e.to_string())?;
    match envelope.parameters {
        KeySetParameters::Integer => {
            if cli.threshold.is_some() {
                return Err(format!(
                    "--threshold computes with boolean gates, and {} holds an integer key set: drop --threshold",
                    cli.key_set()?.display()
                ));
            }
            return run_integer(cli, &server_key_path);
        }
        KeySetParameters::Boolean(_) => {}
    }
    if let Some(bits) = cli.integer_bits {
        return Err(format!(
            "--integer-bits {bits} sets the width of integer readings, and {} holds a boolean key set: drop \
             --integer-bits",
            cli.key_set()?.display()
        ));
    }
    let (header, server_key) = read_server_key(&server_key_path).map_err(|e| e.to_string())?;
    let store = load_key_store(cli.key_set()?, &header.server_key_fingerprint)?;
    let devices = device_list(&store);
    let registered = registered(&store);
    let client_key = demo_client_key(cli, header.server_key_fingerprint, read_client_key, |h| {
        h.server_key_fingerprint
    })?;

    // The intake and the conversion into tfhe-rs ciphertexts.
    let floors = cli.floors()?;
    let config = cli.intake_config()?;
    let known = floors.windows_of(&store);
    let server_key = Arc::new(server_key);
    let demo = Demo {
        threshold: cli.threshold.map(|t| (t, server_key.clone())),
        client_key,
    };
    let counts = Counts::default();
    let workers = Workers {
        counts: counts.clone(),
        floors,
        exit_after: cli.exit_after,
        queue: cli.queue_limits(),
        max_connections: cli.listener_limits().max_connections,
    };
    let (jobs, all_done) = match header.set {
        BooleanSet::TfheLib => {
            let bridge = BooleanBridge::new(&server_key).map_err(|e| e.to_string())?;
            let intake = KeyedIntake::resuming(config, store, bridge, &known).map_err(|e| e.to_string())?;
            workers.start(intake, pipeline::message_bytes, move |c, m, counts, n| {
                pipeline::run_compute(c, m, demo, counts, n)
            })?
        }
        BooleanSet::DefaultKsPbs | BooleanSet::ErrorProb2m165KsPbs => {
            let bridge = BigKeyBridge::for_server_key(header.set, &server_key).map_err(|e| e.to_string())?;
            let intake = KeyedIntake::resuming(config, store, bridge, &known).map_err(|e| e.to_string())?;
            workers.start(intake, pipeline::message_bytes, move |c, m, counts, n| {
                pipeline::run_compute(c, m, demo, counts, n)
            })?
        }
    };
    let banner = format!(
        "{} ({}), key id {:#010x}, {} devices: {}",
        parameters_name(header.set),
        header.set.tfhe_name(),
        header.key_id,
        devices.len(),
        devices.join(", ")
    );
    serve(cli, jobs, registered, all_done, &counts, &banner)
}

/// The network (until `exit_after` inputs are done, or an interrupt), then the summary.
fn serve(
    cli: &Cli,
    jobs: mpsc::SyncSender<pipeline::Job>,
    devices: HashSet<u64>,
    all_done: oneshot::Receiver<Result<(), String>>,
    counts: &Counts,
    banner: &str,
) -> Result<(), String> {
    // The network.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&cli.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e} (choose another --listen address)", cli.listen))?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        if let Some(path) = &cli.address_file {
            std::fs::write(path, format!("{address}\n"))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        let limits = cli.listener_limits();
        let queue = cli.queue_limits();
        info!(
            "listening on {address}: {banner}; at most {} connections ({} per address, idle {:?}), conversion \
             queue {} bytes ({} inputs per device)",
            limits.max_connections, limits.max_per_peer, limits.idle_timeout, queue.max_bytes, queue.per_device
        );
        let intake = net::Intake {
            jobs,
            devices: Arc::new(devices),
            drop_every: cli.drop_connection_every,
        };
        tokio::select! {
            () = net::accept(listener, limits, intake) => {}
            ended = all_done => {
                // The intake stopped: the process exits with its reason (and no longer answers anything).
                if let Ok(Err(reason)) = ended {
                    return Err(reason);
                }
                info!("{} messages done", cli.exit_after.unwrap_or(0));
                // The last acknowledgements are handed to their connections' tasks just before the last
                // conversion ends: give those tasks a bounded moment to write them before the runtime stops.
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            _ = tokio::signal::ctrl_c() => info!("interrupted"),
        }
        Ok::<(), String>(())
    })?;
    drop(runtime);

    println!("device | frames | resent frames acknowledged again | refused | messages | message bytes | busy");
    if let Ok(counts) = counts.lock() {
        for (device, c) in counts.iter() {
            println!(
                "{device:>6} | {:>6} | {:>32} | {:>7} | {:>8} | {:>13} | {:>6}",
                c.frames, c.duplicates, c.refused, c.messages, c.bytes, c.busy
            );
        }
    }
    Ok(())
}

/// The ids of the devices of `store`: a frame of another is refused from its header.
fn registered(store: &KeyStore) -> HashSet<u64> {
    store.iter().map(|r| r.device_id()).collect()
}

/// "id (mode)" of every device of `store`, for the log.
fn device_list(store: &KeyStore) -> Vec<String> {
    store
        .iter()
        .map(|r| format!("{} ({})", r.device_id(), r.mode().name()))
        .collect()
}

/// The demo client key of `--demo-client-key`, read with `read`, if given (with a warning in the log); an
/// error unless its header's fingerprint (`fingerprint_of`) is the server key's, `server`.
fn demo_client_key<H, K, E: std::fmt::Display>(
    cli: &Cli,
    server: [u8; 32],
    read: impl FnOnce(&Path) -> Result<(H, K), E>,
    fingerprint_of: impl FnOnce(&H) -> [u8; 32],
) -> Result<Option<K>, String> {
    let Some(path) = &cli.demo_client_key else {
        return Ok(None);
    };
    let (header, key) = read(path).map_err(|e| e.to_string())?;
    if fingerprint_of(&header) != server {
        return Err(format!(
            "{} is not the client key of the key set in {}: give the {CLIENT_KEY_FILE} of the same key set",
            path.display(),
            cli.key_set().unwrap_or(Path::new("--keys")).display()
        ));
    }
    warn!("demo mode: this server holds the client key and prints what the devices sent");
    Ok(Some(key))
}

/// The integer key set: frames become `FheUint` readings of the width their reading format states, or of
/// `--integer-bits` bits when it states none (fleet and public-key
/// devices' frames by extraction, per-device ones by one GLWE key switch with the device's key, then
/// extraction), decrypted only with `--demo-client-key`.
fn run_integer(cli: &Cli, server_key_path: &Path) -> Result<(), String> {
    let (envelope, server_key) = read_integer_server_key(server_key_path).map_err(|e| e.to_string())?;
    let store = load_key_store(cli.key_set()?, &envelope.server_key_fingerprint)?;
    let devices = device_list(&store);
    let registered = registered(&store);
    let client_key = demo_client_key(cli, envelope.server_key_fingerprint, read_integer_client_key, |h| {
        h.server_key_fingerprint
    })?;
    let integer_bits = cli.integer_bits.unwrap_or(16);
    let bits = ReadingBits::from_bits(integer_bits)
        .ok_or_else(|| format!("--integer-bits {integer_bits}: give 8, 16, 32 or 64"))?;
    let floors = cli.floors()?;
    let known = floors.windows_of(&store);
    let bridge = IntegerBridge::new(server_key)
        .map_err(|e| e.to_string())?
        .with_reading_bits(bits);
    let intake = KeyedIntake::resuming(cli.intake_config()?, store, bridge, &known).map_err(|e| e.to_string())?;
    let counts = Counts::default();
    let workers = Workers {
        counts: counts.clone(),
        floors,
        exit_after: cli.exit_after,
        queue: cli.queue_limits(),
        max_connections: cli.listener_limits().max_connections,
    };
    let (jobs, all_done) = workers.start(intake, pipeline::integer_input_bytes, move |c, frames, counts, n| {
        pipeline::run_integer_compute(c, frames, client_key, counts, n);
    })?;
    let banner = format!(
        "integer set (PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, FheUint{}), key id {:#010x}, {} devices: {}",
        bits.bits(),
        envelope.key_id,
        devices.len(),
        devices.join(", ")
    );
    serve(cli, jobs, registered, all_done, &counts, &banner)
}

/// What the worker threads share, before they start.
struct Workers {
    counts: Counts,
    floors: ReplayState,
    exit_after: Option<u64>,
    queue: QueueLimits,
    /// The connection cap: each connection has at most one frame in the intake's queue.
    max_connections: usize,
}

/// Where the network sends frames, and what says that the conversion has ended: `exit_after` inputs done
/// (`Ok`), or the intake stopped (`Err`, why: the replay state could not be written).
type Started = (mpsc::SyncSender<pipeline::Job>, oneshot::Receiver<Result<(), String>>);

impl Workers {
    /// Starts the intake thread on `intake` and the tfhe-rs thread, which runs `compute` on the intake's
    /// converter and the inputs the intake completes (through the bounded conversion queue, which weighs
    /// them with `input_bytes`).
    fn start<C, F>(self, intake: KeyedIntake<C>, input_bytes: InputBytes<C>, compute: F) -> Result<Started, String>
    where
        C: Converter + 'static,
        Input<C>: 'static,
        F: FnOnce(Arc<C>, Arc<ConversionQueue<Input<C>>>, Counts, Option<u64>) + Send + 'static,
    {
        let Self {
            counts,
            floors,
            exit_after,
            queue,
            max_connections,
        } = self;
        let (jobs, job_queue) = mpsc::sync_channel(max_connections.max(1));
        let inputs = Arc::new(ConversionQueue::new(queue));
        let complete = Arc::clone(&inputs);
        let converter = Arc::clone(intake.converter());
        // Why the intake stopped, if it did: recorded before the conversion queue closes, so the conversion
        // thread, which ends once the queue is closed and empty, reads it.
        let stopped = Arc::new(OnceLock::<String>::new());
        {
            let counts = counts.clone();
            let stopped = Arc::clone(&stopped);
            std::thread::Builder::new()
                .name("intake".into())
                .spawn(move || {
                    if let Err(reason) =
                        pipeline::run_intake(intake, job_queue, Arc::clone(&complete), input_bytes, counts, floors)
                    {
                        let _ = stopped.set(reason);
                        complete.close();
                    }
                })
                .map_err(|e| format!("cannot start the intake thread: {e}"))?;
        }
        let (finished, all_done) = oneshot::channel();
        std::thread::Builder::new()
            .name("tfhe-rs".into())
            .spawn(move || {
                compute(converter, inputs, counts, exit_after);
                let _ = finished.send(stopped.get().map_or(Ok(()), |reason| Err(reason.clone())));
            })
            .map_err(|e| format!("cannot start the tfhe-rs thread: {e}"))?;
        Ok((jobs, all_done))
    }
}
