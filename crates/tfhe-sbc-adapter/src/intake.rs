//! Authenticated intake of device frames (wire format v2, `docs/wire-format.md`): bytes from the network in,
//! checked GLWE ciphertexts grouped into whole messages out, or a typed [`IntakeError`].
//!
//! [`Intake::receive`] runs, in this order:
//! 1. [`parse_frame`] (stateless): magic and version first, then the fixed header, every field validated,
//!    and the exact frame length the parameter set implies;
//! 2. device lookup, key id, and the MAC, compared in constant time, **before** any mask expansion or
//!    allocation: 0 bytes are allocated for a frame rejected up to here;
//! 3. the device's replay window (the private `replay` module), updated only for an authentic frame;
//! 4. the reassembly admission (mismatch, limits, expiry; [`crate::reassembly`]);
//! 5. only then the mask expansion into exactly the `2N` words a ciphertext of the (known) parameter set
//!    needs, and the reassembly itself.
//!
//! Integer frames (the 64-bit set `MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048`, id 4) go through
//! [`Intake::receive_integer`] instead: the same checks in the same order (MAC before any allocation, the
//! replay window), then the `u64` mask expansion into an [`IntegerFrame`]. Every integer chunk holds whole
//! readings (`N / 4` bytes: 512 `u8`, 256 `u16` or 128 `u32`), so each authenticated frame is handed out at
//! once, with no reassembly buffer; [`Intake::receive`] refuses integer frames with
//! [`IntakeError::UnsupportedParameterSet`].
//!
//! No length field of the input ever sizes an allocation: sizes come from the parameter set and the
//! configured limits ([`IntakeConfig::max_buffered_bytes`]).

use crate::error::IntakeError;
use crate::reassembly::Reassembler;
use crate::registry::{DeviceEncryption, DeviceRegistry, DuplicateDevice, Registered};
use crate::replay::{ReplayError, ReplayWindow};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tfhe_sbc_core::compact_body::unpack_body;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweCiphertextOwned, MASK_SEED_BYTES};
use tfhe_sbc_core::parameters::{GlweParameters, IntegerParameters, ParameterSetId};
use tfhe_sbc_device::csprng::mask::{MASK_XOF_ID, expand_mask, expand_mask_u32};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::{
    FORMAT_VERSION, FrameHeader, FrameKind, HEADER_BYTES, MAGIC, PREFIX_BYTES, TAG_BYTES, payload_bytes,
};

/// What the intake accepts, and how much it may buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntakeConfig {
    /// Accept full-mask secret-key frames (the TFHE-SBC paper's form). Off by default: a sender who chooses
    /// the mask can turn any observable decrypted result into a key-bit oracle. Turn on only for trusted
    /// comparisons.
    pub allow_full_frames: bool,
    /// The most chunks a message may have.
    pub max_chunks_per_message: u32,
    /// The most incomplete messages one device may have open.
    pub max_open_messages_per_device: usize,
    /// The most incomplete messages open in total.
    pub max_open_messages: usize,
    /// How long after its first chunk a message must be complete; then it is dropped.
    pub max_message_age: Duration,
}

impl Default for IntakeConfig {
    /// Full frames off, 16 chunks per message (2 KiB at `N = 1024`), 4 open messages per device, 256 in
    /// total, 60 s.
    fn default() -> Self {
        Self {
            allow_full_frames: false,
            max_chunks_per_message: 16,
            max_open_messages_per_device: 4,
            max_open_messages: 256,
            max_message_age: Duration::from_secs(60),
        }
    }
}

impl IntakeConfig {
    /// The most ciphertext bytes the reassembly can hold at polynomial size `n` and GLWE dimension `k`
    /// (32-bit torus): every open message one chunk short of complete. 31.5 MiB for the default at
    /// `N = 1024`, `k = 1`.
    pub const fn max_buffered_bytes(&self, k: usize, n: usize) -> usize {
        self.max_open_messages * (self.max_chunks_per_message.saturating_sub(1) as usize) * (k + 1) * n * 4
    }
}

