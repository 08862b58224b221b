//! What the client's tests share: a provisioned device (key and credential file in a fresh
//! directory), a loopback test server built from the adapter's intake (no tfhe-rs) that acknowledges with
//! sealed records and can misbehave on cue, and the client binary run on some input.
//! [`ratchet_replay`] is the independent replay of the CSPRNG's ratchet chain (also used, by `#[path]`, by the
//! firmware's RAM-image scanner).

#![allow(dead_code, clippy::unwrap_used)]

pub mod ratchet_replay;

use rand_core::SeedableRng;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::ack::{ack_for, seal_ack};
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig, Message, Received};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::files::credentials::{KeyMode, credentials_file_bytes, encode_credentials};
use tfhe_sbc_device::frame::ack::{ACK_BYTES, ACK_FIELDS_BYTES, Ack, AckStatus};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::std_io::write_ack;

pub const DEVICE: u64 = 7;
pub const KEY_ID: u32 = 0x5eed;
pub const MAC: [u8; 32] = [0x4d; 32];
/// A counter value a forged "too old" record asks for: it must never reach the operator.
pub const FORGED_FLOOR: u64 = u64::MAX - 1;

/// A device's key and its credential file in a fresh directory.
pub struct Provisioned {
    pub dir: tempfile::TempDir,
    key: GlweSecretKey<Vec<u8>>,
}

impl Provisioned {
    pub fn new(seed: u8) -> Self {
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

    pub fn credentials(&self) -> PathBuf {
        self.dir.path().join("7.tsdc")
    }

    pub fn counter(&self) -> PathBuf {
        self.dir.path().join("7.counter")
    }

    pub fn outbox(&self) -> PathBuf {
        self.dir.path().join("7.counter.outbox")
    }

    /// The files left in the outbox.
    pub fn outbox_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.outbox())
            .map(|dir| {
                dir.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// The message's bytes, decrypted with the device's key.
    pub fn decrypt(&self, message: &Message) -> Vec<u8> {
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

    /// Every message's bytes, decrypted, in sequence order.
    pub fn decrypt_in_order(&self, messages: &[Message]) -> Vec<u8> {
        let mut sorted: Vec<&Message> = messages.iter().collect();
        sorted.sort_by_key(|m| m.first_sequence);
        sorted.into_iter().flat_map(|m| self.decrypt(m)).collect()
    }
}

/// What the test server does with frame number `frame` (from 1) of connection number `connection` (from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// Close after the intake took the frame, before acknowledging it: the device resends, gets `Duplicate`.
    CloseAfterIntake,
    /// Close before the intake sees the frame: the device resends, gets `Accepted`.
    CloseBeforeIntake,
    /// A man in the middle: the intake never sees the frame, and the device gets forged records instead: an
    /// "accepted" with a random tag, a "too old" asking for [`FORGED_FLOOR`] with a random tag and again with
    /// no tag (unauthenticated), an "accepted" naming another device, one for a sequence number that is not
    /// waiting, and 46 bytes that are no record.
    Forge,
    /// A forged (random-tag) "expired" for the frame, then the frame goes to the intake as usual.
    ForgedExpiredFirst,
    /// The intake never sees the frame; the server answers with a sealed "expired".
    Expire,
}

/// One [`Act`] and where.
#[derive(Clone, Copy, Debug)]
pub struct Fault {
    pub connection: usize,
    pub frame: usize,
    pub act: Act,
}

impl Fault {
    /// `act` on frame `frame` of connection `connection` (both counted from 0).
    pub const fn new(connection: usize, frame: usize, act: Act) -> Self {
        Self { connection, frame, act }
    }
}

#[derive(Default)]
pub struct Seen {
    pub messages: Vec<Message>,
    pub statuses: Vec<AckStatus>,
    /// The sequence number of every frame the intake accepted, in order.
    pub accepted: Vec<u64>,
    pub connections: usize,
    /// Frames read, acknowledged or not.
    pub frames: usize,
}

/// A loopback listener on its own thread: each connection, one at a time until [`Self::finish`], goes to
/// a handler with the server's shared `state`.
pub struct Loopback<S> {
    pub address: SocketAddr,
    stop: Arc<AtomicBool>,
    pub state: Arc<Mutex<S>>,
    thread: Option<JoinHandle<()>>,
}

impl<S: Default + Send + 'static> Loopback<S> {
    /// Listens on a free port; `handle(connection, socket, state)` serves each connection in turn.
    fn listen(mut handle: impl FnMut(usize, TcpStream, &Mutex<S>) + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let state = Arc::new(Mutex::new(S::default()));
        let thread = {
            let (stop, state) = (stop.clone(), state.clone());
            std::thread::spawn(move || {
                for (connection, socket) in listener.incoming().enumerate() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    handle(connection, socket.unwrap(), &state);
                }
            })
        };
        Self {
            address,
            stop,
            state,
            thread: Some(thread),
        }
    }

    /// Stops accepting and returns the state; a connection still open ends when its client dies.
    pub fn finish(mut self) -> S {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.address);
        self.thread.take().unwrap().join().unwrap();
        std::mem::take(&mut *self.state.lock().unwrap())
    }
}

/// A loopback server: the adapter's intake and sealed acknowledgements, one connection at a time, with
/// faults; its state is what it saw.
pub type TestServer = Loopback<Seen>;

impl TestServer {
    pub fn start(registry: DeviceRegistry, faults: Vec<Fault>) -> Self {
        let mut intake = Intake::new(IntakeConfig::default(), registry);
        Self::listen(move |connection, socket, seen| {
            seen.lock().unwrap().connections += 1;
            serve(&mut intake, socket, connection, &faults, seen);
        })
    }
}

