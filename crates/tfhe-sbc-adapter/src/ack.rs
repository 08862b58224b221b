//! What a server answers for each frame ([`tfhe_sbc_device::frame::ack`]), from what the intake did with it.
//!
//! [`ack_for`] maps [`Intake::receive`](crate::intake::Intake::receive)'s result to an [`Ack`]:
//! accepted frames get [`AckStatus::Accepted`]; a frame the intake had already accepted (a resend after a
//! lost connection: [`IntakeError::Replayed`], reported only for authentic frames) gets
//! [`AckStatus::Duplicate`], so acknowledging is idempotent; limits the device can wait out get
//! [`AckStatus::Busy`]; everything else says why sending again will not help.

//!
//! [`seal_ack`] makes the record that goes on the wire: tagged under the device's MAC key when the frame it
//! answers is authentic (its MAC verifies under `mac_key`), all-zero-tagged otherwise, so that the server
//! never tags an answer to bytes it could not authenticate.

use crate::IntakeError;
#[cfg(doc)]
use crate::intake::Received;
use tfhe_sbc_device::frame::HEADER_BYTES;
use tfhe_sbc_device::frame::ack::{ACK_BYTES, Ack, AckStatus, frame_tag};
use tfhe_sbc_device::frame::mac::MacKey;

/// The acknowledgement status for an intake error.
pub fn status_for(error: &IntakeError) -> AckStatus {
    match error {
        IntakeError::Replayed { .. } => AckStatus::Duplicate,
        IntakeError::TooOld { .. } => AckStatus::TooOld,
        IntakeError::TooManyOpenMessages { .. } | IntakeError::TooManyOpenMessagesForDevice { .. } => AckStatus::Busy,
        IntakeError::MessageExpired { .. } => AckStatus::Expired,
        IntakeError::UnknownDevice(_) => AckStatus::UnknownDevice,
        IntakeError::BadMac { .. } | IntakeError::WrongKeyId { .. } => AckStatus::BadCredentials,
        IntakeError::FrameKindNotAllowed { .. }
        | IntakeError::FullFrameRejected
        | IntakeError::UnknownParameterSet(_)
        | IntakeError::UnsupportedParameterSet(_)
        | IntakeError::TooManyChunks { .. } => AckStatus::NotAllowed,
        // Bytes that are not a well-formed frame of a known kind, and the failures that no frame causes
        // (a broken stream, the key store, the results store): every variant named, so that a new one must
        // be given its status here.
        IntakeError::Truncated { .. }
        | IntakeError::MalformedHeader(_)
        | IntakeError::BadMagic(_)
        | IntakeError::UnsupportedVersion(_)
        | IntakeError::UnknownReadingFormat(_)
        | IntakeError::UnknownFrameKind(_)
        | IntakeError::UnsupportedXof(_)
        | IntakeError::UnsupportedBodyBits { .. }
        | IntakeError::NonZeroBodyPadding
        | IntakeError::UnsupportedReadingWidth(_)
        | IntakeError::ReadingFormatWidth { .. }
        | IntakeError::PartialReadings { .. }
        | IntakeError::ZeroChunkCount
        | IntakeError::ChunkIndexOutOfRange { .. }
        | IntakeError::InconsistentMessageLength { .. }
        | IntakeError::SequenceOutOfRange { .. }
        | IntakeError::WrongFrameLength { .. }
        | IntakeError::MessageMismatch { .. }
        | IntakeError::DuplicateChunk { .. }
        | IntakeError::FrameTooLarge { .. }
        | IntakeError::TruncatedStream
        | IntakeError::Io(_)
        | IntakeError::DuplicateDevice(_) => AckStatus::Malformed,
    }
}

/// The acknowledgement of `frame`, which the intake answered with `result` ([`Received`] from
/// [`Intake::receive`](crate::intake::Intake::receive), an integer frame from `receive_integer`, or any
/// keyed intake's answer). The device id and sequence
/// number are the frame's header's (0 if it has none that decodes).
pub fn ack_for<T>(frame: &[u8], result: &Result<T, IntakeError>) -> Ack {
    let header = crate::intake::header_of(frame);
    let (device_id, sequence) = header.map_or((0, 0), |h| (h.device_id, h.sequence));
    match result {
        Ok(_) => Ack::new(AckStatus::Accepted, device_id, sequence),
        Err(error) => Ack {
            status: status_for(error),
            device_id,
            sequence,
            // Only "too old" carries a detail: the lowest number the device may use next.
            detail: if let IntakeError::TooOld { lowest_acceptable, .. } = error {
                *lowest_acceptable
            } else {
                0
            },
        },
    }
}

