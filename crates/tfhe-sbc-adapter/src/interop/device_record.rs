//! What the cloud holds for one device: its key material by mode ([`DeviceKeyMaterial`]) and its record
//! ([`DeviceRecord`]: credentials, parameter set, key material), with the rule of which parameter set takes
//! which key mode. The key store (`key_set::key_store`) keeps one record per device; the converters take the
//! material; provisioning makes the records.

use super::boolean_set::BooleanSet;
use super::glwe_ksk::{BigKeyDeviceKsk, IntegerDeviceKsk};
use super::ksk::DeviceKsk;
use crate::error::KeySetError;
use crate::registry::DeviceEncryption;
use tfhe_sbc_core::parameters::{IntegerParameters, ParameterSetId, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::files::credentials::KeyMode;
use tfhe_sbc_device::frame::mac::DeviceCredentials;

/// A device's key material in the cloud, by mode.
#[derive(Clone, Debug)]
pub enum DeviceKeyMaterial {
    /// Fleet mode ([`KeyMode::FleetSecretKey`]): nothing of its own; its bits are switched with the server
    /// key's key-switching key.
    Fleet,
    /// Per-device mode ([`KeyMode::PerDeviceSecretKey`]): the seeded key-switching key from the device's key
    /// to the small key.
    PerDevice(DeviceKsk),
    /// Public-key mode ([`KeyMode::PublicKey`]): nothing of its own. Its ciphertexts are under the
    /// computation key (the `ClientKey`'s GLWE key, which the public key encrypts zero under), so they are
    /// converted as a fleet device's (on `TFHE_LIB_PARAMETERS` its bits are switched with the server key's
    /// key-switching key; on the big-key and integer sets they are only extracted). The intake takes only
    /// public-key frames from it.
    PublicKey,
    /// Per-device mode ([`KeyMode::PerDeviceSecretKey`]) on the integer set (id 4): the seeded GLWE
    /// key-switching key from the device's key to the client key's GLWE key; each frame is switched once at
    /// intake, then its blocks are extracted as a fleet device's. An integer fleet device is
    /// [`DeviceKeyMaterial::Fleet`] with parameter set 4.
    IntegerPerDevice(IntegerDeviceKsk),
    /// Per-device mode ([`KeyMode::PerDeviceSecretKey`]) on a big-key boolean set (ids 2 and 3): the seeded
    /// GLWE key-switching key from the device's key to the client key's GLWE key; each frame is switched
    /// once, then its bits are extracted as a fleet device's (`super::big_key_per_device`).
    BigKeyPerDevice(BigKeyDeviceKsk),
}

impl DeviceKeyMaterial {
    /// The mode.
    pub fn mode(&self) -> KeyMode {
        match self {
            Self::Fleet => KeyMode::FleetSecretKey,
            Self::PerDevice(_) | Self::IntegerPerDevice(_) | Self::BigKeyPerDevice(_) => KeyMode::PerDeviceSecretKey,
            Self::PublicKey => KeyMode::PublicKey,
        }
    }

    /// How the device encrypts, which decides the frame kinds the intake takes from it: public-key frames
    /// only from a public-key device, never from a secret-key one.
    pub fn encryption(&self) -> DeviceEncryption {
        match self {
            Self::Fleet | Self::PerDevice(_) | Self::IntegerPerDevice(_) | Self::BigKeyPerDevice(_) => {
                DeviceEncryption::SecretKey
            }
            Self::PublicKey => DeviceEncryption::PublicKey,
        }
    }

    /// Bytes of key material stored for the device: a per-device key's body words and seed, else 0.
    pub fn stored_bytes(&self) -> usize {
        match self {
            Self::PerDevice(ksk) => ksk.stored_bytes(),
            Self::IntegerPerDevice(ksk) => ksk.stored_bytes(),
            Self::BigKeyPerDevice(ksk) => 4 * ksk.bodies().len() + 16,
            Self::Fleet | Self::PublicKey => 0,
        }
    }
}

/// The family of a named parameter set the key store knows: a boolean set, or the integer set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SetFamily {
    /// A boolean set.
    Boolean(BooleanSet),
    /// The integer set.
    Integer,
}

/// The family of the named parameter set `id`, if the store knows it.
pub(crate) fn set_family(id: ParameterSetId) -> Option<SetFamily> {
    if let Some(set) = BooleanSet::from_id(id) {
        Some(SetFamily::Boolean(set))
    } else {
        IntegerParameters::from_id(id).map(|_| SetFamily::Integer)
    }
}