/// A frame whose prefix, header and length are valid, not yet authenticated ([`parse_frame`]).
#[derive(Clone, Copy, Debug)]
pub struct ParsedFrame<'a> {
    /// The header.
    pub header: FrameHeader,
    /// The header's kind.
    pub kind: FrameKind,
    /// The parameter set the header names.
    pub parameters: GlweParameters,
    authenticated: &'a [u8],
    tag: &'a [u8],
}

impl ParsedFrame<'_> {
    /// The payload (between the header and the tag).
    pub fn payload(&self) -> &[u8] {
        &self.authenticated[HEADER_BYTES..]
    }

    /// The tag.
    pub fn tag(&self) -> &[u8] {
        self.tag
    }

    /// Whether the tag is the MAC of the frame under `key` (constant-time comparison).
    pub fn verify_mac(&self, key: &MacKey) -> bool {
        key.verify(self.authenticated, self.tag)
    }

    /// The sequence number of chunk 0 of this frame's message.
    pub fn first_sequence(&self) -> u64 {
        // parse_frame checked sequence >= chunk_index.
        self.header.sequence - u64::from(self.header.chunk_index)
    }

    /// Expands the mask (seeded) or reads it (full) into a fresh ciphertext of exactly `(k + 1) N` words.
    /// Intake calls it only after the MAC verified.
    pub(crate) fn to_frame(self) -> Frame {
        let n = self.parameters.polynomial_size().0;
        let k = self.parameters.glwe_dimension().0;
        let mut data = vec![0u32; (k + 1) * n];
        let (mask, body) = data.split_at_mut(k * n);
        let payload = self.payload();
        let body_bytes = match self.kind {
            FrameKind::Seeded => {
                let (seed, rest) = payload.split_at(MASK_SEED_BYTES);
                let mut seed_array = [0u8; MASK_SEED_BYTES];
                seed_array.copy_from_slice(seed);
                expand_mask_u32(&seed_array, mask);
                rest
            }
            FrameKind::Full | FrameKind::PublicKey => {
                let (mask_bytes, rest) = payload.split_at(4 * k * n);
                read_words(mask_bytes, mask);
                rest
            }
        };
        unpack_body(body_bytes, u32::from(self.header.body_bits), body)
            .unwrap_or_else(|_| unreachable!("parse_frame checked the body's width, length and padding"));
        let ciphertext = GlweCiphertext::from_container(data, self.parameters.polynomial_size())
            .unwrap_or_else(|_| unreachable!("(k + 1) N words for a set of size N"));
        Frame {
            header: self.header,
            kind: self.kind,
            parameters: self.parameters,
            ciphertext,
        }
    }
}

impl ParsedFrame<'_> {
    /// Expands the `u64` mask of a seeded integer frame and reads its `u64` body (8-byte little-endian
    /// words, or their top `body_bits` bits packed) into a fresh ciphertext of exactly `2N` words. Only after
    /// the MAC verified.
    fn to_integer_frame(self, parameters: IntegerParameters) -> IntegerFrame {
        let n = self.parameters.polynomial_size().0;
        let mut data = vec![0u64; 2 * n];
        let (mask, body) = data.split_at_mut(n);
        let (seed, body_bytes) = self.payload().split_at(MASK_SEED_BYTES);
        let mut seed_array = [0u8; MASK_SEED_BYTES];
        seed_array.copy_from_slice(seed);
        expand_mask(&seed_array, mask);
        unpack_body(body_bytes, u32::from(self.header.body_bits), body)
            .unwrap_or_else(|_| unreachable!("parse_frame checked the body's width, length and padding"));
        let ciphertext = GlweCiphertext::from_container(data, self.parameters.polynomial_size())
            .unwrap_or_else(|_| unreachable!("2N words for a set of size N"));
        IntegerFrame {
            header: self.header,
            parameters,
            ciphertext,
        }
    }
}

