//! The devices the intake (`intake::Intake`) accepts frames from: for each, the credentials it was
//! provisioned with (device id, key id, MAC key) and the lowest sequence number still acceptable.
//!
//! The floor is the server's persisted high-water mark of the device's sequence numbers
//! (`Intake::highest_sequence` + 1): replay windows live in memory, so after a restart the floor is what
//! keeps old frames from being replayed.

use crate::error::IntakeError;
use crate::replay::ReplayWindow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use tfhe_sbc_device::frame::mac::DeviceCredentials;

/// How a device encrypts, which decides the frame kinds the intake takes from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceEncryption {
    /// With a secret key (fleet or per-device): seeded frames only (full-mask frames too, if the intake opts
    /// in). A chosen mask is never accepted from such a device by default, stolen or not.
    SecretKey,
    /// With the public key: public-key frames only (their mask cannot be seeded). Whoever holds the device's
    /// MAC key can send any mask this way.
    PublicKey,
}

/// One registered device.
#[derive(Debug)]
pub(crate) struct Registered {
    pub(crate) credentials: DeviceCredentials,
    pub(crate) encryption: DeviceEncryption,
    pub(crate) window: ReplayWindow,
}

impl Registered {
    /// A device of `credentials` that encrypts as `encryption`, its frames numbered from `floor`.
    pub(crate) fn new(credentials: DeviceCredentials, encryption: DeviceEncryption, floor: u64) -> Self {
        Self::resumed(credentials, encryption, ReplayWindow::new(floor))
    }

    /// A device of `credentials` that encrypts as `encryption`, resuming with replay window `window`.
    pub(crate) fn resumed(credentials: DeviceCredentials, encryption: DeviceEncryption, window: ReplayWindow) -> Self {
        Self {
            credentials,
            encryption,
            window,
        }
    }
}

/// The registered devices, by id.
#[derive(Debug, Default)]
pub struct DeviceRegistry {
    pub(crate) devices: HashMap<u64, Registered>,
}

impl DeviceRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a device that has never sent a frame (floor 0); [`IntakeError::DuplicateDevice`] if its id
    /// is registered already.
    pub fn register(&mut self, credentials: DeviceCredentials) -> Result<(), IntakeError> {
        self.register_with_floor(credentials, 0)
    }

    /// Registers a secret-key device whose frames must have sequence numbers of at least `floor`.
    pub fn register_with_floor(&mut self, credentials: DeviceCredentials, floor: u64) -> Result<(), IntakeError> {
        self.register_device(credentials, DeviceEncryption::SecretKey, floor)
    }

    /// Registers a public-key device that has never sent a frame.
    pub fn register_public_key(&mut self, credentials: DeviceCredentials) -> Result<(), IntakeError> {
        self.register_device(credentials, DeviceEncryption::PublicKey, 0)
    }

    /// Registers a device that encrypts as `encryption`, whose frames must have sequence numbers of at least
    /// `floor`.
    pub fn register_device(
        &mut self,
        credentials: DeviceCredentials,
        encryption: DeviceEncryption,
        floor: u64,
    ) -> Result<(), IntakeError> {
        let id = credentials.device_id();
        insert_new(&mut self.devices, id, Registered::new(credentials, encryption, floor))
    }

    /// Whether `device_id` is registered.
    pub fn contains(&self, device_id: u64) -> bool {
        self.devices.contains_key(&device_id)
    }

    /// The number of registered devices.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Whether no device is registered.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }
}

/// Inserts `value` under `device_id` unless that id is taken ([`IntakeError::DuplicateDevice`]).
pub(crate) fn insert_new<V>(devices: &mut HashMap<u64, V>, device_id: u64, value: V) -> Result<(), IntakeError> {
    match devices.entry(device_id) {
        Entry::Occupied(_) => Err(IntakeError::DuplicateDevice(device_id)),
        Entry::Vacant(slot) => {
            slot.insert(value);
            Ok(())
        }
    }
}
