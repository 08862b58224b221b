//! [`Converter`]: what every conversion from authenticated device frames into tfhe-rs values has in common,
//! so that one [`KeyedIntake`](crate::keyed_intake::KeyedIntake) serves every parameter set.
//!
//! | converter | sets | input | per device | output |
//! |---|---|---|---|---|
//! | [`BooleanBridge`](super::BooleanBridge) | `TFHE_LIB_PARAMETERS` (small key) | [`Message`] | key switch (server key's or its own) | gate inputs |
//! | [`BigKeyBridge`](super::BigKeyBridge) | the 128-bit boolean sets (big key) | [`Message`] | extraction only | gate inputs |
//! | [`IntegerBridge`](super::integer::IntegerBridge) | the integer set | [`IntegerFrame`] | extraction (fleet) or key switch and identity PBS (per-device) | `FheUint` readings |

use super::InteropError;
use crate::IntakeError;
use crate::intake::Intake;
#[cfg(doc)]
use crate::intake::{IntegerFrame, Message, Received};
use crate::key_set::key_store::DeviceKeyMaterial;
use std::time::Instant;
use tfhe_sbc_core::parameters::ParameterSetId;

/// Authenticated device frames in, tfhe-rs values out, with the key of the sending device. `Send + Sync`:
/// one converter is shared (through an `Arc`) by the threads that compute.
pub trait Converter: Send + Sync {
    /// What the intake answers for each accepted frame ([`Received`] for the boolean sets, the
    /// [`IntegerFrame`] itself for the integer set).
    type Received;
    /// What is converted: a reassembled [`Message`], or one [`IntegerFrame`].
    type Input: Send;
    /// The tfhe-rs values one input becomes.
    type Output;

    /// One frame through `intake` as the converter's sets need it (authentication, replay window, and
    /// reassembly for the boolean sets).
    fn receive(intake: &mut Intake, bytes: &[u8], now: Instant) -> Result<Self::Received, IntakeError>;

    /// The input that a received frame completes, if it completes one.
    fn completed(received: Self::Received) -> Option<Self::Input>;

    /// The fingerprint of the server key whose computations the outputs feed (a key store of per-device
    /// keys is bound to it); `None` if the converter was made without a server key.
    fn server_key_fingerprint(&self) -> Option<[u8; 32]>;

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
    ) -> Result<(), InteropError>;

    /// Forgets a device (revocation) and its cached key; whether it was registered.
    fn unregister(&self, device_id: u64) -> bool;

    /// One input as tfhe-rs values, with the key of the device it came from.
    fn convert(&self, input: &Self::Input) -> Result<Self::Output, InteropError>;
}