/// A record with these fields and a tag nobody computed.
fn forged(status: AckStatus, device_id: u64, sequence: u64, detail: u64, salt: u64) -> [u8; ACK_BYTES] {
    let mut record = Ack {
        status,
        device_id,
        sequence,
        detail,
    }
    .unauthenticated();
    rand_core::Rng::fill_bytes(
        &mut Blake2bXof::seed_from_u64(sequence ^ salt),
        &mut record[ACK_FIELDS_BYTES..],
    );
    record
}

fn serve(intake: &mut Intake, socket: TcpStream, connection: usize, faults: &[Fault], seen: &Mutex<Seen>) {
    let mut writer = socket.try_clone().unwrap();
    let mut reader = FrameReader::new(socket);
    let mut n = 0;
    while let Ok(Some(frame)) = reader.next_frame() {
        n += 1;
        seen.lock().unwrap().frames += 1;
        let act = faults
            .iter()
            .find(|f| (f.connection, f.frame) == (connection, n))
            .map(|f| f.act);
        let header = ack_for(frame, &Ok::<(), IntakeError>(()));
        let key = intake.mac_key(header.device_id);
        let mut records = Vec::new();
        match act {
            Some(Act::CloseBeforeIntake) => return,
            Some(Act::Forge) => {
                let s = header.sequence;
                records.push(forged(AckStatus::Accepted, DEVICE, s, 0, 1));
                records.push(forged(AckStatus::TooOld, DEVICE, s, FORGED_FLOOR, 2));
                records.push(
                    Ack {
                        status: AckStatus::TooOld,
                        device_id: DEVICE,
                        sequence: s,
                        detail: FORGED_FLOOR,
                    }
                    .unauthenticated(),
                );
                records.push(forged(AckStatus::Accepted, DEVICE + 1, s, 0, 3));
                records.push(forged(AckStatus::Accepted, DEVICE, s + 1_000_000, 0, 4));
                records.push([0x5a; ACK_BYTES]);
            }
            Some(Act::Expire) => {
                let ack = Ack::new(AckStatus::Expired, header.device_id, header.sequence);
                records.push(seal_ack(frame, &ack, key));
            }
            _ => {
                if act == Some(Act::ForgedExpiredFirst) {
                    records.push(forged(AckStatus::Expired, DEVICE, header.sequence, 0, 5));
                }
                let result = intake.receive(frame, Instant::now());
                let ack = ack_for(frame, &result);
                records.push(seal_ack(frame, &ack, intake.mac_key(ack.device_id)));
                let mut seen = seen.lock().unwrap();
                seen.statuses.push(ack.status);
                if ack.status == AckStatus::Accepted {
                    seen.accepted.push(ack.sequence);
                }
                if let Ok(Received::Complete(message)) = result {
                    seen.messages.push(message);
                }
                if act == Some(Act::CloseAfterIntake) {
                    return;
                }
            }
        }
        for record in &records {
            if write_ack(&mut writer, record).is_err() {
                return;
            }
        }
    }
}

/// A server that reads frames and never acknowledges one: its state is their sequence numbers.
pub type SilentServer = Loopback<Vec<u64>>;

impl SilentServer {
    pub fn start() -> Self {
        Self::listen(|_, socket, sequences| {
            let mut reader = FrameReader::new(socket);
            while let Ok(Some(frame)) = reader.next_frame() {
                let header = ack_for(frame, &Ok::<(), IntakeError>(()));
                sequences.lock().unwrap().push(header.sequence);
            }
        })
    }

    /// Waits (at most `limit`) until `count` distinct frames arrived; returns their sorted sequence numbers.
    pub fn wait_for(&self, count: usize, limit: Duration) -> Vec<u64> {
        let started = Instant::now();
        loop {
            let mut distinct = self.state.lock().unwrap().clone();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() >= count || started.elapsed() > limit {
                return distinct;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub fn registry(floor: u64) -> DeviceRegistry {
    let mut registry = DeviceRegistry::new();
    registry
        .register_with_floor(DeviceCredentials::new(DEVICE, KEY_ID, MacKey::from_bytes(MAC)), floor)
        .unwrap();
    registry
}

/// The client binary on `device` and `server`, started with `args` (and a short backoff, and 60 s of
/// patience unless `args` say otherwise), its three streams piped.
pub fn spawn_client(device: &Provisioned, server: SocketAddr, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
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
        .unwrap()
}

/// The client run to its end on `input`.
pub fn client(device: &Provisioned, server: SocketAddr, args: &[&str], input: &str) -> Output {
    let mut child = spawn_client(device, server, args);
    // A client that stops at start-up (a set-up error) may exit before reading its input: its exit status
    // and log say what happened, not the broken pipe.
    if let Err(e) = child.stdin.take().unwrap().write_all(input.as_bytes()) {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing the client's input: {e}"
        );
    }
    child.wait_with_output().unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `count` pseudo-random u16 readings, one per line.
pub fn readings(count: usize, seed: u64) -> (String, Vec<u8>) {
    let mut rng = Blake2bXof::seed_from_u64(seed);
    let values: Vec<u16> = (0..count).map(|_| rand_core::Rng::next_u32(&mut rng) as u16).collect();
    let text = values.iter().map(|v| format!("{v}\n")).collect();
    (text, values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

pub fn read_counter(path: &Path) -> u64 {
    std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
}
