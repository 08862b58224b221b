//! Authenticated intake of device frames (wire format v2, `tfhe_sbc_device::frame`): bytes from the network in,
//! checked GLWE ciphertexts grouped into whole messages out, or a typed [`IntakeError`].
//!
//! [`Intake::receive`] runs, in this order:
//! 1. [`parse_frame`] (stateless): magic and version first, then the fixed header, every field validated,
//!    and the exact frame length the parameter set implies;
//! 2. device lookup, key id, and the MAC, compared in constant time, **before** any mask expansion or
//!    allocation: 0 bytes are allocated for a frame rejected up to here;
//! 3. the device's replay window ([`crate::replay`]), updated only for an authentic frame: a number it holds
//!    is a replay only for the very frame accepted under it, another frame under it is "too old";
//! 4. the reassembly admission (mismatch, limits, expiry, and the late chunks of an expired message;
//!    [`reassembly`]);
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

mod config;
mod frame;
mod parse;
pub mod reassembly;

pub use config::IntakeConfig;
pub use frame::{CompactListFrame, Frame, IntegerFrame, IntegerInput, Message, Received};
pub use parse::{ParsedFrame, header_of, parse_frame};

use crate::error::IntakeError;
use crate::registry::{DeviceEncryption, DeviceRegistry, Registered, insert_new};
use crate::replay::{FrameTag, ReplayWindow};
use reassembly::Reassembler;
use std::collections::HashMap;
use std::time::Instant;
use tfhe_sbc_core::parameters::IntegerParameters;
use tfhe_sbc_device::frame::mac::DeviceCredentials;
use tfhe_sbc_device::frame::{FrameHeader, FrameKind};

/// Records an authenticated frame (its header and MAC tag) in its device's replay window.
fn device_accept(devices: &mut HashMap<u64, DeviceState>, header: &FrameHeader, tag: FrameTag) {
    if let Some(device) = devices.get_mut(&header.device_id) {
        device.window.accept(header.sequence, tag);
    }
}

#[derive(Debug)]
struct DeviceState {
    credentials: DeviceCredentials,
    encryption: DeviceEncryption,
    window: ReplayWindow,
    /// The first sequence number not taken before the device was registered (its window's floor, or one
    /// above the highest of a window resumed as it was): the chunks of a message that starts below it were
    /// taken, if at all, before a restart, and are gone.
    registered_from: u64,
}

impl DeviceState {
    /// A registered device, with its replay window (empty above its floor, or resumed).
    fn new(registered: Registered) -> Self {
        let window = registered.window;
        let registered_from = window
            .highest()
            .map_or(0, |highest| highest.saturating_add(1))
            .max(window.lowest_acceptable());
        Self {
            credentials: registered.credentials,
            encryption: registered.encryption,
            window,
            registered_from,
        }
    }
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
            .map(|(id, registered)| (id, DeviceState::new(registered)))
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
    pub fn register(&mut self, credentials: DeviceCredentials, floor: u64) -> Result<(), IntakeError> {
        self.register_device_with_window(credentials, DeviceEncryption::SecretKey, ReplayWindow::new(floor))
    }

    /// Registers one more device that encrypts as `encryption`, resuming with replay window `window` (the
    /// one [`Intake::replay_window`] gave before a restart).
    pub fn register_device_with_window(
        &mut self,
        credentials: DeviceCredentials,
        encryption: DeviceEncryption,
        window: ReplayWindow,
    ) -> Result<(), IntakeError> {
        let id = credentials.device_id();
        insert_new(
            &mut self.devices,
            id,
            DeviceState::new(Registered::resumed(credentials, encryption, window)),
        )
    }

    /// The highest sequence number accepted from `device_id`, if any.
    pub fn highest_sequence(&self, device_id: u64) -> Option<u64> {
        self.devices.get(&device_id)?.window.highest()
    }

    /// The replay window of registered device `device_id`: persist it before acknowledgements leave, and
    /// resume with it after a restart ([`Intake::register_device_with_window`]).
    pub fn replay_window(&self, device_id: u64) -> Option<&ReplayWindow> {
        Some(&self.devices.get(&device_id)?.window)
    }

    /// The MAC key of registered device `device_id` (for [`crate::ack::seal_ack`]).
    pub fn mac_key(&self, device_id: u64) -> Option<&tfhe_sbc_device::frame::mac::MacKey> {
        Some(self.devices.get(&device_id)?.credentials.mac_key())
    }

