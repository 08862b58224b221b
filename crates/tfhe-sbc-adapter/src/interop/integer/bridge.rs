//! The integer converter: one call from an authenticated
//! [`IntegerFrame`] to `FheUint8/16/32/64` values, the key mode picked from what the key store says of the
//! sending device.
//!
//! * fleet (the device holds the client key's GLWE key): extraction and wrapping, no key switch
//!   ([`IntegerExtractor`]);
//! * per-device (the device holds its own GLWE key): one GLWE key switch of the whole frame with the
//!   device's seeded [`IntegerDeviceKsk`](super::IntegerDeviceKsk) into the client key's GLWE key, then
//!   extraction as for a fleet device. The decompressed keys (64 KiB each) are kept in the converters'
//!   bounded cache.
//!
//! A device registered for a boolean set has no integer key: its frames get
//! [`InteropError::DeviceOfAnotherSet`], an unknown device [`InteropError::UnknownDevice`].
//!
//! As a [`Converter`], the bridge turns a frame into every whole reading it carries, as the `FheUint` of
//! the width its header's reading format states ([`ReadingBits::of_format`]: `u16` and `i16` readings
//! become `FheUint16`s, ...); a frame whose format says nothing (bytes) is read at the bridge's configured
//! [`ReadingBits`] (the server's `--integer-bits`).

use super::compact_list::{compact_list_readings, expand_compact_list};
use super::extractor::IntegerExtractor;
use super::keys::{IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128};
use super::per_device::check_server_key;
use super::readings::{FheUintReadings, ReadingBits};
use crate::intake::{CompactListFrame, IntegerFrame, IntegerInput};
use crate::interop::converter::{Converter, Devices, IntegerFrames};
use crate::interop::device_keys::{CacheStats, DeviceKeys, IntegerGlweSwitch};
use crate::interop::error::InteropError;
use crate::interop::fingerprint::integer_server_key_fingerprint;
use crate::interop::glwe_ksk::keyswitch_frame;
use std::num::NonZeroUsize;
use tfhe::{FheUint, FheUintId};
use tfhe_sbc_device::files::credentials::KeyMode;

/// How many decompressed per-device integer keys (64 KiB each) an [`IntegerBridge`] keeps by default.
pub const DEFAULT_INTEGER_CACHE_CAPACITY: usize = 256;

/// The integer conversion for every integer device of a key store: `Send + Sync`, shared by the threads that
/// compute. Holds the high-level server key (tfhe-rs shares its keys behind `Arc`s, so cloning it is cheap).
pub struct IntegerBridge {
    server_key: tfhe::ServerKey,
    fingerprint: [u8; 32],
    set: IntegerParameters,
    extractor: IntegerExtractor,
    reading_bits: ReadingBits,
    devices: DeviceKeys<IntegerGlweSwitch>,
}

impl core::fmt::Debug for IntegerBridge {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("IntegerBridge")
            .field("set", &self.set.glwe().id().0)
            .field("reading_bits", &self.reading_bits)
            .field("devices", &self.devices)
            .finish_non_exhaustive()
    }
}

impl IntegerBridge {
    /// The bridge for `server_key` (a standard classic-PBS key of [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`] in
    /// `KeyswitchBootstrap` order), no device registered, [`DEFAULT_INTEGER_CACHE_CAPACITY`] cached keys.
    pub fn new(server_key: tfhe::ServerKey) -> Result<Self, InteropError> {
        Self::with_cache_capacity(server_key, DEFAULT_INTEGER_CACHE_CAPACITY)
    }

