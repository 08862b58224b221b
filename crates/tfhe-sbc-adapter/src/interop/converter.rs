//! [`Converter`]: what every conversion from authenticated device frames into tfhe-rs values has in common,
//! so that one `KeyedIntake` serves every parameter set.
//!
//! | converter | sets | input | per device | output |
//! |---|---|---|---|---|
//! | [`BooleanBridge`](super::BooleanBridge) | `TFHE_LIB_PARAMETERS` (small key) | [`Message`] | key switch (server key's or its own) | gate inputs |
//! | [`BigKeyBridge`](super::BigKeyBridge) | the 128-bit boolean sets (big key) | [`Message`] | extraction only | gate inputs |
//! | [`IntegerBridge`](super::integer::IntegerBridge) | the integer set | [`IntegerInput`] | extraction (fleet, public key), one GLWE key switch (per-device), tfhe-rs's `expand` (compact lists) | `FheUint` readings |

use super::device_keys::DeviceTable;
use super::device_record::DeviceKeyMaterial;
use super::error::InteropError;
use crate::error::IntakeError;
use crate::intake::{Intake, IntegerInput, Message, Received};
use std::time::Instant;
use tfhe_sbc_core::parameters::ParameterSetId;

/// What a converter takes from the intake: how a frame goes through it, and what completes an input.
pub trait FrameUnit {
    /// What the intake answers for each accepted frame.
    type Received;
    /// What is converted.
    type Input: Send;

    /// One frame through `intake` (authentication, replay window, and reassembly where needed).
    fn receive(intake: &mut Intake, bytes: &[u8], now: Instant) -> Result<Self::Received, IntakeError>;

    /// The input that a received frame completes, if it completes one.
    fn completed(received: Self::Received) -> Option<Self::Input>;

    /// The inputs of a committed message read back from a durable store: its frames in chunk order, each
    /// verified again ([`Intake::verify`]: MAC, key id, frame kinds; no replay window, no reassembly).
    fn committed(intake: &Intake, frames: &[Vec<u8>]) -> Result<Vec<Self::Input>, IntakeError>;
}

/// The boolean sets' unit: frames reassembled into a [`Message`].
#[derive(Clone, Copy, Debug)]
pub struct Messages;

impl FrameUnit for Messages {
    type Received = Received;
    type Input = Message;

    fn receive(intake: &mut Intake, bytes: &[u8], now: Instant) -> Result<Received, IntakeError> {
        intake.receive(bytes, now)
    }

    fn completed(received: Received) -> Option<Message> {
        received.into_message()
    }

    fn committed(intake: &Intake, frames: &[Vec<u8>]) -> Result<Vec<Message>, IntakeError> {
        let frames = frames
            .iter()
            .map(|bytes| intake.verify_frame(bytes))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(first) = frames.first() else {
            return Ok(Vec::new());
        };
        let header = first.header;
        let first_sequence = header.sequence.wrapping_sub(u64::from(header.chunk_index));
        let consistent = frames.iter().enumerate().all(|(i, f)| {
            f.header.device_id == header.device_id
                && f.header.sequence.wrapping_sub(u64::from(f.header.chunk_index)) == first_sequence
                && f.header.message_id == header.message_id
                && f.header.chunk_index as usize == i
                && f.header.chunk_count as usize == frames.len()
        });
        if !consistent {
            return Err(IntakeError::MessageMismatch {
                device_id: header.device_id,
                message_id: header.message_id,
                field: crate::error::MessageField::ChunkCount,
            });
        }
        // The fields every chunk of a message repeats (the reassembly's rule, for frames read back).
        let differs = frames.iter().find_map(|f| {
            use crate::error::MessageField;
            if f.header.message_length != header.message_length {
                Some(MessageField::MessageLength)
            } else if f.header.parameter_set != header.parameter_set {
                Some(MessageField::ParameterSet)
            } else if f.header.reading_format != header.reading_format {
                Some(MessageField::ReadingFormat)
            } else {
                None
            }
        });
        if let Some(field) = differs {
            return Err(IntakeError::MessageMismatch {
                device_id: header.device_id,
                message_id: header.message_id,
                field,
            });
        }
        Ok(vec![Message {
            device_id: header.device_id,
            key_id: header.key_id,
            message_id: header.message_id,
            first_sequence,
            message_length: header.message_length,
            frames,
        }])
    }
}

