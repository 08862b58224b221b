//! A frame's readings as `FheUint`s of one width ([`FheUintReadings`], [`ReadingBits`]): what the integer
//! bridge ([`super::IntegerBridge`]) and the compact-list expansion ([`super::compact_list`]) both return.

use tfhe::{FheUint8, FheUint16, FheUint32, FheUint64};
use tfhe_sbc_device::frame::ReadingFormat;

/// Which `FheUint` the integer converter makes of a frame's readings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReadingBits {
    /// `FheUint8`: 4 blocks per reading, 512 readings per frame.
    U8,
    /// `FheUint16`: 8 blocks per reading, 256 readings per frame.
    #[default]
    U16,
    /// `FheUint32`: 16 blocks per reading, 128 readings per frame.
    U32,
    /// `FheUint64`: 32 blocks per reading, 64 readings per frame.
    U64,
}

impl ReadingBits {
    /// The width for `bits` (8, 16, 32 or 64).
    pub fn from_bits(bits: u32) -> Option<Self> {
        match bits {
            8 => Some(Self::U8),
            16 => Some(Self::U16),
            32 => Some(Self::U32),
            64 => Some(Self::U64),
            _ => None,
        }
    }

    /// The width of a frame's readings: the one its reading format states (8 bits for `u8` and `i8`, 16
    /// for `u16` and `i16`, 32 for `u32`, `i32` and `f32`: the bits of each reading are encrypted as they
    /// are, and the trusted party reads them back in the same format), or `configured` (the server's
    /// `--integer-bits`) for bytes with no stated meaning.
    pub fn of_format(format: ReadingFormat, configured: Self) -> Self {
        match format {
            ReadingFormat::Bytes => configured,
            ReadingFormat::U8 | ReadingFormat::I8 => Self::U8,
            ReadingFormat::U16 | ReadingFormat::I16 => Self::U16,
            ReadingFormat::U32 | ReadingFormat::I32 | ReadingFormat::F32 => Self::U32,
        }
    }

    /// The width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Self::U8 => 8,
            Self::U16 => 16,
            Self::U32 => 32,
            Self::U64 => 64,
        }
    }
}

/// A frame's readings as the `FheUint` of the converter's [`ReadingBits`].
pub enum FheUintReadings {
    /// `FheUint8` readings.
    U8(Vec<FheUint8>),
    /// `FheUint16` readings.
    U16(Vec<FheUint16>),
    /// `FheUint32` readings.
    U32(Vec<FheUint32>),
    /// `FheUint64` readings.
    U64(Vec<FheUint64>),
}

impl core::fmt::Debug for FheUintReadings {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FheUintReadings")
            .field("bits", &self.bits().bits())
            .field("readings", &self.len())
            .finish()
    }
}

impl FheUintReadings {
    /// The width.
    pub fn bits(&self) -> ReadingBits {
        match self {
            Self::U8(_) => ReadingBits::U8,
            Self::U16(_) => ReadingBits::U16,
            Self::U32(_) => ReadingBits::U32,
            Self::U64(_) => ReadingBits::U64,
        }
    }

    /// The number of readings.
    pub fn len(&self) -> usize {
        match self {
            Self::U8(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::U64(v) => v.len(),
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The trusted party: every reading decrypted with the high-level client key.
    pub fn decrypt(&self, client_key: &tfhe::ClientKey) -> Vec<u64> {
        use tfhe::prelude::FheDecrypt;
        match self {
            Self::U8(v) => v
                .iter()
                .map(|x| u64::from(FheDecrypt::<u8>::decrypt(x, client_key)))
                .collect(),
            Self::U16(v) => v
                .iter()
                .map(|x| u64::from(FheDecrypt::<u16>::decrypt(x, client_key)))
                .collect(),
            Self::U32(v) => v
                .iter()
                .map(|x| u64::from(FheDecrypt::<u32>::decrypt(x, client_key)))
                .collect(),
            Self::U64(v) => v.iter().map(|x| FheDecrypt::<u64>::decrypt(x, client_key)).collect(),
        }
    }

    /// Decrypted readings of this width ([`Self::decrypt`]) as the device's little-endian bytes (its
    /// message bytes, which [`ReadingFormat::display`] shows as the readings the device read).
    pub fn le_bytes(&self, values: &[u64]) -> Vec<u8> {
        let width = (self.bits().bits() / 8) as usize;
        values
            .iter()
            .flat_map(|v| v.to_le_bytes().into_iter().take(width))
            .collect()
    }
}
