//! [`InteropError`]: why a key, a device registration or a conversion into tfhe-rs values was refused. One
//! enum for every converter (small-key boolean, big-key boolean, integer) and every trusted-party helper, so
//! that a caller matches on one type whatever the parameter set.

use super::boolean_parameter_set::BooleanSet;

/// Why a key, a device registration or a conversion into tfhe-rs values was refused. Every check of
/// untrusted input ends here, never in a panic.
#[derive(Clone, Debug, PartialEq)]
pub enum InteropError {
    /// A tfhe-rs key's parameters are not the shape of the parameter set it is used with (`k`, `N`, the
    /// key switch's decomposition, the moduli, the encryption key choice).
    ParameterMismatch,
    /// The boolean server key does not key-switch before bootstrapping (its order is not
    /// `BootstrapKeyswitch`), so it cannot take the small-key converter's outputs.
    UnexpectedPbsOrder,
    /// The integer key uses another atomic pattern than the standard classic-PBS one (`KeySwitch32`, a
    /// multi-bit bootstrapping key, or a dynamic pattern).
    UnsupportedAtomicPattern,
    /// A device key (or a client key's GLWE key) that is not a binary key of the set's `k * N`
    /// coefficients.
    BadDeviceKey,
    /// A per-device key-switching key whose body count does not match the set's key switch.
    BadKeySwitchingKey {
        /// The body words the set requires.
        expected: usize,
        /// The body words given.
        found: usize,
    },
    /// The device is not registered with the converter.
    UnknownDevice(u64),
    /// The device is registered with the converter already.
    DuplicateDevice(u64),
    /// The frames name another key id than the device's.
    WrongKeyId {
        /// The device.
        device_id: u64,
        /// Its registered key id.
        expected: u32,
        /// The key id given.
        found: u32,
    },
    /// Frames given for one device and key id whose headers name another device or key id.
    FrameOfAnotherDevice {
        /// The device the frames were given for.
        device_id: u64,
        /// The device a frame's header names.
        found_device_id: u64,
        /// The key id it names.
        found_key_id: u32,
    },
    /// The device is registered for another parameter set than the converter's: it has no key this
    /// converter can use (e.g. a boolean device's frames given to the integer converter).
    DeviceOfAnotherSet {
        /// The device.
        device_id: u64,
        /// The parameter set it is registered for.
        device_set: u16,
        /// The parameter set the converter converts.
        converter_set: u16,
    },
    /// A frame of another parameter set than the converter's.
    WrongParameterSet {
        /// The device the frame names.
        device_id: u64,
        /// The converter's set.
        expected: u16,
        /// The frame's set.
        found: u16,
    },
    /// Key material that the device's parameter set does not take (a key-switching key of the other family,
    /// a per-device key on a big-key set, or the public-key mode on the integer set).
    KeyMaterialMismatch {
        /// The device.
        device_id: u64,
    },
    /// The key store was made for another server key (its fingerprint differs): its per-device keys would
    /// switch into a small key this server key cannot bootstrap.
    ServerKeyMismatch,
    /// The converter was made without a server key (e.g. [`BigKeyBridge::new`](super::BigKeyBridge::new)),
    /// so a key store cannot be checked against it.
    NoServerKey,
    /// The server key's key-switching or bootstrapping key does not have the set's size.
    ServerKeyShape {
        /// The set whose shape was expected.
        set: BooleanSet,
        /// The key-switching key's `u32` words: expected, found.
        key_switching_words: (usize, usize),
        /// The bootstrapping key's `c64` elements: expected, found.
        bootstrapping_elements: (usize, usize),
    },
    /// The client key's parameters are not the set's tfhe-rs parameters.
    ClientKeyMismatch,
    /// The set's gates take small-key ciphertexts: extracted ciphertexts need a key switch (the small-key
    /// converter, [`BooleanBridge`](super::BooleanBridge)).
    NotABigKeySet(BooleanSet),
    /// A GLWE ciphertext does not have the set's shape.
    WrongGlweShape {
        /// `(k, N)` of the set.
        expected: (usize, usize),
        /// `(k, N)` of the ciphertext.
        found: (usize, usize),
    },
    /// An LWE ciphertext does not have the set's size (`k * N + 1` words).
    WrongLweSize {
        /// The size the set requires.
        expected: usize,
        /// The size given.
        found: usize,
    },
    /// A coefficient index is not below `N`.
    IndexOutOfRange {
        /// The index asked for.
        index: usize,
        /// `N`.
        polynomial_size: usize,
    },
    /// The readings asked for run past the ciphertext's coefficients.
    ReadingsOutOfRange {
        /// The first reading asked for.
        first: usize,
        /// The number of readings asked for.
        count: usize,
        /// The readings one ciphertext holds at this width.
        capacity: usize,
    },
    /// A reading width or value that the radix encoding refuses.
    Encoding(tfhe_sbc_core::Error),
    /// The converter's thread pool could not be built.
    ThreadPool,
    /// tfhe-rs refused or could not expand a compact-list frame's list.
    CompactListRefused {
        /// The sending device.
        device_id: u64,
        /// tfhe-rs's reason, or ours.
        reason: String,
    },
}

