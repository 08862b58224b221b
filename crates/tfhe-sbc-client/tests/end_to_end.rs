//! The client binary end to end on loopback, against a test server built from the adapter's intake (no
//! tfhe-rs) that drops connections mid-stream: every message arrives exactly once, in order, and decrypts to
//! the input; resends are acknowledged as duplicates; a restart continues above the persisted counter; and
//! the refusals that sending again cannot fix end the client with an error that says what to do.

#![allow(clippy::unwrap_used)]

use rand_core::SeedableRng;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;
use tfhe_sbc_adapter::ack::ack_for;
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig, Message, Received};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::files::credentials::{KeyMode, credentials_file_bytes, encode_credentials};
use tfhe_sbc_device::frame::ack::AckStatus;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::std_io::write_ack;

const DEVICE: u64 = 7;
const KEY_ID: u32 = 0x5eed;
const MAC: [u8; 32] = [0x4d; 32];

/// A device's key and its credential file in a fresh directory.
struct Provisioned {
    dir: tempfile::TempDir,
    key: GlweSecretKey<Vec<u8>>,
}

impl Provisioned {
    fn new(seed: u8) -> Self {
        let params = TFHE_LIB_GLWE_1024;
        let key = GlweSecretKey::generate_binary(
            vec![0u8; 1024],
            params.polynomial_size(),
            &mut Blake2bXof::from_seed([seed; 32]),
        )
        .unwrap();
        let mut packed = vec![0u8; 128];
        pack_secret_key(key.as_bytes(), &mut packed).unwrap();
        let mode = KeyMode::PerDeviceSecretKey;
        let mut file = vec![0u8; credentials_file_bytes(mode, &params)];
        let credentials = DeviceCredentials::new(DEVICE, KEY_ID, MacKey::from_bytes(MAC));
        encode_credentials(mode, &params, &credentials, &packed, &mut file).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("7.tsdc");
        std::fs::write(&path, &file).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        Self { dir, key }
    }

    fn credentials(&self) -> PathBuf {
        self.dir.path().join("7.tsdc")
    }

    fn counter(&self) -> PathBuf {
        self.dir.path().join("7.counter")
    }

    /// The message's bytes, decrypted with the device's key.
    fn decrypt(&self, message: &Message) -> Vec<u8> {
        let mut decryptor = Box::new(GlweDecryptor::<1024>::new(&self.key).unwrap());
        let mut out = Vec::new();
        for frame in &message.frames {
            let mut phase = vec![0u32; 1024];
            decryptor
                .decrypt_phase(frame.ciphertext.mask(), frame.ciphertext.body(), &mut phase)
                .unwrap();
            let mut bytes = vec![0u8; 128];
            decode_bits(&phase, &mut bytes).unwrap();
            out.extend_from_slice(&bytes[..frame.chunk_message_bytes()]);
        }
        out
    }
}

/// What the test server does to connection number `i` (from 0) once it has read frame number `n` on it.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Close after the intake took the frame, before acknowledging it: the device resends, gets `Duplicate`.
    AfterIntake { connection: usize, frame: usize },
    /// Close before the intake sees the frame: the device resends, gets `Accepted`.
    BeforeIntake { connection: usize, frame: usize },
}

#[derive(Default)]
struct Seen {
    messages: Vec<Message>,
    statuses: Vec<AckStatus>,
    connections: usize,
}

