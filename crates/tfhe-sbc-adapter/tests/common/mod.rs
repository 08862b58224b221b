//! Shared test fixtures: devices that produce real v2 frames, and an intake that knows them.
#![allow(dead_code, clippy::unwrap_used)]

use rand_core::SeedableRng;
use std::time::Instant;
use tfhe_sbc_adapter::intake::{Frame, Intake, IntakeConfig, Message};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::{Chunk, chunks};
use tfhe_sbc_device::frame::{
    FULL_FRAME_BYTES_1024, FrameCounter, FrameHeader, HEADER_BYTES, OutgoingMessage, PREFIX_BYTES,
    SEEDED_FRAME_BYTES_1024, TAG_BYTES,
};

/// The key id every test device uses.
pub const KEY_ID: u32 = 3;

/// A simulated device: its GLWE key, encryptor, credentials and frame counter, all from fixed seeds.
pub struct Device {
    pub key: GlweSecretKeyOwned,
    pub encryptor: Box<GlweEncryptor<1024>>,
    pub credentials: DeviceCredentials,
    pub counter: FrameCounter,
    mac_key: [u8; 32],
}

impl Device {
    /// Device `device_id` with keys and randomness derived from `seed`.
    pub fn new(seed: u8, device_id: u64) -> Self {
        let params = TFHE_LIB_GLWE_1024;
        let key = GlweSecretKey::generate_binary(
            vec![0u8; 1024],
            params.polynomial_size(),
            &mut Blake2bXof::from_seed([seed; 32]),
        )
        .unwrap();
        let encryptor = Box::new(
            GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([seed.wrapping_add(1); 32])).unwrap(),
        );
        let mac_key = [seed ^ 0x33; 32];
        Self {
            key,
            encryptor,
            credentials: DeviceCredentials::new(device_id, KEY_ID, MacKey::from_bytes(mac_key)),
            counter: FrameCounter::new(0),
            mac_key,
        }
    }

    /// The device id.
    pub fn id(&self) -> u64 {
        self.credentials.device_id()
    }

    /// A second copy of the credentials, for the server's registry.
    pub fn server_credentials(&self) -> DeviceCredentials {
        DeviceCredentials::new(self.id(), KEY_ID, MacKey::from_bytes(self.mac_key))
    }

    /// The device's MAC key.
    pub fn mac_key(&self) -> MacKey {
        MacKey::from_bytes(self.mac_key)
    }

    /// The seeded frames of `message`: one message, consecutive sequence numbers.
    pub fn seeded_frames(&mut self, message: &[u8]) -> Vec<Vec<u8>> {
        let mut body = [0u32; 1024];
        self.frames(
            message,
            SEEDED_FRAME_BYTES_1024,
            |encryptor, credentials, outgoing, chunk, out| {
                encryptor.encrypt_seeded_frame(credentials, outgoing, chunk, &mut body, out)
            },
        )
    }

    /// The full-mask frames of `message`.
    pub fn full_frames(&mut self, message: &[u8]) -> Vec<Vec<u8>> {
        let mut ct = GlweCiphertext::from_container(vec![0u32; 2048], TFHE_LIB_GLWE_1024.polynomial_size()).unwrap();
        self.frames(
            message,
            FULL_FRAME_BYTES_1024,
            |encryptor, credentials, outgoing, chunk, out| {
                encryptor.encrypt_full_frame(credentials, outgoing, chunk, &mut ct, out)
            },
        )
    }

    /// The frames of `message` (one message, consecutive sequence numbers), each `frame_bytes` long, as
    /// `seal` writes each chunk's.
    fn frames(
        &mut self,
        message: &[u8],
        frame_bytes: usize,
        mut seal: impl FnMut(
            &mut GlweEncryptor<1024>,
            &DeviceCredentials,
            &OutgoingMessage,
            &Chunk<'_>,
            &mut [u8],
        ) -> tfhe_sbc_device::Result<usize>,
    ) -> Vec<Vec<u8>> {
        let outgoing = self.encryptor.begin_message(&mut self.counter, message.len()).unwrap();
        let mut out = vec![0u8; frame_bytes];
        chunks(message, 128)
            .map(|chunk| {
                let len = seal(&mut self.encryptor, &self.credentials, &outgoing, &chunk, &mut out).unwrap();
                assert_eq!(len, frame_bytes);
                out.clone()
            })
            .collect()
    }

    /// The message bytes of `frame`'s chunk, decrypted with this device's key.
    pub fn decrypt(&self, frame: &Frame) -> Vec<u8> {
        let mut decryptor = Box::new(GlweDecryptor::<1024>::new(&self.key).unwrap());
        let mut phase = [0u32; 1024];
        decryptor
            .decrypt_phase(frame.ciphertext.mask(), frame.ciphertext.body(), &mut phase)
            .unwrap();
        let mut bytes = vec![0u8; 128];
        decode_bits(&phase, &mut bytes).unwrap();
        bytes.truncate(frame.chunk_message_bytes());
        bytes
    }

    /// The whole decrypted message.
    pub fn decrypt_message(&self, message: &Message) -> Vec<u8> {
        message.frames.iter().flat_map(|f| self.decrypt(f)).collect()
    }
}

