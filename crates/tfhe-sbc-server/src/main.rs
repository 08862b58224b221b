//! `tfhe-sbc-server`: the reference server a cloud user can run and read. It loads the key set the
//! provisioning tool wrote (`server_key.bin`, `key_store.bin`), accepts device connections over TCP (tokio),
//! runs every frame through the authenticated intake (`tfhe_sbc_adapter::intake`, one thread), acknowledges
//! it (`tfhe_sbc_adapter::ack`: accepted, or already accepted for a resend), and converts what the frames
//! complete with the adapter's `KeyedIntake` and the key set's converter: for a boolean key set, each
//! message into tfhe-rs boolean ciphertexts, one per message bit (extraction and, for `tfhe-lib`, a key
//! switch with the device's key); for an integer key set, each frame into `FheUint` readings of
//! `--integer-bits` bits, whatever the device's key mode (fleet, per-device or public key). It decrypts
//! nothing.
//!
//! For a demonstration, `--threshold T` computes with tfhe-rs gates the encrypted bit "some byte of the
//! message is above T", and `--demo-client-key` (the trusted party's key, never on a real server) decrypts
//! and prints what arrived.
//!
//! ```text
//! tfhe-sbc-server --keys keys --listen 0.0.0.0:7700
//! ```
//!
//! * `net`: the connections (tokio, tokio-util's length-delimited codec, the acknowledgement encoder);
//! * `pipeline`: the intake thread and the tfhe-rs thread.

mod device_state;
mod gateway;
mod jetstream;
mod net;
mod pipeline;
mod service;
mod worker;

use clap::Parser;
use pipeline::{Counts, Demo, Floors};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet};
use tfhe_sbc_adapter::interop::integer::{IntegerBridge, ReadingBits};
use tfhe_sbc_adapter::interop::{BooleanBridge, Converter, Input};
use tfhe_sbc_adapter::key_set::KeySetParameters;
use tfhe_sbc_adapter::key_set::client_key::{read_client_key, read_integer_client_key};
use tfhe_sbc_adapter::key_set::files::{CLIENT_KEY_FILE, KEY_STORE_FILE, SERVER_KEY_FILE};
use tfhe_sbc_adapter::key_set::server_key::{read_integer_server_key, read_server_key, read_server_key_envelope};
use tfhe_sbc_adapter::key_set::{parameters_name, short_hex};
use tfhe_sbc_adapter::key_store::KeyStore;
use tfhe_sbc_adapter::keyed_intake::KeyedIntake;
use tokio::sync::oneshot;
use tracing::{info, warn};

