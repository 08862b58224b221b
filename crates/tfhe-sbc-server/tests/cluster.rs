//! The service on a 3-node JetStream cluster under a fault (real nats-servers on loopback, replicas 3): two
//! gateway processes and two worker processes serving three key sets at once, 212 simulated devices in
//! every key mode sending 4,626 single- and two-chunk messages (5,256 frames; `common/cluster_harness.rs`).
//!
//! The fault is a parameter, `TSBC_CLUSTER_FAULT` (`common/faults.rs`):
//!
//! * `kills` (the default, the run of `cargo test`): one worker and one gateway killed (SIGKILL) and
//!   started again, both workers stalled (SIGSTOP) for `TSBC_WORKER_STALL_S` (12 s), one NATS node killed
//!   and started again;
//! * `stall`: both worker processes stalled for `TSBC_WORKER_STALL_S` (20 s), then resumed;
//! * `partition`: the node leading `TSBC_FRAMES` cut from its peers' routes for `TSBC_CLUSTER_FAULT_S`
//!   (20 s) by iptables rules on loopback (root; the rules are removed on drop, also after a panic);
//! * `leader`: the node leading `TSBC_FRAMES` killed (SIGKILL) and started again;
//! * `all-nodes`: all three nodes killed at once (SIGKILL) and started again;
//! * `store-full`: the disk of the node leading `TSBC_FRAMES` (a tmpfs, root) full for
//!   `TSBC_CLUSTER_FAULT_S` (18 s), then freed; the node restarted if its JetStream stays disabled.
//!
//! Each worker process runs `TSBC_CLUSTER_WORKER_TASKS` tasks (2). `scripts/cluster-faults.sh` runs every
//! fault with 2 and 4 tasks, on an idle and on a busy machine. At the end the run counts the messages
//! acknowledged (every frame answered "accepted" or "duplicate"), announced, lost (acknowledged, never
//! announced) and duplicated (returned twice by a reader, or announced twice with different contents),
//! and the extra identical copies on the results stream; it prints them on one line starting
//! `CLUSTER-RUN`, and fails unless 0 are lost and 0 duplicated, every announced message decrypts to what
//! was sent, and every acknowledgement opened under the device's MAC key.
#![allow(clippy::unwrap_used)]

#[path = "common/cluster_harness.rs"]
mod cluster_harness;
#[path = "common/cluster_results.rs"]
mod cluster_results;
mod common;
#[path = "common/faults.rs"]
mod faults;

use cluster_harness::{Fleet, Roles, Seen, Timeline, send_all, wait_for};
use common::nats::{ClusterOptions, NatsServer};
use common::process::RoleProcess;
use faults::{DiskFiller, Fault, Partition, env_or, is_root, role_nodes, stream_leader};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::results::FRAMES_STREAM;

