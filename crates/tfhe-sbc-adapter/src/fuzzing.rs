//! The body of the intake fuzz target (`fuzz/fuzz_targets/intake.rs`), shared with the corpus-replay test
//! so that both check exactly the same things.
//!
//! Two fuzz devices are registered, with fixed keys. Every input is run four ways:
//! 1. raw, as one frame: [`parse_frame`] and [`Intake::receive`] (everything up to and including the MAC);
//! 2. raw, as a length-delimited stream of frames ([`FrameReader`]) into one intake;
//! 3. and 4. "MAC fix-up": the same two, but each frame's last 16 bytes are first replaced by the valid tag
//!    under the key of the device the header names (a fuzz device's key otherwise), so that the fuzzer gets
//!    past the MAC to the replay window, the mask expansion and the reassembly. Full frames are allowed
//!    there, to exercise their decoding too.
//!
//! Frame `i` of a stream arrives at `i` seconds; messages expire after [`FUZZ_MAX_AGE_SECS`] seconds.
//!
//! Each single frame also goes to [`Intake::receive_integer`] (the 64-bit integer set's intake), raw and with the MAC fixed up; an accepted integer frame must hold exactly `2N` words.

use crate::intake::{Intake, IntakeConfig, Message, Received, parse_frame};
use crate::registry::DeviceRegistry;
use crate::stream::FrameReader;
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::{HEADER_BYTES, TAG_BYTES};

/// The first fuzz device's id.
pub const FUZZ_DEVICE_ID: u64 = 0xF0;
/// The second fuzz device's id.
pub const FUZZ_DEVICE_ID_2: u64 = 0xF1;
/// Both fuzz devices' key id.
pub const FUZZ_KEY_ID: u32 = 7;
/// The first fuzz device's MAC key.
pub const FUZZ_MAC_KEY: [u8; 32] = [0x5A; 32];
/// The second fuzz device's MAC key.
pub const FUZZ_MAC_KEY_2: [u8; 32] = [0xA5; 32];
/// The fuzz configuration's message age limit, in seconds.
pub const FUZZ_MAX_AGE_SECS: u64 = 3;

/// The fuzz configuration: small limits, so that the fuzzer reaches them.
pub fn fuzz_config(allow_full_frames: bool) -> IntakeConfig {
    IntakeConfig {
        allow_full_frames,
        max_chunks_per_message: 8,
        max_open_messages_per_device: 2,
        max_open_messages: 3,
        max_message_age: Duration::from_secs(FUZZ_MAX_AGE_SECS),
    }
}

/// The fuzz devices' credentials.
pub fn fuzz_credentials() -> [DeviceCredentials; 2] {
    [
        DeviceCredentials::new(FUZZ_DEVICE_ID, FUZZ_KEY_ID, MacKey::from_bytes(FUZZ_MAC_KEY)),
        DeviceCredentials::new(FUZZ_DEVICE_ID_2, FUZZ_KEY_ID, MacKey::from_bytes(FUZZ_MAC_KEY_2)),
    ]
}