fn read_words(bytes: &[u8], out: &mut [u32]) {
    for (w, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
}

/// Moves the replay window of an authenticated frame's device past its sequence number.
fn device_accept(devices: &mut HashMap<u64, DeviceState>, header: &FrameHeader) {
    if let Some(device) = devices.get_mut(&header.device_id) {
        device.window.accept(header.sequence);
    }
}

/// Validates everything about a frame that needs no key and no state: prefix, header fields, length. Never
/// allocates. The tag is not checked: use [`Intake`] for that.
pub fn parse_frame<'a>(bytes: &'a [u8], config: &IntakeConfig) -> Result<ParsedFrame<'a>, IntakeError> {
    // Magic and version first: they are the only bytes every version shares.
    if let Some(magic) = bytes.first_chunk::<4>()
        && *magic != MAGIC
    {
        return Err(IntakeError::BadMagic(*magic));
    }
    let Some(&version) = bytes.get(4) else {
        return Err(IntakeError::Truncated {
            needed: PREFIX_BYTES,
            found: bytes.len(),
        });
    };
    if version != FORMAT_VERSION {
        return Err(IntakeError::UnsupportedVersion(version));
    }
    let Some(fields) = bytes.get(PREFIX_BYTES..HEADER_BYTES) else {
        return Err(IntakeError::Truncated {
            needed: HEADER_BYTES,
            found: bytes.len(),
        });
    };
    let header: FrameHeader = postcard::from_bytes(fields).map_err(IntakeError::MalformedHeader)?;
    if header.flags != 0 {
        return Err(IntakeError::ReservedFlags(header.flags));
    }
    let kind = header.frame_kind().ok_or(IntakeError::UnknownFrameKind(header.kind))?;
    match kind {
        FrameKind::Seeded => {}
        FrameKind::Full if config.allow_full_frames => {}
        FrameKind::Full => return Err(IntakeError::FullFrameRejected),
        // Whether this device may send it is decided after the MAC (`Intake::receive`).
        FrameKind::PublicKey => {}
    }
    let parameters = GlweParameters::from_id(ParameterSetId(header.parameter_set))
        .ok_or(IntakeError::UnknownParameterSet(header.parameter_set))?;
    let (torus_bits, k, n) = (
        parameters.torus_bits(),
        parameters.glwe_dimension().0,
        parameters.polynomial_size().0,
    );
    // 32-bit boolean sets, and the 64-bit sets with an integer encoding.
    let chunk_bytes = match (torus_bits, IntegerParameters::from_id(parameters.id())) {
        (32, _) => n / 8,
        (64, Some(integer)) if k == 1 && integer.block_bits() == 2 => n / 4,
        _ => return Err(IntakeError::UnsupportedParameterSet(header.parameter_set)),
    };
    let expected_xof = if kind == FrameKind::Seeded { MASK_XOF_ID } else { 0 };
    if header.xof_id != expected_xof {
        return Err(IntakeError::UnsupportedXof(header.xof_id));
    }
    // Compact bodies: from the set's noise-budget minimum up to the torus width.
    let body_bits = u32::from(header.body_bits);
    if parameters.check_body_bits(body_bits).is_err() {
        return Err(IntakeError::UnsupportedBodyBits {
            found: header.body_bits,
            min: parameters.compact_body_bits() as u8,
            max: torus_bits as u8,
        });
    }
    check_chunking(&header, chunk_bytes, config)?;
    let expected = HEADER_BYTES + payload_bytes(kind, k, n, torus_bits, body_bits) + TAG_BYTES;
    if bytes.len() != expected {
        return Err(IntakeError::WrongFrameLength {
            expected,
            found: bytes.len(),
        });
    }
    let (authenticated, tag) = bytes.split_at(expected - TAG_BYTES);
    // One encoding per body: the unused bits of a packed body's last byte are 0.
    let used_bits = (n * body_bits as usize) % 8;
    if used_bits != 0 && authenticated.last().is_some_and(|&last| last >> used_bits != 0) {
        return Err(IntakeError::NonZeroBodyPadding);
    }
    Ok(ParsedFrame {
        header,
        kind,
        parameters,
        authenticated,
        tag,
    })
}

