//! The service on a 3-node JetStream cluster under faults (real nats-servers on loopback, replicas 3): two
//! gateway processes and two worker processes serving three key sets at once (integer; boolean
//! `DEFAULT_KS_PBS`, a big-key set; boolean `TFHE_LIB`), 212 simulated devices in every key mode (fleet,
//! per-device, public key) sending single- and two-chunk messages, more than 5,000 frames; each worker
//! process runs two tasks. While they send, one worker and one gateway are killed (SIGKILL) and started
//! again, both workers are stalled (SIGSTOP) for 12 s (`TSBC_WORKER_STALL_S`), and one NATS node is killed
//! and started again.
//!
//! A device acts as the Pi client does: it resends a frame (on the same or the other gateway) until an
//! acknowledgement that opens under its MAC key for that frame says "accepted" or "duplicate"; "busy" and
//! broken connections mean "try again". At the end:
//!
//! * every message the devices saw acknowledged has exactly one announcement in the results stream (none
//!   twice, none missing), and its stored frames, read back with the adapter's results reader, decrypt with
//!   the demo client key of their key set to exactly what was sent;
//! * no acknowledgement failed to open (a gateway never answers a good frame unauthenticated);
//! * resends, duplicates, "busy" answers, reconnections and the workers' redeliveries and commit conflicts
//!   are counted and printed.
#![allow(clippy::unwrap_used)]

mod common;

use common::nats::NatsServer;
use common::process::RoleProcess;
use common::service::Meter;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tfhe::FheUint16Id;
use tfhe::boolean::prelude::Ciphertext;
use tfhe::prelude::FheDecrypt;
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet};
use tfhe_sbc_adapter::interop::integer::{IntegerBridge, ReadingBits};
use tfhe_sbc_adapter::interop::{BooleanBridge, Converter};
use tfhe_sbc_adapter::key_set::client_key::{read_client_key, read_integer_client_key};
use tfhe_sbc_adapter::key_set::server_key::{read_integer_server_key, read_server_key};
use tfhe_sbc_adapter::key_store::{KeyMode, KeyStore, KeyedIntake};
use tfhe_sbc_adapter::results::reader::ResultsReader;
use tfhe_sbc_adapter::results::{MessageCommitted, RESULTS_BUCKET};
use tfhe_sbc_device::frame::ack::{ACK_BYTES, AckRecord, AckStatus, frame_tag};

/// The key sets and their devices: (directory name, first device id, devices per mode).
const INTEGER: (&str, u64) = ("integer", 1000);
const DEFAULT_KS_PBS: (&str, u64) = ("default-ks-pbs", 2000);
const TFHE_LIB: (&str, u64) = ("tfhe-lib", 3000);

/// What a message carries, to compare with what decrypts.
#[derive(Clone, Debug, PartialEq)]
enum Sent {
    Readings(Vec<u16>),
    Bytes(Vec<u8>),
}

/// One message, sealed before the run.
struct Outgoing {
    first: u64,
    sent: Sent,
    frames: Vec<Vec<u8>>,
}

/// One simulated device: its meter (MAC key), its messages, its connection.
struct Device {
    meter: Meter,
    messages: Vec<Outgoing>,
    connection: Option<TcpStream>,
}

/// What the devices saw.
#[derive(Default)]
struct Seen {
    frames: AtomicU64,
    accepted: AtomicU64,
    duplicates: AtomicU64,
    busy: AtomicU64,
    resends: AtomicU64,
    connections: AtomicU64,
    unopened: AtomicU64,
}

