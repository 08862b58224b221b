//! The server on NATS JetStream (`--nats URL`): this process runs the gateway role, the worker role or
//! both, over the key set's key store (MAC keys and device modes; no server key is needed to commit
//! frames). Any number of gateways and workers share one JetStream (`docs/operations.md`).

use crate::gateway::{Gateway, GatewayCounts, GatewayLimits};
use crate::jetstream::{JETSTREAM_PATIENCE, Topology};
use crate::ledger_watermark::LedgerWatermark;
use crate::watermark_gossip::{self, Gossip, Subjects};
use crate::worker::{Worker, WorkerCounts};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig};
use tfhe_sbc_adapter::key_set::development::development_warning;
use tfhe_sbc_adapter::key_set::files::KEY_STORE_FILE;
use tfhe_sbc_adapter::key_store::KeyStore;
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tracing::{info, warn};

/// Which roles this process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// Devices' connections in, frames published to JetStream.
    Gateway,
    /// Frames from JetStream committed exactly once into the results store.
    Worker,
    /// Both.
    Both,
}

impl Role {
    /// Whether the process runs the gateway.
    pub fn runs_gateway(self) -> bool {
        match self {
            Self::Gateway | Self::Both => true,
            Self::Worker => false,
        }
    }

    /// Whether the process runs the worker.
    pub fn runs_worker(self) -> bool {
        match self {
            Self::Worker | Self::Both => true,
            Self::Gateway => false,
        }
    }
}

/// What `--nats` runs with.
pub struct ServiceOptions<'a> {
    /// The NATS server URL(s), comma-separated.
    pub nats: &'a str,
    /// How to authenticate and secure the connection (`--nats-creds`, `--nats-tls-ca`, ...).
    pub connection: &'a crate::nats_connection::NatsConnection,
    /// The roles.
    pub role: Role,
    /// The key set directories (one or more; device ids differ between them).
    pub keys: &'a [PathBuf],
    /// The gateway's address.
    pub listen: &'a str,
    /// Where to write the address listened on.
    pub address_file: Option<&'a Path>,
    /// Worker tasks in this process.
    pub workers: usize,
    /// Where to serve Prometheus-format metrics, if anywhere.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// The topology's settings.
    pub topology: Topology,
    /// The gateway's bounds.
    pub limits: GatewayLimits,
    /// Where the process keeps its ledger watermark across restarts, if anywhere.
    pub watermark_file: Option<&'a Path>,
}

/// One intake over the key stores of every key set in `keys` (each device's MAC key, key id and mode).
fn intake_of(keys: &[PathBuf]) -> Result<Intake, String> {
    let mut intake = Intake::new(IntakeConfig::default(), DeviceRegistry::new());
    for dir in keys {
        let path = dir.join(KEY_STORE_FILE);
        let store = KeyStore::read_file(&path).map_err(|e| e.to_string())?;
        if let Some(warning) = development_warning(&store, &path) {
            tracing::warn!("{warning}");
        }
        store.register_into(&mut intake).map_err(|e| {
            if let IntakeError::DuplicateDevice(id) = e {
                format!(
                    "device {id} of {} is also in another key set given to --keys: device ids must differ between \
                     the key sets one service serves",
                    path.display()
                )
            } else {
                format!("{}: {e}", path.display())
            }
        })?;
    }
    Ok(intake)
}

