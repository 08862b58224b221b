//! The servers' bounds, outside in (the shipped binary, real sockets, `/proc/<pid>/status` for memory):
//!
//! * the single process answers "busy" (authenticated) when its conversion queue has no room for a
//!   device, and acknowledges only what fits: one device flooding 12,000 frames as fast as it can leaves
//!   the server's memory bounded, and every frame answered "accepted" is converted (the demo client key's
//!   log), none other;
//! * the single process with 2,000 idle sockets (half of them announcing a 49,426-byte frame of a
//!   registered device, then stalling) answers a device in under a second and holds little memory for
//!   them (the listener evicts the longest-waiting connection at its cap, and reads a frame's body only as
//!   it arrives);
//! * the gateway (on a real nats-server) with 1,100 idle connections from 127.0.0.1 answers a device from
//!   127.0.0.2, and one from 127.0.0.1, in under a second (the per-address cap and the eviction);
//! * the per-peer cap counts an IPv6 /64 as one peer (20 addresses of one /64 keep 4 connections) and an
//!   IPv4-mapped address as its IPv4 address (12 addresses of 127/8 on a dual-stack listener keep all 12),
//!   in a network namespace of its own (`unshare --net`, addresses on its loopback);
//! * at the cap, a connection idle between frames is closed before one inside a frame, which then completes;
//! * a raw client pipelining frames whose MAC does not verify gets one unauthenticated answer and the
//!   connection is closed;
//! * `--max-connections-per-peer 0` is no per-peer cap: 40 connections from one address all stay open.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::process::{ChildSlot, demo_server, wait_for_address};
use crate::common::service::{Meter, Server, key_set_and_nats, readings, send};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::intake::header_of;
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_adapter::key_store::KeyMode;
use tfhe_sbc_device::frame::HEADER_BYTES;
use tfhe_sbc_device::frame::ack::{ACK_BYTES, AckRecord, AckStatus, frame_tag};

const DEVICE: u64 = 71;

/// A `tfhe-lib` key set with the fleet device [`DEVICE`] in `keys` of a temporary directory.
fn boolean_key_set(key_id: u32) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("keys");
    tfhe_sbc_keys::commands::init(&dir, BooleanSet::TfheLib, Some(key_id)).unwrap();
    tfhe_sbc_keys::commands::issue(&dir, DEVICE, KeyMode::FleetSecretKey, None).unwrap();
    (root, dir)
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Raises this process's open-file limit (children inherit it) to `n` if the hard limit allows, with
/// util-linux's `prlimit`; the soft limit afterwards.
fn raise_open_files(n: u64) -> u64 {
    let _ = std::process::Command::new("prlimit")
        .args(["--pid", &std::process::id().to_string(), &format!("--nofile={n}:")])
        .status();
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap();
    line.split_whitespace().nth(3).unwrap().parse().unwrap_or(u64::MAX)
}

/// A connection to `address` from the loopback address `source` (any 127.0.0.0/8 address works on Linux),
/// blocking, reads timing out after 10 s.
fn connect_from(source: IpAddr, address: &str) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind((source, 0).into()).unwrap();
        socket.connect(address.parse().unwrap()).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// Connects from `source`, sends `frame` and reads its acknowledgement: the status and the time it took.
fn answered_from(source: IpAddr, address: &str, frame: &[u8], meter: &Meter) -> (AckStatus, Duration) {
    let started = Instant::now();
    let mut stream = connect_from(source, address);
    let ack = send(&mut stream, frame, meter.credentials.mac_key()).unwrap();
    (ack.status, started.elapsed())
}

/// The lines of a child's standard error, collected by a thread.
fn collect_lines(stderr: impl Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

/// The message ids of the "message converted" lines among `lines`.
fn converted_ids(lines: &Mutex<Vec<String>>) -> Vec<u32> {
    lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("message converted to tfhe-rs ciphertexts"))
        .filter_map(|l| {
            let rest = &l[l.find("message_id=")? + "message_id=".len()..];
            rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
        })
        .collect()
}