/// An intake that knows `devices`.
pub fn intake(config: IntakeConfig, devices: &[&Device]) -> Intake {
    let mut registry = DeviceRegistry::new();
    for device in devices {
        registry.register(device.server_credentials()).unwrap();
    }
    Intake::new(config, registry)
}

/// Receives every frame at `now`; the message the last one completes.
pub fn receive_message(intake: &mut Intake, frames: &[Vec<u8>], now: Instant) -> Message {
    let mut complete = None;
    for frame in frames {
        complete = intake.receive(frame, now).unwrap().into_message();
    }
    complete.unwrap()
}

/// The header of a frame.
pub fn header_of(frame: &[u8]) -> FrameHeader {
    postcard::from_bytes(&frame[PREFIX_BYTES..HEADER_BYTES]).unwrap()
}

/// `frame` with its header edited and its tag recomputed under `key` (a forger who knows the key, or the
/// device itself misbehaving).
pub fn reframe(frame: &[u8], key: &MacKey, edit: impl FnOnce(&mut FrameHeader)) -> Vec<u8> {
    let mut header = header_of(frame);
    edit(&mut header);
    let mut out = frame.to_vec();
    header.write(&mut out).unwrap();
    retag(&mut out, key);
    out
}

/// Recomputes the tag of `frame` (its last 16 bytes) under `key`.
pub fn retag(frame: &mut [u8], key: &MacKey) {
    let end = frame.len() - TAG_BYTES;
    let tag = key.tag(&frame[..end]);
    frame[end..].copy_from_slice(&tag);
}

/// A tfhe-rs client key and the server key made from it.
#[cfg(feature = "tfhe")]
pub struct KeyPair<C, S> {
    pub client_key: C,
    pub server_key: S,
}

/// The high-level integer key pair (tfhe-rs's default configuration).
#[cfg(feature = "tfhe")]
pub type IntegerKeys = KeyPair<tfhe::ClientKey, tfhe::ServerKey>;

/// A `tfhe::boolean` key pair.
#[cfg(feature = "tfhe")]
pub type BooleanKeys = KeyPair<tfhe::boolean::client_key::ClientKey, tfhe::boolean::server_key::ServerKey>;

/// The integer key pair of tfhe-rs's default configuration from `seed`, made once per test binary in
/// `cell` (server-key generation takes seconds); `label` names it in the timing line.
#[cfg(feature = "tfhe")]
pub fn integer_keys(cell: &'static std::sync::OnceLock<IntegerKeys>, seed: u128, label: &str) -> &'static IntegerKeys {
    cell.get_or_init(|| {
        let t = Instant::now();
        let config = tfhe::ConfigBuilder::default().build();
        let client_key = tfhe::ClientKey::generate_with_seed(config, tfhe::Seed(seed));
        let server_key = client_key.generate_server_key();
        eprintln!("tfhe-rs {label} keys: {:.1} s", t.elapsed().as_secs_f64());
        KeyPair { client_key, server_key }
    })
}

/// The boolean key pair of `set` from `seed`, made once per test binary in `cell`.
#[cfg(feature = "tfhe")]
pub fn boolean_keys(
    cell: &'static std::sync::OnceLock<BooleanKeys>,
    set: tfhe_sbc_adapter::interop::boolean_set::BooleanSet,
    seed: [u8; 32],
) -> &'static BooleanKeys {
    cell.get_or_init(|| {
        let (client_key, server_key) =
            tfhe_sbc_adapter::interop::boolean_set::generate_keys(set, &mut Blake2bXof::from_seed(seed));
        KeyPair { client_key, server_key }
    })
}

/// `u16` readings as the little-endian bytes a device sends.
pub fn u16_bytes(readings: &[u16]) -> Vec<u8> {
    readings.iter().flat_map(|r| r.to_le_bytes()).collect()
}

/// `count` fixed pseudo-random `u16` readings from `seed`, varied with `salt`.
pub fn readings16(seed: u16, count: usize, salt: u16) -> Vec<u16> {
    (0..count as u16)
        .map(|i| i.wrapping_mul(40_503).wrapping_add(seed.wrapping_mul(977)) ^ salt)
        .collect()
}
