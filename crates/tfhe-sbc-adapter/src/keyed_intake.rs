//! The intake and the converter into tfhe-rs fed from one [`KeyStore`]: [`KeyedIntake`] for the boolean
//! sets (the authenticated [`Intake`] and the [`BooleanBridge`]) and [`IntegerKeyedIntake`] for the integer
//! set (the intake and the [`IntegerBridge`]). A device is known to both halves or to neither.

use crate::IntakeError;
use crate::intake::{Intake, IntakeConfig, IntegerFrame, Received};
use crate::interop::integer::{IntegerBridge, IntegerError};
use crate::interop::{BooleanBridge, InteropError};
use crate::key_set::key_store::{DeviceKeyMaterial, DeviceRecord, KeyStore};
use crate::registry::{DeviceRegistry, DuplicateDevice};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tfhe::{FheUint, FheUintId};

/// The authenticated intake and the bridge, fed from one [`KeyStore`]: a device is known to both or to
/// neither. Frames go in through [`KeyedIntake::receive`]; whole messages go to
/// [`BooleanBridge::message_to_booleans`] on whichever thread computes (the bridge is shared through an
/// `Arc`).
#[derive(Debug)]
pub struct KeyedIntake {
    intake: Intake,
    bridge: Arc<BooleanBridge>,
}

impl KeyedIntake {
    /// The intake and bridge for the devices of `store`, none of which has sent a frame yet. `bridge` must
    /// be made from the server key the store was made for, with no device registered. A device of the
    /// integer set is refused ([`InteropError::ParameterMismatch`]): integer devices go through
    /// [`IntegerKeyedIntake`].
    pub fn new(config: IntakeConfig, store: KeyStore, bridge: BooleanBridge) -> Result<Self, InteropError> {
        Self::with_floors(config, store, bridge, &HashMap::new())
    }

    /// As [`KeyedIntake::new`], with the persisted sequence-number floor of each device (absent: 0).
    pub fn with_floors(
        config: IntakeConfig,
        store: KeyStore,
        bridge: BooleanBridge,
        floors: &HashMap<u64, u64>,
    ) -> Result<Self, InteropError> {
        if store.server_key_fingerprint() != bridge.server_key_fingerprint() {
            return Err(InteropError::ServerKeyMismatch);
        }
        if store.iter().any(DeviceRecord::is_integer) {
            return Err(InteropError::ParameterMismatch);
        }
        let mut registry = DeviceRegistry::new();
        for record in store.into_records() {
            let (credentials, material) = record.into_parts();
            let (device_id, key_id) = (credentials.device_id(), credentials.key_id());
            let encryption = material.encryption();
            bridge.register(device_id, key_id, material)?;
            let floor = floors.get(&device_id).copied().unwrap_or(0);
            registry
                .register_device(credentials, encryption, floor)
                .map_err(|DuplicateDevice(id)| InteropError::DuplicateDevice(id))?;
        }
        Ok(Self {
            intake: Intake::new(config, registry),
            bridge: Arc::new(bridge),
        })
    }

    /// Adds a device to both the intake and the bridge (or to neither, on error), whose frames must have
    /// sequence numbers of at least `floor`. The intake takes from it the frame kinds of its mode
    /// ([`DeviceKeyMaterial::encryption`]): public-key frames only from a public-key device, seeded ones
    /// only from a secret-key device.
    pub fn register(&mut self, record: DeviceRecord, floor: u64) -> Result<(), InteropError> {
        if record.is_integer() {
            return Err(InteropError::ParameterMismatch);
        }
        let (credentials, material) = record.into_parts();
        let (device_id, key_id) = (credentials.device_id(), credentials.key_id());
        let encryption = material.encryption();
        self.bridge.register(device_id, key_id, material)?;
        self.intake
            .register_device(credentials, encryption, floor)
            .map_err(|DuplicateDevice(id)| {
                self.bridge.unregister(id);
                InteropError::DuplicateDevice(id)
            })
    }

    /// [`Intake::receive`]: authentication (by the store's MAC key and key id), replay window, reassembly.
    pub fn receive(&mut self, bytes: &[u8], now: Instant) -> Result<Received, IntakeError> {
        self.intake.receive(bytes, now)
    }

    /// [`Intake::evict_expired`].
    pub fn evict_expired(&mut self, now: Instant) -> Vec<IntakeError> {
        self.intake.evict_expired(now)
    }