impl core::fmt::Display for InteropError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::ParameterMismatch => {
                f.write_str("tfhe-rs key parameters do not have the device parameter set's shape")
            }
            Self::UnexpectedPbsOrder => f.write_str("server key does not use the BootstrapKeyswitch order"),
            Self::UnsupportedAtomicPattern => {
                f.write_str("tfhe-rs key uses another atomic pattern than the standard classic PBS")
            }
            Self::BadDeviceKey => {
                f.write_str("device key is not a binary key of the parameter set's k * N coefficients")
            }
            Self::BadKeySwitchingKey { expected, found } => write!(
                f,
                "per-device key-switching key has {found} body words, the set's key switch needs {expected}"
            ),
            Self::UnknownDevice(id) => write!(f, "device {id} is not registered with the converter"),
            Self::DuplicateDevice(id) => write!(f, "device {id} is already registered"),
            Self::WrongKeyId {
                device_id,
                expected,
                found,
            } => write!(f, "device {device_id} has key id {expected}, not {found}"),
            Self::FrameOfAnotherDevice {
                device_id,
                found_device_id,
                found_key_id,
            } => write!(
                f,
                "frames given for device {device_id} include one of device {found_device_id}, key id {found_key_id}"
            ),
            Self::DeviceOfAnotherSet {
                device_id,
                device_set,
                converter_set,
            } => write!(
                f,
                "device {device_id} is registered for parameter set {device_set}, this converter takes set \
                 {converter_set}: it has no key here"
            ),
            Self::WrongParameterSet {
                device_id,
                expected,
                found,
            } => write!(
                f,
                "device {device_id}'s frame is of parameter set {found}, the converter takes set {expected}"
            ),
            Self::KeyMaterialMismatch { device_id } => write!(
                f,
                "device {device_id}: its parameter set does not take this key material (mode or key-switching key)"
            ),
            Self::ServerKeyMismatch => f.write_str(
                "the key store was made for another server key (fingerprints differ): its per-device keys would \
                 switch into a small key this server key cannot bootstrap",
            ),
            Self::NoServerKey => {
                f.write_str("the converter was made without a server key, so no key store can be checked against it")
            }
            Self::ServerKeyShape {
                set,
                key_switching_words,
                bootstrapping_elements,
            } => write!(
                f,
                "server key is not a {set} key: key-switching key {} words (expected {}), bootstrapping key {} \
                 elements (expected {})",
                key_switching_words.1, key_switching_words.0, bootstrapping_elements.1, bootstrapping_elements.0
            ),
            Self::ClientKeyMismatch => f.write_str("client key parameters are not the set's tfhe-rs parameters"),
            Self::NotABigKeySet(set) => write!(
                f,
                "{set} gates take small-key ciphertexts: extracted ciphertexts need a key switch first"
            ),
            Self::WrongGlweShape { expected, found } => write!(
                f,
                "GLWE ciphertext has (k, N) = {found:?}, the parameter set needs {expected:?}"
            ),
            Self::WrongLweSize { expected, found } => {
                write!(
                    f,
                    "LWE ciphertext has {found} words, the parameter set needs {expected}"
                )
            }
            Self::IndexOutOfRange { index, polynomial_size } => {
                write!(f, "coefficient {index} out of range for N = {polynomial_size}")
            }
            Self::ReadingsOutOfRange { first, count, capacity } => write!(
                f,
                "readings {first}..{first}+{count} run past the {capacity} readings a ciphertext holds"
            ),
            Self::Encoding(e) => write!(f, "radix encoding: {e}"),
            Self::ThreadPool => f.write_str("the converter's thread pool could not be built"),
            Self::CompactListRefused { device_id, reason } => {
                write!(f, "the compact list of device {device_id} was not converted: {reason}")
            }
        }
    }
}

impl std::error::Error for InteropError {}

impl From<tfhe_sbc_core::Error> for InteropError {
    fn from(e: tfhe_sbc_core::Error) -> Self {
        Self::Encoding(e)
    }
}
