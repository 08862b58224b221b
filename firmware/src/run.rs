//! The known-answer run, shared by the firmware and the host: the firmware passes a [`Probe`] that counts
//! instructions and measures the stack around each [`Phase`]; the host passes one that records the frames.
//!
//! This is how firmware uses the device crate: the encryptor is a `static` built in place (its `EMPTY`
//! value is all zero bytes, in `.bss`), the key stays in flash in its packed 128-byte form, and each
//! encryption goes straight into the one frame buffer.

use crate::frames::first_two_frames;
#[cfg(doc)]
use crate::probe::Phase;
use crate::probe::Probe;
use crate::run_secrets::{MESSAGE, RNG_SEED};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;

/// The product being measured: the f64 FFT, named explicitly (feature `fft`).
#[cfg(feature = "fft")]
pub type Product = negacyclic_fft::Plan;
/// The product being measured: the device crate's default (the integer NTT on Cortex-M, the f64 FFT on
/// hosts with an FPU).
#[cfg(not(feature = "fft"))]
pub type Product = tfhe_sbc_device::product::DefaultProduct;

/// The encryptor under test: N = 1024, k = 1, through [`Product`].
pub type Encryptor = GlweEncryptor<1024, 1, Product>;

/// The bytes of one seeded frame (4191 at `N = 1024`).
pub const FRAME_BYTES: usize = tfhe_sbc_device::frame::SEEDED_FRAME_BYTES_1024;

/// The KAT key in its packed form (128 bytes, in flash), computed by build.rs from `KEY_SEED`.
pub use crate::expected::PACKED_KEY;

/// The run's expected digest, computed by build.rs on the host.
pub use crate::expected::EXPECTED_DIGEST;

/// The secrets in flash as `static`s: a constant's bytes may be merged with or sorted among equal-sized
/// constants by content, which would move other data with the secret's value; a static's place does not
/// depend on its value.
static PACKED_KEY_IN_FLASH: [u8; 128] = PACKED_KEY;
/// The CSPRNG seed, in flash.
static SEED_IN_FLASH: [u8; 32] = RNG_SEED;
/// The message, in flash.
static PLAINTEXT: [u8; 128] = MESSAGE;

/// Sets up `encryptor` (the empty value, as a `static` holds it) and writes two authenticated seeded frames of
/// [`MESSAGE`] into `frame`, returning the digests of frame 0 and frame 1 ([`crate::probe::frame_digest`]). Frame 0 is written with
/// `write_frame_in_place`, so that the encryption alone is measured ([`Phase::Encrypt`]); frame 1 through
/// `FrameEncryptor::encrypt_frame_into`, what firmware calls ([`Phase::Frame`]).
pub fn run(encryptor: &mut Encryptor, frame: &mut [u8], probe: &mut impl Probe) -> Result<[u8; 32], &'static str> {
    let (_, digest) = first_two_frames::<u32, MASK_SEED_BYTES, _>(
        encryptor,
        set_up,
        // The secrets are read through `black_box` so that the code does not depend on their values: the
        // constant-time trace (scripts/firmware-ct-trace.sh) compares builds with other secrets, whose code
        // must be byte for byte the same.
        core::hint::black_box(&PLAINTEXT),
        frame,
        probe,
        1024,
        |encryptor, bytes, body| encryptor.encrypt_seeded_glwe_ciphertext(bytes, body),
    )?;
    Ok(digest)
}

/// Sets the key from its packed form in flash and keys the CSPRNG with the KAT seed, in place. Its own stack
/// frame (popped before the encryptions).
#[inline(never)]
fn set_up(encryptor: &mut Encryptor) -> Result<(), &'static str> {
    encryptor
        .set_packed_key(&TFHE_LIB_GLWE_1024, core::hint::black_box(&PACKED_KEY_IN_FLASH))
        .map_err(|_| "set_packed_key")?;
    // In place, exactly as `Blake2bXof::from_seed(RNG_SEED)` (no generator on the stack).
    let mut seed = *core::hint::black_box(&SEED_IN_FLASH);
    #[cfg(firmware_ct_plant = "branch")]
    crate::ct_plant::branch_on(seed[0]);
    #[cfg(firmware_ct_plant = "lookup")]
    crate::ct_plant::look_up(seed[0]);
    encryptor.seed_from_bytes(&mut seed);
    Ok(())
}