/// The integer set's unit: every frame ([`IntegerInput`]: a GLWE frame or a compact list) is converted on
/// its own.
#[derive(Clone, Copy, Debug)]
pub struct IntegerFrames;

impl FrameUnit for IntegerFrames {
    type Received = IntegerInput;
    type Input = IntegerInput;

    fn receive(intake: &mut Intake, bytes: &[u8], _now: Instant) -> Result<IntegerInput, IntakeError> {
        intake.receive_integer_input(bytes)
    }

    fn completed(received: IntegerInput) -> Option<IntegerInput> {
        Some(received)
    }

    fn committed(intake: &Intake, frames: &[Vec<u8>]) -> Result<Vec<IntegerInput>, IntakeError> {
        frames.iter().map(|bytes| intake.verify_integer_frame(bytes)).collect()
    }
}

/// What a converter of `C` converts.
pub type Input<C> = <<C as Converter>::Unit as FrameUnit>::Input;

/// Authenticated device frames in, tfhe-rs values out, with the key of the sending device. `Send + Sync`:
/// one converter is shared (through an `Arc`) by the threads that compute.
pub trait Converter: Send + Sync {
    /// What it takes from the intake ([`Messages`] for the boolean sets, [`IntegerFrames`] for the integer
    /// set).
    type Unit: FrameUnit;
    /// The tfhe-rs values one input becomes.
    type Output;

    /// The fingerprint of the server key whose computations the outputs feed (a key store of per-device
    /// keys is bound to it); `None` if the converter was made without a server key.
    fn server_key_fingerprint(&self) -> Option<[u8; 32]>;

    /// The converter's registered devices, with the parameter set it converts: what
    /// [`Converter::register`] and [`Converter::unregister`] work on.
    fn devices(&self) -> Devices<'_>;

    /// Registers device `device_id` of `parameter_set`, whose frames carry `key_id`, with the key material
    /// the key store records. A device of another parameter set is recorded as such (its inputs get
    /// [`InteropError::DeviceOfAnotherSet`]); material its set does not take gets
    /// [`InteropError::KeyMaterialMismatch`]; a device registered twice [`InteropError::DuplicateDevice`].
    fn register(
        &self,
        device_id: u64,
        key_id: u32,
        parameter_set: ParameterSetId,
        material: DeviceKeyMaterial,
    ) -> Result<(), InteropError> {
        let devices = self.devices();
        let sets = (parameter_set, devices.converter_set);
        devices.table.register((device_id, key_id), sets, material)
    }

    /// Forgets a device (revocation) and its cached key; whether it was registered.
    fn unregister(&self, device_id: u64) -> bool {
        self.devices().table.remove(device_id)
    }

    /// One input as tfhe-rs values, with the key of the device it came from.
    fn convert(&self, input: &Input<Self>) -> Result<Self::Output, InteropError>;
}

/// A converter's registered devices and the parameter set it converts, as [`Converter::register`] and
/// [`Converter::unregister`] use them. Only this crate's converters make one.
pub struct Devices<'a> {
    table: &'a dyn DeviceTable,
    converter_set: ParameterSetId,
}

impl<'a> Devices<'a> {
    /// The devices of `table`, for a converter of `converter_set`.
    pub(crate) fn new(table: &'a dyn DeviceTable, converter_set: ParameterSetId) -> Self {
        Self { table, converter_set }
    }
}

impl core::fmt::Debug for Devices<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Devices")
            .field("converter_set", &self.converter_set.0)
            .finish_non_exhaustive()
    }
}