/// Runs the roles until interrupted (or the NATS connection is closed for good).
pub fn run(options: ServiceOptions<'_>) -> Result<(), String> {
    let intake = Arc::new(intake_of(options.keys)?);
    let devices = intake.device_count();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    runtime.block_on(async {
        if let Some(address) = options.metrics_listen {
            metrics_exporter_prometheus::PrometheusBuilder::new()
                .with_http_listener(address)
                .install()
                .map_err(|e| format!("cannot serve metrics on {address}: {e}"))?;
            info!("metrics on http://{address}/metrics");
        }
        let inbox = crate::nats_connection::inbox_prefix(&options.topology.prefix);
        let client = options
            .connection
            .connect(options.nats, &inbox)
            .await
            .map_err(|e| e.to_string())?;
        let mut tasks = tokio::task::JoinSet::new();
        let gateway_counts = Arc::new(GatewayCounts::default());
        let worker_counts = Arc::new(WorkerCounts::default());
        // The gateway's watermark and the workers' (each compares the ledgers it reads with what it saw
        // itself), both read from the process's file if it has one, which keeps their union.
        let load = || match options.watermark_file {
            Some(path) => LedgerWatermark::load(path),
            None => Ok(LedgerWatermark::new()),
        };
        let (gateway_watermark, watermark) = (Arc::new(load()?), Arc::new(load()?));
        if let Some(path) = options.watermark_file {
            let both = [gateway_watermark.clone(), watermark.clone()];
            let path = path.to_owned();
            tasks.spawn(async move {
                let mut every_second = tokio::time::interval(Duration::from_secs(1));
                loop {
                    every_second.tick().await;
                    let (both, path) = (both.clone(), path.clone());
                    let save = move || LedgerWatermark::save_all(&[&both[0], &both[1]], &path);
                    match tokio::task::spawn_blocking(save).await {
                        Ok(Ok(_)) => {}
                        Ok(Err(e)) => warn!("{e} (a restart would forget what this process saw)"),
                        Err(e) => warn!("the ledger watermark's writer stopped: {e}"),
                    }
                }
            });
        }
        // The watermarks of the other processes of the service, and ours to them (`watermark_gossip`, on a
        // connection of its own whose subscriptions hold few messages): the running processes' answers are
        // merged before any device is served, so that a process that never read a device's ledger still
        // knows where the others saw it.
        let gossip_client = options
            .connection
            .connect_with(options.nats, watermark_gossip::SUBSCRIPTION_CAPACITY, &inbox)
            .await
            .map_err(|e| e.to_string())?;
        let gossip = Gossip::new(
            gossip_client,
            Subjects::new(&options.topology.prefix),
            intake.clone(),
            vec![gateway_watermark.clone(), watermark.clone()],
        );
        tasks.spawn(gossip.start().await?);
        if options.role.runs_gateway() {
            let handles = options
                .topology
                .open_when_ready(client.clone(), JETSTREAM_PATIENCE)
                .await?;
            let listener = tokio::net::TcpListener::bind(options.listen).await.map_err(|e| {
                format!(
                    "cannot listen on {}: {e} (choose another --listen address)",
                    options.listen
                )
            })?;
            let address = listener.local_addr().map_err(|e| e.to_string())?;
            if let Some(path) = options.address_file {
                std::fs::write(path, format!("{address}\n"))
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            info!(
                "gateway listening on {address}, {devices} devices, NATS {}",
                options.nats
            );
            let gateway = Arc::new(Gateway::new(
                intake.clone(),
                handles,
                options.topology.clone(),
                options.limits.clone(),
                gateway_counts.clone(),
                gateway_watermark.clone(),
            ));
            tasks.spawn(async move {
                gateway.serve(listener).await;
                Ok(())
            });
        }
        if options.role.runs_worker() {
            for _ in 0..options.workers.max(1) {
                let handles = options
                    .topology
                    .open_when_ready(client.clone(), JETSTREAM_PATIENCE)
                    .await?;
                let worker = Worker::new(
                    handles,
                    options.topology.clone(),
                    intake.clone(),
                    worker_counts.clone(),
                    watermark.clone(),
                );
                tasks.spawn(async move { worker.run().await });
            }
            // The repair pass: at start-up, then every 30 s, every message completed and not announced.
            let handles = options
                .topology
                .open_when_ready(client.clone(), JETSTREAM_PATIENCE)
                .await?;
            let repairer = Worker::new(
                handles,
                options.topology.clone(),
                intake.clone(),
                worker_counts.clone(),
                watermark.clone(),
            );
            tasks.spawn(async move { repairer.repair_every(Duration::from_secs(30)).await });
            info!("{} worker(s) started, NATS {}", options.workers.max(1), options.nats);
        }
        let outcome = tokio::select! {
            Some(ended) = tasks.join_next() => ended.map_err(|e| e.to_string()).and_then(|r| r),
            _ = tokio::signal::ctrl_c() => Ok(()),
        };
        if let Some(path) = options.watermark_file
            && let Err(e) = LedgerWatermark::save_all(&[&gateway_watermark, &watermark], path)
        {
            warn!("{e}");
        }
        let c = &worker_counts;
        let g = &gateway_counts;
        println!(
            "gateway: {} accepted, {} duplicates, {} busy, {} refused, {} timeouts; worker: {} committed, {} already \
             committed, {} messages, {} dead-lettered, {} redeliveries, {} conflicts, {} repaired",
            g.accepted.load(Ordering::Relaxed),
            g.duplicates.load(Ordering::Relaxed),
            g.busy.load(Ordering::Relaxed),
            g.refused.load(Ordering::Relaxed),
            g.timeouts.load(Ordering::Relaxed),
            c.committed.load(Ordering::Relaxed),
            c.already_committed.load(Ordering::Relaxed),
            c.messages.load(Ordering::Relaxed),
            c.dead_lettered.load(Ordering::Relaxed),
            c.redeliveries.load(Ordering::Relaxed),
            c.conflicts.load(Ordering::Relaxed),
            c.repaired.load(Ordering::Relaxed),
        );
        outcome
    })
}
