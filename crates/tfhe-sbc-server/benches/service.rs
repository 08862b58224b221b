//! The server's throughput and acknowledgement latency, in one run, on the same sealed frames (integer set,
//! fleet meters, one 16 KiB frame per message), each configuration on a fresh nats-server (the pinned
//! binary, `sync_interval: always`) on loopback:
//!
//! * the single-process server (no NATS; every frame converted into `FheUint16` readings);
//! * `--nats`, gateway alone (frames/s until every frame is acknowledged, i.e. stored by JetStream and
//!   admitted by its device's ledger; 60 frames per device, below the ledger's backlog of 64 messages);
//! * `--nats`, gateway and 1 worker, then 2 workers (frames/s until every message is committed and
//!   announced);
//!
//! then the gateway's resident memory with 2,000 idle connections (goal: < 20 MiB more than idle).
//!
//! With `TSBC_BENCH_BASELINE_SERVER=<a tfhe-sbc-server binary>`, the JetStream configurations also run on
//! that binary, alternating with this build, and print this build's rate over the baseline's.
//!
//! `cargo bench -p tfhe-sbc-server --bench service` runs the full sizes (8 devices x 100 frames); run as a
//! test (`cargo test --benches`) it runs 2 devices x 5 frames and 50 idle connections, to check it works.
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::nats::NatsServer;
use common::service::{Meter, Server, connect, integer_key_set, readings, send};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::key_store::KeyMode;
use tfhe_sbc_device::frame::ack::AckStatus;

/// Sizes of a run.
struct Sizes {
    devices: u64,
    frames: u64,
    idle: usize,
}