/// The tfhe-sbc reference server: device frames in, acknowledgements back, tfhe-rs ciphertexts out.
#[derive(Parser, Debug)]
#[command(name = "tfhe-sbc-server", version)]
struct Cli {
    /// The key set directory from `tfhe-sbc-keys init` (server_key.bin and key_store.bin are read). With
    /// --nats, give it once per key set the service serves (boolean and integer sets side by side; device ids
    /// must differ between them).
    #[arg(long, value_name = "DIR", required = true)]
    keys: Vec<PathBuf>,
    /// The address to listen on.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7700")]
    listen: String,
    /// Write the address actually listened on into this file (useful with port 0).
    #[arg(long, value_name = "FILE")]
    address_file: Option<PathBuf>,
    /// Compute, for each message, the encrypted bit "some byte is above T" with tfhe-rs gates.
    #[arg(long, value_name = "T")]
    threshold: Option<u8>,
    /// Demonstrations only: the trusted party's client key (client_key.bin), to decrypt and print what
    /// arrived. A real server never holds it.
    #[arg(long, value_name = "FILE")]
    demo_client_key: Option<PathBuf>,
    /// Keep each device's replay floor in this file, written before acknowledgements leave, so that after a
    /// restart no frame is accepted twice (without it, a restarted server forgets what it accepted).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// With an integer key set (`tfhe-sbc-keys init --parameters integer`): the width of the devices'
    /// readings, which become `FheUint8`, `FheUint16`, `FheUint32` or `FheUint64` (integer frames carry
    /// little-endian reading bytes, so the width is the server's configuration).
    #[arg(long, value_name = "BITS", default_value_t = 16)]
    integer_bits: u32,
    /// Exit after this many messages (and print the summary).
    #[arg(long, value_name = "N")]
    exit_after: Option<u64>,
    /// Testing: close each connection after every Nth frame, before acknowledging it.
    #[arg(long, value_name = "N", hide = true)]
    drop_connection_every: Option<u64>,
    /// Run on NATS JetStream (e.g. nats://127.0.0.1:4222): the roles of --role, any number of processes
    /// sharing one JetStream; without it, one process with an in-memory queue.
    #[arg(long, value_name = "URL")]
    nats: Option<String>,
    /// With --nats: the roles this process runs.
    #[arg(long, value_enum, default_value_t = service::Role::Both, requires = "nats")]
    role: service::Role,
    /// With --nats: worker tasks in this process.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "nats")]
    workers: usize,
    /// With --nats: replicas of every stream and bucket (3 in a cluster).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "nats")]
    replicas: usize,
    /// With --nats: the gateway's connection cap.
    #[arg(long, value_name = "N", default_value_t = 1024, requires = "nats")]
    max_connections: usize,
    /// With --nats: seconds of silence after which the gateway closes a connection.
    #[arg(long, value_name = "SECONDS", default_value_t = 120, requires = "nats")]
    idle_timeout: u64,
    /// With --nats: serve Prometheus-format metrics on http://HOST:PORT/metrics.
    #[arg(long, value_name = "HOST:PORT", requires = "nats")]
    metrics_listen: Option<std::net::SocketAddr>,
    /// With --nats: the frames stream's size limit in bytes (full: devices are answered "busy").
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30, requires = "nats")]
    stream_max_bytes: i64,
    /// With --nats: seconds a worker may hold a frame before JetStream hands it to another worker (applies
    /// when the workers' consumer is created).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, requires = "nats")]
    ack_wait: u64,
}

