//! The server on an integer key set (`init --parameters integer`, made with the keys tool's functions): a
//! per-device, a fleet and a public-key meter send 16-bit readings from their credential files (one frame
//! each: seeded frames from `IntegerEncryptor`, a public-key frame from `IntegerPublicKeyEncryptor`) over
//! TCP; the server takes them through its keyed intake into `FheUint16` values, and `--demo-client-key`
//! decrypts exactly the readings sent.
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
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::files::credentials::{Credentials, decode_credentials};
use tfhe_sbc_device::files::public_key::public_key_body;
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind};

const PER_DEVICE: u64 = 41;
const FLEET: u64 = 42;
const PUBLIC_KEY: u64 = 43;
const METERS: [u64; 3] = [PER_DEVICE, FLEET, PUBLIC_KEY];

/// The readings meter `id` sends.
fn readings(id: u64) -> Vec<u16> {
    (0..3u16).map(|i| 20_000 + 7_919 * i + id as u16).collect()
}

/// The one frame of meter `id`, from its credential file alone: seeded under its secret key, or a public-key
/// frame under the key set's public key.
fn frame(dir: &Path, id: u64) -> Vec<u8> {
    let bytes = std::fs::read(dir.join("devices").join(format!("{id}.tsdc"))).unwrap();
    let file = decode_credentials(&bytes).unwrap();
    let message: Vec<u8> = readings(id).iter().flat_map(|r| r.to_le_bytes()).collect();
    if file.mode == KeyMode::PublicKey {
        let (header, body) = public_key_body(file.key_material, file.credentials.key_id()).unwrap();
        let mut encryptor = Box::new(IntegerPublicKeyEncryptor::<2048>::EMPTY);
        encryptor
            .set_integer_public_key_le_bytes(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &header.seed, body)
            .unwrap();
        encryptor.seed_from_bytes(&mut [id as u8; 32]);
        seal(&mut *encryptor, &file, &message)
    } else {
        let mut encryptor = Box::new(IntegerEncryptor::<2048>::EMPTY);
        encryptor
            .set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, file.key_material)
            .unwrap();
        encryptor.seed_from_bytes(&mut [id as u8; 32]);
        seal(&mut *encryptor, &file, &message)
    }
}

/// `message` (one chunk) as one frame of `encryptor`.
fn seal(encryptor: &mut dyn FrameEncryptor, file: &Credentials<'_>, message: &[u8]) -> Vec<u8> {
    let outgoing = encryptor
        .begin_message(&mut FrameCounter::new(0), message.len())
        .unwrap();
    let chunk = chunks(message, encryptor.chunk_bytes()).next().unwrap();
    let mut out = vec![0u8; encryptor.frame_buffer_len()];
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
    tfhe_sbc_keys::commands::issue(&dir, PUBLIC_KEY, KeyMode::PublicKey, None).unwrap();
    let frames: Vec<Vec<u8>> = METERS.iter().map(|&id| frame(&dir, id)).collect();
    assert_eq!(frames[2][5], FrameKind::PublicKey as u8);
    assert_eq!(frames[2].len(), 32_831);

    let address_file = root.path().join("address");
    let mut server = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", dir.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(["--address-file", address_file.to_str().unwrap()])
        .args(["--demo-client-key", dir.join("client_key.bin").to_str().unwrap()])
        .args(["--integer-bits", "16", "--exit-after", "3"])
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
    assert!(log.contains("43 (public-key)"), "{log}");
    for id in METERS {
        let values = format!("{:?}", readings(id));
        let line = log
            .lines()
            .find(|l| l.contains("decrypted with the demo client key") && l.contains(&format!("device={id}")))
            .unwrap_or_else(|| panic!("no decryption of device {id}: {log}"));
        assert!(line.contains(&values), "device {id} sent {values}: {line}");
    }
    assert!(log.contains("FheUint16"), "{log}");
}
