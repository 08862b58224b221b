//! The server's command line (clap): serving a key set alone or as a role of the JetStream service, and the
//! trusted party's `read`; the bounds and paths derived from it.

use crate::cli_values::{at_least_one, listen_address, replica_count};
use crate::replay_state::ReplayState;
use crate::{conversion_queue, listener, nats_connection, service, store_reader};
use clap::Parser;
use std::path::{Path, PathBuf};

/// The replay state file's name in the key set directory when --state is not given.
const REPLAY_STATE_FILE: &str = "replay_state.txt";

/// The tfhe-sbc reference server: device frames in, acknowledgements back, tfhe-rs ciphertexts out.
#[derive(Parser, Debug)]
#[command(
    name = "tfhe-sbc-server",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// The key set directory from `tfhe-sbc-keys init` (server_key.bin and key_store.bin are read). With
    /// --nats, give it once per key set the service serves (boolean and integer sets side by side; device ids
    /// must differ between them).
    #[arg(long, value_name = "DIR", required = true)]
    pub(crate) keys: Vec<PathBuf>,
    /// The address to listen on (port 0: any free port; an IPv6 address in brackets: `[::1]:7700`).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7700", value_parser = listen_address)]
    pub(crate) listen: String,
    /// Write the address actually listened on into this file (useful with port 0).
    #[arg(long, value_name = "FILE")]
    pub(crate) address_file: Option<PathBuf>,
    /// Compute, for each message, the encrypted bit "some byte is above T" with tfhe-rs gates. Without
    /// --nats only, with a boolean key set (refused with an integer one).
    #[arg(long, value_name = "T", conflicts_with = "nats")]
    pub(crate) threshold: Option<u8>,
    /// Demonstrations only: the trusted party's client key (client_key.bin), to decrypt and print what
    /// arrived. A real server never holds it. Without --nats only: with --nats, the trusted party reads the
    /// results store with `tfhe-sbc-server read` (refused here, in one line that says so).
    #[arg(long, value_name = "FILE")]
    pub(crate) demo_client_key: Option<PathBuf>,
    /// The replay state file: the highest sequence number accepted from each device, written before
    /// acknowledgements leave, so that after a restart no frame is accepted twice (default:
    /// `replay_state.txt` in the --keys directory). Without --nats only: JetStream keeps it in a KV bucket.
    #[arg(long, value_name = "FILE", conflicts_with = "nats")]
    pub(crate) state: Option<PathBuf>,
    /// With an integer key set (`tfhe-sbc-keys init --parameters integer`): the width of the readings of
    /// frames whose reading format states none (bytes), which become `FheUint8`, `FheUint16`, `FheUint32`
    /// or `FheUint64`. A frame that states one (the client's `--format u16`, ...) is read at its own width;
    /// a compact list carries its own. Default 16; refused with a boolean key set. Without --nats only (the
    /// JetStream service stores frames; `read --integer-bits` converts them).
    #[arg(long, value_name = "BITS", conflicts_with = "nats")]
    pub(crate) integer_bits: Option<u32>,
    /// Without --nats: seconds after its first chunk within which a multi-chunk message must be complete;
    /// then it is dropped, and every later chunk of it is acknowledged "expired" (the device counts the
    /// message lost).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, conflicts_with = "nats")]
    pub(crate) max_message_age: u64,
    /// Exit after this many messages (and print the summary).
    #[arg(long, value_name = "N", value_parser = at_least_one::<u64>)]
    pub(crate) exit_after: Option<u64>,
    /// Testing: close each connection after every Nth frame, before acknowledging it.
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) drop_connection_every: Option<u64>,
    /// Run on NATS JetStream (e.g. nats://127.0.0.1:4222): the roles of --role, any number of processes
    /// sharing one JetStream; without it, one process with an in-memory queue.
    #[arg(long, value_name = "URL", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) nats: Option<String>,
    /// With --nats: the roles this process runs.
    #[arg(long, value_enum, default_value_t = service::Role::Both, requires = "nats")]
    pub(crate) role: service::Role,
    /// With --nats: worker tasks in this process.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "nats", value_parser = at_least_one::<usize>)]
    pub(crate) workers: usize,
    /// With --nats: frames each worker task handles at once (their JetStream round trips overlap).
    #[arg(long, value_name = "N", default_value_t = 8, requires = "nats", value_parser = at_least_one::<usize>)]
    pub(crate) frames_in_flight: usize,
    /// With --nats: replicas of every stream and bucket (3 in a cluster).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "nats", value_parser = replica_count)]
    pub(crate) replicas: usize,
    /// The connection cap (the single process and the gateway). At the cap, a new connection closes the
    /// one that has waited longest on its device (idle, or stalled in a frame), so idle sockets cannot lock
    /// devices out.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = at_least_one::<usize>)]
    pub(crate) max_connections: usize,
    /// The connection cap per peer (the single process and the gateway): an IPv4 address, or an IPv6 /64; a
    /// new connection from a peer at the cap closes that peer's longest-waiting one, or is refused. 0: no
    /// per-peer cap (devices behind one NAT or load balancer address).
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub(crate) max_connections_per_peer: usize,
    /// Seconds of silence after which a connection is closed (the single process and the gateway).
    #[arg(long, value_name = "SECONDS", default_value_t = 120, value_parser = at_least_one::<u64>)]
    pub(crate) idle_timeout: u64,
    /// Without --nats: the most bytes of completed inputs waiting for conversion (ciphertexts as held in
    /// memory, compact lists as received); past it, frames are answered "busy" (the device sends them again
    /// later), never acknowledged and dropped.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20, conflicts_with = "nats", value_parser = at_least_one::<usize>)]
    pub(crate) conversion_queue_bytes: usize,
    /// Without --nats: the most inputs of one device waiting for conversion (its share; the devices are
    /// converted in turn); past it, that device's frames are answered "busy".
    #[arg(long, value_name = "N", default_value_t = 8, conflicts_with = "nats", value_parser = at_least_one::<usize>)]
    pub(crate) conversion_queue_per_device: usize,
    /// With --nats: serve Prometheus-format metrics on http://HOST:PORT/metrics.
    #[arg(long, value_name = "HOST:PORT", requires = "nats")]
    pub(crate) metrics_listen: Option<std::net::SocketAddr>,
    /// With --nats: the frames stream's size limit in bytes (full: devices are answered "busy"); applied to
    /// the stream at start-up, also to one an earlier run made (give every role the same value).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30, requires = "nats", value_parser = at_least_one::<i64>)]
    pub(crate) stream_max_bytes: i64,
    /// With --nats: seconds a worker may hold a frame before JetStream hands it to another worker (applies
    /// when the workers' consumer is created).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, requires = "nats", value_parser = at_least_one::<u64>)]
    pub(crate) ack_wait: u64,
    /// With --nats: this process's ledger watermark (the highest frame number it has seen in each device's
    /// ledger), kept in this file across restarts, outside NATS: a restarted role still refuses a device
    /// ledger written back to an older state or deleted (answered "busy", `tsbc_ledger_behind_total`).
    /// One file per process, on its own disk; written at most once a second and at shutdown.
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub(crate) watermark_file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) nats_connection: nats_connection::NatsConnection,
}