#[test]
fn a_cluster_commits_every_acknowledged_message_once_under_a_fault() {
    let fault: Fault = env_or("TSBC_CLUSTER_FAULT", Fault::Kills);
    let tasks: u32 = env_or("TSBC_CLUSTER_WORKER_TASKS", 2);
    if fault.needs_root() && !is_root() {
        eprintln!(
            "\n*** SKIPPED: needs root: the {} fault uses iptables or mount ***\n",
            fault.name()
        );
        println!("CLUSTER-RUN fault={} tasks={tasks} SKIPPED: needs root", fault.name());
        return;
    }
    let started = Instant::now();
    let root = tempfile::tempdir().unwrap();
    let fleet = Fleet::provision(root.path());
    assert!(fleet.devices.len() >= 200 && fleet.total_frames >= 5_000);
    println!(
        "{} devices, {} messages, {} frames sealed in {:.1?}; fault {}, {tasks} tasks per worker process",
        fleet.devices.len(),
        fleet.expected.len(),
        fleet.total_frames,
        started.elapsed(),
        fault.name()
    );

    let options = ClusterOptions {
        // Each node its own user, so that an owner rule matches the routes the partitioned node opens.
        first_uid: (fault == Fault::Partition).then_some(61_000),
        tmpfs_store_mib: (fault == Fault::StoreFull).then_some(1024),
    };
    let mut nats = NatsServer::cluster_with(3, options);
    let urls: Vec<String> = nats.iter().map(NatsServer::url).collect();
    let mut roles = Roles::start(root.path(), |role| fleet.role_args(role, &urls, tasks));
    let addresses = Arc::new(RwLock::new(
        roles.gateways.iter().map(RoleProcess::address).collect::<Vec<_>>(),
    ));
    let seen = Arc::new(Seen::default());
    let devices = fleet.devices;
    let fleet = Fleet {
        devices: Vec::new(),
        ..fleet
    };
    let (timeline, sampler) = Timeline::start(&seen);
    let senders = send_all(devices, &addresses, &seen);
    let runtime = common::service::runtime();

    let total = fleet.total_frames;
    let window = inject(
        fault, &mut nats, &mut roles, &addresses, &seen, &timeline, &runtime, total,
    );
    for sender in senders {
        sender.join().unwrap();
    }
    timeline.stop();
    sampler.join().unwrap();
    let sending = timeline.last_acknowledged();
    println!("the last frame acknowledged in second {sending}");
    if let Some((from, to)) = window {
        println!("the fault from {from:.1} s to {to:.1} s; the devices' answers from 1 s before to 20 s after:");
        println!("  {}", timeline.window(from - 1.0, to + 20.0));
    }

    let acknowledged = seen.acknowledged_messages.load(Relaxed);
    let findings = runtime.block_on(cluster_results::check(&fleet, &urls, acknowledged));
    let c = &findings.counts;
    println!(
        "CLUSTER-RUN fault={} tasks={tasks} acknowledged={} announced={} lost={} duplicated={} repeats={} \
         checked={} sending={sending}s wall={:.1}s",
        fault.name(),
        c.acknowledged,
        c.announced,
        c.lost,
        c.duplicated,
        c.repeats,
        c.checked,
        started.elapsed().as_secs_f64()
    );
    if c.lost > 0 || c.duplicated > 0 {
        for role in roles.workers.iter().chain(&roles.gateways) {
            print_warnings(role);
        }
        for node in &nats {
            let lines = node.log_lines(&["[ERR]", "[WRN]"]);
            println!("{}: {} warnings, the last 10:", node.name, lines.len());
            for line in &lines[lines.len().saturating_sub(10)..] {
                println!("  {line}");
            }
        }
    }
    assert_eq!(seen.unopened.load(Relaxed), 0, "an acknowledgement did not open");
    assert_eq!(
        c.acknowledged,
        fleet.expected.len() as u64,
        "a message never acknowledged"
    );
    assert!(
        findings.missing.is_empty(),
        "{} acknowledged, never announced: {:?}...",
        c.lost,
        &findings.missing[..findings.missing.len().min(5)]
    );
    assert!(
        findings.duplicated.is_empty(),
        "announced twice: {:?}",
        findings.duplicated
    );
    assert_eq!(c.checked, c.announced, "a message of no key set");
    if fault == Fault::Kills {
        assert!(
            seen.resends.load(Relaxed) > 0,
            "the gateway's kill broke no device's connection"
        );
    }

    // Every role still running, then the counts.
    for role in roles.gateways.iter_mut().chain(roles.workers.iter_mut()) {
        role.assert_running();
    }
    let summaries: Vec<String> = roles
        .gateways
        .iter_mut()
        .chain(roles.workers.iter_mut())
        .map(|p| {
            let summary = p.interrupt();
            if p.name.starts_with("worker") && summary.contains("worker: 0 committed") {
                // A worker that committed nothing while the other did everything: what it was doing.
                print_warnings(p);
            }
            format!("  {}: {summary}", p.name)
        })
        .collect();
    println!(
        "{} messages ({} frames) committed once and decrypted right, in {:.1?} in all.\n\
         devices: {} accepted, {} duplicate answers (a resend of a frame already in), {} busy answers, {} resends, \
         {} connections\nprocesses since their last start (a killed process's counts are lost):\n{}",
        c.checked,
        total,
        started.elapsed(),
        seen.accepted.load(Relaxed),
        seen.duplicates.load(Relaxed),
        seen.busy.load(Relaxed),
        seen.resends.load(Relaxed),
        seen.connections.load(Relaxed),
        summaries.join("\n")
    );
}