impl Cli {
    /// The one key set of the single-process server.
    fn key_set(&self) -> Result<&Path, String> {
        match self.keys.as_slice() {
            [one] => Ok(one),
            _ => Err(
                "--keys given more than once: one process without --nats serves one key set (run one per \
                      key set, or serve them together with --nats)"
                    .to_owned(),
            ),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    let outcome = match &cli.nats {
        Some(nats) => service::run(service::ServiceOptions {
            nats,
            role: cli.role,
            keys: &cli.keys,
            listen: &cli.listen,
            address_file: cli.address_file.as_deref(),
            workers: cli.workers,
            metrics_listen: cli.metrics_listen,
            topology: jetstream::Topology {
                replicas: cli.replicas,
                frames_max_bytes: cli.stream_max_bytes,
                ack_wait: std::time::Duration::from_secs(cli.ack_wait.max(1)),
                ..Default::default()
            },
            limits: gateway::GatewayLimits {
                max_connections: cli.max_connections.max(1),
                idle_timeout: std::time::Duration::from_secs(cli.idle_timeout.max(1)),
                ..Default::default()
            },
        }),
        None => run(&cli),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tfhe-sbc-server: error: {message}");
            ExitCode::from(2)
        }
    }
}

/// The key store of `dir`, bound to the server key with `fingerprint`.
fn load_key_store(dir: &Path, fingerprint: &[u8; 32]) -> Result<KeyStore, String> {
    let path = dir.join(KEY_STORE_FILE);
    let store = KeyStore::read_file(&path).map_err(|e| e.to_string())?;
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

fn run(cli: &Cli) -> Result<(), String> {
    // The key set.
    let server_key_path = cli.key_set()?.join(SERVER_KEY_FILE);
    let envelope = read_server_key_envelope(&server_key_path).map_err(|e| e.to_string())?;
    if matches!(envelope.parameters, KeySetParameters::Integer) {
        return run_integer(cli, &server_key_path);
    }
    let (header, server_key) = read_server_key(&server_key_path).map_err(|e| e.to_string())?;
    let store = load_key_store(cli.key_set()?, &header.server_key_fingerprint)?;
    let devices = device_list(&store);
    let client_key = demo_client_key(cli, read_client_key)?;
    if let Some((client, _)) = &client_key {
        same_key_set(cli, client.server_key_fingerprint, header.server_key_fingerprint)?;
    }
    let client_key = client_key.map(|(_, key)| key);

    // The intake and the conversion into tfhe-rs ciphertexts.
    let floors = cli.state.as_deref().map(Floors::load).transpose()?;
    let floor_of = |device: u64| {
        floors
            .as_ref()
            .and_then(|f| f.floors().get(&device).copied())
            .unwrap_or(0)
    };
    let config = IntakeConfig::default();
    let known: HashMap<u64, u64> = store.iter().map(|r| (r.device_id(), floor_of(r.device_id()))).collect();
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
    };
    let (jobs, all_done) = if header.set == BooleanSet::TfheLib {
        let bridge = BooleanBridge::new(&server_key).map_err(|e| e.to_string())?;
        let intake = KeyedIntake::with_floors(config, store, bridge, &known).map_err(|e| e.to_string())?;
        workers.start(intake, move |c, m, counts, n| {
            pipeline::run_compute(c, m, demo, counts, n)
        })?
    } else {
        let bridge = BigKeyBridge::for_server_key(header.set, &server_key).map_err(|e| e.to_string())?;
        let intake = KeyedIntake::with_floors(config, store, bridge, &known).map_err(|e| e.to_string())?;
        workers.start(intake, move |c, m, counts, n| {
            pipeline::run_compute(c, m, demo, counts, n)
        })?
    };
    let banner = format!(
        "{} ({}), key id {:#010x}, {} devices: {}",
        parameters_name(header.set),
        header.set.tfhe_name(),
        header.key_id,
        devices.len(),
        devices.join(", ")
    );
    serve(cli, jobs, all_done, &counts, &banner)
}

/// The network (until `exit_after` inputs are done, or an interrupt), then the summary.
fn serve(
    cli: &Cli,
    jobs: mpsc::Sender<pipeline::Job>,
    all_done: oneshot::Receiver<()>,
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
        info!("listening on {address}: {banner}");
        tokio::select! {
            () = net::accept(listener, jobs, cli.drop_connection_every) => {}
            _ = all_done => info!("{} messages done", cli.exit_after.unwrap_or(0)),
            _ = tokio::signal::ctrl_c() => info!("interrupted"),
        }
        Ok::<(), String>(())
    })?;
    drop(runtime);

    println!("device | frames | resent frames acknowledged again | refused | messages | message bytes");
    if let Ok(counts) = counts.lock() {
        for (device, c) in counts.iter() {
            println!(
                "{device:>6} | {:>6} | {:>32} | {:>7} | {:>8} | {:>13}",
                c.frames, c.duplicates, c.refused, c.messages, c.bytes
            );
        }
    }
    Ok(())
}

/// "id (mode)" of every device of `store`, for the log.
fn device_list(store: &KeyStore) -> Vec<String> {
    store
        .iter()
        .map(|r| format!("{} ({})", r.device_id(), r.mode().name()))
        .collect()
}

/// The demo client key of `--demo-client-key`, read with `read`, if given (with a warning in the log).
fn demo_client_key<H, K, E: std::fmt::Display>(
    cli: &Cli,
    read: impl FnOnce(&Path) -> Result<(H, K), E>,
) -> Result<Option<(H, K)>, String> {
    let Some(path) = &cli.demo_client_key else {
        return Ok(None);
    };
    let key = read(path).map_err(|e| e.to_string())?;
    warn!("demo mode: this server holds the client key and prints what the devices sent");
    Ok(Some(key))
}

/// An error unless the demo client key's fingerprint is the server key's.
fn same_key_set(cli: &Cli, client: [u8; 32], server: [u8; 32]) -> Result<(), String> {
    if client == server {
        return Ok(());
    }
    let path = cli.demo_client_key.as_deref().unwrap_or(Path::new(CLIENT_KEY_FILE));
    Err(format!(
        "{} is not the client key of the key set in {}: give the {CLIENT_KEY_FILE} of the same key set",
        path.display(),
        cli.key_set().unwrap_or(Path::new("--keys")).display()
    ))
}

