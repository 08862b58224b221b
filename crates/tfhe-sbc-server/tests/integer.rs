//! The server on an integer key set (`init --parameters integer`, made with the keys tool's functions): a
//! per-device and a fleet meter send 16-bit readings from their credential files (`IntegerEncryptor`, one
//! seeded frame each) over TCP; the server takes them through its keyed intake into `FheUint16` values, and
//! `--demo-client-key` decrypts exactly the readings sent.
#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::key_set::key_store::KeyMode;
use tfhe_sbc_adapter::stream::write_frame;
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::message::chunks;

const PER_DEVICE: u64 = 41;
const FLEET: u64 = 42;

/// The readings meter `id` sends.
fn readings(id: u64) -> Vec<u16> {
    (0..3u16).map(|i| 20_000 + 7_919 * i + id as u16).collect()
}

/// The one seeded frame of meter `id`, from its credential file alone.
fn frame(dir: &Path, id: u64) -> Vec<u8> {
    let bytes = std::fs::read(dir.join("devices").join(format!("{id}.tsdc"))).unwrap();
    let file = decode_credentials(&bytes).unwrap();
    let mut encryptor = Box::new(IntegerEncryptor::<2048>::EMPTY);
    encryptor
        .set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, file.key_material)
        .unwrap();
    encryptor.seed_from_bytes(&mut [id as u8; 32]);
    let message: Vec<u8> = readings(id).iter().flat_map(|r| r.to_le_bytes()).collect();
    let outgoing = encryptor
        .begin_message(&mut FrameCounter::new(0), message.len())
        .unwrap();
    let chunk = chunks(&message, IntegerEncryptor::<2048>::MESSAGE_BYTES)
        .next()
        .unwrap();
    let mut out = vec![0u8; IntegerEncryptor::<2048>::SEEDED_FRAME_BYTES];
    let len = encryptor
        .encrypt_frame_into(&file.credentials, &outgoing, &chunk, &mut out)
        .unwrap();
    out.truncate(len);
    out
}

#[test]
fn integer_key_set_readings_arrive_as_fhe_uint16() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("keys");
    tfhe_sbc_keys::commands::init_integer(&dir, Some(0x1d00_0004)).unwrap();
    tfhe_sbc_keys::commands::issue(&dir, PER_DEVICE, KeyMode::PerDeviceSecretKey, None).unwrap();
    tfhe_sbc_keys::commands::issue(&dir, FLEET, KeyMode::FleetSecretKey, None).unwrap();
    let frames: Vec<Vec<u8>> = [PER_DEVICE, FLEET].iter().map(|&id| frame(&dir, id)).collect();

    let address_file = root.path().join("address");
    let mut server = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", dir.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(["--address-file", address_file.to_str().unwrap()])
        .args(["--demo-client-key", dir.join("client_key.bin").to_str().unwrap()])
        .args(["--integer-bits", "16", "--exit-after", "2"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let address = loop {
        if let Ok(text) = std::fs::read_to_string(&address_file)
            && text.ends_with('\n')
        {
            break text.trim().to_owned();
        }
        assert!(started.elapsed() < Duration::from_secs(120), "the server did not start");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stream = TcpStream::connect(&address).unwrap();
    for frame in &frames {
        write_frame(&mut stream, frame).unwrap();
    }
    let status = server.wait().unwrap();
    let mut log = String::new();
    server.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(status.success(), "{log}");
    for id in [PER_DEVICE, FLEET] {
        let values = format!("{:?}", readings(id));
        let line = log
            .lines()
            .find(|l| l.contains("decrypted with the demo client key") && l.contains(&format!("device={id}")))
            .unwrap_or_else(|| panic!("no decryption of device {id}: {log}"));
        assert!(line.contains(&values), "device {id} sent {values}: {line}");
    }
    assert!(log.contains("FheUint16"), "{log}");
}