/// Injects `fault` while the devices send `total` frames; the fault's window (seconds of `timeline`) when
/// it lasts.
#[allow(clippy::too_many_arguments)]
fn inject(
    fault: Fault,
    nats: &mut [NatsServer],
    roles: &mut Roles,
    addresses: &RwLock<Vec<String>>,
    seen: &Seen,
    timeline: &Timeline,
    runtime: &tokio::runtime::Runtime,
    total: u64,
) -> Option<(f64, f64)> {
    let urls: Vec<String> = nats.iter().map(NatsServer::url).collect();
    let fault_s = Duration::from_secs(env_or(
        "TSBC_CLUSTER_FAULT_S",
        if fault == Fault::StoreFull { 18 } else { 20 },
    ));
    match fault {
        Fault::Kills => {
            wait_for(seen, total * 15 / 100);
            timeline.mark("kill -9 worker-0");
            roles.workers[0].kill();
            std::thread::sleep(Duration::from_secs(2));
            roles.workers[0].restart();
            wait_for(seen, total * 35 / 100);
            timeline.mark("kill -9 gateway-0");
            roles.gateways[0].kill();
            std::thread::sleep(Duration::from_secs(2));
            roles.gateways[0].restart();
            addresses.write().unwrap()[0] = roles.gateways[0].address();
            wait_for(seen, total * 45 / 100);
            // Both worker processes stalled while the gateways go on admitting: the backlog grows, the
            // stalled workers' frames are redelivered after ack_wait, and no limit may drop an acknowledged
            // frame.
            let window = stall_workers(roles, timeline, Duration::from_secs(env_or("TSBC_WORKER_STALL_S", 12)));
            wait_for(seen, total * 60 / 100);
            timeline.mark("kill -9 NATS node n2");
            nats[2].kill();
            std::thread::sleep(Duration::from_secs(3));
            nats[2].restart();
            timeline.mark("n2 started again");
            Some(window)
        }
        Fault::Stall => {
            wait_for(seen, total * 30 / 100);
            Some(stall_workers(
                roles,
                timeline,
                Duration::from_secs(env_or("TSBC_WORKER_STALL_S", 20)),
            ))
        }
        Fault::Partition => {
            wait_for(seen, total * 30 / 100);
            let i = leader(nats, runtime);
            println!("  roles' nodes: {}", role_nodes(nats, &role_pids(roles)));
            let cut = Partition::cut(nats, i);
            let from = timeline.now();
            timeline.mark(&format!(
                "{} (leads {FRAMES_STREAM}) cut from its peers for {fault_s:?}",
                nats[i].name
            ));
            std::thread::sleep(fault_s);
            drop(cut);
            timeline.mark(&format!("{}'s routes healed", nats[i].name));
            println!("{FRAMES_STREAM} is now led by {}", nats[leader(nats, runtime)].name);
            Some((from, timeline.now()))
        }
        Fault::Leader => {
            wait_for(seen, total * 30 / 100);
            let i = leader(nats, runtime);
            println!("  roles' nodes: {}", role_nodes(nats, &role_pids(roles)));
            let from = timeline.now();
            timeline.mark(&format!("kill -9 {} (leads {FRAMES_STREAM})", nats[i].name));
            nats[i].kill();
            std::thread::sleep(Duration::from_secs(3));
            nats[i].restart();
            timeline.mark(&format!("{} started again", nats[i].name));
            let now_leading = runtime.block_on(stream_leader(&urls, FRAMES_STREAM));
            println!("{FRAMES_STREAM} is now led by {now_leading}");
            Some((from, timeline.now()))
        }
        Fault::AllNodes => {
            wait_for(seen, total * 30 / 100);
            let from = timeline.now();
            timeline.mark("kill -9 all three NATS nodes");
            for node in nats.iter_mut() {
                node.kill();
            }
            std::thread::sleep(Duration::from_secs(2));
            for node in nats.iter_mut() {
                node.start_again();
            }
            timeline.mark("all three nodes started again");
            Some((from, timeline.now()))
        }
        Fault::StoreFull => {
            wait_for(seen, total * 30 / 100);
            let i = leader(nats, runtime);
            println!("  roles' nodes: {}", role_nodes(nats, &role_pids(roles)));
            let filler = DiskFiller::fill(&nats[i]);
            let from = timeline.now();
            timeline.mark(&format!(
                "{}'s store (leads {FRAMES_STREAM}) full for {fault_s:?}",
                nats[i].name
            ));
            std::thread::sleep(fault_s);
            println!(
                "  {} JetStream disabled: {}",
                nats[i].name,
                jetstream_disabled(&nats[i])
            );
            drop(filler);
            timeline.mark(&format!("{}'s store freed", nats[i].name));
            // Does the node take up its streams again by itself? Looked at for 15 s, then restarted.
            let freed = Instant::now();
            while jetstream_disabled(&nats[i]) && freed.elapsed() < Duration::from_secs(15) {
                std::thread::sleep(Duration::from_millis(500));
            }
            if jetstream_disabled(&nats[i]) {
                timeline.mark(&format!(
                    "{}'s JetStream still disabled 15 s after: restarted",
                    nats[i].name
                ));
                nats[i].restart();
            } else {
                timeline.mark(&format!("{}'s JetStream enabled, no restart", nats[i].name));
            }
            let lines = nats[i].log_lines(&["space", "resources", "DISABLED", "disabled", "[ERR]"]);
            println!(
                "  {}'s log: {} lines on the full store; the first 8:",
                nats[i].name,
                lines.len()
            );
            for line in lines.iter().take(8) {
                println!("    {line}");
            }
            Some((from, timeline.now()))
        }
    }
}

