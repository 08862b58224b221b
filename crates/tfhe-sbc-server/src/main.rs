//! `tfhe-sbc-server`: the reference server a cloud user can run and read. It loads the key set the
//! provisioning tool wrote (`server_key.bin`, `key_store.bin`), accepts device connections over TCP (tokio),
//! runs every frame through the authenticated intake (`tfhe_sbc_adapter::intake`, one thread), acknowledges
//! it (`tfhe_sbc_adapter::ack`: accepted, or already accepted for a resend), and converts what the frames
//! complete with the adapter's `KeyedIntake` and the key set's converter: for a boolean key set, each
//! message into tfhe-rs boolean ciphertexts, one per message bit (extraction and, for `tfhe-lib`, a key
//! switch with the device's key); for an integer key set, each frame into `FheUint` readings of the width
//! its reading format states (`u8`/`i8` 8 bits, `u16`/`i16` 16, `u32`/`i32`/`f32` 32), or of
//! `--integer-bits` bits when it states none, whatever the device's key mode (fleet, per-device or public
//! key). It decrypts nothing.
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

mod accept;
mod cli;
mod cli_values;
mod conversion_queue;
mod gateway;
mod jetstream;
mod ledger_store;
mod ledger_watermark;
mod listener;
mod log_rate;
mod nats_connection;
mod net;
mod pipeline;
mod replay_state;
mod service;
mod single_process;
mod store_reader;
mod watermark_gossip;
mod worker;

use cli::{Cli, Command};
use std::process::ExitCode;

/// The command line, or exit status 2 with clap's error in one line saying what to fix (its text before the
/// usage: the message, the missing arguments, a tip); `--help` and `--version` print as usual.
fn parse_command_line<P: clap::Parser>() -> P {
    match P::try_parse() {
        Ok(parsed) => parsed,
        Err(e) if e.use_stderr() => {
            let text = e.to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("{} (see --help)", message.join(" "));
            std::process::exit(2)
        }
        Err(e) => e.exit(),
    }
}

/// The log filter's directive for async-nats's own lines (see `main`).
const ASYNC_NATS_AT_WARN: &str = "async_nats=warn";

fn main() -> ExitCode {
    let cli: Cli = parse_command_line();
    if let Some(refusal) = cli.refusal() {
        eprintln!("error: {refusal} (see --help)");
        return ExitCode::from(2);
    }
    // RUST_LOG if set, else info; async-nats's own lines at warn and above only: it logs every connection
    // event at info, one per message NATS drops for a full subscription (a flood on a subject wrote 8,000 to
    // 20,000 lines a second); the service logs those events itself, at most one line every 10 s.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info".into())
        .add_directive(
            ASYNC_NATS_AT_WARN
                .parse()
                .unwrap_or_else(|_| tracing::Level::WARN.into()),
        );
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    let outcome = match (&cli.command, &cli.nats) {
        (Some(Command::Read(args)), _) => store_reader::run(args),
        (None, Some(nats)) => service::run(service::ServiceOptions {
            nats,
            connection: &cli.nats_connection,
            role: cli.role,
            keys: &cli.keys,
            listen: &cli.listen,
            address_file: cli.address_file.as_deref(),
            watermark_file: cli.watermark_file.as_deref(),
            workers: cli.workers,
            metrics_listen: cli.metrics_listen,
            topology: jetstream::Topology {
                replicas: cli.replicas,
                frames_max_bytes: cli.stream_max_bytes,
                ack_wait: std::time::Duration::from_secs(cli.ack_wait.max(1)),
                frames_in_flight: cli.frames_in_flight,
                ..Default::default()
            },
            limits: gateway::GatewayLimits {
                listener: cli.listener_limits(),
                ..Default::default()
            },
        }),
        (None, None) => single_process::run(&cli),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tfhe-sbc-server: error: {message}");
            ExitCode::from(2)
        }
    }
}
