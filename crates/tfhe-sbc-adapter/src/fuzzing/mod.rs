//! The body of the intake fuzz target (`fuzz/fuzz_targets/intake.rs`), shared with the corpus-replay test
//! so that both check exactly the same things.
//!
//! Two secret-key fuzz devices and one public-key fuzz device are registered, with fixed keys (the
//! public-key device's frames get past the frame-kind check: public-key frames of the boolean sets and of the
//! integer set, the mask in full). Every input is run four ways:
//! 1. raw, as one frame: [`parse_frame`] and [`Intake::receive`] (everything up to and including the MAC);
//! 2. raw, as a length-delimited stream of frames ([`FrameReader`]) into one intake;
//! 3. and 4. "MAC fix-up": the same two, but each frame's last 16 bytes are first replaced by the valid tag
//!    under the key of the device the header names (a fuzz device's key otherwise), so that the fuzzer gets
//!    past the MAC to the replay window, the mask expansion and the reassembly. Full frames are allowed
//!    there, to exercise their decoding too.
//!
//! Frame `i` of a stream arrives at `i` seconds; messages expire after [`FUZZ_MAX_AGE_SECS`] seconds.
//!
//! Each single frame also goes to [`Intake::receive_integer_input`] (the 64-bit integer set's intake), raw and
//! with the MAC fixed up; an accepted integer frame must hold exactly `2N` words, an accepted compact list
//! exactly the frame's payload.

mod corpus;
mod devices;
mod dump;

pub use corpus::seed_corpus;
pub use devices::{
    FUZZ_DEVICE_ID, FUZZ_DEVICE_ID_2, FUZZ_KEY_ID, FUZZ_MAC_KEY, FUZZ_MAC_KEY_2, FUZZ_MAX_AGE_SECS,
    FUZZ_PUBLIC_KEY_DEVICE_ID, FUZZ_PUBLIC_KEY_MAC_KEY, fuzz_config, fuzz_credentials, fuzz_public_key_credentials,
    is_fuzz_device,
};
pub use dump::wire_format_dump;

use crate::intake::{Intake, IntegerInput, Message, Received, parse_frame};
use crate::registry::DeviceRegistry;
use crate::stream::FrameReader;
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::mac::MacKey;
use tfhe_sbc_device::frame::{HEADER_BYTES, TAG_BYTES};

/// An intake with the three fuzz devices registered.
pub fn fuzz_intake(allow_full_frames: bool) -> Intake {
    let mut registry = DeviceRegistry::new();
    for credentials in fuzz_credentials() {
        registry
            .register(credentials)
            .unwrap_or_else(|_| unreachable!("distinct ids"));
    }
    registry
        .register_public_key(fuzz_public_key_credentials())
        .unwrap_or_else(|_| unreachable!("distinct ids"));
    Intake::new(fuzz_config(allow_full_frames), registry)
}

/// Replaces the last [`TAG_BYTES`] of `frame` by the tag under the key of the fuzz device its header names.
pub fn fix_up_mac(frame: &mut [u8]) {
    let Some(body_len) = frame.len().checked_sub(TAG_BYTES) else {
        return;
    };
    let device_id = frame
        .get(11..19)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes);
    let key = MacKey::from_bytes(match device_id {
        Some(FUZZ_DEVICE_ID_2) => FUZZ_MAC_KEY_2,
        Some(FUZZ_PUBLIC_KEY_DEVICE_ID) => FUZZ_PUBLIC_KEY_MAC_KEY,
        _ => FUZZ_MAC_KEY,
    });
    let tag = key.tag(&frame[..body_len]);
    frame[body_len..].copy_from_slice(&tag);
}

