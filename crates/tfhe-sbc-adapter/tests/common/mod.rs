//! Shared test fixtures: devices that produce real v2 frames, and an intake that knows them.
#![allow(dead_code, clippy::unwrap_used)]

/// Key stores: provisioned integer devices, key material of the right shape, a store file's digest.
#[cfg(feature = "tfhe")]
pub mod key_store;
/// Noise bookkeeping of the boolean sets.
pub mod noise;

use rand_core::SeedableRng;
use std::time::Instant;
use tfhe_sbc_adapter::intake::{Frame, Intake, IntakeConfig, Message, Received};
use tfhe_sbc_adapter::registry::{DeviceEncryption, DeviceRegistry};
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
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
        let frames = sealed_frames(&mut *self.encryptor, &self.credentials, &mut self.counter, message);
        assert!(frames.iter().all(|f| f.len() == SEEDED_FRAME_BYTES_1024));
        frames
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

/// What takes a boolean set's frames one at a time: the intake, or a keyed intake in front of a converter.
pub trait FrameReceiver {
    /// Receives one frame at `now`, which must be accepted.
    fn receive_frame(&mut self, frame: &[u8], now: Instant) -> Received;
}

impl FrameReceiver for Intake {
    fn receive_frame(&mut self, frame: &[u8], now: Instant) -> Received {
        self.receive(frame, now).unwrap()
    }
}

#[cfg(feature = "tfhe")]
impl<C> FrameReceiver for tfhe_sbc_adapter::key_store::KeyedIntake<C>
where
    C: tfhe_sbc_adapter::interop::Converter<Unit = tfhe_sbc_adapter::interop::Messages>,
{
    fn receive_frame(&mut self, frame: &[u8], now: Instant) -> Received {
        self.receive(frame, now).unwrap()
    }
}

/// An intake (default configuration) that knows one device, which encrypts as `encryption`.
pub fn intake_of(credentials: DeviceCredentials, encryption: DeviceEncryption) -> Intake {
    let mut registry = DeviceRegistry::new();
    registry.register_device(credentials, encryption, 0).unwrap();
    Intake::new(IntakeConfig::default(), registry)
}

/// Receives every frame at `now`; the message the last one completes.
pub fn receive_message(intake: &mut impl FrameReceiver, frames: &[Vec<u8>], now: Instant) -> Message {
    let mut complete = None;
    for frame in frames {
        complete = intake.receive_frame(frame, now).into_message();
    }
    complete.unwrap()
}

