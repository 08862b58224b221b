//! The compact-list known-answer run: the device's streaming encryptor of tfhe-rs's own
//! `CompactCiphertextList` (`CompactListEncryptor`, packed, the set
//! `PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`) in a `static`, its raw public key `[a | b]` read in
//! place from a 32 KiB `static` in flash (no copy in RAM), writing a list of 64 `u8` readings and then one of
//! 512 ([`INTEGER_READINGS`]) into one buffer sized for the longer list. No frame of ours: the bytes are what
//! a tfhe-rs 1.8 server reads with `safe_deserialize_conformant`. Same [`Probe`] as the other runs, with the
//! phases [`Phase::Construct`], [`Phase::List64`] and [`Phase::List512`]; the firmware runs this one
//! instead with the feature `compact-list`. build.rs computes the expected digest with the NTT form
//! (`CompactListNttEncryptor<NttPlan64>`), so the streaming form on the device is checked against another
//! algorithm, bit for bit.

use crate::kat_inputs::{COMPACT_RNG_SEED, COMPACT_SHORT_READINGS, INTEGER_READINGS};
use crate::probe::{Phase, Probe, frame_digest};
use tfhe_sbc_device::encrypt::compact_list::{CompactListEncryptor, compact_list_bytes};

/// No product: the streaming form sums key words selected by the bits of `r` (the name the firmware
/// prints).
#[cfg_attr(not(target_os = "none"), allow(dead_code))] // Only its name is printed, by the firmware.
pub struct Streaming;

/// What the firmware prints as its product.
#[cfg_attr(not(target_os = "none"), allow(dead_code))]
pub type Product = Streaming;

/// The encryptor under test: the key borrowed from flash for the firmware's lifetime.
pub type Encryptor = CompactListEncryptor<'static>;

/// The bytes of the list of 512 `u8` readings (32,979), and of the one buffer both lists are written to.
pub const FRAME_BYTES: usize = compact_list_bytes::<u8>(INTEGER_READINGS.len());

/// The raw compact public key `[a | b]` (2 x 2048 little-endian `u64`, 32 KiB, in flash): build.rs, from
/// `COMPACT_KEY_SEED`.
pub use crate::expected::COMPACT_PUBLIC_KEY;

/// The run's expected digest, computed by build.rs on the host with the NTT form.
pub use crate::expected::COMPACT_LIST_EXPECTED_DIGEST as EXPECTED_DIGEST;

/// Sets up `encryptor` (the empty value, as a `static` holds it) and writes the list of the first 64
/// readings, then the list of all 512, into `list`, returning their digests ([`frame_digest`]).
pub fn run(encryptor: &mut Encryptor, list: &mut [u8], probe: &mut impl Probe) -> Result<[u8; 32], &'static str> {
    probe.start(Phase::Construct);
    set_up(encryptor)?;
    probe.end(Phase::Construct);
    let mut digest = [0u8; 32];
    let lists = [
        (Phase::List64, &INTEGER_READINGS[..COMPACT_SHORT_READINGS]),
        (Phase::List512, &INTEGER_READINGS[..]),
    ];
    for (index, ((phase, readings), part)) in lists.into_iter().zip(digest.chunks_exact_mut(16)).enumerate() {
        probe.start(phase);
        let written = encryptor.encrypt_list(readings, list).map_err(|_| "encrypt_list")?;
        probe.end(phase);
        let list = list.get(..written).ok_or("list length")?;
        probe.frame(index, list);
        part.copy_from_slice(&frame_digest(list));
    }
    Ok(digest)
}

/// Sets the key from its bytes in flash (checked, borrowed in place) and keys the CSPRNG, in place. Its own
/// stack frame (popped before the encryptions).
#[inline(never)]
fn set_up(encryptor: &mut Encryptor) -> Result<(), &'static str> {
    encryptor
        .set_public_key_le_bytes(&COMPACT_PUBLIC_KEY.0)
        .map_err(|_| "set_public_key_le_bytes")?;
    let mut seed = COMPACT_RNG_SEED;
    encryptor.seed_from_bytes(&mut seed);
    Ok(())
}