fn check_chunking(header: &FrameHeader, chunk_bytes: usize, config: &IntakeConfig) -> Result<(), IntakeError> {
    let (index, count) = (header.chunk_index, header.chunk_count);
    if count == 0 {
        return Err(IntakeError::ZeroChunkCount);
    }
    if index >= count {
        return Err(IntakeError::ChunkIndexOutOfRange { index, count });
    }
    if count > config.max_chunks_per_message {
        return Err(IntakeError::TooManyChunks {
            count,
            limit: config.max_chunks_per_message,
        });
    }
    let chunk_bytes = chunk_bytes as u64;
    let (length, count64) = (u64::from(header.message_length), u64::from(count));
    // The message fills count - 1 chunks and part of the last; an empty message travels as one chunk.
    let consistent =
        length <= count64 * chunk_bytes && (length > (count64 - 1) * chunk_bytes || (length == 0 && count == 1));
    if !consistent {
        return Err(IntakeError::InconsistentMessageLength {
            message_length: header.message_length,
            chunk_count: count,
            chunk_bytes: chunk_bytes as u32,
        });
    }
    // Chunk i has sequence first + i: first must be >= 0 and the last chunk's number must exist.
    let first = header.sequence.checked_sub(u64::from(index));
    if first.and_then(|f| f.checked_add(count64 - 1)).is_none() {
        return Err(IntakeError::SequenceOutOfRange {
            sequence: header.sequence,
            chunk_index: index,
        });
    }
    Ok(())
}

/// An authenticated frame: its header, its parameter set, and the full ciphertext (a seeded mask expanded).
#[derive(Clone, Debug)]
pub struct Frame {
    /// The validated header.
    pub header: FrameHeader,
    /// The header's kind.
    pub kind: FrameKind,
    /// The parameter set the header names.
    pub parameters: GlweParameters,
    /// The ciphertext, mask regenerated bit for bit for seeded frames.
    pub ciphertext: GlweCiphertextOwned<u32>,
}

impl Frame {
    /// The number of message bytes this frame's chunk carries (the last chunk may be short).
    pub fn chunk_message_bytes(&self) -> usize {
        let chunk_bytes = self.parameters.polynomial_size().0 / 8;
        let start = self.header.chunk_index as usize * chunk_bytes;
        (self.header.message_length as usize)
            .saturating_sub(start)
            .min(chunk_bytes)
    }
}

/// An authenticated integer frame: its header, its integer set, and the `u64` GLWE ciphertext
/// (the seeded mask expanded) that `interop::integer::IntegerExtractor` (feature `tfhe`) takes.
#[derive(Clone, Debug)]
pub struct IntegerFrame {
    /// The validated header.
    pub header: FrameHeader,
    /// The integer set the header names.
    pub parameters: IntegerParameters,
    /// The ciphertext, mask regenerated bit for bit.
    pub ciphertext: GlweCiphertextOwned<u64>,
}

impl IntegerFrame {
    /// The reading bytes this frame carries: `N / 4` per chunk (4 two-bit blocks per byte), the last chunk
    /// as many as `message_length` leaves.
    pub fn chunk_message_bytes(&self) -> usize {
        let chunk_bytes = self.parameters.glwe().polynomial_size().0 / 4;
        let start = self.header.chunk_index as usize * chunk_bytes;
        (self.header.message_length as usize)
            .saturating_sub(start)
            .min(chunk_bytes)
    }

    /// The whole readings of `value_bits` bits this frame carries: `chunk_message_bytes() * 8 / value_bits`.
    pub fn readings(&self, value_bits: u32) -> usize {
        self.chunk_message_bytes() * 8 / value_bits.max(1) as usize
    }
}