/// Samples the RSS of `pid` every 50 ms until `stop`; the peak, in KiB.
fn sample_peak(pid: u32, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut peak = 0;
        while !stop.load(Ordering::Relaxed) {
            peak = peak.max(rss_kib(pid));
            std::thread::sleep(Duration::from_millis(50));
        }
        peak
    })
}

/// The single process (killed on drop), its process id, its address and its log lines (the demo client
/// key: it logs what it converts).
type SingleProcess = (ChildSlot, u32, String, Arc<Mutex<Vec<String>>>);

fn single_process(root: &Path, keys: &Path, extra: &[&str]) -> SingleProcess {
    let address_file = root.join("address");
    let mut child = demo_server(keys, &address_file, extra);
    let pid = child.id();
    let lines = collect_lines(child.stderr.take().unwrap());
    let mut slot = ChildSlot::default();
    slot.set(child);
    let address = wait_for_address(&address_file, Duration::from_secs(120), || {
        lines.lock().unwrap().join("\n")
    });
    (slot, pid, address, lines)
}

#[test]
fn a_flood_of_one_device_is_answered_busy_and_every_accepted_frame_is_converted() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    const FRAMES: usize = 12_000;
    let (root, keys) = boolean_key_set(0x1d00_0071);
    let (_server, pid, address, lines) = single_process(root.path(), &keys, &[]);

    let started = Instant::now();
    let mut meter = Meter::new(&keys, DEVICE, 1);
    let frames: Vec<Vec<u8>> = (0..FRAMES)
        .map(|i| meter.seal(&(i as u32).to_le_bytes()).remove(0))
        .collect();
    println!("{FRAMES} frames sealed in {:.1} s", started.elapsed().as_secs_f64());

    let before = rss_kib(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let peak = sample_peak(pid, Arc::clone(&stop));
    // The flood: one thread writes every frame as fast as the socket takes them; this one reads the answers
    // (in frame order).
    let mut stream = TcpStream::connect(&address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let writer = {
        let stream = stream.try_clone().unwrap();
        let frames = frames.clone();
        std::thread::spawn(move || {
            let mut out = BufWriter::new(stream);
            for frame in &frames {
                out.write_all(&(frame.len() as u32).to_le_bytes()).unwrap();
                out.write_all(frame).unwrap();
            }
            out.flush().unwrap();
        })
    };
    let flood = Instant::now();
    let (mut accepted, mut busy) = (BTreeSet::new(), 0u64);
    for frame in &frames {
        let mut record = [0u8; ACK_BYTES];
        stream.read_exact(&mut record).unwrap();
        let ack = AckRecord::decode(&record)
            .unwrap()
            .open(meter.credentials.mac_key(), frame_tag(frame).unwrap())
            .expect("an authenticated answer");
        match ack.status {
            AckStatus::Accepted => {
                accepted.insert(header_of(frame).unwrap().message_id);
            }
            AckStatus::Busy => busy += 1,
            other @ (AckStatus::Duplicate
            | AckStatus::TooOld
            | AckStatus::Expired
            | AckStatus::UnknownDevice
            | AckStatus::BadCredentials
            | AckStatus::NotAllowed
            | AckStatus::Malformed) => panic!("sequence {}: {other:?}", ack.sequence),
        }
    }
    writer.join().unwrap();
    let flood = flood.elapsed();

    // Every accepted frame (a one-chunk message) is converted, within 60 s.
    let deadline = Instant::now() + Duration::from_secs(60);
    while converted_ids(&lines).len() < accepted.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let peak = peak.join().unwrap();
    let converted: BTreeSet<u32> = converted_ids(&lines).into_iter().collect();
    println!(
        "{FRAMES} frames in {:.1} s: {} accepted, {busy} busy; {} converted; RSS {} KiB before, peak {} KiB (+{} KiB)",
        flood.as_secs_f64(),
        accepted.len(),
        converted.len(),
        before,
        peak,
        peak.saturating_sub(before)
    );
    assert_eq!(accepted.len() as u64 + busy, FRAMES as u64);
    assert!(
        busy > 0 && !accepted.is_empty(),
        "{} accepted, {busy} busy",
        accepted.len()
    );
    assert_eq!(converted, accepted, "converted exactly the accepted messages");
    // Unbounded, the server held every accepted message (8 KiB of ciphertext each: about 100 MB here).
    assert!(
        peak.saturating_sub(before) < 32 * 1024,
        "RSS grew by {} KiB",
        peak.saturating_sub(before)
    );
}

#[test]
fn idle_and_stalled_sockets_neither_lock_the_single_process_out_nor_hold_memory() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    const SOCKETS: usize = 2_000;
    let limit = raise_open_files(8192);
    assert!(
        limit >= 2 * SOCKETS as u64 + 200,
        "open-file limit {limit}: raise ulimit -n"
    );
    let (root, keys) = boolean_key_set(0x1d00_0072);
    // Every socket from 127.0.0.1: the per-address cap is lifted so that the connection cap (1024, the
    // default) and its eviction are what is tested.
    let (_server, pid, address, _lines) = single_process(root.path(), &keys, &["--max-connections-per-peer", "100000"]);
    let mut meter = Meter::new(&keys, DEVICE, 1);
    let announced = meter.seal(b"header only").remove(0);
    std::thread::sleep(Duration::from_millis(500));
    let before = rss_kib(pid);

    // Half idle, half announcing a 49,426-byte frame of the registered device, then stalling after its
    // header.
    let opened = Instant::now();
    let mut sockets = Vec::with_capacity(SOCKETS);
    for i in 0..SOCKETS {
        let mut socket = TcpStream::connect(&address).unwrap();
        if i % 2 == 1 {
            let mut head = 49_426u32.to_le_bytes().to_vec();
            head.extend_from_slice(&announced[..HEADER_BYTES]);
            socket.write_all(&head).unwrap();
        }
        sockets.push(socket);
        if i + 1 == 1024 {
            println!("1024 sockets opened in {:.2} s", opened.elapsed().as_secs_f64());
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    let after = rss_kib(pid);
    let closed = AtomicU64::new(0);
    for socket in &sockets {
        socket.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        if matches!((&*socket).read(&mut byte), Ok(0) | Ok(1)) {
            closed.fetch_add(1, Ordering::Relaxed);
        }
    }

    // A device is answered at once, from another address and from the crowded one.
    let frame = meter.seal(b"a genuine reading").remove(0);
    let (status, took) = answered_from("127.0.0.2".parse().unwrap(), &address, &frame, &meter);
    let frame = meter.seal(b"another reading").remove(0);
    let (second, took_crowded) = answered_from("127.0.0.1".parse().unwrap(), &address, &frame, &meter);
    println!(
        "{SOCKETS} sockets opened in {:.1} s, {} closed by the server; RSS {before} KiB -> {after} KiB (+{} KiB); \
         a device answered {status:?} in {took:?} (from 127.0.0.2) and {second:?} in {took_crowded:?} (from \
         127.0.0.1)",
        opened.elapsed().as_secs_f64(),
        closed.load(Ordering::Relaxed),
        after.saturating_sub(before)
    );
    assert_eq!((status, second), (AckStatus::Accepted, AckStatus::Accepted));
    assert!(took < Duration::from_secs(1) && took_crowded < Duration::from_secs(1));
    assert!(
        closed.load(Ordering::Relaxed) >= (SOCKETS - 1024) as u64,
        "the longest-waiting connections are closed at the cap"
    );
    // Reserving the announced lengths would hold 1,000 x 49,426 bytes (47 MiB).
    assert!(
        after.saturating_sub(before) < 20 * 1024,
        "RSS grew by {} KiB",
        after - before
    );
    drop(sockets);
}

#[test]
fn the_gateway_answers_a_device_despite_1100_idle_connections() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    const SOCKETS: usize = 1_100;
    let limit = raise_open_files(8192);
    assert!(
        limit >= SOCKETS as u64 + 200,
        "open-file limit {limit}: raise ulimit -n"
    );
    let (root, keys, nats) = key_set_and_nats(0x1d00_0073);
    // The defaults: 1024 connections, 16 per address, 120 s idle.
    let (_server, address) =
        Server::start_with(&keys, &nats.url(), &root.path().join("address"), &[], Stdio::null(), "");
    let idle: Vec<TcpStream> = (0..SOCKETS).map(|_| TcpStream::connect(&address).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let mut meter = Meter::new(&keys, 51, 0);
    let frame = meter.message(&readings(51, 0)).remove(0);
    let (status, took) = answered_from("127.0.0.2".parse().unwrap(), &address, &frame, &meter);
    let frame = meter.message(&readings(51, 2)).remove(0);
    let (crowded, took_crowded) = answered_from("127.0.0.1".parse().unwrap(), &address, &frame, &meter);
    println!(
        "{SOCKETS} idle connections from 127.0.0.1: a device answered {status:?} in {took:?} from 127.0.0.2, \
         {crowded:?} in {took_crowded:?} from 127.0.0.1"
    );
    assert_eq!((status, crowded), (AckStatus::Accepted, AckStatus::Accepted));
    assert!(took < Duration::from_secs(1) && took_crowded < Duration::from_secs(1));
    drop(idle);
}

/// How many of `sockets` the server has closed (end of stream or reset; open ones would block).
fn closed_by_server(sockets: &[TcpStream]) -> usize {
    sockets
        .iter()
        .filter(|socket| {
            socket.set_nonblocking(true).unwrap();
            let mut byte = [0u8; 1];
            let closed = match (&**socket).read(&mut byte) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
            };
            socket.set_nonblocking(false).unwrap();
            closed
        })
        .count()
}

/// A connection from `source` to `address` (a socket address of either family), blocking, reads timing out
/// after 10 s.
fn connect_any(source: IpAddr, address: SocketAddr) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = match address {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
        }
        .unwrap();
        socket.bind(SocketAddr::new(source, 0)).unwrap();
        socket.connect(address).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// Runs this test again in a network namespace of its own (`unshare --net`), where it may add addresses to
/// the loopback interface; `false` in the namespace (go on with the test), `true` outside (done).
fn ran_in_own_network_namespace(test: &str) -> bool {
    const INSIDE: &str = "TSBC_TEST_IN_NETNS";
    if std::env::var_os(INSIDE).is_some() {
        return false;
    }
    let output = std::process::Command::new("unshare")
        .args(["--net", "--"])
        .arg(std::env::current_exe().unwrap())
        // libtest's name of the test: its module path without the crate's name.
        .arg(match module_path!().split_once("::") {
            Some((_, module)) => format!("{module}::{test}"),
            None => test.to_owned(),
        })
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .env(INSIDE, "1")
        .output()
        .expect("unshare (util-linux) runs the test in a network namespace");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{log}");
    assert!(output.status.success(), "in the namespace: {log}");
    assert!(log.contains("1 passed"), "the test did not run in the namespace: {log}");
    true
}

/// `ip ARGS`, which must succeed.
fn ip(args: &[&str]) {
    let status = std::process::Command::new("ip").args(args).status().unwrap();
    assert!(status.success(), "ip {args:?}");
}

#[test]
fn an_ipv6_64_is_one_peer_and_an_ipv4_mapped_address_is_its_ipv4_address() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    if ran_in_own_network_namespace("an_ipv6_64_is_one_peer_and_an_ipv4_mapped_address_is_its_ipv4_address") {
        return;
    }
    const CAP: usize = 4;
    ip(&["link", "set", "lo", "up"]);
    let v6: Vec<IpAddr> = (1..=20)
        .map(|i| format!("2001:db8:64::{i:x}").parse().unwrap())
        .collect();
    for address in &v6 {
        ip(&["-6", "addr", "add", &format!("{address}/128"), "dev", "lo", "nodad"]);
    }
    ip(&["-6", "addr", "add", "2001:db8:65::1/128", "dev", "lo", "nodad"]);
    let (root, keys) = boolean_key_set(0x1d00_0074);
    let address_file = root.path().join("address");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", keys.to_str().unwrap(), "--listen", "[::]:0"])
        .args(["--address-file", address_file.to_str().unwrap()])
        .args(["--max-connections-per-peer", &CAP.to_string()])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = collect_lines(child.stderr.take().unwrap());
    let mut server = ChildSlot::default();
    server.set(child);
    let listening: SocketAddr = wait_for_address(&address_file, Duration::from_secs(120), || {
        lines.lock().unwrap().join("\n")
    })
    .parse()
    .unwrap();
    let port = listening.port();

    // 20 addresses of one /64, one idle connection each.
    let target6 = SocketAddr::new("2001:db8:64::1".parse().unwrap(), port);
    let one_64: Vec<TcpStream> = v6.iter().map(|&source| connect_any(source, target6)).collect();
    // 12 IPv4 addresses to the same dual-stack socket (seen as ::ffff:127.0.0.x), one idle connection each.
    let target4 = SocketAddr::new("127.0.0.1".parse().unwrap(), port);
    let mapped: Vec<TcpStream> = (1..=12)
        .map(|i| connect_any(format!("127.0.0.{i}").parse().unwrap(), target4))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let (closed6, closed4) = (closed_by_server(&one_64), closed_by_server(&mapped));

    // A device from another /64 is served.
    let mut meter = Meter::new(&keys, DEVICE, 1);
    let frame = meter.seal(b"from another /64").remove(0);
    let mut stream = connect_any("2001:db8:65::1".parse().unwrap(), target6);
    let status = send(&mut stream, &frame, meter.credentials.mac_key()).unwrap().status;
    println!(
        "per-peer cap {CAP}: 20 addresses of 2001:db8:64::/64 -> {closed6} of their connections closed; 12 \
         IPv4-mapped addresses -> {closed4} closed; a device from 2001:db8:65::/64 answered {status:?}"
    );
    assert_eq!(closed6, 20 - CAP, "an IPv6 /64 is one peer");
    assert_eq!(closed4, 0, "IPv4-mapped addresses are IPv4 addresses, each a peer");
    assert_eq!(status, AckStatus::Accepted);
}

