//! A service under test: an integer key set, meters that seal frames from their credential files, the
//! server process on a real nats-server, and the device side of the protocol.

use rand_core::SeedableRng;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::key_store::KeyMode;
use tfhe_sbc_device::csprng::Blake2bXof;
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::ack::{ACK_BYTES, Ack, AckRecord, AckStatus, frame_tag};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::{FrameCounter, ReadingFormat};
use tfhe_sbc_device::std_io::MessageEncryptor;

/// How the trusted party reads the results store of the integer key set in `keys`: its key store and
/// server key, readings of 16 bits (the meters' `--format u16`).
#[allow(dead_code)]
pub fn integer_results_intake(
    keys: &Path,
) -> tfhe_sbc_adapter::key_store::KeyedIntake<tfhe_sbc_adapter::interop::integer::IntegerBridge> {
    use tfhe_sbc_adapter::interop::integer::{IntegerBridge, ReadingBits};
    let (_, server_key) =
        tfhe_sbc_adapter::key_set::server_key::read_integer_server_key(&keys.join("server_key.bin")).unwrap();
    let bridge = IntegerBridge::new(server_key)
        .unwrap()
        .with_reading_bits(ReadingBits::from_bits(16).unwrap());
    let store = tfhe_sbc_adapter::key_store::KeyStore::read_file(&keys.join("key_store.bin")).unwrap();
    tfhe_sbc_adapter::key_store::KeyedIntake::new(tfhe_sbc_adapter::intake::IntakeConfig::default(), store, bridge)
        .unwrap()
}

/// The integer key set of the service tests in `dir`, with one meter per key mode.
pub fn integer_key_set(dir: &Path, key_id: u32) {
    tfhe_sbc_keys::commands::init_integer(dir, Some(key_id)).unwrap();
    for (id, mode) in METERS {
        tfhe_sbc_keys::commands::issue(dir, id, mode, None).unwrap();
    }
}

pub const METERS: [(u64, KeyMode); 3] = [
    (51, KeyMode::FleetSecretKey),
    (52, KeyMode::PerDeviceSecretKey),
    (53, KeyMode::PublicKey),
];

/// One meter: its encryptor (whatever its credential file's mode and parameter set), MAC key and frame
/// counter.
pub struct Meter {
    pub id: u64,
    encryptor: MessageEncryptor,
    pub credentials: DeviceCredentials,
    pub counter: FrameCounter,
}

impl Meter {
    /// Device `id` of the key set in `dir`, its first frame numbered `first_sequence`.
    pub fn new(dir: &Path, id: u64, first_sequence: u64) -> Self {
        Self::with_encryptor(dir, id, first_sequence, MessageEncryptor::new)
    }

    /// Device `id` sending tfhe-rs compact lists of `value_bits`-bit readings under the compact public key
    /// `devices/<key_of>.tscp`, its first frame numbered `first_sequence`.
    #[allow(dead_code)]
    pub fn compact_list(dir: &Path, id: u64, key_of: u64, first_sequence: u64, value_bits: u32) -> Self {
        let key = std::fs::read(dir.join("devices").join(format!("{key_of}.tscp"))).unwrap();
        Self::with_encryptor(dir, id, first_sequence, |file, rng| {
            MessageEncryptor::compact_list(file, &key, value_bits, rng)
        })
    }

    fn with_encryptor(
        dir: &Path,
        id: u64,
        first_sequence: u64,
        build: impl FnOnce(
            &tfhe_sbc_device::files::credentials::Credentials<'_>,
            &mut Blake2bXof,
        ) -> tfhe_sbc_device::Result<MessageEncryptor>,
    ) -> Self {
        let bytes = std::fs::read(dir.join("devices").join(format!("{id}.tsdc"))).unwrap();
        let file = decode_credentials(&bytes).unwrap();
        let encryptor = build(&file, &mut Blake2bXof::from_seed([id as u8; 32])).unwrap();
        let credentials = DeviceCredentials::new(
            id,
            file.credentials.key_id(),
            MacKey::from_bytes(*file.credentials.mac_key().as_bytes()),
        );
        Self {
            id,
            encryptor,
            credentials,
            counter: FrameCounter::new(first_sequence),
        }
    }

    /// Sends `frame` (one of this meter's) on `stream` and asserts that the acknowledgement opens under the
    /// meter's MAC key and says `status`.
    #[allow(dead_code)]
    pub fn send_expecting(&self, stream: &mut TcpStream, frame: &[u8], status: AckStatus) -> Ack {
        let ack = send(stream, frame, self.credentials.mac_key())
            .unwrap_or_else(|claimed| panic!("unauthenticated record: {claimed:?}"));
        assert_eq!(ack.status, status, "device {}, sequence {}", self.id, ack.sequence);
        ack
    }

    /// The frames of one message.
    pub fn seal(&mut self, message: &[u8]) -> Vec<Vec<u8>> {
        self.seal_as(message, ReadingFormat::Bytes)
    }

