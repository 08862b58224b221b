//! The fleet of `tests/cluster.rs`: three key sets (integer; boolean `DEFAULT_KS_PBS`, a big-key set;
//! boolean `TFHE_LIB`), 212 simulated devices in every key mode sending single- and two-chunk messages
//! sealed before the run, the devices' threads (each device acts as the Pi client does), the role
//! processes, and a once-a-second record of what the devices were answered.
//!
//! A device resends a frame (on the same or the other gateway) until an acknowledgement that opens under
//! its MAC key for that frame says "accepted" or "duplicate"; "busy" and broken connections mean "try
//! again".

use crate::common::process::RoleProcess;
use crate::common::service::Meter;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_adapter::key_store::KeyMode;
use tfhe_sbc_device::frame::ack::{ACK_BYTES, AckRecord, AckStatus, frame_tag};
use tfhe_sbc_device::frame::mac::MacKey;

/// The key sets and their devices: (directory name, first device id).
const INTEGER: (&str, u64) = ("integer", 1000);
const DEFAULT_KS_PBS: (&str, u64) = ("default-ks-pbs", 2000);
const TFHE_LIB: (&str, u64) = ("tfhe-lib", 3000);

/// How long a device tries one frame before the test fails.
const DELIVERY_LIMIT: Duration = Duration::from_secs(150);

/// What a message carries, to compare with what decrypts.
#[derive(Clone, Debug, PartialEq)]
pub enum Sent {
    Readings(Vec<u16>),
    Bytes(Vec<u8>),
}

/// One message, sealed before the run.
pub struct Outgoing {
    pub first: u64,
    pub sent: Sent,
    pub frames: Vec<Vec<u8>>,
}

/// One simulated device: its meter (MAC key), its messages, its connection.
pub struct Device {
    pub meter: Meter,
    pub messages: Vec<Outgoing>,
    /// The connection and the index of its gateway.
    connection: Option<(TcpStream, usize)>,
}

/// What the devices saw.
#[derive(Default)]
pub struct Seen {
    pub frames: AtomicU64,
    pub accepted: AtomicU64,
    pub duplicates: AtomicU64,
    pub busy: AtomicU64,
    pub resends: AtomicU64,
    pub connections: AtomicU64,
    pub unopened: AtomicU64,
    /// Messages whose every frame was acknowledged ("accepted" or "duplicate").
    pub acknowledged_messages: AtomicU64,
    /// Per gateway (index in the gateways' addresses): frames acknowledged, busy answers.
    pub per_gateway: [(AtomicU64, AtomicU64); 2],
}

/// The three key sets and every device's messages.
pub struct Fleet {
    pub integer_dir: PathBuf,
    pub boolean_dir: PathBuf,
    pub tfhe_lib_dir: PathBuf,
    pub devices: Vec<Device>,
    /// Every message: (device, first sequence) -> what it carries.
    pub expected: BTreeMap<(u64, u64), Sent>,
    /// Every device's MAC key (to open the raw announcements).
    pub mac_keys: BTreeMap<u64, MacKey>,
    pub total_frames: u64,
}

impl Fleet {
    /// The key sets in `root` and 212 devices: 140 integer, 70 `DEFAULT_KS_PBS`, 2 `TFHE_LIB`.
    pub fn provision(root: &Path) -> Self {
        let (fleet, per_device, public) = (KeyMode::FleetSecretKey, KeyMode::PerDeviceSecretKey, KeyMode::PublicKey);
        let (integer_dir, mut devices) =
            provision(root, INTEGER, None, &[(fleet, 124), (per_device, 8), (public, 8)], 22);
        let (boolean_dir, boolean) = provision(
            root,
            DEFAULT_KS_PBS,
            Some(BooleanSet::DefaultKsPbs),
            &[(fleet, 58), (per_device, 6), (public, 6)],
            22,
        );
        let (tfhe_lib_dir, tfhe_lib) = provision(root, TFHE_LIB, Some(BooleanSet::TfheLib), &[(per_device, 2)], 3);
        devices.extend(boolean);
        devices.extend(tfhe_lib);
        let expected = devices
            .iter()
            .flat_map(|d| d.messages.iter().map(|m| ((d.meter.id, m.first), m.sent.clone())))
            .collect();
        let mac_keys = devices
            .iter()
            .map(|d| {
                let key = MacKey::from_bytes(*d.meter.credentials.mac_key().as_bytes());
                (d.meter.id, key)
            })
            .collect();
        let total_frames = devices
            .iter()
            .flat_map(|d| &d.messages)
            .map(|m| m.frames.len() as u64)
            .sum();
        Self {
            integer_dir,
            boolean_dir,
            tfhe_lib_dir,
            devices,
            expected,
            mac_keys,
            total_frames,
        }
    }