/// Writes `frame` (length first) on `stream` and reads its answer; the status (authenticated or not), or
/// why none came.
fn exchange(stream: &mut TcpStream, frame: &[u8]) -> Result<AckStatus, std::io::Error> {
    stream.write_all(&(frame.len() as u32).to_le_bytes())?;
    stream.write_all(frame)?;
    let mut record = [0u8; ACK_BYTES];
    stream.read_exact(&mut record)?;
    Ok(AckRecord::decode(&record).unwrap().claimed.status)
}

#[test]
fn at_the_cap_an_idle_connection_is_closed_before_one_inside_a_frame() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let (root, keys) = boolean_key_set(0x1d00_0075);
    let (_server, _pid, address, _lines) = single_process(root.path(), &keys, &["--max-connections-per-peer", "2"]);
    let mut meter = Meter::new(&keys, DEVICE, 1);
    let frame = meter.seal(b"sent slowly").remove(0);

    // A: inside a frame (its length and header sent, the body held back), then B: idle, younger.
    let mut in_frame = TcpStream::connect(&address).unwrap();
    in_frame.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    in_frame.write_all(&(frame.len() as u32).to_le_bytes()).unwrap();
    in_frame.write_all(&frame[..HEADER_BYTES]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let idle = TcpStream::connect(&address).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // C, over the cap of 2.
    let mut third = TcpStream::connect(&address).unwrap();
    third.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let idle_closed = closed_by_server(std::slice::from_ref(&idle)) == 1;

    in_frame.write_all(&frame[HEADER_BYTES..]).unwrap();
    let mut record = [0u8; ACK_BYTES];
    let in_frame_answer = in_frame
        .read_exact(&mut record)
        .map(|()| AckRecord::decode(&record).unwrap().claimed.status);
    let next = meter.seal(b"on the new connection").remove(0);
    let third_answer = exchange(&mut third, &next);
    println!(
        "cap 2: idle connection closed: {idle_closed}; the one inside a frame answered {in_frame_answer:?}; the \
         new one {third_answer:?}"
    );
    assert!(idle_closed, "the idle connection makes room");
    assert_eq!(in_frame_answer.unwrap(), AckStatus::Accepted);
    assert_eq!(third_answer.unwrap(), AckStatus::Accepted);
}