/// Feeds `data` to the intake the four ways above. Panics only if an accepted frame or message breaks an
/// invariant (or if the intake itself panics, which is what the fuzzer looks for).
pub fn intake(data: &[u8]) {
    let t0 = Instant::now();
    let config = fuzz_config(false);
    if let Ok(parsed) = parse_frame(data, &config) {
        assert_eq!(parsed.payload().len() + HEADER_BYTES + TAG_BYTES, data.len());
    }
    for fix_up in [false, true] {
        // One frame.
        let mut intake = fuzz_intake(fix_up);
        let mut frame = data.to_vec();
        if fix_up {
            fix_up_mac(&mut frame);
        }
        let mut checker = Checker::default();
        checker.check(intake.receive(&frame, t0));
        // The integer intake, on a fresh intake (the boolean one may have taken the sequence number).
        match fuzz_intake(fix_up).receive_integer_input(&frame) {
            Ok(IntegerInput::Frame(integer)) => {
                let n = integer.parameters.glwe().polynomial_size().0;
                assert_eq!(integer.ciphertext.as_slice().len(), 2 * n);
                assert!(is_fuzz_device(integer.header.device_id));
            }
            Ok(IntegerInput::CompactList(list)) => {
                assert_eq!(list.list.len() + HEADER_BYTES + TAG_BYTES, frame.len());
                assert_eq!(list.header.device_id, FUZZ_PUBLIC_KEY_DEVICE_ID);
            }
            Err(error) => assert!(!error.to_string().is_empty()),
        }
        // A stream of frames, one per second.
        let mut intake = fuzz_intake(fix_up);
        let mut checker = Checker::default();
        let mut reader = FrameReader::with_limit(data, 1 << 16);
        let mut now = t0;
        while let Ok(Some(bytes)) = reader.next_frame() {
            let mut frame = bytes.to_vec();
            if fix_up {
                fix_up_mac(&mut frame);
            }
            now += Duration::from_secs(1);
            checker.check(intake.receive(&frame, now));
            for error in intake.evict_expired(now) {
                assert!(matches!(error, crate::IntakeError::MessageExpired { .. }), "{error}");
            }
            assert!(intake.open_messages() <= intake.config().max_open_messages);
        }
        let late = now + Duration::from_secs(FUZZ_MAX_AGE_SECS + 1);
        let dropped = intake.evict_expired(late).len();
        assert!(dropped <= intake.config().max_open_messages);
        assert_eq!(intake.open_messages(), 0);
    }
}

/// Invariants of what an intake accepts.
#[derive(Default)]
struct Checker {
    accepted: HashSet<(u64, u64)>,
}

impl Checker {
    fn check(&mut self, result: Result<Received, crate::IntakeError>) {
        match result {
            Ok(Received::Pending {
                device_id,
                sequence,
                received,
                chunk_count,
                ..
            }) => {
                assert!(received < chunk_count);
                assert!(is_fuzz_device(device_id));
                // No sequence number is ever accepted twice from one device.
                assert!(self.accepted.insert((device_id, sequence)), "replay accepted");
            }
            Ok(Received::Complete(message)) => self.check_message(&message),
            Err(error) => assert!(!error.to_string().is_empty()),
        }
    }

    fn check_message(&mut self, message: &Message) {
        let count = message.frames.len();
        assert!(count >= 1);
        let (mut total, mut new) = (0, 0);
        for (i, frame) in message.frames.iter().enumerate() {
            let header = &frame.header;
            let n = frame.parameters.polynomial_size().0;
            assert_eq!(
                frame.ciphertext.as_slice().len(),
                (frame.parameters.glwe_dimension().0 + 1) * n
            );
            assert_eq!(header.chunk_index as usize, i);
            assert_eq!(header.chunk_count as usize, count);
            assert_eq!(
                (header.device_id, header.message_id, header.message_length),
                (message.device_id, message.message_id, message.message_length)
            );
            assert_eq!(header.sequence, message.first_sequence + i as u64);
            new += usize::from(self.accepted.insert((header.device_id, header.sequence)));
            total += frame.chunk_message_bytes();
        }
        // The other chunks were accepted earlier as pending; only the completing one is new.
        assert_eq!(new, 1, "a completed message must add exactly one new sequence number");
        assert_eq!(total, message.message_length as usize);
    }
}
