//! The known-answer run, shared by the firmware and the host tests: the firmware passes a [`Probe`] that
//! counts instructions and measures the stack around each [`Phase`]; the host test passes one that does
//! nothing and checks the digest against `build.rs`'s.

use crate::kat_inputs::{DEVICE_ID, FIRST_SEQUENCE, KEY_ID, KEY_SEED, MAC_KEY, MESSAGE, RNG_SEED};
use blake2::{Blake2b256, Digest};
use core::mem::MaybeUninit;
use rand_core::SeedableRng;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::frame_mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::message::chunks;
use tfhe_sbc_device::wire::FrameCounter;
use tfhe_sbc_device::xof::Blake2bXof;

/// The encryptor under test.
pub type Encryptor = GlweEncryptor<1024>;
/// The product being measured, as the firmware prints it.
#[cfg_attr(not(target_os = "none"), allow(dead_code))]
pub const PRODUCT: &str = "fft";

/// A measured phase of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Key generation and the encryptor's construction.
    Construct,
    /// One seeded encryption into a body buffer.
    Encrypt,
    /// One seeded encryption written as an authenticated frame.
    Frame,
}

/// What the run reports around each phase.
pub trait Probe {
    /// `phase` starts.
    fn start(&mut self, phase: Phase);
    /// `phase` ended.
    fn end(&mut self, phase: Phase);
}

/// Builds the encryptor in `slot`, encrypts twice and returns the digest: BLAKE2b-256 of `seed | body |
/// frame` (`kat_inputs`). `body` and `frame` are the caller's buffers (statics on the firmware).
pub fn run(
    slot: &mut MaybeUninit<Encryptor>,
    body: &mut [u32; 1024],
    frame: &mut [u8],
    probe: &mut impl Probe,
) -> Result<[u8; 32], &'static str> {
    probe.start(Phase::Construct);
    let encryptor = build_encryptor(slot)?;
    probe.end(Phase::Construct);

    probe.start(Phase::Encrypt);
    let seed = encryptor
        .encrypt_seeded_glwe_ciphertext(&MESSAGE, body)
        .map_err(|_| "encryption")?;
    probe.end(Phase::Encrypt);
    let mut hasher = Blake2b256::new();
    hasher.update(seed);
    body.iter().for_each(|w| hasher.update(w.to_le_bytes()));

    let credentials = DeviceCredentials::new(DEVICE_ID, KEY_ID, MacKey::from_bytes(MAC_KEY));
    let mut counter = FrameCounter::new(FIRST_SEQUENCE);
    let message = encryptor
        .begin_message(&mut counter, MESSAGE.len())
        .map_err(|_| "begin_message")?;
    let chunk = chunks(&MESSAGE, Encryptor::MESSAGE_BYTES).next().ok_or("chunks")?;
    probe.start(Phase::Frame);
    let written = encryptor
        .encrypt_seeded_frame(&credentials, &message, &chunk, body, frame)
        .map_err(|_| "frame encryption")?;
    probe.end(Phase::Frame);
    hasher.update(&frame[..written]);
    Ok(hasher.finalize().into())
}

/// Generates the KAT key and builds the encryptor in `slot`, in its own stack frame (popped before the
/// encryptions). With this API the encryptor is built on the stack and then moved into `slot`.
#[inline(never)]
fn build_encryptor(slot: &mut MaybeUninit<Encryptor>) -> Result<&mut Encryptor, &'static str> {
    let params = TFHE_LIB_GLWE_1024;
    let key = GlweSecretKey::generate_binary(
        [0u8; 1024],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed(KEY_SEED),
    )
    .map_err(|_| "key generation")?;
    let built = Encryptor::new(&params, &key, Blake2bXof::from_seed(RNG_SEED)).map_err(|_| "construction")?;
    Ok(slot.write(built))
}
