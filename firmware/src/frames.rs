//! The steps every known-answer run takes, written once for every encryptor: a frame written around the bare
//! encryption ([`Phase::Encrypt`] measures the encryption alone) and a frame sealed through
//! [`FrameEncryptor::encrypt_frame_into`], what firmware calls ([`Phase::Frame`], [`Phase::CompactFrame`]).
//! Each returns the frame's [`frame_digest`] and hands the frame to the [`Probe`].

use crate::kat_inputs::{DEVICE_ID, FIRST_SEQUENCE, KEY_ID};
use crate::probe::{Phase, Probe, frame_digest};
use crate::run_secrets::MAC_KEY;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::{Chunk, chunks};
use tfhe_sbc_device::frame::{FrameCounter, FrameHeader, PayloadWord, write_frame_in_place};

/// The device's frame credentials, as provisioning would leave them: in flash.
static CREDENTIALS: DeviceCredentials = DeviceCredentials::new(DEVICE_ID, KEY_ID, MacKey::from_bytes(MAC_KEY));

/// What one run encrypts: the device's credentials, its frame counter and the one chunk every frame carries
/// (the whole message).
pub struct RunInputs<'a> {
    /// The device's frame credentials.
    pub credentials: &'a DeviceCredentials,
    /// The device's frame counter.
    pub counter: FrameCounter,
    /// The chunk every frame carries.
    pub chunk: Chunk<'a>,
    /// The message's length in bytes.
    pub message_len: usize,
}

impl<'a> RunInputs<'a> {
    /// A run of `message`, whose first `chunk_bytes` bytes every frame carries, under the KAT's credentials
    /// from its first sequence number.
    pub fn new(message: &'a [u8], chunk_bytes: usize) -> Result<Self, &'static str> {
        Ok(Self {
            // Opaque to the optimizer, so that the code does not depend on the key's value (the constant-time
            // trace compares builds with different keys: scripts/firmware-ct-trace.sh).
            credentials: core::hint::black_box(&CREDENTIALS),
            counter: FrameCounter::new(FIRST_SEQUENCE),
            chunk: chunks(message, chunk_bytes).next().ok_or("chunks")?,
            message_len: message.len(),
        })
    }
}

/// Runs `set_up` (the key from flash, the CSPRNG's seed) as the measured [`Phase::Construct`].
pub fn construct(
    probe: &mut impl Probe,
    set_up: impl FnOnce() -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    probe.start(Phase::Construct);
    set_up()?;
    probe.end(Phase::Construct);
    Ok(())
}

/// The opening of every frame run: `set_up` (the key from flash, the CSPRNG's seed) as [`Phase::Construct`],
/// then frame 0 written around `encrypt` ([`encryption_frame`], `words` payload words) and frame 1 sealed
/// ([`sealed_frame`], [`Phase::Frame`]), both carrying the first chunk of `message`. Returns the run's
/// inputs, for any frame that follows, and the two frames' digests.
pub fn first_two_frames<'a, W: PayloadWord, const PREFIX: usize, E: FrameEncryptor>(
    encryptor: &mut E,
    set_up: impl FnOnce(&mut E) -> Result<(), &'static str>,
    message: &'a [u8],
    frame: &mut [u8],
    probe: &mut impl Probe,
    words: usize,
    encrypt: impl FnOnce(&mut E, &[u8], &mut [W]) -> tfhe_sbc_device::Result<[u8; PREFIX]>,
) -> Result<(RunInputs<'a>, [u8; 32]), &'static str> {
    construct(probe, || set_up(encryptor))?;
    let mut inputs = RunInputs::new(message, encryptor.chunk_bytes())?;
    let mut digest = [0u8; 32];
    digest[..16].copy_from_slice(&encryption_frame(
        encryptor,
        &mut inputs,
        frame,
        probe,
        0,
        words,
        encrypt,
    )?);
    digest[16..].copy_from_slice(&sealed_frame(encryptor, &mut inputs, frame, probe, 1, Phase::Frame)?);
    Ok((inputs, digest))
}

/// Frame `index` with a full-width payload of `words` `W` words after a `PREFIX`-byte prefix, written by
/// `write_frame_in_place` around `encrypt` (the bare encryption of the chunk into the payload), which alone is
/// measured as [`Phase::Encrypt`]. Seeded frames: the mask seed `encrypt` returns
/// ([`MASK_SEED_BYTES`](tfhe_sbc_core::entities::MASK_SEED_BYTES)), then the `N` body words; public-key
/// frames: no prefix, then the mask and the body (`(k + 1) N` words).
pub fn encryption_frame<W: PayloadWord, const PREFIX: usize, E: FrameEncryptor>(
    encryptor: &mut E,
    inputs: &mut RunInputs<'_>,
    frame: &mut [u8],
    probe: &mut impl Probe,
    index: usize,
    words: usize,
    encrypt: impl FnOnce(&mut E, &[u8], &mut [W]) -> tfhe_sbc_device::Result<[u8; PREFIX]>,
) -> Result<[u8; 16], &'static str> {
    let message = encryptor
        .begin_message(&mut inputs.counter, inputs.message_len)
        .map_err(|_| "begin_message")?;
    let mut header = FrameHeader::new(
        encryptor.frame_kind(),
        encryptor.frame_mask_xof_id(),
        encryptor.frame_parameter_set(),
        inputs.credentials,
        &message,
        &inputs.chunk,
    )
    .map_err(|_| "header")?;
    // The full-width body, as `encrypt_frame_into` writes it before any compaction.
    header.body_bits = (8 * size_of::<W>()) as u8;
    let bytes = inputs.chunk.bytes;
    let written =
        write_frame_in_place::<W, PREFIX, _>(&header, words, inputs.credentials.mac_key(), frame, |payload| {
            probe.start(Phase::Encrypt);
            let prefix = encrypt(encryptor, bytes, payload);
            probe.end(Phase::Encrypt);
            prefix
        })
        .map_err(|_| "encryption")?;
    probe.frame(index, &frame[..written]);
    Ok(frame_digest(&frame[..written]))
}

/// Frame `index` sealed through [`FrameEncryptor::encrypt_frame_into`] with the encryptor's current body
/// width, measured as `phase`.
pub fn sealed_frame(
    encryptor: &mut impl FrameEncryptor,
    inputs: &mut RunInputs<'_>,
    frame: &mut [u8],
    probe: &mut impl Probe,
    index: usize,
    phase: Phase,
) -> Result<[u8; 16], &'static str> {
    let message = encryptor
        .begin_message(&mut inputs.counter, inputs.message_len)
        .map_err(|_| "begin_message")?;
    probe.start(phase);
    let written = encryptor
        .encrypt_frame_into(inputs.credentials, &message, &inputs.chunk, frame)
        .map_err(|_| "frame encryption")?;
    probe.end(phase);
    probe.frame(index, &frame[..written]);
    Ok(frame_digest(&frame[..written]))
}