/// A complete message: its authenticated frames in chunk order.
#[derive(Clone, Debug)]
pub struct Message {
    /// The sending device.
    pub device_id: u64,
    /// The key its ciphertexts are under.
    pub key_id: u32,
    /// The message id.
    pub message_id: u32,
    /// The sequence number of chunk 0.
    pub first_sequence: u64,
    /// The message length in bytes.
    pub message_length: u32,
    /// Chunk `i` is `frames[i]`.
    pub frames: Vec<Frame>,
}

/// What [`Intake::receive`] did with an accepted frame.
#[derive(Clone, Debug)]
pub enum Received {
    /// The frame is a chunk of a message that is not complete yet.
    Pending {
        /// The device.
        device_id: u64,
        /// The message id.
        message_id: u32,
        /// The frame's chunk index.
        chunk_index: u32,
        /// The frame's sequence number.
        sequence: u64,
        /// How many of the message's chunks have arrived.
        received: u32,
        /// How many it has.
        chunk_count: u32,
    },
    /// The frame completed its message (a one-chunk message completes at once).
    Complete(Message),
}

impl Received {
    /// The message, if this frame completed one.
    pub fn into_message(self) -> Option<Message> {
        match self {
            Self::Complete(message) => Some(message),
            Self::Pending { .. } => None,
        }
    }
}

#[derive(Debug)]
struct DeviceState {
    credentials: DeviceCredentials,
    encryption: DeviceEncryption,
    window: ReplayWindow,
}

/// The stateful, authenticated intake: registered devices, their replay windows, and the reassembly of
/// multi-chunk messages.
#[derive(Debug)]
pub struct Intake {
    config: IntakeConfig,
    devices: HashMap<u64, DeviceState>,
    reassembler: Reassembler,
}