/// A loopback server: the adapter's intake and acknowledgements, one connection at a time, with faults.
struct TestServer {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Seen>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    fn start(registry: DeviceRegistry, faults: Vec<Fault>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let thread = {
            let (stop, seen) = (stop.clone(), seen.clone());
            std::thread::spawn(move || {
                let mut intake = Intake::new(IntakeConfig::default(), registry);
                for (connection, socket) in listener.incoming().enumerate() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    seen.lock().unwrap().connections += 1;
                    serve(&mut intake, socket.unwrap(), connection, &faults, &seen);
                }
            })
        };
        Self {
            address,
            stop,
            seen,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> Seen {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.address);
        self.thread.take().unwrap().join().unwrap();
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

fn serve(intake: &mut Intake, socket: TcpStream, connection: usize, faults: &[Fault], seen: &Mutex<Seen>) {
    let mut writer = socket.try_clone().unwrap();
    let mut reader = FrameReader::new(socket);
    let mut n = 0;
    while let Ok(Some(frame)) = reader.next_frame() {
        n += 1;
        let fault = |wanted: fn(&Fault) -> Option<(usize, usize)>| {
            faults.iter().filter_map(wanted).any(|f| f == (connection, n))
        };
        if fault(|f| match *f {
            Fault::BeforeIntake { connection, frame } => Some((connection, frame)),
            _ => None,
        }) {
            return;
        }
        let result = intake.receive(frame, Instant::now());
        let ack = ack_for(frame, &result);
        {
            let mut seen = seen.lock().unwrap();
            seen.statuses.push(ack.status);
            if let Ok(Received::Complete(message)) = result {
                seen.messages.push(message);
            }
        }
        if fault(|f| match *f {
            Fault::AfterIntake { connection, frame } => Some((connection, frame)),
            _ => None,
        }) {
            return;
        }
        if write_ack(&mut writer, &ack).is_err() {
            return;
        }
    }
}

fn registry(floor: u64) -> DeviceRegistry {
    let mut registry = DeviceRegistry::new();
    registry
        .register_with_floor(DeviceCredentials::new(DEVICE, KEY_ID, MacKey::from_bytes(MAC)), floor)
        .unwrap();
    registry
}

fn client(device: &Provisioned, server: SocketAddr, args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
        .arg("--credentials")
        .arg(device.credentials())
        .args(["--server", &server.to_string(), "--max-backoff", "200ms"])
        .args(args)
        .args(if args.contains(&"--give-up-after") {
            &[][..]
        } else {
            &["--give-up-after", "60s"][..]
        })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `count` pseudo-random u16 readings, one per line.
fn readings(count: usize, seed: u64) -> (String, Vec<u8>) {
    let mut rng = Blake2bXof::seed_from_u64(seed);
    let values: Vec<u16> = (0..count).map(|_| rand_core::Rng::next_u32(&mut rng) as u16).collect();
    let text = values.iter().map(|v| format!("{v}\n")).collect();
    (text, values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

fn read_counter(path: &Path) -> u64 {
    std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

/// 30 messages of 80 u16 readings (160 bytes: two frames each) through a server that drops four
/// connections, before and after its intake took a frame, in the middle of messages too.
#[test]
fn resends_after_dropped_connections_deliver_every_message_once() {
    let device = Provisioned::new(1);
    let faults = vec![
        Fault::AfterIntake {
            connection: 0,
            frame: 3,
        },
        Fault::BeforeIntake {
            connection: 1,
            frame: 2,
        },
        Fault::AfterIntake {
            connection: 2,
            frame: 10,
        },
        Fault::AfterIntake {
            connection: 3,
            frame: 1,
        },
    ];
    let server = TestServer::start(registry(0), faults);
    let (input, bytes) = readings(30 * 80, 42);
    let output = client(&device, server.address, &["--format", "u16", "--batch", "80"], &input);
    let seen = server.finish();
    assert!(output.status.success(), "{}", stderr(&output));

    // Every message once, in order, decrypting to the input.
    assert_eq!(seen.messages.len(), 30, "{}", stderr(&output));
    let mut ids: Vec<u32> = seen.messages.iter().map(|m| m.message_id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 30, "a message completed twice");
    let received: Vec<u8> = seen.messages.iter().flat_map(|m| device.decrypt(m)).collect();
    assert_eq!(received, bytes);
    // The frames the intake took before a drop came again and were acknowledged as duplicates, not taken.
    let count = |s| seen.statuses.iter().filter(|&&x| x == s).count();
    assert_eq!(count(AckStatus::Accepted), 60);
    assert!(count(AckStatus::Duplicate) >= 3, "{:?}", seen.statuses);
    assert_eq!(
        seen.statuses.len(),
        count(AckStatus::Accepted) + count(AckStatus::Duplicate)
    );
    assert_eq!(seen.connections, 5);
    let log = stderr(&output);
    assert!(log.contains("60 frames") && log.contains("5 connections"), "{log}");
    // The counter file holds the end of the reserved block, above every number used.
    assert!(read_counter(&device.counter()) >= 60);
}

/// A second run continues above the first run's numbers (the counter file); a server whose window has moved
/// on refuses a counter that went back, and the client says which file to fix.
#[test]
fn restarts_never_reuse_sequence_numbers() {
    let device = Provisioned::new(2);
    let server = TestServer::start(registry(0), Vec::new());
    let block = ["--counter-block", "4"];
    let first = client(&device, server.address, &block, "1\n2\n3\n");
    assert!(first.status.success(), "{}", stderr(&first));
    let after_first = read_counter(&device.counter());
    assert_eq!(after_first, 4, "one block of 4 reserved for 3 frames");
    let second = client(&device, server.address, &block, "4\n5\n6\n7\n8\n");
    assert!(second.status.success(), "{}", stderr(&second));
    let seen = server.finish();
    let sequences: Vec<u64> = seen.messages.iter().map(|m| m.first_sequence).collect();
    assert_eq!(sequences, vec![0, 1, 2, 4, 5, 6, 7, 8]);
    let values: Vec<u8> = seen.messages.iter().flat_map(|m| device.decrypt(m)).collect();
    assert_eq!(values, (1..=8).collect::<Vec<u8>>());

    // The counter file lost (reset to 0) against a server that has seen up to 1000: refused, and told.
    std::fs::remove_file(device.counter()).unwrap();
    let server = TestServer::start(registry(1000), Vec::new());
    let output = client(&device, server.address, &[], "9\n");
    server.finish();
    assert_eq!(output.status.code(), Some(1));
    let log = stderr(&output);
    assert!(
        log.contains("too old") && log.contains("write 1000 into") && log.contains("7.counter"),
        "{log}"
    );
}

/// Refusals that resending cannot fix end the client with one line saying what to do.
#[test]
fn unfixable_refusals_and_unreachable_servers_are_one_line_errors() {
    let device = Provisioned::new(3);
    // The server knows another MAC key for the device.
    let mut wrong = DeviceRegistry::new();
    wrong
        .register(DeviceCredentials::new(DEVICE, KEY_ID, MacKey::from_bytes([1; 32])))
        .unwrap();
    let server = TestServer::start(wrong, Vec::new());
    let output = client(&device, server.address, &[], "1\n");
    server.finish();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("different provisioning runs"),
        "{}",
        stderr(&output)
    );

    // The server does not know the device.
    let server = TestServer::start(DeviceRegistry::new(), Vec::new());
    let output = client(&device, server.address, &[], "1\n");
    server.finish();
    assert!(
        stderr(&output).contains("does not know device 7"),
        "{}",
        stderr(&output)
    );

    // Nobody listens: the client retries, then gives up when told to.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let started = Instant::now();
    let output = client(&device, closed, &["--give-up-after", "1s"], "1\n");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("no acknowledgement from"),
        "{}",
        stderr(&output)
    );
    assert!(started.elapsed().as_secs() < 30);

    // Bad input, a bad credential file and a bad argument: exit codes 1, 2, 2, each one line that says what to do.
    let server = TestServer::start(registry(0), Vec::new());
    let output = client(&device, server.address, &[], "1\n300\n");
    server.finish();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("line 2 of standard input: \"300\" is not a u8"),
        "{}",
        stderr(&output)
    );
    let output = client(&device, closed, &["--batch", "5000"], "");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("use --batch 2048 or less"),
        "{}",
        stderr(&output)
    );
    std::fs::write(device.credentials(), b"TSDC but not really").unwrap();
    let output = client(&device, closed, &[], "");
    assert_eq!(output.status.code(), Some(2));
    let log = stderr(&output);
    assert!(
        log.contains("is not a valid device credential file") && !log.contains("panicked"),
        "{log}"
    );
}
