//! [`KeyedIntake`]: the authenticated [`Intake`] and a [`Converter`] into tfhe-rs fed from one [`KeyStore`],
//! for every parameter set: authenticate a frame with the intake (the store's MAC key, key id and the frame
//! kinds the device's mode may send), look its device up in the converter, convert in the mode the store
//! records. A device is known to both halves or to neither.
//!
//! * `KeyedIntake<BooleanBridge>`: `TFHE_LIB_PARAMETERS` (key switch per bit);
//! * `KeyedIntake<BigKeyBridge>`: the 128-bit boolean sets (extraction only);
//! * `KeyedIntake<IntegerBridge>` ([`IntegerKeyedIntake`]): the integer set (`FheUint` readings).

use crate::error::IntakeError;
use crate::intake::{Intake, IntakeConfig, IntegerInput};
use crate::interop::integer::IntegerBridge;
use crate::interop::{Converter, FrameUnit, Input, InteropError};
use crate::key_set::key_store::{DeviceRecord, KeyStore};
use crate::registry::DeviceRegistry;
use crate::replay::ReplayWindow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tfhe::{FheUint, FheUintId};

/// The authenticated intake and a converter, fed from one [`KeyStore`]: a device is known to both or to
/// neither. Frames go in through [`KeyedIntake::receive`]; what they complete goes to
/// [`KeyedIntake::convert`] (or to the converter, shared through an `Arc`, on whichever thread computes).
#[derive(Debug)]
pub struct KeyedIntake<C: Converter> {
    intake: Intake,
    converter: Arc<C>,
}

/// The integer set's keyed intake.
pub type IntegerKeyedIntake = KeyedIntake<IntegerBridge>;

/// Readings as `FheUint<Id>`, or why not.
type Readings<Id> = Result<Vec<FheUint<Id>>, InteropError>;

impl<C: Converter> KeyedIntake<C> {
    /// The intake and converter for the devices of `store`, none of which has sent a frame yet. `converter`
    /// must be made from the server key the store was made for ([`InteropError::ServerKeyMismatch`];
    /// [`InteropError::NoServerKey`] if it has none), with no device registered. Devices of other parameter
    /// sets are registered too (their MACs are checked), and their inputs get
    /// [`InteropError::DeviceOfAnotherSet`] from the converter.
    pub fn new(config: IntakeConfig, store: KeyStore, converter: C) -> Result<Self, InteropError> {
        Self::resuming(config, store, converter, &HashMap::new())
    }

    /// As [`KeyedIntake::new`], resuming after a restart: a device in `windows` resumes with the replay
    /// window persisted for it ([`Intake::replay_window`]); the others start from 0.
    pub fn resuming(
        config: IntakeConfig,
        store: KeyStore,
        converter: C,
        windows: &HashMap<u64, ReplayWindow>,
    ) -> Result<Self, InteropError> {
        let fingerprint = converter.server_key_fingerprint().ok_or(InteropError::NoServerKey)?;
        if store.server_key_fingerprint() != fingerprint {
            return Err(InteropError::ServerKeyMismatch);
        }
        let mut this = Self {
            intake: Intake::new(config, DeviceRegistry::new()),
            converter: Arc::new(converter),
        };
        for record in store.into_records() {
            let window = windows
                .get(&record.device_id())
                .cloned()
                .unwrap_or(ReplayWindow::new(0));
            this.register_with_window(record, window)?;
        }
        Ok(this)
    }

    /// Adds a device to both the intake and the converter (or to neither, on error), whose frames must have
    /// sequence numbers of at least `floor`. The intake takes from it the frame kinds of its mode
    /// (`DeviceKeyMaterial::encryption`): public-key frames only from a public-key device, seeded ones only
    /// from a secret-key device.
    pub fn register(&mut self, record: DeviceRecord, floor: u64) -> Result<(), InteropError> {
        self.register_with_window(record, ReplayWindow::new(floor))
    }

    /// [`KeyedIntake::register`], resuming with replay window `window`.
    pub fn register_with_window(&mut self, record: DeviceRecord, window: ReplayWindow) -> Result<(), InteropError> {
        let parameter_set = record.parameter_set();
        let (credentials, material) = record.into_parts();
        let (device_id, key_id) = (credentials.device_id(), credentials.key_id());
        let encryption = material.encryption();
        self.converter.register(device_id, key_id, parameter_set, material)?;
        self.intake
            .register_device_with_window(credentials, encryption, window)
            .map_err(|_| {
                self.converter.unregister(device_id);
                InteropError::DuplicateDevice(device_id)
            })
    }

    /// One frame: authentication (by the store's MAC key and key id), replay window, and reassembly where
    /// the converter's sets need it ([`FrameUnit::receive`]).
    pub fn receive(&mut self, bytes: &[u8], now: Instant) -> Result<<C::Unit as FrameUnit>::Received, IntakeError> {
        C::Unit::receive(&mut self.intake, bytes, now)
    }

    /// The inputs of a committed message read back from a durable store ([`FrameUnit::committed`]): its
    /// frames, in chunk order, verified again; convert each with [`KeyedIntake::convert`].
    pub fn committed(&self, frames: &[Vec<u8>]) -> Result<Vec<Input<C>>, IntakeError> {
        C::Unit::committed(&self.intake, frames)
    }

    /// [`Converter::convert`]: one input (a complete message, an integer frame) as tfhe-rs values, in the
    /// sending device's mode.
    pub fn convert(&self, input: &Input<C>) -> Result<C::Output, InteropError> {
        self.converter.convert(input)
    }

    /// [`Intake::evict_expired`].
    pub fn evict_expired(&mut self, now: Instant) -> Vec<IntakeError> {
        self.intake.evict_expired(now)
    }

    /// The intake (sequence-number high-water marks, open messages, configuration).
    pub fn intake(&self) -> &Intake {
        &self.intake
    }

    /// The converter, to share with the threads that convert and compute.
    pub fn converter(&self) -> &Arc<C> {
        &self.converter
    }
}

impl KeyedIntake<IntegerBridge> {
    /// Readings `first..first + count` of what [`KeyedIntake::receive`] or [`KeyedIntake::committed`]
    /// handed out, as `FheUint<Id>`, in the sending device's key mode: [`IntegerBridge::readings`] of a GLWE
    /// frame; of a compact list (which must be of `Id`'s width) tfhe-rs expands the whole list.
    pub fn readings<Id: FheUintId + Send>(&self, input: &IntegerInput, first: usize, count: usize) -> Readings<Id> {
        match input {
            IntegerInput::Frame(frame) => self.converter.readings(frame, first, count),
            IntegerInput::CompactList(list) => {
                let capacity = list.readings();
                if first.checked_add(count).is_none_or(|end| end > capacity) {
                    return Err(InteropError::ReadingsOutOfRange { first, count, capacity });
                }
                let mut all = self.converter.input_readings(input)?;
                all.truncate(first + count);
                Ok(all.split_off(first))
            }
        }
    }

    /// [`IntegerBridge::input_readings`]: every whole reading of `Id`'s width in `input`.
    pub fn frame_readings<Id: FheUintId + Send>(&self, input: &IntegerInput) -> Readings<Id> {
        self.converter.input_readings(input)
    }
}