/// An intake with both fuzz devices registered.
pub fn fuzz_intake(allow_full_frames: bool) -> Intake {
    let mut registry = DeviceRegistry::new();
    for credentials in fuzz_credentials() {
        registry
            .register(credentials)
            .unwrap_or_else(|_| unreachable!("distinct ids"));
    }
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
    let key = MacKey::from_bytes(if device_id == Some(FUZZ_DEVICE_ID_2) {
        FUZZ_MAC_KEY_2
    } else {
        FUZZ_MAC_KEY
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
        match fuzz_intake(fix_up).receive_integer(&frame) {
            Ok(integer) => {
                let n = integer.parameters.glwe().polynomial_size().0;
                assert_eq!(integer.ciphertext.as_slice().len(), 2 * n);
                assert!(integer.header.device_id == FUZZ_DEVICE_ID || integer.header.device_id == FUZZ_DEVICE_ID_2);
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
                assert!(device_id == FUZZ_DEVICE_ID || device_id == FUZZ_DEVICE_ID_2);
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

/// A simulated fuzz device (keys and randomness from fixed seeds) for [`seed_corpus`].
struct SeedDevice {
    encryptor: Box<tfhe_sbc_device::encrypt::secret_key::GlweEncryptor<1024>>,
    credentials: DeviceCredentials,
    counter: tfhe_sbc_device::frame::FrameCounter,
}

impl SeedDevice {
    fn new(credentials: DeviceCredentials, seed: u8) -> Self {
        use rand_core::SeedableRng;
        use tfhe_sbc_core::entities::GlweSecretKey;
        use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
        use tfhe_sbc_device::csprng::xof::Blake2bXof;
        let params = TFHE_LIB_GLWE_1024;
        let key = GlweSecretKey::generate_binary(
            vec![0u8; 1024],
            params.polynomial_size(),
            &mut Blake2bXof::from_seed([seed; 32]),
        )
        .unwrap_or_else(|e| unreachable!("a valid key buffer: {e}"));
        let encryptor = tfhe_sbc_device::encrypt::secret_key::GlweEncryptor::<1024>::new(
            &params,
            &key,
            Blake2bXof::from_seed([seed.wrapping_add(1); 32]),
        )
        .unwrap_or_else(|e| unreachable!("the named set: {e}"));
        Self {
            encryptor: Box::new(encryptor),
            credentials,
            counter: tfhe_sbc_device::frame::FrameCounter::new(0),
        }
    }

    /// The frames of one message with a compact body of `body_bits` bits.
    fn compact_frames(&mut self, message: &[u8], body_bits: u32) -> Vec<Vec<u8>> {
        self.encryptor
            .set_body_bits(body_bits)
            .unwrap_or_else(|e| unreachable!("a width the set allows: {e}"));
        let frames = self.frames(message, false);
        self.encryptor
            .set_body_bits(32)
            .unwrap_or_else(|e| unreachable!("the full width: {e}"));
        frames
    }

    /// The frames of one message, seeded or full.
    fn frames(&mut self, message: &[u8], full: bool) -> Vec<Vec<u8>> {
        use tfhe_sbc_core::entities::GlweCiphertext;
        use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
        use tfhe_sbc_device::frame::{FULL_FRAME_BYTES_1024, SEEDED_FRAME_BYTES_1024};
        let outgoing = self
            .encryptor
            .begin_message(&mut self.counter, message.len())
            .unwrap_or_else(|e| unreachable!("{e}"));
        let mut body = [0u32; 1024];
        let mut ciphertext = GlweCiphertext::from_container(vec![0u32; 2048], TFHE_LIB_GLWE_1024.polynomial_size())
            .unwrap_or_else(|e| unreachable!("{e}"));
        tfhe_sbc_device::frame::message::chunks(message, 128)
            .map(|chunk| {
                let result = if full {
                    let mut out = vec![0u8; FULL_FRAME_BYTES_1024];
                    self.encryptor
                        .encrypt_full_frame(&self.credentials, &outgoing, &chunk, &mut ciphertext, &mut out)
                        .map(|_| out)
                } else {
                    let mut out = vec![0u8; SEEDED_FRAME_BYTES_1024];
                    self.encryptor
                        .encrypt_seeded_frame(&self.credentials, &outgoing, &chunk, &mut body, &mut out)
                        .map(|len| {
                            out.truncate(len);
                            out
                        })
                };
                result.unwrap_or_else(|e| unreachable!("{e}"))
            })
            .collect()
    }
}

fn length_delimited(frames: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for frame in frames {
        crate::stream::write_frame(&mut out, frame).unwrap_or_else(|e| unreachable!("a Vec: {e}"));
    }
    out
}

/// The seed corpus of the intake fuzz target (`fuzz/corpus/intake_v2`): real frames of the two fuzz
/// devices, from fixed seeds, as `(file name, bytes)`. Written by `cargo run --example make_fuzz_corpus`;
/// `tests/fuzz_corpus.rs` checks the checked-in files are exactly these (so a change to the mask XOF or
/// to the encryption shows up as a stale corpus).
pub fn seed_corpus() -> Vec<(&'static str, Vec<u8>)> {
    let [first, second] = fuzz_credentials();
    let mut a = SeedDevice::new(first, 0x11);
    let mut b = SeedDevice::new(second, 0x21);
    let single = a.frames(b"fuzz", false).remove(0);
    let empty = a.frames(b"", false).remove(0);
    let two = a.frames(&[0xC3; 200], false);
    let full = a.frames(b"full", true).remove(0);
    let b_single = b.frames(b"second device", false).remove(0);
    let mut a_named_b = single.clone();
    a_named_b[11..19].copy_from_slice(&FUZZ_DEVICE_ID_2.to_le_bytes());
    let mut version_1 = single.clone();
    version_1[4] = 1;
    let three = a.frames(&[0x3C; 300], false);
    let reordered = a.frames(&[0x77; 256], false);
    let a_long = a.frames(&[0x01; 200], false);
    let b_long = b.frames(&[0x02; 200], false);
    let a_short = a.frames(b"short", false);
    let a_more: Vec<Vec<Vec<u8>>> = (0..3).map(|i| a.frames(&[i; 130], false)).collect();
    let b_full = b.frames(&[0x55; 130], true);
    let compact = a.compact_frames(&[0x99; 200], 11);
    let integer = integer_seed_frame(&fuzz_credentials()[0], b"fuzz readings");
    vec![
        ("seeded-single", single.clone()),
        ("seeded-empty-message", empty),
        ("seeded-chunk0", two[0].clone()),
        ("seeded-chunk1", two[1].clone()),
        ("full-single", full),
        ("device2-seeded", b_single),
        ("maced-as-a-named-b", a_named_b),
        ("version-1", version_1),
        ("header-only", single[..HEADER_BYTES].to_vec()),
        ("garbage", b"GET / HTTP/1.1\r\nHost: tfhe-sbc\r\n\r\n".to_vec()),
        ("stream-message", length_delimited(&[&three[0], &three[1], &three[2]])),
        (
            "stream-reordered-and-replayed",
            length_delimited(&[&reordered[1], &reordered[0], &reordered[0], &reordered[1]]),
        ),
        (
            // a_long[1] arrives 5 s after a_long[0]: expired (limit 3 s). The a_more messages hit the
            // per-device limit of 2 open messages, b_long the total of 3.
            "stream-interleaved-limits-expiry",
            length_delimited(&[
                &a_long[0],
                &b_long[0],
                &a_short[0],
                &a_more[0][0],
                &a_more[1][0],
                &a_long[1],
                &b_long[1],
                &a_more[2][0],
                &a_more[2][1],
            ]),
        ),
        ("stream-full-two-chunks", length_delimited(&[&b_full[0], &b_full[1]])),
        ("compact-11-bit-chunk0", compact[0].clone()),
        ("stream-compact-message", length_delimited(&[&compact[0], &compact[1]])),
        ("integer-compact-14-bit", integer),
    ]
}

/// One compact (14-bit) seeded frame of the 64-bit integer set from the fuzz device `credentials`, from
/// fixed seeds.
fn integer_seed_frame(credentials: &DeviceCredentials, readings: &[u8]) -> Vec<u8> {
    use rand_core::SeedableRng;
    use tfhe_sbc_core::entities::GlweSecretKey;
    use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    use tfhe_sbc_device::csprng::xof::Blake2bXof;
    use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let key = GlweSecretKey::generate_binary(
        vec![0u8; 2048],
        params.glwe().polynomial_size(),
        &mut Blake2bXof::from_seed([0x31; 32]),
    )
    .unwrap_or_else(|e| unreachable!("a valid key buffer: {e}"));
    let mut encryptor = Box::new(IntegerEncryptor::<2048>::EMPTY);
    encryptor
        .set_key(&params, &key)
        .unwrap_or_else(|e| unreachable!("the named set: {e}"));
    encryptor.seed_from_bytes(&mut [0x32; 32]);
    encryptor
        .set_body_bits(params.glwe().compact_body_bits())
        .unwrap_or_else(|e| unreachable!("the set's width: {e}"));
    let outgoing = encryptor
        .begin_message(&mut tfhe_sbc_device::frame::FrameCounter::new(1 << 20), readings.len())
        .unwrap_or_else(|e| unreachable!("{e}"));
    let chunk = tfhe_sbc_device::frame::message::chunks(readings, IntegerEncryptor::<2048>::MESSAGE_BYTES)
        .next()
        .unwrap_or_else(|| unreachable!("one chunk"));
    let mut out = vec![0u8; IntegerEncryptor::<2048>::SEEDED_FRAME_BYTES];
    let len = encryptor
        .encrypt_frame_into(credentials, &outgoing, &chunk, &mut out)
        .unwrap_or_else(|e| unreachable!("{e}"));
    out.truncate(len);
    out
}

/// The annotated hex dump of docs/wire-format.md (`cargo run --example wire_format_dump`): one seeded frame
/// of `TFHE_LIB_GLWE_1024` carrying the message `"hi"`, from fixed seeds, MAC key `[0x42; 32]`, device id
/// `0x1122334455667788`, key id 1, and sequence number `(1 << 32) | 5` (boot 1, frame 5).
pub fn wire_format_dump() -> String {
    use core::fmt::Write;
    use tfhe_sbc_device::frame::FrameCounter;
    let credentials = DeviceCredentials::new(0x1122_3344_5566_7788, 1, MacKey::from_bytes([0x42; 32]));
    let mut device = SeedDevice::new(credentials, 1);
    device.counter = FrameCounter::new((1 << 32) | 5);
    let frame = device.frames(b"hi", false).remove(0);
    let mut out = String::new();
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
    let _ = writeln!(
        out,
        "seeded frame, TFHE_LIB_GLWE_1024, message \"hi\": {} bytes",
        frame.len()
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "offset  size  field            bytes");
    let fields: [(&str, usize); 14] = [
        ("magic", 4),
        ("version", 1),
        ("kind", 1),
        ("parameter_set", 2),
        ("xof_id", 1),
        ("body_bits", 1),
        ("flags", 1),
        ("device_id", 8),
        ("key_id", 4),
        ("sequence", 8),
        ("message_id", 4),
        ("chunk_index", 4),
        ("chunk_count", 4),
        ("message_length", 4),
    ];
    let mut offset = 0;
    for (name, size) in fields {
        let _ = writeln!(
            out,
            "{offset:>6}  {size:>4}  {name:<15}  {}",
            hex(&frame[offset..offset + size])
        );
        offset += size;
    }
    let tag_start = frame.len() - TAG_BYTES;
    let seed_end = offset + 32;
    let _ = writeln!(
        out,
        "{offset:>6}  {:>4}  {:<15}  {}",
        32,
        "seed",
        hex(&frame[offset..seed_end])
    );
    let _ = writeln!(
        out,
        "{seed_end:>6}  {:>4}  {:<15}  {} ... {}",
        tag_start - seed_end,
        "body",
        hex(&frame[seed_end..seed_end + 8]),
        hex(&frame[tag_start - 8..tag_start])
    );
    let _ = writeln!(
        out,
        "{tag_start:>6}  {:>4}  {:<15}  {}",
        TAG_BYTES,
        "tag",
        hex(&frame[tag_start..])
    );
    let _ = writeln!(out);
    let rows: Vec<&[u8]> = frame.chunks(16).collect();
    for (row, line) in rows.iter().enumerate() {
        if row == 6 {
            let _ = writeln!(out, "...   ({} rows of body words elided)", rows.len() - 9);
        }
        if row < 6 || row >= rows.len() - 3 {
            let _ = writeln!(out, "{:04x}  {}", row * 16, hex(line));
        }
    }
    out
}