/// Every role's name and process id.
fn role_pids(roles: &Roles) -> Vec<(String, u32)> {
    let all = roles.gateways.iter().chain(&roles.workers);
    all.filter_map(|r| Some((r.name.clone(), r.pid()?))).collect()
}

/// The index in `nats` of the node leading the frames stream.
fn leader(nats: &[NatsServer], runtime: &tokio::runtime::Runtime) -> usize {
    let urls: Vec<String> = nats.iter().map(NatsServer::url).collect();
    let name = runtime.block_on(stream_leader(&urls, FRAMES_STREAM));
    nats.iter().position(|n| n.name == name).unwrap()
}

/// Both worker processes stopped (SIGSTOP) for `stall`, then resumed; the window.
fn stall_workers(roles: &mut Roles, timeline: &Timeline, stall: Duration) -> (f64, f64) {
    let from = timeline.now();
    timeline.mark(&format!("SIGSTOP both workers for {stall:?}"));
    for worker in &mut roles.workers {
        worker.pause();
    }
    std::thread::sleep(stall);
    for worker in &mut roles.workers {
        worker.resume();
    }
    timeline.mark("SIGCONT both workers");
    (from, timeline.now())
}

/// Whether `node`'s monitoring endpoint says its JetStream is disabled (or does not answer).
fn jetstream_disabled(node: &NatsServer) -> bool {
    node.monitor("/jsz")
        .is_none_or(|body| body.replace([' ', '\n'], "").contains("\"disabled\":true"))
}

/// The last 20 warnings and the last 8 lines of `role`'s log (where a failure's cause is looked for).
fn print_warnings(role: &RoleProcess) {
    let log = std::fs::read_to_string(&role.log).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    let warnings: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
        .collect();
    println!(
        "{}: {} lines, {} warnings; the last warnings:",
        role.log.display(),
        lines.len(),
        warnings.len()
    );
    for line in &warnings[warnings.len().saturating_sub(20)..] {
        println!("  {line}");
    }
    println!("  the last lines:");
    for line in &lines[lines.len().saturating_sub(8)..] {
        println!("  {line}");
    }
}