    /// The arguments of a role process of `role` on the NATS `urls`, with `tasks` worker tasks.
    pub fn role_args(&self, role: &str, urls: &[String], tasks: u32) -> Vec<String> {
        let mut args: Vec<String> = [&self.integer_dir, &self.boolean_dir, &self.tfhe_lib_dir]
            .iter()
            .flat_map(|dir| ["--keys".to_owned(), dir.display().to_string()])
            .collect();
        let urls = urls.join(",");
        args.extend(["--nats", &urls, "--role", role, "--replicas", "3", "--ack-wait", "5"].map(str::to_owned));
        // Several worker tasks per worker process: frames of one device are stored concurrently, so the
        // ledger's compare-and-swap conflicts (JetStream 10071/10164) happen and must cost nothing.
        args.extend(["--listen".to_owned(), "127.0.0.1:0".to_owned()]);
        args.extend(["--workers".to_owned(), tasks.to_string()]);
        args
    }
}

/// Two gateway and two worker processes.
pub struct Roles {
    pub gateways: Vec<RoleProcess>,
    pub workers: Vec<RoleProcess>,
}

impl Roles {
    /// Started with `args(role)`, logging into `root/<name>.log`.
    pub fn start(root: &Path, args: impl Fn(&str) -> Vec<String>) -> Self {
        let log = |name: &str| root.join(format!("{name}.log"));
        let gateways = (0..2)
            .map(|i| {
                let name = format!("gateway-{i}");
                let address_file = Some(root.join(format!("{name}.address")));
                RoleProcess::start(&name, args("gateway"), log(&name), address_file)
            })
            .collect();
        let workers = (0..2)
            .map(|i| {
                let name = format!("worker-{i}");
                RoleProcess::start(&name, args("worker"), log(&name), None)
            })
            .collect();
        Self { gateways, workers }
    }
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

/// Starts 16 threads, each sending its devices' messages in turn (a pause between rounds) to the
/// gateways of `gateways`.
pub fn send_all(
    devices: Vec<Device>,
    gateways: &Arc<RwLock<Vec<String>>>,
    seen: &Arc<Seen>,
) -> Vec<std::thread::JoinHandle<()>> {
    let mut groups: Vec<Vec<Device>> = (0..16).map(|_| Vec::new()).collect();
    for (i, device) in devices.into_iter().enumerate() {
        groups[i % 16].push(device);
    }
    groups
        .into_iter()
        .map(|mut group| {
            let (gateways, seen) = (gateways.clone(), seen.clone());
            std::thread::spawn(move || {
                let rounds = group.iter().map(|d| d.messages.len()).max().unwrap_or(0);
                for round in 0..rounds {
                    for device in &mut group {
                        let Some(message) = device.messages.get(round) else {
                            continue;
                        };
                        let frames = message.frames.clone();
                        for frame in &frames {
                            deliver(device, frame, &gateways, &seen);
                        }
                        seen.acknowledged_messages.fetch_add(1, Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(60));
                }
            })
        })
        .collect()
}

/// Sends `frame` of `device` until an acknowledgement that opens for it says accepted or duplicate,
/// on the gateways of `gateways` in turn (for at most [`DELIVERY_LIMIT`]).
fn deliver(device: &mut Device, frame: &[u8], gateways: &RwLock<Vec<String>>, seen: &Seen) {
    let deadline = Instant::now() + DELIVERY_LIMIT;
    let tag = frame_tag(frame).unwrap();
    let mut attempt = device.meter.id as usize;
    let mut framed = (frame.len() as u32).to_le_bytes().to_vec();
    framed.extend_from_slice(frame);
    for tries in 0.. {
        assert!(
            Instant::now() < deadline,
            "device {}: no acknowledgement within {DELIVERY_LIMIT:?}",
            device.meter.id
        );
        if tries > 0 {
            seen.resends.fetch_add(1, Relaxed);
            std::thread::sleep(Duration::from_millis(150));
        }
        if device.connection.is_none() {
            attempt += 1;
            let (address, index) = {
                let gateways = gateways.read().unwrap();
                (gateways[attempt % gateways.len()].clone(), attempt % gateways.len())
            };
            let Ok(stream) = TcpStream::connect_timeout(&address.parse().unwrap(), Duration::from_secs(2)) else {
                continue;
            };
            stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
            stream.set_nodelay(true).unwrap();
            seen.connections.fetch_add(1, Relaxed);
            device.connection = Some((stream, index));
        }
        let (stream, index) = device.connection.as_mut().unwrap();
        let gateway = &seen.per_gateway[*index % 2];
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
                gateway.0.fetch_add(1, Relaxed);
                break;
            }
            Some(AckStatus::Duplicate) => {
                seen.duplicates.fetch_add(1, Relaxed);
                gateway.0.fetch_add(1, Relaxed);
                break;
            }
            Some(AckStatus::Busy) => {
                seen.busy.fetch_add(1, Relaxed);
                gateway.1.fetch_add(1, Relaxed);
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
pub fn wait_for(seen: &Seen, frames: u64) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while seen.frames.load(Relaxed) < frames {
        assert!(Instant::now() < deadline, "the devices stalled");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Counters of [`Seen`] read at one instant: frames acknowledged, busy answers, and both per gateway.
type Reading = [u64; 6];

/// The devices' answers, sampled once a second: (seconds since the start, the counters' increase in that
/// second); and the faults' marks.
pub struct Timeline {
    started: Instant,
    samples: Mutex<Vec<(u64, Reading)>>,
    marks: Mutex<Vec<(f64, String)>>,
    stop: AtomicBool,
}

impl Timeline {
    /// Starts sampling `seen` on a thread of its own until [`Timeline::stop`].
    pub fn start(seen: &Arc<Seen>) -> (Arc<Self>, std::thread::JoinHandle<()>) {
        let timeline = Arc::new(Self {
            started: Instant::now(),
            samples: Mutex::new(Vec::new()),
            marks: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let (sampler, seen) = (timeline.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            let read = || -> Reading {
                let g = &seen.per_gateway;
                [
                    seen.frames.load(Relaxed),
                    seen.busy.load(Relaxed),
                    g[0].0.load(Relaxed),
                    g[0].1.load(Relaxed),
                    g[1].0.load(Relaxed),
                    g[1].1.load(Relaxed),
                ]
            };
            let mut last = read();
            // Bounded: at most an hour of samples.
            for second in 1..=3600 {
                std::thread::sleep(
                    (sampler.started + Duration::from_secs(second)).saturating_duration_since(Instant::now()),
                );
                let now = read();
                let increase: Reading = std::array::from_fn(|i| now[i] - last[i]);
                sampler.samples.lock().unwrap().push((second, increase));
                last = now;
                if sampler.stop.load(Relaxed) {
                    break;
                }
            }
        });
        (timeline, thread)
    }

    /// Seconds since the start.
    pub fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Notes `what` happening now, and prints it.
    pub fn mark(&self, what: &str) {
        let now = self.now();
        println!("{now:>6.1}s: {what}");
        self.marks.lock().unwrap().push((now, what.to_owned()));
    }

    pub fn stop(&self) {
        self.stop.store(true, Relaxed);
    }

    /// The second in which the last frame was acknowledged.
    pub fn last_acknowledged(&self) -> u64 {
        let samples = self.samples.lock().unwrap();
        samples.iter().rev().find(|(_, r)| r[0] > 0).map_or(0, |(s, _)| *s)
    }

    /// The seconds from `from` to `to` (seconds since the start) as `second:acknowledged/busy` per
    /// gateway, and the busy answers' first and last second in it.
    pub fn window(&self, from: f64, to: f64) -> String {
        let samples = self.samples.lock().unwrap();
        let inside: Vec<_> = samples
            .iter()
            .filter(|&&(s, _)| s as f64 > from && s as f64 <= to + 1.0)
            .collect();
        let busy: Vec<u64> = inside.iter().filter(|(_, r)| r[1] > 0).map(|(s, _)| *s).collect();
        let idle: Vec<u64> = inside.iter().filter(|(_, r)| r[0] == 0).map(|(s, _)| *s).collect();
        let series: Vec<String> = inside
            .iter()
            .map(|(s, r)| format!("{s}:{}/{}+{}/{}", r[2], r[3], r[4], r[5]))
            .collect();
        format!(
            "seconds with busy answers: {} ({}); seconds with no frame acknowledged: {}; per second \
             (gateway-0 acknowledged/busy + gateway-1 acknowledged/busy): {}",
            busy.len(),
            match (busy.first(), busy.last()) {
                (Some(first), Some(last)) => format!("{first}..{last} s"),
                _ => "none".to_owned(),
            },
            idle.len(),
            series.join(" ")
        )
    }
}
