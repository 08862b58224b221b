//! The integer known-answer run: the `u64` integer encryptor
//! (`IntegerEncryptor<2048, NttPlan64>`, tfhe-rs's `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` GLWE
//! side) built in place in a `static` from its packed key in flash, encrypting a full frame of 512 `u8`
//! readings ([`INTEGER_READINGS`]) three times: twice with the full 64-bit body (16,479-byte frames), then
//! with the set's compact body (`compact_body_bits()`, 14 bits: 3,679 bytes). Same [`Phase`]s and [`Probe`]
//! as the boolean run ([`crate::run`]); the firmware runs this one instead with the feature `integer`.

use crate::frames::{first_two_frames, sealed_frame};
use crate::kat_inputs::{INTEGER_READINGS, INTEGER_RNG_SEED};
use crate::probe::{Phase, Probe};
use negacyclic_ntt::NttPlan64;
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;

/// The integer product: the exact three-prime NTT over the 64-bit torus (the only `u64` product, on every
/// target).
pub type Product = NttPlan64;

/// The polynomial size of the integer set.
pub const N: usize = 2048;

/// The encryptor under test: `N = 2048`, `k = 1`, 64-bit torus, through [`Product`].
pub type Encryptor = IntegerEncryptor<N, Product>;

/// The bytes of one seeded integer frame (16,479 at `N = 2048`, full 64-bit body).
pub const FRAME_BYTES: usize = Encryptor::SEEDED_FRAME_BYTES;

/// The integer KAT key in its packed form (256 bytes, in flash), computed by build.rs from
/// `INTEGER_KEY_SEED`.
pub use crate::expected::INTEGER_PACKED_KEY as PACKED_KEY;

/// The run's expected digest, computed by build.rs on the host.
pub use crate::expected::INTEGER_EXPECTED_DIGEST as EXPECTED_DIGEST;

/// Sets up `encryptor` (the empty value, as a `static` holds it) and writes three authenticated seeded frames
/// of the 512 readings into `frame`, returning the digests of frames 0, 1 and 2 ([`crate::probe::frame_digest`]). Frame 0 is
/// written with `write_frame_in_place` around `encrypt_u8`, so that the encryption alone is measured
/// ([`Phase::Encrypt`]); frame 1 through `FrameEncryptor::encrypt_frame_into`, what firmware calls ([`Phase::Frame`]);
/// frame 2 the same with the compact body ([`Phase::CompactFrame`]).
pub fn run(encryptor: &mut Encryptor, frame: &mut [u8], probe: &mut impl Probe) -> Result<[u8; 48], &'static str> {
    let (mut inputs, first_two) = first_two_frames::<u64, MASK_SEED_BYTES, _>(
        encryptor,
        set_up,
        &INTEGER_READINGS,
        frame,
        probe,
        N,
        |encryptor, readings, body| encryptor.encrypt_u8(readings, body),
    )?;
    let mut digest = [0u8; 48];
    digest[..32].copy_from_slice(&first_two);

    // The compact body: the same buffer (the full body is computed there before it is packed).
    encryptor
        .set_body_bits(MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().compact_body_bits())
        .map_err(|_| "set_body_bits")?;
    digest[32..].copy_from_slice(&sealed_frame(
        encryptor,
        &mut inputs,
        frame,
        probe,
        2,
        Phase::CompactFrame,
    )?);
    Ok(digest)
}

/// Sets the key from its packed form in flash (unpacked in a wiped 2 KiB stack buffer, then its spectrum
/// computed in place) and keys the CSPRNG, in place. Its own stack frame (popped before the encryptions).
#[inline(never)]
fn set_up(encryptor: &mut Encryptor) -> Result<(), &'static str> {
    encryptor
        .set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &PACKED_KEY)
        .map_err(|_| "set_packed_key")?;
    let mut seed = INTEGER_RNG_SEED;
    encryptor.seed_from_bytes(&mut seed);
    Ok(())
}
