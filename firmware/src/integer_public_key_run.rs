//! The integer public-key known-answer run: the `u64` integer public-key encryptor
//! (`IntegerPublicKeyEncryptor<2048, NttPlan64>`, the GLWE side of tfhe-rs's
//! `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`) built in place in a `static` from a public-key file in
//! flash (its body read in place: no copy of the key in RAM), encrypting a full frame of 512 `u8` readings
//! ([`INTEGER_READINGS`]) twice, as public-key frames (kind 2, the mask in full: 32,831 bytes). Same
//! [`Phase`]s and [`Probe`] as the boolean run ([`crate::run`]), with the same seams ([`crate::frames`]); the
//! firmware runs this one instead with the feature `integer-public-key`. Public-key frames have no compact
//! body, so there is no [`Phase::CompactFrame`].

use crate::frames::first_two_frames;
use crate::kat_inputs::{INTEGER_READINGS, INTEGER_RNG_SEED, KEY_ID};
#[cfg(doc)]
use crate::probe::Phase;
use crate::probe::Probe;
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::files::public_key::public_key_body;

/// The integer set's product and polynomial size, as in the secret-key integer run.
pub use crate::integer_run::{N, Product};

/// The encryptor under test: `N = 2048`, `k = 1`, 64-bit torus, through [`Product`]: the public key's two
/// spectra, `u`'s and a scratch one (4 x 24 KiB) and the encryptor's state.
pub type Encryptor = IntegerPublicKeyEncryptor<N, Product>;

/// The bytes of one public-key frame (32,831 at `N = 2048`: header, mask and body in full, MAC).
pub const FRAME_BYTES: usize = Encryptor::PUBLIC_KEY_FRAME_BYTES;

/// The integer KAT public key as a public-key file (16,443 bytes, in flash), computed by build.rs from
/// `INTEGER_KEY_SEED` and `INTEGER_PUBLIC_KEY_SEED` under the frames' key id.
pub use crate::expected::INTEGER_PUBLIC_KEY_FILE as PUBLIC_KEY_FILE;

/// The run's expected digest, computed by build.rs on the host.
pub use crate::expected::INTEGER_PUBLIC_KEY_EXPECTED_DIGEST as EXPECTED_DIGEST;

/// Sets up `encryptor` (the empty value, as a `static` holds it) and writes two authenticated public-key
/// frames of the 512 readings into `frame`, returning the digests of frames 0 and 1
/// ([`crate::probe::frame_digest`]). Frame 0 is written with `write_frame_in_place` around `encrypt_u8` (mask and
/// body straight into the frame buffer), so that the encryption alone is measured ([`Phase::Encrypt`]);
/// frame 1 through `FrameEncryptor::encrypt_frame_into`, what firmware calls ([`Phase::Frame`]).
pub fn run(encryptor: &mut Encryptor, frame: &mut [u8], probe: &mut impl Probe) -> Result<[u8; 32], &'static str> {
    let (_, digest) = first_two_frames::<u64, 0, _>(
        encryptor,
        set_up,
        &INTEGER_READINGS,
        frame,
        probe,
        2 * N,
        |encryptor, readings, words| {
            let (mask, body) = words.split_at_mut(N);
            encryptor.encrypt_u8(readings, mask, body).map(|()| [])
        },
    )?;
    Ok(digest)
}

/// Reads the public-key file in flash (its check, its key id against the credentials'), sets the key from the
/// file's bytes in place (the mask expanded from its seed and both spectra computed into the encryptor) and
/// keys the CSPRNG, in place. Its own stack frame (popped before the encryptions).
#[inline(never)]
fn set_up(encryptor: &mut Encryptor) -> Result<(), &'static str> {
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let (header, body) = public_key_body(&PUBLIC_KEY_FILE, KEY_ID).map_err(|_| "public_key_body")?;
    // This firmware is built for one parameter set: a file for another is refused.
    if header.parameters.id() != params.glwe().id() {
        return Err("the public key's parameter set");
    }
    encryptor
        .set_integer_public_key_le_bytes(&params, &header.seed, body)
        .map_err(|_| "set_integer_public_key_le_bytes")?;
    let mut seed = INTEGER_RNG_SEED;
    encryptor.seed_from_bytes(&mut seed);
    Ok(())
}