    /// The intake (sequence-number high-water marks, open messages, configuration).
    pub fn intake(&self) -> &Intake {
        &self.intake
    }

    /// The bridge, to share with the threads that key-switch and compute.
    pub fn bridge(&self) -> &Arc<BooleanBridge> {
        &self.bridge
    }
}

/// The authenticated intake and the [`IntegerBridge`], fed from one [`KeyStore`] of the integer key set: a
/// device is known to both or to neither. Frames go in through [`IntegerKeyedIntake::receive`] (the
/// intake's `receive_integer`: MAC, key id, replay window); [`IntegerKeyedIntake::readings`] turns an
/// authenticated frame into `FheUint` values in the sending device's key mode, fleet or per-device, as the
/// store records it. The bridge is shared through an `Arc` with the threads that compute.
#[derive(Debug)]
pub struct IntegerKeyedIntake {
    intake: Intake,
    bridge: Arc<IntegerBridge>,
}

impl IntegerKeyedIntake {
    /// The intake and bridge for the devices of `store`, none of which has sent a frame yet. `bridge` must
    /// be made from the integer server key the store was made for ([`IntegerError::ServerKeyMismatch`]),
    /// with no device registered. Devices of other sets are registered too (their MACs are checked), and
    /// their frames get [`IntegerError::NotAnIntegerDevice`] from [`IntegerKeyedIntake::readings`].
    pub fn new(config: IntakeConfig, store: KeyStore, bridge: IntegerBridge) -> Result<Self, IntegerError> {
        Self::with_floors(config, store, bridge, &HashMap::new())
    }

    /// As [`IntegerKeyedIntake::new`], with the persisted sequence-number floor of each device (absent: 0).
    pub fn with_floors(
        config: IntakeConfig,
        store: KeyStore,
        bridge: IntegerBridge,
        floors: &HashMap<u64, u64>,
    ) -> Result<Self, IntegerError> {
        if store.server_key_fingerprint() != bridge.server_key_fingerprint() {
            return Err(IntegerError::ServerKeyMismatch);
        }
        let mut this = Self {
            intake: Intake::new(config, DeviceRegistry::new()),
            bridge: Arc::new(bridge),
        };
        for record in store.into_records() {
            let floor = floors.get(&record.device_id()).copied().unwrap_or(0);
            this.register(record, floor)?;
        }
        Ok(this)
    }

    /// Adds a device to both the intake and the bridge (or to neither, on error), whose frames must have
    /// sequence numbers of at least `floor`.
    pub fn register(&mut self, record: DeviceRecord, floor: u64) -> Result<(), IntegerError> {
        let parameter_set = record.parameter_set();
        let (credentials, material) = record.into_parts();
        let (device_id, key_id) = (credentials.device_id(), credentials.key_id());
        let encryption = material.encryption();
        self.bridge.register(device_id, key_id, parameter_set, material)?;
        self.intake
            .register_device(credentials, encryption, floor)
            .map_err(|DuplicateDevice(id)| {
                self.bridge.unregister(id);
                IntegerError::DuplicateDevice(id)
            })
    }

    /// [`Intake::receive_integer`]: authentication (by the store's MAC key and key id), replay window.
    pub fn receive(&mut self, bytes: &[u8]) -> Result<IntegerFrame, IntakeError> {
        self.intake.receive_integer(bytes)
    }

    /// [`IntegerBridge::readings`]: readings `first..first + count` of `frame` as `FheUint<Id>`, in the
    /// sending device's key mode.
    pub fn readings<Id: FheUintId + Send>(
        &self,
        frame: &IntegerFrame,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, IntegerError> {
        self.bridge.readings(frame, first, count)
    }

    /// [`IntegerBridge::frame_readings`]: every whole reading of `Id`'s width in `frame`.
    pub fn frame_readings<Id: FheUintId + Send>(&self, frame: &IntegerFrame) -> Result<Vec<FheUint<Id>>, IntegerError> {
        self.bridge.frame_readings(frame)
    }

    /// The intake (sequence-number high-water marks, configuration).
    pub fn intake(&self) -> &Intake {
        &self.intake
    }

    /// The bridge, to share with the threads that compute.
    pub fn bridge(&self) -> &Arc<IntegerBridge> {
        &self.bridge
    }
}