/// The frames of one `message` as a device seals them through [`FrameEncryptor`]: sequence numbers from
/// `counter`, one frame per chunk, each [`FrameEncryptor::frame_len`] bytes.
pub fn sealed_frames(
    encryptor: &mut (impl FrameEncryptor + ?Sized),
    credentials: &DeviceCredentials,
    counter: &mut FrameCounter,
    message: &[u8],
) -> Vec<Vec<u8>> {
    let outgoing = encryptor.begin_message(counter, message.len()).unwrap();
    let mut buffer = vec![0u8; encryptor.frame_buffer_len()];
    chunks(message, encryptor.chunk_bytes())
        .map(|chunk| {
            let len = encryptor
                .encrypt_frame_into(credentials, &outgoing, &chunk, &mut buffer)
                .unwrap();
            assert_eq!(len, encryptor.frame_len());
            buffer[..len].to_vec()
        })
        .collect()
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

/// A `tfhe::boolean` key pair and the bridge made from its server key.
#[cfg(feature = "tfhe")]
pub struct BooleanKeys {
    pub client_key: tfhe::boolean::client_key::ClientKey,
    pub server_key: tfhe::boolean::server_key::ServerKey,
    pub bridge: tfhe_sbc_adapter::interop::BooleanBridge,
}

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

/// Applies `x -> 3x + 1 mod 4` by PBS, with `keys`' shortint server key, to each of the `N` 2-bit blocks of
/// `glwe` (a ciphertext of the integer set) in parallel, and counts the results `keys`' client key does not
/// decrypt to `3 m + 1 mod 4`, `m = message(i)` the message of block `i`.
#[cfg(feature = "tfhe")]
pub fn failed_pbs(
    keys: &IntegerKeys,
    glwe: &tfhe_sbc_core::entities::GlweCiphertextOwned<u64>,
    message: impl Fn(usize) -> u64 + Sync,
) -> usize {
    use rayon::prelude::*;
    let integer_server: &tfhe::integer::ServerKey = keys.server_key.as_ref();
    let server: &tfhe::shortint::ServerKey = integer_server.as_ref();
    let (integer_client, ..) = keys.client_key.clone().into_raw_parts();
    let client: &tfhe::shortint::ClientKey = integer_client.as_ref();
    let lut = server.generate_lookup_table(|x| (3 * x + 1) % 4);
    let extractor = tfhe_sbc_adapter::interop::integer::IntegerExtractor::new();
    (0..glwe.polynomial_size().0)
        .into_par_iter()
        .map(|i| {
            let block = extractor.extract_block(glwe, i).unwrap();
            let out = server.apply_lookup_table(&block, &lut);
            usize::from(client.decrypt(&out) != (3 * message(i) + 1) % 4)
        })
        .sum()
}

#[cfg(feature = "tfhe")]
impl BooleanKeys {
    /// Checks the server key's NAND, AND, XOR and MUX on `ca`, `cb` and `cc`, which encrypt `a`, `b` and `c`:
    /// every result decrypts with the client key to the gate's value (`at` names the inputs in a failure).
    /// Returns the number of gates checked.
    pub fn check_gates(
        &self,
        [ca, cb, cc]: [&tfhe::boolean::ciphertext::Ciphertext; 3],
        [a, b, c]: [bool; 3],
        at: &str,
    ) -> usize {
        use tfhe::boolean::server_key::BinaryBooleanGates;
        let (client_key, server_key) = (&self.client_key, &self.server_key);
        assert_eq!(client_key.decrypt(&server_key.nand(ca, cb)), !(a && b), "{at}: NAND");
        assert_eq!(client_key.decrypt(&server_key.and(ca, cb)), a && b, "{at}: AND");
        assert_eq!(client_key.decrypt(&server_key.xor(ca, cb)), a ^ b, "{at}: XOR");
        assert_eq!(
            client_key.decrypt(&server_key.mux(cc, ca, cb)),
            if c { a } else { b },
            "{at}: MUX"
        );
        4
    }
}

/// Whether the long statistical runs were asked for (`TSBC_FULL_STATISTICS=1`): 10,240 PBS or gates where
/// the default run (CI's) does 2,048. The noise checks keep their thresholds at either size; the figures
/// recorded in `docs/` are from full runs.
pub fn full_statistics() -> bool {
    std::env::var_os("TSBC_FULL_STATISTICS").is_some_and(|v| v != "0")
}

/// Frames of `N = 2048` blocks each for a PBS run: 5 (10,240 PBS) in a full run, 1 (2,048) by default
/// ([`full_statistics`]).
pub fn pbs_frames() -> usize {
    if full_statistics() { 5 } else { 1 }
}

/// Prints how many of `pbs` shortint PBS on `blocks` failed, and asserts that they were
/// `2048 * pbs_frames()` with none failing.
pub fn assert_pbs_without_failure(pbs: usize, failures: usize, blocks: &str) {
    println!("{pbs} PBS on {blocks}: {failures} failures");
    assert_eq!((pbs, failures), (2048 * pbs_frames(), 0));
}

/// The boolean key pair of `set` from `seed` and the bridge of its server key, made once per test binary in
/// `cell`.
#[cfg(feature = "tfhe")]
pub fn boolean_keys(
    cell: &'static std::sync::OnceLock<BooleanKeys>,
    set: tfhe_sbc_adapter::interop::boolean_set::BooleanSet,
    seed: [u8; 32],
) -> &'static BooleanKeys {
    cell.get_or_init(|| {
        let (client_key, server_key) =
            tfhe_sbc_adapter::interop::boolean_set::generate_keys(set, &mut Blake2bXof::from_seed(seed));
        let bridge = tfhe_sbc_adapter::interop::BooleanBridge::new(&server_key).unwrap();
        BooleanKeys {
            client_key,
            server_key,
            bridge,
        }
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
