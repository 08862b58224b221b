//! The reading format: how a message's bytes read as values (the header's `reading_format` byte,
//! the tfhe-sbc wire format's "Header").
//!
//! A device's readings are a byte string on the wire (the paper's plaintext is bits). The format says how the
//! trusted party reads that string back: one byte per value, or little-endian 16/32-bit integers, or IEEE 754
//! single-precision floats. It travels in every frame's header, so it is authenticated by the frame's tag; all
//! chunks of one message carry the same format, and the message's length is a whole number of readings.
//! Format 0 ([`ReadingFormat::Bytes`]) says nothing: the bytes are shown as bytes (every frame of earlier
//! releases, whose header had a reserved 0 there).

use core::fmt;

/// How a message's bytes read as values ([`crate::frame::FrameHeader::reading_format`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ReadingFormat {
    /// Bytes with no stated meaning (a hex payload, or a device that does not say).
    #[default]
    Bytes = 0,
    /// One unsigned byte per reading.
    U8 = 1,
    /// One two's-complement byte per reading.
    I8 = 2,
    /// Little-endian `u16` readings.
    U16 = 3,
    /// Little-endian `i16` readings.
    I16 = 4,
    /// Little-endian `u32` readings.
    U32 = 5,
    /// Little-endian `i32` readings.
    I32 = 6,
    /// Little-endian IEEE 754 binary32 readings.
    F32 = 7,
}

impl ReadingFormat {
    /// Every format, by wire value.
    pub const ALL: [Self; 8] = [
        Self::Bytes,
        Self::U8,
        Self::I8,
        Self::U16,
        Self::I16,
        Self::U32,
        Self::I32,
        Self::F32,
    ];

    /// The format with this wire value, if any.
    pub const fn from_u8(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::Bytes),
            1 => Some(Self::U8),
            2 => Some(Self::I8),
            3 => Some(Self::U16),
            4 => Some(Self::I16),
            5 => Some(Self::U32),
            6 => Some(Self::I32),
            7 => Some(Self::F32),
            _ => None,
        }
    }

    /// The wire value.
    pub const fn to_u8(self) -> u8 {
        self as u8
    }

    /// The bytes of one reading.
    pub const fn reading_bytes(self) -> usize {
        match self {
            Self::Bytes | Self::U8 | Self::I8 => 1,
            Self::U16 | Self::I16 => 2,
            Self::U32 | Self::I32 | Self::F32 => 4,
        }
    }

    /// The name the client's `--format` and the server's listings use (`bytes`, `u8`, ..., `f32`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bytes => "bytes",
            Self::U8 => "u8",
            Self::I8 => "i8",
            Self::U16 => "u16",
            Self::I16 => "i16",
            Self::U32 => "u32",
            Self::I32 => "i32",
            Self::F32 => "f32",
        }
    }

    /// Whether a message of `message_length` bytes is a whole number of readings.
    pub const fn whole_readings(self, message_length: usize) -> bool {
        message_length.is_multiple_of(self.reading_bytes())
    }

    /// The readings of `bytes` (a trailing partial reading is not returned).
    pub fn readings(self, bytes: &[u8]) -> impl Iterator<Item = Reading> + '_ {
        bytes
            .chunks_exact(self.reading_bytes())
            .map(move |b| Reading::from_le_bytes(self, b))
    }

    /// `bytes` shown as this format's readings, `", "` between them (`48.3, -7.25` for two `f32`).
    pub const fn display(self, bytes: &[u8]) -> ReadingsDisplay<'_> {
        ReadingsDisplay { format: self, bytes }
    }
}

/// A message's bytes shown as readings ([`ReadingFormat::display`]).
#[derive(Clone, Copy, Debug)]
pub struct ReadingsDisplay<'a> {
    format: ReadingFormat,
    bytes: &'a [u8],
}

impl fmt::Display for ReadingsDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, reading) in self.format.readings(self.bytes).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            fmt::Display::fmt(&reading, f)?;
        }
        Ok(())
    }
}

impl fmt::Display for ReadingFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One reading, read from its bytes as its [`ReadingFormat`] says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reading {
    /// A byte of a [`ReadingFormat::Bytes`] message.
    Byte(u8),
    /// A `u8` reading.
    U8(u8),
    /// An `i8` reading.
    I8(i8),
    /// A `u16` reading.
    U16(u16),
    /// An `i16` reading.
    I16(i16),
    /// A `u32` reading.
    U32(u32),
    /// An `i32` reading.
    I32(i32),
    /// An `f32` reading.
    F32(f32),
}

