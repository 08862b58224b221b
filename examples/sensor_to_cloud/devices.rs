//! The devices of the boolean job: the trusted party provisions each one as the keys tool does (a credential
//! file for the device, a record in the cloud's key store), and each device encrypts its readings as a
//! deployed one does, from its credential file alone, through the device crate's `MessageEncryptor` (the
//! one `FrameEncryptor` seam, built in place, seeded from the OS).

use crate::Mode;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use tfhe::boolean::client_key::ClientKey;
use tfhe_sbc_adapter::interop::big_key::{BooleanSet, glwe_key_from_client_key};
use tfhe_sbc_adapter::interop::big_key_per_device::provision_big_key_per_device;
use tfhe_sbc_adapter::interop::{
    DeviceSecrets, PublicKeyDevice, credentials_and_record, provision_per_device, public_key_from_client_key,
};
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, KeyMode, KeyStore};
use tfhe_sbc_adapter::stream::write_frame;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::std_io::MessageEncryptor;
use zeroize::Zeroizing;

/// The key id of the example's key set.
const KEY_ID: u32 = 1;
/// The first device's id.
pub const FIRST_ID: u64 = 100;

/// Trusted party: for each mode in `modes`, a device's credential file (what the keys tool writes as
/// `devices/<ID>.tsdc`; it holds the device's MAC key and its key, so it is wiped on drop), its record
/// inserted into `store`. Public-key devices share one public key under the client key's GLWE key.
pub fn provision(
    set: BooleanSet,
    modes: &[Mode],
    client_key: &ClientKey,
    store: &mut KeyStore,
    rng: &mut Blake2bXof,
) -> Vec<Zeroizing<Vec<u8>>> {
    let params = set.glwe_parameters();
    let public_key = modes
        .contains(&Mode::PublicKey)
        .then(|| public_key_from_client_key(set, client_key, KEY_ID, rng).unwrap());
    let mut files = Vec::with_capacity(modes.len());
    for (i, &mode) in modes.iter().enumerate() {
        let id = FIRST_ID + i as u64;
        let (file, record) = match mode {
            // On the big-key sets: the device's own key of the set's shape, switched into the big key once
            // per frame at intake; on TFHE_LIB, a key switch per bit into the small key.
            Mode::PerDevice => {
                let (secrets, record) = if set.is_big_key() {
                    provision_big_key_per_device(set, client_key, id, KEY_ID, rng)
                } else {
                    provision_per_device(client_key, id, KEY_ID, rng)
                }
                .unwrap();
                (
                    secrets.credentials_file(KeyMode::PerDeviceSecretKey, &params).unwrap(),
                    record,
                )
            }
            Mode::Fleet => {
                let (credentials, record) =
                    credentials_and_record(id, KEY_ID, params.id(), DeviceKeyMaterial::Fleet, rng).unwrap();
                let key = glwe_key_from_client_key(set, client_key).unwrap();
                let secrets = DeviceSecrets { key, credentials };
                (
                    secrets.credentials_file(KeyMode::FleetSecretKey, &params).unwrap(),
                    record,
                )
            }
            Mode::PublicKey => {
                let (credentials, record) =
                    credentials_and_record(id, KEY_ID, params.id(), DeviceKeyMaterial::PublicKey, rng).unwrap();
                let public_key = public_key.clone().expect("made for public-key devices");
                let device = PublicKeyDevice {
                    public_key,
                    credentials,
                };
                (device.credentials_file().unwrap(), record)
            }
            Mode::Mixed => unreachable!("expanded by device_modes"),
        };
        store.insert(record).unwrap();
        files.push(file);
    }
    files
}

/// What a device reports after sending.
pub struct DeviceReport {
    /// Its id.
    pub id: u64,
    /// Its readings, in the clear (what the trusted party checks against).
    pub readings: Vec<u8>,
    /// Frames sent.
    pub frames: usize,
    /// Bytes sent, the 4-byte length prefixes included.
    pub bytes: usize,
    /// Time to encrypt and authenticate the message.
    pub encryption: Duration,
}

/// One device: reads its credential file, encrypts `readings` as one message and sends its frames to
/// `address`.
pub fn run_device(credentials_file: &[u8], readings: Vec<u8>, address: SocketAddr) -> DeviceReport {
    let credentials = decode_credentials(credentials_file).unwrap();
    let mut encryptor = MessageEncryptor::from_os_entropy(&credentials).unwrap();
    // Sequence numbers never repeat: firmware restores the counter from a persisted high-water mark or a
    // boot counter; this run is boot 0.
    let mut counter = FrameCounter::from_boot_counter(0);
    let t = Instant::now();
    let outgoing = counter.begin_message(readings.len(), encryptor.chunk_bytes()).unwrap();
    let frames = encryptor
        .encrypt_message(&credentials.credentials, &outgoing, &readings)
        .unwrap();
    let encryption = t.elapsed();
    let mut socket = TcpStream::connect(address).unwrap();
    let mut bytes = 0;
    for frame in &frames {
        write_frame(&mut socket, &frame.bytes).unwrap();
        bytes += frame.bytes.len() + 4;
    }
    DeviceReport {
        id: credentials.credentials.device_id(),
        readings,
        frames: frames.len(),
        bytes,
        encryption,
    }
}
