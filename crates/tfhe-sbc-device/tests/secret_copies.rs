//! No copy of an encryptor's secret state is left behind where a memory image of the running device would
//! find it: the Pi client's encryptor ([`MessageEncryptor`], every mode) is built and seeded in place and
//! encrypts a message on a painted thread stack (`common::painted_stack`); the stack is then scanned for
//! the CSPRNG's keyed chaining value (16-byte windows of it). With those bytes and the public key, every
//! frame the device sent would decrypt, breaking the promise that a stolen device reveals no past data.
//!
//! The check can fail: the negative control builds a `PublicKeyEncryptor` by value and boxes it (what the
//! client did before it was built in place) and must find copies of the same chaining value.
#![allow(clippy::unwrap_used)]
#![cfg(all(target_os = "linux", feature = "std", feature = "hazmat"))]

mod common;

use common::painted_stack::run_painted;
use core::convert::Infallible;
use rand_core::{SeedableRng, TryCryptoRng, TryRng};
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::parameters::{GlweParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
use tfhe_sbc_device::files::credentials::{KeyMode, credentials_file_bytes, decode_credentials, encode_credentials};
use tfhe_sbc_device::files::public_key::{decode_public_key, encode_public_key, public_key_file_bytes};
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;
use tfhe_sbc_device::std_io::MessageEncryptor;

/// The CSPRNG seed the device draws (a hardware TRNG in a test's hands).
const SEED: [u8; 32] = [0x6B; 32];
const KEY_ID: u32 = 77;

/// An RNG that yields [`SEED`] over and over: the 32 bytes the encryptor draws for its CSPRNG.
struct FixedRng;

impl TryRng for FixedRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(u32::from_le_bytes([SEED[0]; 4]))
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(u64::from_le_bytes([SEED[0]; 8]))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.fill(SEED[0]);
        Ok(())
    }
}

impl TryCryptoRng for FixedRng {}

/// The CSPRNG's state right after it is keyed with [`SEED`].
fn seeded_chaining_value() -> [u8; 64] {
    Blake2bXof::from_seed(SEED).chaining_value()
}

/// How many 16-byte windows of `secret` (at 8-byte steps) occur anywhere in `memory`.
fn copies_in(memory: &[u8], secret: &[u8; 64]) -> usize {
    secret
        .windows(16)
        .step_by(8)
        .map(|window| memory.windows(16).filter(|m| m == &window).count())
        .sum()
}

/// A credential file of `mode` for `params`, with a key (or public key) from fixed seeds.
fn credential_file(mode: KeyMode, params: &GlweParameters) -> Vec<u8> {
    let (n, k) = (params.polynomial_size().0, params.glwe_dimension().0);
    let key = common::secret_key(params, 1);
    let material = if mode == KeyMode::PublicKey {
        let (seed, body) = public_key(params, &key);
        let mut file = vec![0u8; public_key_file_bytes(n)];
        encode_public_key(params.id(), KEY_ID, &seed, &body, &mut file).unwrap();
        file
    } else {
        let mut packed = vec![0u8; k * n / 8];
        pack_secret_key(key.as_bytes(), &mut packed).unwrap();
        packed
    };
    let credentials = DeviceCredentials::new(5, KEY_ID, MacKey::from_bytes([9; 32]));
    let mut file = vec![0u8; credentials_file_bytes(mode, params)];
    encode_credentials(mode, params, &credentials, &material, &mut file).unwrap();
    file
}

/// The trusted party's public key under `key` (32-bit sets).
fn public_key(params: &GlweParameters, key: &GlweSecretKey<Vec<u8>>) -> ([u8; 32], Vec<u32>) {
    let n = params.polynomial_size().0;
    let plan = negacyclic_fft::Plan::new(n).unwrap();
    let mut spectrum = vec![0f64; params.glwe_dimension().0 * n];
    compute_glwe_key_spectrum(&plan, key, &mut spectrum).unwrap();
    let noise = DeviceNoise::for_parameters(params, NoiseSampling::ConstantTime).unwrap();
    let (mut body, mut scratch) = (vec![0u32; n], vec![0f64; n]);
    let mut rng = Blake2bXof::from_seed([2; 32]);
    let seed = generate_seeded_glwe_public_key(&plan, &spectrum, &noise, &mut body, &mut scratch, &mut rng).unwrap();
    (seed, body)
}

/// Builds the client's encryptor for `file` and encrypts two frames' worth of message on a painted stack;
/// returns the copies of the seeded chaining value the stack holds afterwards.
fn copies_left_by_the_client(file: Vec<u8>) -> usize {
    let (stack, _) = run_painted(move || {
        let credentials = decode_credentials(&file).unwrap();
        let mut encryptor = MessageEncryptor::new(&credentials, &mut FixedRng).unwrap();
        let message = vec![0x5Au8; 2 * encryptor.chunk_bytes()];
        let outgoing = FrameCounter::new(0)
            .begin_message(message.len(), encryptor.chunk_bytes())
            .unwrap();
        let frames = encryptor
            .encrypt_message(&credentials.credentials, &outgoing, &message)
            .unwrap();
        assert_eq!(frames.len(), 2);
    });
    copies_in(&stack, &seeded_chaining_value())
}

#[test]
fn the_client_leaves_no_copy_of_its_csprng_state_in_any_mode() {
    let integer = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
    for (mode, params) in [
        (KeyMode::PublicKey, TFHE_LIB_GLWE_1024),
        (KeyMode::FleetSecretKey, TFHE_LIB_GLWE_1024),
        (KeyMode::PerDeviceSecretKey, TFHE_LIB_GLWE_1024),
        (KeyMode::PerDeviceSecretKey, integer),
    ] {
        let copies = copies_left_by_the_client(credential_file(mode, &params));
        println!(
            "{} set {}: {copies} copies of the CSPRNG state on the stack",
            mode.name(),
            params.id().0
        );
        assert_eq!(copies, 0, "{} set {}", mode.name(), params.id().0);
    }
}

#[test]
fn the_scan_finds_an_encryptor_built_by_value() {
    let params = TFHE_LIB_GLWE_1024;
    let file = credential_file(KeyMode::PublicKey, &params);
    let (stack, _) = run_painted(move || {
        let credentials = decode_credentials(&file).unwrap();
        let mut body = vec![0u32; 1024];
        let header = decode_public_key(credentials.key_material, &mut body).unwrap();
        // The former client: built by value, then boxed.
        let encryptor = Box::new(
            PublicKeyEncryptor::<1024>::new(&params, &header.seed, &body, Blake2bXof::from_seed(SEED)).unwrap(),
        );
        std::hint::black_box(&encryptor);
    });
    let copies = copies_in(&stack, &seeded_chaining_value());
    println!("by value: {copies} copies of the CSPRNG state on the stack");
    assert!(
        copies > 0,
        "the scan must see the copies a by-value construction leaves"
    );
}