/// Provisions a key set of `set` (`None`: integer) in `root/<name>` with `modes` devices numbered from
/// `first`, and seals `messages` messages per device.
fn provision(
    root: &Path,
    (name, first): (&str, u64),
    set: Option<BooleanSet>,
    modes: &[(KeyMode, u64)],
    messages: u64,
) -> (PathBuf, Vec<Device>) {
    let dir = root.join(name);
    let key_id = 0x1d00_0200 + first as u32;
    match set {
        None => tfhe_sbc_keys::commands::init_integer(&dir, Some(key_id)).unwrap(),
        Some(set) => tfhe_sbc_keys::commands::init(&dir, set, Some(key_id)).unwrap(),
    }
    let mut devices = Vec::new();
    let mut id = first;
    for &(mode, count) in modes {
        tfhe_sbc_keys::commands::issue_devices(&dir, id, count, mode, None).unwrap();
        for _ in 0..count {
            let mut meter = Meter::new(&dir, id, 1 + id * 7);
            let messages = (0..messages)
                .map(|m| {
                    let first = meter.counter.next_sequence();
                    // Every sixth message spans two chunks.
                    let long = m % 6 == 5;
                    let (sent, frames) = if set.is_none() {
                        let count = if long { 300 } else { 3 };
                        let readings: Vec<u16> = (0..count).map(|i| (id * 131 + m * 17 + i * 7) as u16).collect();
                        let frames = meter.message(&readings);
                        (Sent::Readings(readings), frames)
                    } else {
                        let count = if long { 100 } else { 8 };
                        let bytes: Vec<u8> = (0..count).map(|i| (id * 3 + m * 5 + i) as u8).collect();
                        let frames = meter.seal(&bytes);
                        (Sent::Bytes(bytes), frames)
                    };
                    Outgoing { first, sent, frames }
                })
                .collect();
            devices.push(Device {
                meter,
                messages,
                connection: None,
            });
            id += 1;
        }
    }
    (dir, devices)
}

/// Sends `frame` of `device` until an acknowledgement that opens for it says accepted or duplicate,
/// on the gateways of `gateways` in turn (for at most 120 s).
fn deliver(device: &mut Device, frame: &[u8], gateways: &RwLock<Vec<String>>, seen: &Seen) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let tag = frame_tag(frame).unwrap();
    let mut attempt = device.meter.id as usize;
    let mut framed = (frame.len() as u32).to_le_bytes().to_vec();
    framed.extend_from_slice(frame);
    for tries in 0.. {
        assert!(
            Instant::now() < deadline,
            "device {}: no acknowledgement within 120 s",
            device.meter.id
        );
        if tries > 0 {
            seen.resends.fetch_add(1, Relaxed);
            std::thread::sleep(Duration::from_millis(150));
        }
        if device.connection.is_none() {
            attempt += 1;
            let address = {
                let gateways = gateways.read().unwrap();
                gateways[attempt % gateways.len()].clone()
            };
            let Ok(stream) = TcpStream::connect_timeout(&address.parse().unwrap(), Duration::from_secs(2)) else {
                continue;
            };
            stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
            stream.set_nodelay(true).unwrap();
            seen.connections.fetch_add(1, Relaxed);
            device.connection = Some(stream);
        }
        let stream = device.connection.as_mut().unwrap();
        let mut record = [0u8; ACK_BYTES];
        if stream.write_all(&framed).is_err() || stream.read_exact(&mut record).is_err() {
            device.connection = None;
            continue;
        }
        let opened = AckRecord::decode(&record)
            .ok()
            .and_then(|r| r.open(device.meter.credentials.mac_key(), tag).ok());
        match opened.map(|ack| ack.status) {
            Some(AckStatus::Accepted) => {
                seen.accepted.fetch_add(1, Relaxed);
                break;
            }
            Some(AckStatus::Duplicate) => {
                seen.duplicates.fetch_add(1, Relaxed);
                break;
            }
            Some(AckStatus::Busy) => {
                seen.busy.fetch_add(1, Relaxed);
            }
            Some(status) => panic!("device {}: a good frame refused: {status:?}", device.meter.id),
            None => {
                seen.unopened.fetch_add(1, Relaxed);
                device.connection = None;
            }
        }
    }
    seen.frames.fetch_add(1, Relaxed);
}