/// Whether parameter set `id` allows `key`: fleet and public key on every known set, per-device with a
/// [`DeviceKsk`] on set 1, with a [`BigKeyDeviceKsk`] of the set's shape on the big-key sets 2 and 3, and
/// with an [`IntegerDeviceKsk`] on the integer set.
pub(crate) fn check_material(device_id: u64, id: ParameterSetId, key: &DeviceKeyMaterial) -> Result<(), KeySetError> {
    let family = set_family(id).ok_or(KeySetError::UnknownParameterSet {
        device_id,
        parameter_set: id.0,
    })?;
    let allowed = match (family, key) {
        (SetFamily::Boolean(_) | SetFamily::Integer, DeviceKeyMaterial::Fleet) => true,
        (SetFamily::Boolean(_) | SetFamily::Integer, DeviceKeyMaterial::PublicKey) => true,
        (SetFamily::Boolean(set), DeviceKeyMaterial::PerDevice(_)) => match set {
            BooleanSet::TfheLib => true,
            BooleanSet::DefaultKsPbs | BooleanSet::ErrorProb2m165KsPbs => false,
        },
        (SetFamily::Integer, DeviceKeyMaterial::IntegerPerDevice(_)) => true,
        (SetFamily::Boolean(set), DeviceKeyMaterial::BigKeyPerDevice(ksk)) => {
            set.is_big_key()
                && (ksk.input_glwe_dimension(), ksk.polynomial_size()) == (set.glwe_dimension(), set.polynomial_size())
        }
        // A boolean device's key-switching key on the integer set, or the integer one on a boolean set.
        (SetFamily::Integer, DeviceKeyMaterial::PerDevice(_) | DeviceKeyMaterial::BigKeyPerDevice(_))
        | (SetFamily::Boolean(_), DeviceKeyMaterial::IntegerPerDevice(_)) => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(KeySetError::ModeNotAllowed {
            device_id,
            mode: key.mode(),
            parameter_set: id.0,
        })
    }
}

/// What the cloud holds for one device.
#[derive(Debug)]
pub struct DeviceRecord {
    credentials: DeviceCredentials,
    parameter_set: ParameterSetId,
    key: DeviceKeyMaterial,
}

impl DeviceRecord {
    /// A record of `credentials` (device id, key id, MAC key) and key material, for parameter set 1
    /// (`TFHE_LIB_GLWE_1024`), set 4 for [`DeviceKeyMaterial::IntegerPerDevice`], or the big-key set of a
    /// [`DeviceKeyMaterial::BigKeyPerDevice`]'s shape. A device of another set:
    /// [`DeviceRecord::with_parameter_set`].
    pub fn new(credentials: DeviceCredentials, key: DeviceKeyMaterial) -> Self {
        let parameter_set = match &key {
            DeviceKeyMaterial::IntegerPerDevice(_) => ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048,
            DeviceKeyMaterial::BigKeyPerDevice(ksk) if ksk.polynomial_size() == 512 => {
                ParameterSetId::DEFAULT_KS_PBS_GLWE_512_K3
            }
            DeviceKeyMaterial::BigKeyPerDevice(_) => ParameterSetId::ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2,
            DeviceKeyMaterial::Fleet | DeviceKeyMaterial::PerDevice(_) | DeviceKeyMaterial::PublicKey => {
                TFHE_LIB_GLWE_1024.id()
            }
        };
        Self {
            credentials,
            parameter_set,
            key,
        }
    }

    /// A record of a device of `parameter_set`, checked: the set must be a named set the store knows, and
    /// allow the mode of `key` ([`KeySetError::UnknownParameterSet`], [`KeySetError::ModeNotAllowed`]).
    pub fn with_parameter_set(
        credentials: DeviceCredentials,
        parameter_set: ParameterSetId,
        key: DeviceKeyMaterial,
    ) -> Result<Self, KeySetError> {
        check_material(credentials.device_id(), parameter_set, &key)?;
        Ok(Self {
            credentials,
            parameter_set,
            key,
        })
    }

    /// The device's parameter set.
    pub fn parameter_set(&self) -> ParameterSetId {
        self.parameter_set
    }

    /// Whether the device is of the integer set (its frames go through
    /// `IntegerKeyedIntake`).
    pub fn is_integer(&self) -> bool {
        set_family(self.parameter_set) == Some(SetFamily::Integer)
    }

    /// The device id.
    pub fn device_id(&self) -> u64 {
        self.credentials.device_id()
    }

    /// The key id its frames carry.
    pub fn key_id(&self) -> u32 {
        self.credentials.key_id()
    }

    /// The credentials.
    pub fn credentials(&self) -> &DeviceCredentials {
        &self.credentials
    }

    /// The key material.
    pub fn key(&self) -> &DeviceKeyMaterial {
        &self.key
    }

    /// The mode.
    pub fn mode(&self) -> KeyMode {
        self.key.mode()
    }

    /// The two halves: for the intake and for the bridge.
    pub fn into_parts(self) -> (DeviceCredentials, DeviceKeyMaterial) {
        (self.credentials, self.key)
    }
}