    /// As [`IntegerBridge::new`], keeping at most `capacity` (at least 1) decompressed per-device keys.
    pub fn with_cache_capacity(server_key: tfhe::ServerKey, capacity: usize) -> Result<Self, InteropError> {
        check_server_key(&server_key)?;
        let fingerprint = integer_server_key_fingerprint(&server_key)?;
        Ok(Self {
            server_key,
            fingerprint,
            set: MESSAGE_2_CARRY_2_TUNIFORM_2M128,
            extractor: IntegerExtractor::new(),
            reading_bits: ReadingBits::default(),
            devices: DeviceKeys::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)),
        })
    }

    /// The same converter, making `bits`-wide `FheUint`s of the readings of a frame whose reading format
    /// states no width (bytes) in [`Converter::convert`].
    #[must_use]
    pub fn with_reading_bits(mut self, bits: ReadingBits) -> Self {
        self.reading_bits = bits;
        self
    }

    /// The width [`Converter::convert`] reads a frame at when its reading format states none.
    pub fn reading_bits(&self) -> ReadingBits {
        self.reading_bits
    }

    /// The per-device key cache's counters.
    pub fn cache_stats(&self) -> CacheStats {
        self.devices.stats()
    }

    /// The server key (for `tfhe::set_server_key` on the computing threads).
    pub fn server_key(&self) -> &tfhe::ServerKey {
        &self.server_key
    }

    /// [`integer_server_key_fingerprint`] of the server key.
    pub fn server_key_fingerprint(&self) -> [u8; 32] {
        self.fingerprint
    }

    /// The key mode of a registered integer device (`None`: unknown, or registered for another set).
    pub fn mode(&self, device_id: u64) -> Option<KeyMode> {
        self.devices.mode(device_id)
    }

    /// Readings `first..first + count` of an authenticated integer frame as `FheUint<Id>`, in the sending
    /// device's key mode (the frame's header names the device): extraction in fleet mode, one GLWE key
    /// switch of the frame and then extraction in per-device mode, on rayon's pool. Typed errors for an unknown device, a
    /// device of another set, a key id that is not the device's, and readings out of range.
    pub fn readings<Id: FheUintId + Send>(
        &self,
        frame: &IntegerFrame,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, InteropError> {
        let header = &frame.header;
        let device_id = header.device_id;
        let expected = self.set.glwe().id().0;
        let ksk = self.devices.key_for(device_id, header.key_id, self.set.glwe().id())?;
        if header.parameter_set != expected || frame.parameters != self.set {
            return Err(InteropError::WrongParameterSet {
                device_id,
                expected,
                found: header.parameter_set,
            });
        }
        match ksk {
            None => self
                .extractor
                .extract_readings_par::<Id, _>(&frame.ciphertext, first, count),
            Some(ksk) => {
                // Range and shape first: a bad request decompresses nothing.
                self.extractor
                    .reading_range(&frame.ciphertext, FheUint::<Id>::num_bits() as u32, first, count)?;
                let key = self.devices.decompressed(device_id, header.key_id, &ksk);
                let switched = keyswitch_frame(&key, &frame.ciphertext)?;
                self.extractor.extract_readings_par::<Id, _>(&switched, first, count)
            }
        }
    }

    /// Every whole reading of `Id`'s width the frame carries ([`IntegerFrame::readings`]), as
    /// [`IntegerBridge::readings`].
    pub fn frame_readings<Id: FheUintId + Send>(&self, frame: &IntegerFrame) -> Result<Vec<FheUint<Id>>, InteropError> {
        let count = frame.readings(FheUint::<Id>::num_bits() as u32);
        self.readings(frame, 0, count)
    }
}

impl IntegerBridge {
    /// Every whole reading of an integer input as `FheUint<Id>`: [`IntegerBridge::frame_readings`] of a
    /// GLWE frame, or the readings of a compact list ([`compact_list_readings`], which must be of `Id`'s
    /// width), after the sending device's registration is checked.
    pub fn input_readings<Id: FheUintId + Send>(&self, input: &IntegerInput) -> Result<Vec<FheUint<Id>>, InteropError> {
        match input {
            IntegerInput::Frame(frame) => self.frame_readings(frame),
            IntegerInput::CompactList(list) => {
                self.check_compact_list_device(list)?;
                compact_list_readings(&self.server_key, list)
            }
        }
    }

    fn check_compact_list_device(&self, list: &CompactListFrame) -> Result<(), InteropError> {
        let header = &list.header;
        self.devices
            .key_for(header.device_id, header.key_id, self.set.glwe().id())
            .map(drop)
    }
}

impl Converter for IntegerBridge {
    type Unit = IntegerFrames;
    type Output = FheUintReadings;

    fn server_key_fingerprint(&self) -> Option<[u8; 32]> {
        Some(self.fingerprint)
    }

    /// On the integer set the material must be [`DeviceKeyMaterial::Fleet`](crate::interop::DeviceKeyMaterial::Fleet)
    /// or [`DeviceKeyMaterial::IntegerPerDevice`](crate::interop::DeviceKeyMaterial::IntegerPerDevice)
    /// ([`InteropError::KeyMaterialMismatch`] otherwise); a device of another set is recorded so that its
    /// frames get [`InteropError::DeviceOfAnotherSet`].
    fn devices(&self) -> Devices<'_> {
        Devices::new(&self.devices, self.set.glwe().id())
    }

    /// Every whole reading in a GLWE frame, at the width its reading format states or else the converter's
    /// [`ReadingBits`] ([`IntegerBridge::frame_readings`]); every reading of a compact list, of the width its frame names
    /// ([`expand_compact_list`], after the device's registration is checked).
    fn convert(&self, input: &IntegerInput) -> Result<FheUintReadings, InteropError> {
        let frame = match input {
            IntegerInput::Frame(frame) => frame,
            IntegerInput::CompactList(list) => {
                self.check_compact_list_device(list)?;
                return expand_compact_list(&self.server_key, list);
            }
        };
        let format = frame.header.format_of_readings().unwrap_or_default();
        Ok(match ReadingBits::of_format(format, self.reading_bits) {
            ReadingBits::U8 => FheUintReadings::U8(self.frame_readings(frame)?),
            ReadingBits::U16 => FheUintReadings::U16(self.frame_readings(frame)?),
            ReadingBits::U32 => FheUintReadings::U32(self.frame_readings(frame)?),
            ReadingBits::U64 => FheUintReadings::U64(self.frame_readings(frame)?),
        })
    }
}