/// The wire record of `ack`, the answer to `frame`: sealed under `mac_key` (the key the server holds for the
/// device the frame names) if the frame's MAC verifies under it, unauthenticated otherwise (no key, or bytes
/// the key does not authenticate).
pub fn seal_ack(frame: &[u8], ack: &Ack, mac_key: Option<&MacKey>) -> [u8; ACK_BYTES] {
    match (mac_key, frame_tag(frame)) {
        (Some(key), Some(tag)) if frame.len() > HEADER_BYTES && key.verify(&frame[..frame.len() - tag.len()], tag) => {
            ack.seal(key, tag)
        }
        _ => ack.unauthenticated(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::{Intake, IntakeConfig};
    use crate::registry::DeviceRegistry;
    use std::time::Instant;
    use tfhe_sbc_device::frame::FrameHeader;
    use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
    use tfhe_sbc_device::frame::{FrameKind, SEEDED_FRAME_BYTES_1024, write_seeded_frame};

    fn frame(device_id: u64, sequence: u64, mac: &MacKey) -> Vec<u8> {
        let header = FrameHeader {
            kind: FrameKind::Seeded.to_u8(),
            parameter_set: 1,
            xof_id: tfhe_sbc_device::csprng::mask::MASK_XOF_ID,
            body_bits: 32,
            reading_format: 0,
            device_id,
            key_id: 1,
            sequence,
            message_id: sequence as u32,
            chunk_index: 0,
            chunk_count: 1,
            message_length: 1,
        };
        let mut out = vec![0u8; SEEDED_FRAME_BYTES_1024];
        let len = write_seeded_frame(&header, &[7; 32], &[0; 1024], mac, &mut out).unwrap();
        out.truncate(len);
        out
    }

    /// Accepted, then the same frame again: acknowledged as a duplicate; forged and unknown frames are not.
    #[test]
    fn idempotent_and_refusals() {
        let mut registry = DeviceRegistry::new();
        registry
            .register(DeviceCredentials::new(5, 1, MacKey::from_bytes([3; 32])))
            .unwrap();
        let mut intake = Intake::new(IntakeConfig::default(), registry);
        let good = frame(5, 300, &MacKey::from_bytes([3; 32]));
        let mut answer = |bytes: &[u8]| ack_for(bytes, &intake.receive(bytes, Instant::now()));
        assert_eq!(answer(&good), Ack::new(AckStatus::Accepted, 5, 300));
        assert_eq!(answer(&good), Ack::new(AckStatus::Duplicate, 5, 300));
        assert_eq!(
            answer(&frame(5, 301, &MacKey::from_bytes([4; 32]))).status,
            AckStatus::BadCredentials
        );
        assert_eq!(
            answer(&frame(6, 1, &MacKey::from_bytes([3; 32]))),
            Ack::new(AckStatus::UnknownDevice, 6, 1)
        );
        let old = answer(&frame(5, 100, &MacKey::from_bytes([3; 32])));
        assert_eq!((old.status, old.detail), (AckStatus::TooOld, 300 - 127));
        // A forged frame did not consume its number: the genuine one is still accepted.
        assert_eq!(
            answer(&frame(5, 301, &MacKey::from_bytes([3; 32]))).status,
            AckStatus::Accepted
        );
        assert_eq!(answer(b"junk"), Ack::new(AckStatus::Malformed, 0, 0));
    }

    /// Only answers to authentic frames are tagged, and they open only for that frame.
    #[test]
    fn records_are_sealed_for_authentic_frames_only() {
        use tfhe_sbc_device::frame::ack::{AckError, AckRecord};
        let key = MacKey::from_bytes([3; 32]);
        let good = frame(5, 300, &key);
        let ack = Ack::new(AckStatus::Accepted, 5, 300);
        let record = AckRecord::decode(&seal_ack(&good, &ack, Some(&key))).unwrap();
        assert_eq!(record.open(&key, frame_tag(&good).unwrap()), Ok(ack));
        let other = frame(5, 301, &key);
        assert_eq!(record.open(&key, frame_tag(&other).unwrap()), Err(AckError::BadTag));
        let forged = frame(5, 300, &MacKey::from_bytes([4; 32]));
        for (bytes, key) in [(&forged[..], Some(&key)), (&good[..], None), (&b"junk"[..], Some(&key))] {
            assert_eq!(seal_ack(bytes, &ack, key), ack.unauthenticated());
        }
    }
}