/// Waits until the devices have delivered `frames` frames (at most 180 s).
fn wait_for(seen: &Seen, frames: u64) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while seen.frames.load(Relaxed) < frames {
        assert!(Instant::now() < deadline, "the devices stalled");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every announced message of `store`'s devices, loaded through `reader`, converted and decrypted with
/// `decrypt`, checked against `expected`; returns how many were checked.
async fn check_key_set<C: Converter>(
    reader: &ResultsReader<C>,
    records: &[MessageCommitted],
    expected: &BTreeMap<(u64, u64), Sent>,
    store: &KeyStore,
    decrypt: impl Fn(&ResultsReader<C>, &[tfhe_sbc_adapter::interop::Input<C>]) -> Sent,
) -> usize {
    let mut checked = 0;
    for record in records.iter().filter(|r| store.get(r.device_id).is_some()) {
        let inputs = reader.load(record).await.unwrap();
        let key = (record.device_id, record.first_sequence);
        assert_eq!(decrypt(reader, &inputs), expected[&key], "message {key:?}");
        checked += 1;
    }
    checked
}

#[test]
fn a_cluster_commits_every_acknowledged_message_once_through_kills_of_a_worker_a_gateway_and_a_nats_node() {
    let started = Instant::now();
    let root = tempfile::tempdir().unwrap();
    let (fleet, per_device, public) = (KeyMode::FleetSecretKey, KeyMode::PerDeviceSecretKey, KeyMode::PublicKey);
    let (integer_dir, mut devices) = provision(
        root.path(),
        INTEGER,
        None,
        &[(fleet, 124), (per_device, 8), (public, 8)],
        22,
    );
    let (boolean_dir, boolean) = provision(
        root.path(),
        DEFAULT_KS_PBS,
        Some(BooleanSet::DefaultKsPbs),
        &[(fleet, 58), (per_device, 6), (public, 6)],
        22,
    );
    let (tfhe_lib_dir, tfhe_lib) = provision(root.path(), TFHE_LIB, Some(BooleanSet::TfheLib), &[(per_device, 2)], 3);
    devices.extend(boolean);
    devices.extend(tfhe_lib);
    let expected: BTreeMap<(u64, u64), Sent> = devices
        .iter()
        .flat_map(|d| d.messages.iter().map(|m| ((d.meter.id, m.first), m.sent.clone())))
        .collect();
    let total_frames: u64 = devices
        .iter()
        .flat_map(|d| &d.messages)
        .map(|m| m.frames.len() as u64)
        .sum();
    assert!(devices.len() >= 200 && total_frames >= 5_000);
    println!(
        "{} devices, {} messages, {} frames sealed in {:.1?}",
        devices.len(),
        expected.len(),
        total_frames,
        started.elapsed()
    );

    // The cluster and the roles.
    let mut nats = NatsServer::cluster(3);
    let urls: Vec<String> = nats.iter().map(NatsServer::url).collect();
    let role_args = |role: &str| -> Vec<String> {
        let mut args: Vec<String> = [&integer_dir, &boolean_dir, &tfhe_lib_dir]
            .iter()
            .flat_map(|dir| ["--keys".to_owned(), dir.display().to_string()])
            .collect();
        args.extend(
            [
                "--nats",
                &urls.join(","),
                "--role",
                role,
                "--replicas",
                "3",
                "--ack-wait",
                "5",
            ]
            .map(str::to_owned),
        );
        // Two worker tasks per worker process: frames of one device are stored concurrently, so the
        // ledger's compare-and-swap conflicts (JetStream 10071/10164) happen and must cost nothing.
        args.extend(["--listen", "127.0.0.1:0", "--workers", "2"].map(str::to_owned));
        args
    };
    let log = |name: &str| root.path().join(format!("{name}.log"));
    let mut gateways: Vec<RoleProcess> = (0..2)
        .map(|i| {
            let name = format!("gateway-{i}");
            let address_file = Some(root.path().join(format!("{name}.address")));
            RoleProcess::start(&name, role_args("gateway"), log(&name), address_file)
        })
        .collect();
    let mut workers: Vec<RoleProcess> = (0..2)
        .map(|i| {
            RoleProcess::start(
                &format!("worker-{i}"),
                role_args("worker"),
                log(&format!("worker-{i}")),
                None,
            )
        })
        .collect();
    let addresses = Arc::new(RwLock::new(
        gateways.iter().map(RoleProcess::address).collect::<Vec<_>>(),
    ));

    // The devices: 16 threads, each sending its devices' messages in turn, a pause between rounds.
    let seen = Arc::new(Seen::default());
    let mut groups: Vec<Vec<Device>> = (0..16).map(|_| Vec::new()).collect();
    for (i, device) in devices.into_iter().enumerate() {
        groups[i % 16].push(device);
    }
    let senders: Vec<_> = groups
        .into_iter()
        .map(|mut group| {
            let (addresses, seen) = (addresses.clone(), seen.clone());
            std::thread::spawn(move || {
                let rounds = group.iter().map(|d| d.messages.len()).max().unwrap_or(0);
                for round in 0..rounds {
                    for device in &mut group {
                        let Some(message) = device.messages.get(round) else {
                            continue;
                        };
                        let frames = message.frames.clone();
                        for frame in &frames {
                            deliver(device, frame, &addresses, &seen);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(60));
                }
            })
        })
        .collect();

    // The faults, each at a point of the run.
    let send_started = Instant::now();
    wait_for(&seen, total_frames * 15 / 100);
    println!("{:>6.1?}: kill -9 worker-0", send_started.elapsed());
    workers[0].kill();
    std::thread::sleep(Duration::from_secs(2));
    workers[0].restart();
    wait_for(&seen, total_frames * 35 / 100);
    println!("{:>6.1?}: kill -9 gateway-0", send_started.elapsed());
    gateways[0].kill();
    std::thread::sleep(Duration::from_secs(2));
    gateways[0].restart();
    addresses.write().unwrap()[0] = gateways[0].address();
    wait_for(&seen, total_frames * 45 / 100);
    // Both worker processes stalled (SIGSTOP) while the gateways go on admitting: the backlog grows, the
    // stalled workers' frames are redelivered after ack_wait, and no limit may drop an acknowledged frame.
    let stall = Duration::from_secs(std::env::var("TSBC_WORKER_STALL_S").map_or(12, |s| s.parse().unwrap()));
    println!("{:>6.1?}: SIGSTOP both workers for {stall:?}", send_started.elapsed());
    for worker in &mut workers {
        worker.pause();
    }
    std::thread::sleep(stall);
    for worker in &mut workers {
        worker.resume();
    }
    wait_for(&seen, total_frames * 60 / 100);
    println!("{:>6.1?}: kill -9 NATS node n2", send_started.elapsed());
    nats[2].kill();
    std::thread::sleep(Duration::from_secs(3));
    nats[2].restart();
    for sender in senders {
        sender.join().unwrap();
    }
    println!("{:>6.1?}: every frame acknowledged", send_started.elapsed());
    assert_eq!(seen.unopened.load(Relaxed), 0, "an acknowledgement did not open");
    assert!(
        seen.resends.load(Relaxed) > 0,
        "the gateway's kill broke no device's connection"
    );

    // Every acknowledged message committed once, and it decrypts to what was sent.
    let runtime = common::service::runtime();
    let checked = runtime.block_on(async {
        let client = async_nats::connect(urls.clone()).await.unwrap();
        wait_for_results_bucket(&client).await;
        let (_, server_key) = read_integer_server_key(&integer_dir.join("server_key.bin")).unwrap();
        let (_, integer_client) = read_integer_client_key(&integer_dir.join("client_key.bin")).unwrap();
        let bridge = IntegerBridge::new(server_key)
            .unwrap()
            .with_reading_bits(ReadingBits::from_bits(16).unwrap());
        let store_of = |dir: &Path| KeyStore::read_file(&dir.join("key_store.bin")).unwrap();
        let integer_store = store_of(&integer_dir);
        let keyed = KeyedIntake::new(IntakeConfig::default(), store_of(&integer_dir), bridge).unwrap();
        let integer_reader = ResultsReader::connect(client.clone(), keyed).await.unwrap();

        // Announcements are sealed under each device's MAC key: a reader returns those of its key set, so
        // the three key sets' readers together return every message.
        let tfhe_lib_reader = ResultsReader::connect(
            client.clone(),
            KeyedIntake::new(
                IntakeConfig::default(),
                store_of(&tfhe_lib_dir),
                BooleanBridge::new(&read_server_key(&tfhe_lib_dir.join("server_key.bin")).unwrap().1).unwrap(),
            )
            .unwrap(),
        )
        .await
        .unwrap();
        let ks_pbs_reader = ResultsReader::connect(
            client.clone(),
            KeyedIntake::new(
                IntakeConfig::default(),
                store_of(&boolean_dir),
                BigKeyBridge::for_server_key(
                    BooleanSet::DefaultKsPbs,
                    &read_server_key(&boolean_dir.join("server_key.bin")).unwrap().1,
                )
                .unwrap(),
            )
            .unwrap(),
        )
        .await
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(180);
        let records = loop {
            // A reading consumer may be refused while the cluster settles after the node's restart.
            let read = async {
                let mut records = integer_reader.messages(None, 100_000).await?;
                records.extend(ks_pbs_reader.messages(None, 100_000).await?);
                records.extend(tfhe_lib_reader.messages(None, 100_000).await?);
                Ok::<_, tfhe_sbc_adapter::IntakeError>(records)
            };
            match read.await {
                Ok(records) if records.len() >= expected.len() || Instant::now() > deadline => break records,
                Ok(_) => {}
                Err(e) if Instant::now() < deadline => println!("reading the announcements: {e}; trying again"),
                Err(e) => panic!("{e}"),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        println!("{:>6.1?}: every message announced", send_started.elapsed());
        let names: BTreeSet<(u64, u64)> = records.iter().map(|r| (r.device_id, r.first_sequence)).collect();
        assert_eq!(names.len(), records.len(), "a message announced twice");
        let missing: Vec<_> = expected.keys().filter(|k| !names.contains(k)).collect();
        if !missing.is_empty() {
            for role in workers.iter().chain(&gateways) {
                print_warnings(role);
            }
        }
        assert!(
            missing.is_empty(),
            "{} acknowledged, never announced: {:?}...",
            missing.len(),
            &missing[..missing.len().min(5)]
        );
        assert_eq!(names.len(), expected.len(), "announced, never sent");

        let mut checked = check_key_set(
            &integer_reader,
            &records,
            &expected,
            &integer_store,
            |reader, inputs| {
                let mut values = Vec::new();
                for input in inputs {
                    for value in reader.keyed().frame_readings::<FheUint16Id>(input).unwrap() {
                        values.push(FheDecrypt::<u16>::decrypt(&value, integer_client.get()));
                    }
                }
                Sent::Readings(values)
            },
        )
        .await;
        for (dir, set) in [
            (&boolean_dir, BooleanSet::DefaultKsPbs),
            (&tfhe_lib_dir, BooleanSet::TfheLib),
        ] {
            let (_, server_key) = read_server_key(&dir.join("server_key.bin")).unwrap();
            let (_, client_key) = read_client_key(&dir.join("client_key.bin")).unwrap();
            let store = store_of(dir);
            let bytes = |bits: Vec<Ciphertext>| {
                let bits: Vec<bool> = bits.iter().map(|b| client_key.get().decrypt(b)).collect();
                let bytes = bits.chunks(8).map(|byte| {
                    byte.iter()
                        .enumerate()
                        .fold(0u8, |acc, (j, &bit)| acc | u8::from(bit) << j)
                });
                Sent::Bytes(bytes.collect())
            };
            checked += if set == BooleanSet::TfheLib {
                let keyed = KeyedIntake::new(
                    IntakeConfig::default(),
                    store_of(dir),
                    BooleanBridge::new(&server_key).unwrap(),
                );
                let reader = ResultsReader::connect(client.clone(), keyed.unwrap()).await.unwrap();
                check_key_set(&reader, &records, &expected, &store, |reader, inputs| {
                    bytes(reader.keyed().convert(&inputs[0]).unwrap())
                })
                .await
            } else {
                let bridge = BigKeyBridge::for_server_key(set, &server_key).unwrap();
                let keyed = KeyedIntake::new(IntakeConfig::default(), store_of(dir), bridge).unwrap();
                let reader = ResultsReader::connect(client.clone(), keyed).await.unwrap();
                check_key_set(&reader, &records, &expected, &store, |reader, inputs| {
                    bytes(reader.keyed().convert(&inputs[0]).unwrap())
                })
                .await
            };
        }
        checked
    });
    assert_eq!(checked, expected.len(), "a message of no key set");

    // Every role still running, then the counts.
    for role in gateways.iter_mut().chain(workers.iter_mut()) {
        role.assert_running();
    }
    let summaries: Vec<String> = gateways
        .iter_mut()
        .chain(workers.iter_mut())
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
        checked,
        total_frames,
        started.elapsed(),
        seen.accepted.load(Relaxed),
        seen.duplicates.load(Relaxed),
        seen.busy.load(Relaxed),
        seen.resends.load(Relaxed),
        seen.connections.load(Relaxed),
        summaries.join("\n")
    );
}

/// Waits (at most 60 s) until the results bucket answers: for a few seconds after a node's restart, the
/// cluster may still be electing the bucket's stream leader, and a lookup times out.
async fn wait_for_results_bucket(client: &async_nats::Client) {
    let js = async_nats::jetstream::new(client.clone());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match js.get_key_value(RESULTS_BUCKET).await {
            Ok(_) => return,
            Err(e) if Instant::now() < deadline => {
                println!("opening the results bucket: {e}; trying again");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("the results bucket never opened: {e}"),
        }
    }
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