    /// The ids of the registered devices, in no particular order.
    pub fn device_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.devices.keys().copied()
    }

    /// The number of registered devices.
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    /// The number of incomplete messages held.
    pub fn open_messages(&self) -> usize {
        self.reassembler.open_messages()
    }

    /// Whether message `message_id` of `device_id` is being reassembled (some of its chunks accepted): its
    /// other chunks must be accepted too, or the accepted ones are lost when the message expires.
    pub fn is_message_open(&self, device_id: u64, message_id: u32) -> bool {
        self.reassembler.is_open(device_id, message_id)
    }

    /// The number of expired messages remembered, so that their late chunks are refused
    /// ([`reassembly::EXPIRED_REMEMBERED_PER_DEVICE`] per device at most).
    pub fn expired_remembered(&self) -> usize {
        self.reassembler.expired_remembered()
    }

    /// Validates, authenticates and de-duplicates one frame, then adds it to its message. `now` is the
    /// arrival time (for message expiry). A chunk of an open message that has expired gets
    /// [`IntakeError::MessageExpired`] and the message is dropped; other expired messages are dropped by
    /// [`Intake::evict_expired`], which the caller runs regularly. Either way the message stays expired:
    /// its later chunks get [`IntakeError::MessageExpired`] too, never `Ok` (see [`reassembly`] for how long
    /// that is remembered).
    pub fn receive(&mut self, bytes: &[u8], now: Instant) -> Result<Received, IntakeError> {
        let parsed = parse_frame(bytes, &self.config)?;
        let header = parsed.header;
        if parsed.parameters.torus_bits() != 32 {
            // Integer frames: `receive_integer`.
            return Err(IntakeError::UnsupportedParameterSet(header.parameter_set));
        }
        self.authenticate(&parsed)?;
        self.started_before_registration(&header)?;
        // A frame refused by the reassembly (limits, mismatch, expiry) does not consume its sequence number.
        self.reassembler.admit(&header, now)?;
        device_accept(&mut self.devices, &header, FrameTag::of_mac(parsed.tag()));
        self.reassembler.insert(parsed.to_frame(), now)
    }

    /// Validates, authenticates and de-duplicates one integer frame (a seeded frame of a 64-bit
    /// integer set) and hands it out at once: every integer chunk holds whole readings, so there is no
    /// reassembly. The checks are [`Intake::receive`]'s, in the same order (MAC before any allocation, then
    /// the replay window); a boolean set's frame gets [`IntakeError::UnsupportedParameterSet`], a full or
    /// public-key integer frame [`IntakeError::FrameKindNotAllowed`].
    pub fn receive_integer(&mut self, bytes: &[u8]) -> Result<IntegerFrame, IntakeError> {
        match self.receive_integer_kinds(bytes, false)? {
            IntegerInput::Frame(frame) => Ok(frame),
            IntegerInput::CompactList(_) => unreachable!("compact lists are refused before authentication"),
        }
    }

    /// [`Intake::receive_integer`] for every frame an integer set takes: GLWE frames and compact-list
    /// frames (from public-key devices), with the same checks in the same order.
    pub fn receive_integer_input(&mut self, bytes: &[u8]) -> Result<IntegerInput, IntakeError> {
        self.receive_integer_kinds(bytes, true)
    }

    fn receive_integer_kinds(&mut self, bytes: &[u8], compact_lists: bool) -> Result<IntegerInput, IntakeError> {
        let parsed = parse_frame(bytes, &self.config)?;
        let header = parsed.header;
        let integer = IntegerParameters::from_id(parsed.parameters.id())
            .ok_or(IntakeError::UnsupportedParameterSet(header.parameter_set))?;
        if !compact_lists && parsed.kind == FrameKind::CompactList {
            return Err(IntakeError::FrameKindNotAllowed {
                device_id: header.device_id,
                kind: parsed.kind,
            });
        }
        self.authenticate(&parsed)?;
        device_accept(&mut self.devices, &header, FrameTag::of_mac(parsed.tag()));
        Ok(parsed.to_integer_input(integer))
    }

    /// Validates and authenticates one frame read back from a durable store (an intake elsewhere accepted
    /// it): [`parse_frame`], then the device, key id, MAC and frame-kind checks of [`Intake::receive`],
    /// without the replay window or the reassembly, which the store's writer ran. Nothing changes.
    pub fn verify<'a>(&self, bytes: &'a [u8]) -> Result<ParsedFrame<'a>, IntakeError> {
        let parsed = parse_frame(bytes, &self.config)?;
        self.authenticate_device(&parsed)?;
        Ok(parsed)
    }

    /// [`Intake::verify`] of a stored boolean-set frame, its mask expanded: what [`Intake::receive`] would
    /// have put into its message.
    pub fn verify_frame(&self, bytes: &[u8]) -> Result<Frame, IntakeError> {
        let parsed = self.verify(bytes)?;
        if parsed.parameters.torus_bits() != 32 {
            return Err(IntakeError::UnsupportedParameterSet(parsed.header.parameter_set));
        }
        Ok(parsed.to_frame())
    }

    /// [`Intake::verify`] of a stored integer frame, its mask expanded: what [`Intake::receive_integer`]
    /// hands out.
    pub fn verify_integer_frame(&self, bytes: &[u8]) -> Result<IntegerInput, IntakeError> {
        let parsed = self.verify(bytes)?;
        let integer = IntegerParameters::from_id(parsed.parameters.id())
            .ok_or(IntakeError::UnsupportedParameterSet(parsed.header.parameter_set))?;
        Ok(parsed.to_integer_input(integer))
    }

    /// Device lookup, key id, MAC (constant-time) and the frame kinds the device may send.
    fn authenticate_device(&self, parsed: &ParsedFrame<'_>) -> Result<&DeviceState, IntakeError> {
        let header = parsed.header;
        let device = self
            .devices
            .get(&header.device_id)
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
        // Public-key devices send public-key frames or compact lists (both need only public keys); the
        // others send secret-key frames.
        let allowed = match (device.encryption, parsed.kind) {
            (DeviceEncryption::PublicKey, FrameKind::PublicKey | FrameKind::CompactList)
            | (DeviceEncryption::SecretKey, FrameKind::Seeded | FrameKind::Full) => true,
            (DeviceEncryption::PublicKey, FrameKind::Seeded | FrameKind::Full)
            | (DeviceEncryption::SecretKey, FrameKind::PublicKey | FrameKind::CompactList) => false,
        };
        if !allowed {
            return Err(IntakeError::FrameKindNotAllowed {
                device_id: header.device_id,
                kind: parsed.kind,
            });
        }
        Ok(device)
    }

    /// [`Intake::authenticate_device`] and the replay window check (not the update): everything before the
    /// frame may be used. A number the window holds is [`IntakeError::Replayed`] only for the frame
    /// accepted under it; another frame under it is [`IntakeError::TooOld`] (the device's counter went back).
    fn authenticate(&mut self, parsed: &ParsedFrame<'_>) -> Result<(), IntakeError> {
        let header = parsed.header;
        self.authenticate_device(parsed)?.window.check(
            header.device_id,
            header.sequence,
            FrameTag::of_mac(parsed.tag()),
        )?;
        Ok(())
    }

    /// A later chunk (`chunk_index > 0`) of a message that is not open and whose first sequence number is
    /// below the first the device could send since it was registered (after a restart, with the window
    /// persisted before it): its earlier chunks were taken before the restart and are gone, so it can never
    /// complete. [`IntakeError::MessageExpired`] (0 chunks held), as for a message that expired, never a new
    /// entry acknowledged "accepted".
    fn started_before_registration(&self, header: &FrameHeader) -> Result<(), IntakeError> {
        let Some(device) = self.devices.get(&header.device_id) else {
            return Ok(());
        };
        let first = header.sequence.wrapping_sub(u64::from(header.chunk_index));
        if header.chunk_count > 1
            && header.chunk_index > 0
            && first < device.registered_from
            && first <= header.sequence
            && !self.reassembler.is_open(header.device_id, header.message_id)
        {
            return Err(IntakeError::MessageExpired {
                device_id: header.device_id,
                message_id: header.message_id,
                received: 0,
                chunk_count: header.chunk_count,
            });
        }
        Ok(())
    }

    /// Drops every incomplete message older than `max_message_age` at `now`; one
    /// [`IntakeError::MessageExpired`] per message dropped, ordered by device and message id.
    pub fn evict_expired(&mut self, now: Instant) -> Vec<IntakeError> {
        self.reassembler.evict_expired(now)
    }
}