impl Intake {
    /// An intake for the devices of `registry`.
    pub fn new(config: IntakeConfig, registry: DeviceRegistry) -> Self {
        let devices = registry
            .devices
            .into_iter()
            .map(
                |(
                    id,
                    Registered {
                        credentials,
                        encryption,
                        floor,
                    },
                )| {
                    (
                        id,
                        DeviceState {
                            credentials,
                            encryption,
                            window: ReplayWindow::new(floor),
                        },
                    )
                },
            )
            .collect();
        Self {
            reassembler: Reassembler::new(&config),
            config,
            devices,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &IntakeConfig {
        &self.config
    }

    /// Registers one more secret-key device, whose frames must have sequence numbers of at least `floor`.
    pub fn register(&mut self, credentials: DeviceCredentials, floor: u64) -> Result<(), DuplicateDevice> {
        self.register_device(credentials, DeviceEncryption::SecretKey, floor)
    }

    /// Registers one more device that encrypts as `encryption`, whose frames must have sequence numbers of at
    /// least `floor`.
    pub fn register_device(
        &mut self,
        credentials: DeviceCredentials,
        encryption: DeviceEncryption,
        floor: u64,
    ) -> Result<(), DuplicateDevice> {
        let id = credentials.device_id();
        if self.devices.contains_key(&id) {
            return Err(DuplicateDevice(id));
        }
        self.devices.insert(
            id,
            DeviceState {
                credentials,
                encryption,
                window: ReplayWindow::new(floor),
            },
        );
        Ok(())
    }

    /// The highest sequence number accepted from `device_id`, if any. Persist it (plus one, as the floor
    /// for [`DeviceRegistry::register_with_floor`]) before a restart, or old frames can be replayed.
    pub fn highest_sequence(&self, device_id: u64) -> Option<u64> {
        self.devices.get(&device_id)?.window.highest()
    }

    /// The number of incomplete messages held.
    pub fn open_messages(&self) -> usize {
        self.reassembler.open_messages()
    }

    /// Validates, authenticates and de-duplicates one frame, then adds it to its message. `now` is the
    /// arrival time (for message expiry). A chunk of an open message that has expired gets
    /// [`IntakeError::MessageExpired`] and the message is dropped; other expired messages are dropped by
    /// [`Intake::evict_expired`], which the caller runs regularly.
    pub fn receive(&mut self, bytes: &[u8], now: Instant) -> Result<Received, IntakeError> {
        let parsed = parse_frame(bytes, &self.config)?;
        let header = parsed.header;
        if parsed.parameters.torus_bits() != 32 {
            // Integer frames: `receive_integer`.
            return Err(IntakeError::UnsupportedParameterSet(header.parameter_set));
        }
        self.authenticate(&parsed)?;
        // A frame refused by the reassembly (limits, mismatch, expiry) does not consume its sequence number.
        self.reassembler.admit(&header, now)?;
        device_accept(&mut self.devices, &header);
        self.reassembler.insert(parsed.to_frame(), now)
    }

    /// Validates, authenticates and de-duplicates one integer frame (a seeded frame of a 64-bit
    /// integer set) and hands it out at once: every integer chunk holds whole readings, so there is no
    /// reassembly. The checks are [`Intake::receive`]'s, in the same order (MAC before any allocation, then
    /// the replay window); a boolean set's frame gets [`IntakeError::UnsupportedParameterSet`], a full or
    /// public-key integer frame [`IntakeError::FrameKindNotAllowed`].
    pub fn receive_integer(&mut self, bytes: &[u8]) -> Result<IntegerFrame, IntakeError> {
        let parsed = parse_frame(bytes, &self.config)?;
        let header = parsed.header;
        let integer = IntegerParameters::from_id(parsed.parameters.id())
            .ok_or(IntakeError::UnsupportedParameterSet(header.parameter_set))?;
        self.authenticate(&parsed)?;
        if parsed.kind != FrameKind::Seeded {
            return Err(IntakeError::FrameKindNotAllowed {
                device_id: header.device_id,
                kind: parsed.kind,
            });
        }
        device_accept(&mut self.devices, &header);
        Ok(parsed.to_integer_frame(integer))
    }

    /// Device lookup, key id, MAC (constant-time), the frame kinds the device may send, and the replay
    /// window check (not the update): everything before the frame may be used.
    fn authenticate(&mut self, parsed: &ParsedFrame<'_>) -> Result<(), IntakeError> {
        let header = parsed.header;
        let device = self
            .devices
            .get_mut(&header.device_id)
            .ok_or(IntakeError::UnknownDevice(header.device_id))?;
        if header.key_id != device.credentials.key_id() {
            return Err(IntakeError::WrongKeyId {
                device_id: header.device_id,
                expected: device.credentials.key_id(),
                found: header.key_id,
            });
        }
        if !parsed.verify_mac(device.credentials.mac_key()) {
            return Err(IntakeError::BadMac {
                device_id: header.device_id,
            });
        }
        let allowed = match device.encryption {
            DeviceEncryption::PublicKey => parsed.kind == FrameKind::PublicKey,
            _ => parsed.kind != FrameKind::PublicKey,
        };
        if !allowed {
            return Err(IntakeError::FrameKindNotAllowed {
                device_id: header.device_id,
                kind: parsed.kind,
            });
        }
        device.window.check(header.sequence).map_err(|e| match e {
            ReplayError::Replayed => IntakeError::Replayed {
                device_id: header.device_id,
                sequence: header.sequence,
            },
            ReplayError::TooOld { lowest_acceptable } => IntakeError::TooOld {
                device_id: header.device_id,
                sequence: header.sequence,
                lowest_acceptable,
            },
        })?;
        Ok(())
    }

    /// Drops every incomplete message older than `max_message_age` at `now`; one
    /// [`IntakeError::MessageExpired`] per message dropped, ordered by device and message id.
    pub fn evict_expired(&mut self, now: Instant) -> Vec<IntakeError> {
        self.reassembler.evict_expired(now)
    }
}