/// The commands beside serving.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// The trusted party: list the messages the JetStream service committed and decrypt them with the key
    /// set's client key.
    Read(store_reader::ReadArgs),
}

impl Cli {
    /// A combination of options clap takes but the server refuses, with what to do instead: the JetStream
    /// roles decrypt nothing, so --demo-client-key with --nats would be ignored; the trusted party's reader
    /// is `tfhe-sbc-server read`.
    pub(crate) fn refusal(&self) -> Option<String> {
        (self.nats.is_some() && self.demo_client_key.is_some()).then(|| {
            "the argument '--demo-client-key' cannot be used with '--nats' (the JetStream service decrypts \
             nothing): read and decrypt its results with `tfhe-sbc-server read --keys DIR --client-key FILE \
             --nats URL`"
                .to_owned()
        })
    }

    /// The listener's bounds (`--max-connections`, `--max-connections-per-peer`, `--idle-timeout`).
    pub(crate) fn listener_limits(&self) -> listener::ListenerLimits {
        listener::ListenerLimits {
            max_connections: self.max_connections.max(1),
            max_per_peer: self.max_connections_per_peer,
            idle_timeout: std::time::Duration::from_secs(self.idle_timeout.max(1)),
            ..Default::default()
        }
    }

    /// The conversion queue's bounds of the single-process server.
    pub(crate) fn queue_limits(&self) -> conversion_queue::QueueLimits {
        conversion_queue::QueueLimits {
            max_bytes: self.conversion_queue_bytes.max(1),
            per_device: self.conversion_queue_per_device.max(1),
        }
    }

    /// The replay state of the single-process server (`--state`, or `replay_state.txt` in the key set),
    /// written back at once: a path the server cannot write is refused at start-up, not at the first
    /// acknowledgement (which it could not make durable).
    pub(crate) fn floors(&self) -> Result<ReplayState, String> {
        let state = match &self.state {
            Some(path) => ReplayState::load(path)?,
            None => ReplayState::load(&self.key_set()?.join(REPLAY_STATE_FILE))?,
        };
        state.save().map_err(|e| {
            format!(
                "cannot write the replay state {}: {e}: give --state a file in a directory this server can write",
                state.path().display()
            )
        })?;
        Ok(state)
    }

    /// The intake's configuration of the single-process server (`--max-message-age`).
    pub(crate) fn intake_config(&self) -> Result<tfhe_sbc_adapter::intake::IntakeConfig, String> {
        if self.max_message_age == 0 {
            return Err("--max-message-age 0: a message needs time to arrive; give 1 second or more".to_owned());
        }
        Ok(tfhe_sbc_adapter::intake::IntakeConfig {
            max_message_age: std::time::Duration::from_secs(self.max_message_age),
            ..Default::default()
        })
    }

    /// The one key set of the single-process server.
    pub(crate) fn key_set(&self) -> Result<&Path, String> {
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