impl Reading {
    /// Reads `bytes` (exactly [`ReadingFormat::reading_bytes`] of them; missing bytes read as 0).
    fn from_le_bytes(format: ReadingFormat, bytes: &[u8]) -> Self {
        let mut word = [0u8; 4];
        let n = bytes.len().min(4);
        word[..n].copy_from_slice(&bytes[..n]);
        let [b0, b1, ..] = word;
        match format {
            ReadingFormat::Bytes => Self::Byte(b0),
            ReadingFormat::U8 => Self::U8(b0),
            ReadingFormat::I8 => Self::I8(i8::from_le_bytes([b0])),
            ReadingFormat::U16 => Self::U16(u16::from_le_bytes([b0, b1])),
            ReadingFormat::I16 => Self::I16(i16::from_le_bytes([b0, b1])),
            ReadingFormat::U32 => Self::U32(u32::from_le_bytes(word)),
            ReadingFormat::I32 => Self::I32(i32::from_le_bytes(word)),
            ReadingFormat::F32 => Self::F32(f32::from_le_bytes(word)),
        }
    }
}

/// The reading as the device read it: `48.3` for an `f32`, `-5` for an `i8`, `0x2a` for a byte.
impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Byte(v) => write!(f, "{v:#04x}"),
            Self::U8(v) => write!(f, "{v}"),
            Self::I8(v) => write!(f, "{v}"),
            Self::U16(v) => write!(f, "{v}"),
            Self::I16(v) => write!(f, "{v}"),
            Self::U32(v) => write!(f, "{v}"),
            Self::I32(v) => write!(f, "{v}"),
            Self::F32(v) => write!(f, "{v}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    /// A fixed-capacity string (the crate has no heap).
    struct ArrayString {
        bytes: [u8; 64],
        len: usize,
    }

    impl Default for ArrayString {
        fn default() -> Self {
            Self { bytes: [0; 64], len: 0 }
        }
    }

    impl ArrayString {
        fn as_str(&self) -> &str {
            core::str::from_utf8(&self.bytes[..self.len]).unwrap()
        }
        fn clear(&mut self) {
            self.len = 0;
        }
    }

    impl Write for ArrayString {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.len + s.len();
            self.bytes
                .get_mut(self.len..end)
                .ok_or(fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }

    #[test]
    fn wire_values_round_trip_and_nothing_else_is_a_format() {
        for (value, format) in ReadingFormat::ALL.iter().enumerate() {
            assert_eq!(usize::from(format.to_u8()), value);
            assert_eq!(ReadingFormat::from_u8(format.to_u8()), Some(*format));
        }
        for value in 8..=u8::MAX {
            assert_eq!(ReadingFormat::from_u8(value), None);
        }
    }

    #[test]
    fn readings_read_little_endian_as_their_format_says() {
        let bytes = 48.3f32.to_le_bytes();
        let mut read = ReadingFormat::F32.readings(&bytes);
        assert_eq!((read.next(), read.next()), (Some(Reading::F32(48.3)), None));
        let mut read = ReadingFormat::I16.readings(&[0xfe, 0xff, 5, 0]);
        assert_eq!(
            (read.next(), read.next(), read.next()),
            (Some(Reading::I16(-2)), Some(Reading::I16(5)), None)
        );
        let mut read = ReadingFormat::U32.readings(&[1, 0, 0, 0, 9]);
        assert_eq!(
            (read.next(), read.next()),
            (Some(Reading::U32(1)), None),
            "a trailing partial reading is not returned"
        );
        assert!(ReadingFormat::U16.whole_readings(4) && !ReadingFormat::U16.whole_readings(5));
        let mut text = ArrayString::default();
        let bytes = [48.3f32.to_le_bytes(), (-7.25f32).to_le_bytes()].concat();
        write!(text, "{}", ReadingFormat::F32.display(&bytes)).unwrap();
        assert_eq!(text.as_str(), "48.3, -7.25");
        text.clear();
        write!(text, "{}", ReadingFormat::Bytes.display(&[0, 0x2a])).unwrap();
        assert_eq!(text.as_str(), "0x00, 0x2a");
        text.clear();
        write!(text, "{}", ReadingFormat::I8.display(&[0xfb])).unwrap();
        assert_eq!(text.as_str(), "-5");
        assert!(ReadingFormat::Bytes.whole_readings(5));
    }
}
