//! The gateway's bounds, on a real nats-server on loopback:
//!
//! * idle unauthenticated sockets beyond the file-descriptor limit (`ulimit -n 64`, 80 sockets) do not put
//!   the accept loop into a hot retry: the server uses little CPU and logs a few lines, and once the idle
//!   ones are closed (`--idle-timeout`) a device is served again (the single-process server spun at 4.6 s
//!   of CPU in 5 s, with millions of log lines, and served nobody);
//! * a full frames stream means no acknowledgement: the device gets "busy" (authenticated), never
//!   "accepted", and every frame acknowledged "accepted" is in the stream; the Prometheus endpoint
//!   (`--metrics-listen`) counts the same answers.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::service::{Meter, Server, connect, key_set_and_nats, readings, send, send_until_acknowledged};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::ack::AckStatus;

/// User plus system CPU seconds of process `pid` so far (Linux `/proc`, clock ticks of 1/100 s).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

#[test]
fn idle_sockets_beyond_the_descriptor_limit_neither_spin_nor_lock_devices_out() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let (root, keys, nats) = key_set_and_nats(0x1d00_0006);
    let log_path = root.path().join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let (server, address) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("address"),
        &["--idle-timeout", "3", "--max-connections", "1000"],
        Stdio::from(log),
        "ulimit -n 64;",
    );
    // Let the server settle, then 80 idle sockets: more than its descriptors allow.
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_seconds(server.child.id());
    let idle: Vec<TcpStream> = (0..80).map(|_| TcpStream::connect(&address).unwrap()).collect();
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_seconds(server.child.id()) - before;
    let lines = std::fs::read_to_string(&log_path).unwrap().lines().count();
    println!("80 idle sockets, ulimit -n 64: {spent:.2} s of CPU in 2 s, {lines} log lines");
    assert!(spent < 0.5, "the accept loop spins: {spent:.2} s of CPU in 2 s");
    assert!(lines < 20, "{lines} log lines in 2 s");

    // The idle sockets are closed after --idle-timeout; a device is then served.
    let mut meter = Meter::new(&keys, 51, 0);
    let frame = meter.message(&readings(51, 0)).remove(0);
    let started = Instant::now();
    assert_eq!(
        send_until_acknowledged(&address, &frame, meter.credentials.mac_key()),
        AckStatus::Accepted
    );
    println!(
        "a device served {:.1} s after the idle sockets opened",
        started.elapsed().as_secs_f64()
    );
    drop(idle);
}

#[test]
fn a_full_stream_acknowledges_nothing() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let (root, keys, nats) = key_set_and_nats(0x1d00_0007);
    // Room for a few 16 KiB integer frames only; metrics on a free port.
    let metrics = format!("127.0.0.1:{}", common::nats::free_port());
    let (_server, address) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("address"),
        &[
            "--stream-max-bytes",
            "100000",
            "--role",
            "gateway",
            "--metrics-listen",
            &metrics,
        ],
        Stdio::null(),
        "",
    );
    let mut meter = Meter::new(&keys, 51, 0);
    let mut stream = connect(&address);
    let (mut accepted, mut busy) = (0u64, 0u64);
    for m in 0..12 {
        let frame = meter.message(&readings(51, m * 2)).remove(0);
        let ack = send(&mut stream, &frame, meter.credentials.mac_key()).expect("an authenticated record");
        match ack.status {
            AckStatus::Accepted => {
                assert_eq!(busy, 0, "accepted after the stream was full");
                accepted += 1;
            }
            AckStatus::Busy => busy += 1,
            other @ (AckStatus::Duplicate
            | AckStatus::TooOld
            | AckStatus::Expired
            | AckStatus::UnknownDevice
            | AckStatus::BadCredentials
            | AckStatus::NotAllowed
            | AckStatus::Malformed) => panic!("{other:?}"),
        }
    }
    println!("{accepted} frames accepted, then {busy} answered busy");
    assert!(accepted >= 1 && busy >= 1, "{accepted} accepted, {busy} busy");
    let runtime = common::service::runtime();
    let stored = runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let mut frames = js.get_stream("TSBC_FRAMES").await.unwrap();
        frames.info().await.unwrap().state.messages
    });
    assert_eq!(
        stored, accepted,
        "every frame acknowledged accepted is in the stream, and only those"
    );
}