#[test]
fn pipelined_frames_with_bad_macs_get_one_unauthenticated_answer_and_the_connection_closed() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    const FRAMES: usize = 200;
    let (root, keys) = boolean_key_set(0x1d00_0076);
    let (_server, _pid, address, _lines) = single_process(root.path(), &keys, &[]);
    let mut meter = Meter::new(&keys, DEVICE, 1);
    let mut burst = Vec::new();
    for i in 0..FRAMES {
        let mut forged = meter.seal(&(i as u32).to_le_bytes()).remove(0);
        *forged.last_mut().unwrap() ^= 1;
        burst.extend_from_slice(&(forged.len() as u32).to_le_bytes());
        burst.extend_from_slice(&forged);
    }
    // A raw client: every forged frame in one go, answers read afterwards.
    let started = Instant::now();
    let mut stream = TcpStream::connect(&address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let written = stream.write_all(&burst);
    let mut answers = Vec::new();
    let ended = loop {
        let mut record = [0u8; ACK_BYTES];
        match stream.read_exact(&mut record) {
            Ok(()) => answers.push(AckRecord::decode(&record).unwrap().claimed.status),
            Err(e) => break e,
        }
        if answers.len() > FRAMES {
            panic!("more answers than frames");
        }
    };
    let took = started.elapsed();
    println!(
        "{FRAMES} forged frames pipelined (write: {written:?}): {} answers (first: {:?}), then {:?} after {took:?}",
        answers.len(),
        answers.first(),
        ended.kind()
    );
    assert!(answers.len() <= 1 && answers.iter().all(|&s| s == AckStatus::BadCredentials));
    assert!(
        !matches!(
            ended.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "the connection stays open: {ended:?}"
    );
    assert!(took < Duration::from_secs(2), "closed after {took:?}");
}

#[test]
fn max_connections_per_peer_0_is_no_per_peer_cap() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    const SOCKETS: usize = 40;
    let (root, keys) = boolean_key_set(0x1d00_0077);
    let (_server, _pid, address, _lines) = single_process(root.path(), &keys, &["--max-connections-per-peer", "0"]);
    let sockets: Vec<TcpStream> = (0..SOCKETS).map(|_| TcpStream::connect(&address).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let closed = closed_by_server(&sockets);
    let mut meter = Meter::new(&keys, DEVICE, 1);
    let frame = meter.seal(b"behind the same NAT").remove(0);
    let mut stream = TcpStream::connect(&address).unwrap();
    let status = send(&mut stream, &frame, meter.credentials.mac_key()).unwrap().status;
    println!(
        "--max-connections-per-peer 0: {SOCKETS} connections from 127.0.0.1, {closed} closed; one more answered {status:?}"
    );
    assert_eq!(closed, 0);
    assert_eq!(status, AckStatus::Accepted);
}
