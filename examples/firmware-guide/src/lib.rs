//! The device side of the firmware: set the key and the CSPRNG up once, then encrypt readings into
//! authenticated frames. Nothing here is board-specific (`main.rs` is).
#![no_std]

use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::Error;
use tfhe_sbc_device::csprng::seeding::Rng06;
use tfhe_sbc_device::encrypt::{FrameEncryptor, GlweEncryptor};
use tfhe_sbc_device::files::credentials::{Credentials, KeyMode};
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::message::chunks;

/// N = 1024, k = 1, through the device crate's default product (the integer NTT on Cortex-M).
pub type Encryptor = GlweEncryptor<1024>;

/// Sets the key from the credential file: the packed key is read where the file is (flash) and its spectrum
/// computed into the encryptor, with no copy of the key on the stack.
pub fn set_key(encryptor: &mut Encryptor, file: &Credentials<'_>) -> Result<(), Error> {
    // A secret-key mode (per-device or fleet key). The public-key mode needs `PublicKeyEncryptor` (33 KB).
    if file.mode == KeyMode::PublicKey {
        return Err(Error::BadKeyFile);
    }
    // This firmware is built for one parameter set: a file for another is refused.
    if file.parameters.id() != TFHE_LIB_GLWE_1024.id() {
        return Err(Error::BadKeyFile);
    }
    encryptor.set_packed_key(&file.parameters, file.key_material)
}

/// Seeds the CSPRNG from a hardware RNG: your HAL's, if it implements rand_core 0.6 (stm32f4xx-hal, nrf-hal).
/// A rand_core 0.9 RNG (embassy, esp-hal) goes through `seeding::Rng09` (feature `rand_core_09`) the same
/// way. `Error::RngFailed` if the RNG fails (a health test): retry, or send nothing.
pub fn seed_from_trng(
    encryptor: &mut Encryptor,
    hal_rng: &mut (impl rand_core_06::RngCore + rand_core_06::CryptoRng),
) -> Result<(), Error> {
    encryptor.seed(&mut Rng06(hal_rng))
}

/// Seeds the CSPRNG without a hardware RNG: from 32 secret bytes provisioned for this device alone and a boot
/// counter that the caller has already incremented and written back to flash. Every boot gets its own
/// stream as long as the count never repeats (see the guide's seeding section for what this does not give).
pub fn seed_without_trng(encryptor: &mut Encryptor, provisioned_seed: &[u8; 32], boot: u32) {
    // `seed_from_bytes` wipes what it is given: hand it a copy, the provisioned seed stays in flash.
    let mut seed = *provisioned_seed;
    encryptor.seed_from_bytes(&mut seed);
    encryptor.reseed(&boot.to_le_bytes());
}

/// Encrypts `readings` as one message: one authenticated frame per 128 bytes
/// (`Encryptor::MESSAGE_BYTES`), each written into `frame` (`SEEDED_FRAME_BYTES_1024` long, whatever the
/// body width) and handed to `send` as `&frame[..n]`.
pub fn send_readings(
    encryptor: &mut Encryptor,
    file: &Credentials<'_>,
    counter: &mut FrameCounter,
    readings: &[u8],
    frame: &mut [u8],
    mut send: impl FnMut(&[u8]),
) -> Result<(), Error> {
    let message = encryptor.begin_message(counter, readings.len())?;
    for chunk in chunks(readings, Encryptor::MESSAGE_BYTES) {
        let n = encryptor.encrypt_frame_into(&file.credentials, &message, &chunk, frame)?;
        send(&frame[..n]);
    }
    Ok(())
}