/// Sends every device's frames on its own connection and thread, one frame in flight each; the
/// acknowledgement latencies (all "accepted", after "busy" answers sent again) and the wall time.
fn drive(address: &str, keys: &Path, frames: &[(u64, Vec<Vec<u8>>)]) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let latencies = std::thread::scope(|scope| {
        let handles: Vec<_> = frames
            .iter()
            .map(|(id, frames)| {
                scope.spawn(move || {
                    let meter = Meter::new(keys, *id, 0);
                    let mut stream = connect(address);
                    frames
                        .iter()
                        .map(|frame| {
                            // "busy" (a device's backlog of 64 messages not yet stored by the workers) is
                            // answered as a device does: send it again a moment later. The latency counts
                            // from the first send to "accepted".
                            let sent = Instant::now();
                            loop {
                                let ack = send(&mut stream, frame, meter.credentials.mac_key()).unwrap();
                                if ack.status != AckStatus::Busy {
                                    assert_eq!(ack.status, AckStatus::Accepted);
                                    break sent.elapsed();
                                }
                                std::thread::sleep(Duration::from_millis(10));
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect::<Vec<_>>()
    });
    (latencies, started.elapsed())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3
}

/// Waits (at most 120 s) until the results stream holds `expected` announcements.
fn wait_committed(url: &str, expected: u64) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = async_nats::connect(url).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(mut stream) = js.get_stream("TSBC_RESULTS").await
                && stream.info().await.unwrap().state.messages >= expected
            {
                return;
            }
            assert!(Instant::now() < deadline, "not committed within 120 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let sizes = if full {
        Sizes {
            devices: 8,
            frames: 100,
            idle: 2000,
        }
    } else {
        Sizes {
            devices: 2,
            frames: 5,
            idle: 50,
        }
    };
    // 2,000 sockets on each side: raise this process's descriptor limit (best effort).
    let _ = std::process::Command::new("prlimit")
        .args(["--pid", &std::process::id().to_string(), "--nofile=8192:8192"])
        .status();
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0008);
    let ids: Vec<u64> = (0..sizes.devices).map(|i| 200 + i).collect();
    for &id in &ids {
        tfhe_sbc_keys::commands::issue(&keys, id, KeyMode::FleetSecretKey, None).unwrap();
    }
    let frames: Vec<(u64, Vec<Vec<u8>>)> = ids
        .iter()
        .map(|&id| {
            let mut meter = Meter::new(&keys, id, 0);
            let frames = (0..sizes.frames)
                .map(|m| meter.message(&readings(id, m * 2)).remove(0))
                .collect();
            (id, frames)
        })
        .collect();
    let total = sizes.devices * sizes.frames;
    println!(
        "{} devices x {} frames of {} bytes",
        sizes.devices,
        sizes.frames,
        frames[0].1[0].len()
    );
    println!("configuration | frames/s | ack p50 ms | ack p99 ms");
    let address_file = root.path().join("address");
    let report = |name: &str, latencies: &mut Vec<Duration>, elapsed: Duration| {
        latencies.sort();
        println!(
            "{name} | {:.0} | {:.2} | {:.2}",
            latencies.len() as f64 / elapsed.as_secs_f64(),
            percentile(latencies, 0.5),
            percentile(latencies, 0.99)
        );
    };

    // The single-process server (no NATS).
    {
        let _ = std::fs::remove_file(&address_file);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
            .args(["--keys", keys.to_str().unwrap(), "--listen", "127.0.0.1:0"])
            .args(["--address-file", address_file.to_str().unwrap(), "--integer-bits", "16"])
            .args(["--exit-after", &total.to_string()])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let address = loop {
            if let Ok(text) = std::fs::read_to_string(&address_file)
                && text.ends_with('\n')
            {
                break text.trim().to_owned();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let started = Instant::now();
        let (mut latencies, _) = drive(&address, &keys, &frames);
        // Every frame acknowledged: the time to measure (the server's exit, after --exit-after's grace for
        // the last acknowledgements, is not).
        let elapsed = started.elapsed();
        let status = child.wait().unwrap();
        assert!(status.success());
        report(
            "single process (acks after its replay state is on disk; frames in memory; converted)",
            &mut latencies,
            elapsed,
        );
    }

    // JetStream: the gateway alone, then with 1 and 2 workers; with a baseline server binary
    // (`TSBC_BENCH_BASELINE_SERVER`, e.g. an earlier commit's build), each configuration runs on the baseline
    // and on this build in turn, twice, and the ratio of their best rates is printed: same machine, same run.
    let baseline = std::env::var("TSBC_BENCH_BASELINE_SERVER").ok();
    let builds: Vec<(&str, String)> = match &baseline {
        Some(path) => vec![
            ("baseline", format!("ulimit -n 8192; exec {path:?} \"$@\";")),
            ("this build", "ulimit -n 8192;".to_owned()),
        ],
        None => vec![("this build", "ulimit -n 8192;".to_owned())],
    };
    let rounds = if baseline.is_some() { 2 } else { 1 };
    for (name, extra) in [
        (
            "JetStream, gateway alone (acks after JetStream's)",
            &["--role", "gateway"][..],
        ),
        (
            "JetStream, gateway + 1 worker (until committed)",
            &["--role", "both", "--workers", "1"][..],
        ),
        (
            "JetStream, gateway + 2 workers (until committed)",
            &["--role", "both", "--workers", "2"][..],
        ),
    ] {
        let mut best = vec![0f64; builds.len()];
        for _ in 0..rounds {
            for (b, (build, shell)) in builds.iter().enumerate() {
                let nats = NatsServer::start();
                let (server, address) =
                    Server::start_with(&keys, &nats.url(), &address_file, extra, Stdio::null(), shell);
                // A gateway alone admits at most a device's ledger backlog (64 messages) before answering
                // "busy": nothing stores them. It sends 60 frames per device.
                let alone = !extra.contains(&"both");
                let frames: Vec<(u64, Vec<Vec<u8>>)> = frames
                    .iter()
                    .map(|(id, f)| (*id, f[..if alone { f.len().min(60) } else { f.len() }].to_vec()))
                    .collect();
                let started = Instant::now();
                let (mut latencies, _) = drive(&address, &keys, &frames);
                if extra.contains(&"both") {
                    wait_committed(&nats.url(), total);
                }
                let label = if baseline.is_some() {
                    format!("{name}, {build}")
                } else {
                    name.to_owned()
                };
                best[b] = best[b].max(latencies.len() as f64 / started.elapsed().as_secs_f64());
                report(&label, &mut latencies, started.elapsed());
                drop(server);
            }
        }
        if baseline.is_some() {
            println!(
                "{name}: this build / baseline = {:.2} (best of {rounds} each)",
                best[1] / best[0]
            );
        }
    }

    // The gateway's memory with idle connections.
    let nats = NatsServer::start();
    let (server, address) = Server::start_with(
        &keys,
        &nats.url(),
        &address_file,
        // Every socket from 127.0.0.1: lift the per-address cap (16) so that all of them are held.
        &[
            "--role",
            "gateway",
            "--max-connections",
            "4096",
            "--max-connections-per-peer",
            "4096",
        ],
        Stdio::null(),
        "ulimit -n 8192;",
    );
    std::thread::sleep(Duration::from_millis(500));
    let before = rss_kib(server.child.id());
    let idle: Vec<_> = (0..sizes.idle)
        .map(|_| std::net::TcpStream::connect(&address).unwrap())
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let after = rss_kib(server.child.id());
    println!(
        "gateway RSS: {:.1} MiB idle, {:.1} MiB with {} idle connections (+{:.1} MiB)",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        idle.len(),
        (after.saturating_sub(before)) as f64 / 1024.0
    );
}