/// The integer key set: frames become `FheUint` readings of `--integer-bits` bits (fleet and public-key
/// devices' frames by extraction, per-device ones by one GLWE key switch with the device's key, then
/// extraction), decrypted only with `--demo-client-key`.
fn run_integer(cli: &Cli, server_key_path: &Path) -> Result<(), String> {
    let (envelope, server_key) = read_integer_server_key(server_key_path).map_err(|e| e.to_string())?;
    let store = load_key_store(cli.key_set()?, &envelope.server_key_fingerprint)?;
    let devices = device_list(&store);
    let client_key = demo_client_key(cli, read_integer_client_key)?;
    if let Some((client, _)) = &client_key {
        same_key_set(cli, client.server_key_fingerprint, envelope.server_key_fingerprint)?;
    }
    let client_key = client_key.map(|(_, key)| key);
    let bits = ReadingBits::from_bits(cli.integer_bits)
        .ok_or_else(|| format!("--integer-bits {}: give 8, 16, 32 or 64", cli.integer_bits))?;
    let floors = cli.state.as_deref().map(Floors::load).transpose()?;
    let known: HashMap<u64, u64> = store
        .iter()
        .map(|r| {
            let floor = floors.as_ref().and_then(|f| f.floors().get(&r.device_id()).copied());
            (r.device_id(), floor.unwrap_or(0))
        })
        .collect();
    let bridge = IntegerBridge::new(server_key)
        .map_err(|e| e.to_string())?
        .with_reading_bits(bits);
    let intake = KeyedIntake::with_floors(IntakeConfig::default(), store, bridge, &known).map_err(|e| e.to_string())?;
    let counts = Counts::default();
    let workers = Workers {
        counts: counts.clone(),
        floors,
        exit_after: cli.exit_after,
    };
    let (jobs, all_done) = workers.start(intake, move |c, frames, counts, n| {
        pipeline::run_integer_compute(c, frames, client_key, counts, n);
    })?;
    let banner = format!(
        "integer set (PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, FheUint{}), key id {:#010x}, {} devices: {}",
        bits.bits(),
        envelope.key_id,
        devices.len(),
        devices.join(", ")
    );
    serve(cli, jobs, all_done, &counts, &banner)
}

/// What the worker threads share, before they start.
struct Workers {
    counts: Counts,
    floors: Option<Floors>,
    exit_after: Option<u64>,
}

/// Where the network sends frames, and what says that `exit_after` inputs are done.
type Started = (mpsc::Sender<pipeline::Job>, oneshot::Receiver<()>);

impl Workers {
    /// Starts the intake thread on `intake` and the tfhe-rs thread, which runs `compute` on the intake's
    /// converter and the inputs the intake completes.
    fn start<C, F>(self, intake: KeyedIntake<C>, compute: F) -> Result<Started, String>
    where
        C: Converter + 'static,
        Input<C>: 'static,
        F: FnOnce(Arc<C>, mpsc::Receiver<Input<C>>, Counts, Option<u64>) + Send + 'static,
    {
        let (jobs, job_queue) = mpsc::channel();
        let (complete, inputs) = mpsc::channel();
        let converter = Arc::clone(intake.converter());
        let Self {
            counts,
            floors,
            exit_after,
        } = self;
        {
            let counts = counts.clone();
            std::thread::Builder::new()
                .name("intake".into())
                .spawn(move || pipeline::run_intake(intake, job_queue, complete, counts, floors))
                .map_err(|e| format!("cannot start the intake thread: {e}"))?;
        }
        let (finished, all_done) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("tfhe-rs".into())
            .spawn(move || {
                compute(converter, inputs, counts, exit_after);
                let _ = finished.send(());
            })
            .map_err(|e| format!("cannot start the tfhe-rs thread: {e}"))?;
        Ok((jobs, all_done))
    }
}