    /// The frames of one message whose headers say its bytes are `format` readings.
    pub fn seal_as(&mut self, message: &[u8], format: ReadingFormat) -> Vec<Vec<u8>> {
        let outgoing = self
            .counter
            .begin_message(message.len(), self.encryptor.chunk_bytes())
            .unwrap()
            .with_reading_format(format)
            .unwrap();
        let frames = self.encryptor.encrypt_message(&self.credentials, &outgoing, message);
        frames.unwrap().into_iter().map(|frame| frame.bytes).collect()
    }

    /// The frames of one message of `readings` (16-bit, little-endian; 256 per chunk on the integer set).
    pub fn message(&mut self, readings: &[u16]) -> Vec<Vec<u8>> {
        let message: Vec<u8> = readings.iter().flat_map(|r| r.to_le_bytes()).collect();
        self.seal(&message)
    }
}

/// The readings of message `m` of meter `id`: one chunk for even `m`, two (300 readings) for odd.
pub fn readings(id: u64, m: u64) -> Vec<u16> {
    let count = if m.is_multiple_of(2) { 5 } else { 300 };
    (0..count).map(|i| (id * 1000 + m * 37 + i * 11) as u16).collect()
}

/// Sends `frame` and reads its acknowledgement record; `Ok` with the opened ack, `Err` with the claimed one
/// if the record does not open for this frame under `key`.
pub fn send(stream: &mut TcpStream, frame: &[u8], key: &MacKey) -> Result<Ack, Ack> {
    // One write: the length and the frame in two would meet Nagle's algorithm and delayed ACKs (40 ms).
    let mut framed = Vec::with_capacity(4 + frame.len());
    framed.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    framed.extend_from_slice(frame);
    stream.write_all(&framed).unwrap();
    let mut record = [0u8; ACK_BYTES];
    stream.read_exact(&mut record).unwrap();
    let record = AckRecord::decode(&record).unwrap();
    record.open(key, frame_tag(frame).unwrap()).map_err(|_| record.claimed)
}

/// A multi-threaded tokio runtime for the tests' NATS clients.
#[allow(dead_code)]
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Sends `frame` on fresh connections until an authenticated acknowledgement (not "busy") comes back,
/// for at most 60 s; its status.
pub fn send_until_acknowledged(address: &str, frame: &[u8], key: &MacKey) -> AckStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no acknowledgement within 60 s");
        let Ok(mut stream) = TcpStream::connect(address) else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let answer = (|| {
            stream.write_all(&(frame.len() as u32).to_le_bytes()).ok()?;
            stream.write_all(frame).ok()?;
            let mut record = [0u8; ACK_BYTES];
            stream.read_exact(&mut record).ok()?;
            AckRecord::decode(&record).ok()?.open(key, frame_tag(frame)?).ok()
        })();
        match answer {
            Some(ack) if ack.status != AckStatus::Busy => return ack.status,
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

pub struct Server {
    pub child: Child,
}

impl Server {
    pub fn start(keys: &Path, nats: &str, address_file: &Path) -> (Self, String) {
        Self::start_with(keys, nats, address_file, &[], Stdio::null(), "")
    }

    /// The server with `extra` arguments, its log (at `log_level`) to `stderr`, started under the shell
    /// prefix `shell` (e.g. `ulimit -n 64;`) when not empty.
    pub fn start_with(
        keys: &Path,
        nats: &str,
        address_file: &Path,
        extra: &[&str],
        stderr: Stdio,
        shell: &str,
    ) -> (Self, String) {
        let _ = std::fs::remove_file(address_file);
        let binary = env!("CARGO_BIN_EXE_tfhe-sbc-server");
        let mut command = if shell.is_empty() {
            Command::new(binary)
        } else {
            let mut command = Command::new("sh");
            command.args(["-c", &format!("{shell} exec \"$0\" \"$@\""), binary]);
            command
        };
        let child = command
            .args(["--keys", keys.to_str().unwrap(), "--listen", "127.0.0.1:0"])
            .args(["--address-file", address_file.to_str().unwrap()])
            .args(["--nats", nats])
            .args(if extra.contains(&"--workers") {
                &[][..]
            } else {
                &["--workers", "2"][..]
            })
            .args(if extra.contains(&"--role") {
                &[][..]
            } else {
                &["--role", "both"][..]
            })
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let started = Instant::now();
        let address = loop {
            if let Ok(text) = std::fs::read_to_string(address_file)
                && text.ends_with('\n')
            {
                break text.trim().to_owned();
            }
            assert!(started.elapsed() < Duration::from_secs(60), "the server did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        (Self { child }, address)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connection to `address` whose reads time out after 30 s.
pub fn connect(address: &str) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// A temporary directory with the integer key set of `key_id` in its `keys`, and a fresh nats-server.
pub fn key_set_and_nats(key_id: u32) -> (tempfile::TempDir, std::path::PathBuf, super::nats::NatsServer) {
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("keys");
    integer_key_set(&keys, key_id);
    (root, keys, super::nats::NatsServer::start())
}
