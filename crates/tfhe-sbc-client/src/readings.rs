//! Readings: lines of text in, little-endian bytes out, grouped into messages.
//!
//! A line holds one or more values separated by spaces, tabs or commas; empty lines and lines starting with
//! `#` are skipped. Each value becomes [`Format::bytes`] little-endian bytes (`hex`: the line is one reading of
//! any length). The device encrypts the bytes bit by bit, least-significant bit first, as the wire format
//! says; the cloud sees each bit as one LWE ciphertext.

use std::fmt;
use tfhe_sbc_device::frame::ReadingFormat;

/// How a value is written into the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// 0..=255, one byte.
    U8,
    /// -128..=127, one byte (two's complement).
    I8,
    /// 0..=65535, two bytes.
    U16,
    /// -32768..=32767, two bytes.
    I16,
    /// 0..=2^32-1, four bytes.
    U32,
    /// -2^31..=2^31-1, four bytes.
    I32,
    /// IEEE 754 single precision, four bytes.
    F32,
    /// The whole line is hexadecimal bytes (`0a1b2c`), one reading of any length.
    Hex,
}

impl Format {
    /// The bytes of one value (`None` for `hex`, whose readings are as long as their line).
    pub const fn bytes(self) -> Option<usize> {
        match self {
            Self::U8 | Self::I8 => Some(1),
            Self::U16 | Self::I16 => Some(2),
            Self::U32 | Self::I32 | Self::F32 => Some(4),
            Self::Hex => None,
        }
    }

    /// The reading format every message's header carries (`hex`: plain bytes, as the line gave them).
    pub const fn reading_format(self) -> ReadingFormat {
        match self {
            Self::U8 => ReadingFormat::U8,
            Self::I8 => ReadingFormat::I8,
            Self::U16 => ReadingFormat::U16,
            Self::I16 => ReadingFormat::I16,
            Self::U32 => ReadingFormat::U32,
            Self::I32 => ReadingFormat::I32,
            Self::F32 => ReadingFormat::F32,
            Self::Hex => ReadingFormat::Bytes,
        }
    }

    fn range(self) -> &'static str {
        match self {
            Self::U8 => "a u8 (0 to 255)",
            Self::I8 => "an i8 (-128 to 127)",
            Self::U16 => "a u16 (0 to 65535)",
            Self::I16 => "an i16 (-32768 to 32767)",
            Self::U32 => "a u32 (0 to 4294967295)",
            Self::I32 => "an i32 (-2147483648 to 2147483647)",
            Self::F32 => "an f32 (a decimal number)",
            Self::Hex => "hexadecimal bytes (an even number of 0-9a-f digits)",
        }
    }
}

/// A value that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadValue {
    /// The offending text.
    pub value: String,
    /// What it should be.
    pub expected: &'static str,
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not {}", self.value, self.expected)
    }
}

impl std::error::Error for BadValue {}

/// Parses one line into readings (each a little-endian byte string), appended to `out`. Returns how many
/// readings the line held (0 for an empty line or a `#` comment). On error nothing is appended.
pub fn parse_line(line: &str, format: Format, out: &mut Vec<Vec<u8>>) -> Result<usize, BadValue> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(0);
    }
    let bad = |value: &str| BadValue {
        value: value.to_owned(),
        expected: format.range(),
    };
    if format == Format::Hex {
        let digits: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        if !digits.len().is_multiple_of(2) || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(line));
        }
        let bytes = (0..digits.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| bad(line)))
            .collect::<Result<Vec<u8>, _>>()?;
        out.push(bytes);
        return Ok(1);
    }
    let mut parsed = Vec::new();
    for value in line
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|v| !v.is_empty())
    {
        let bytes = match format {
            Format::U8 => value.parse::<u8>().map(|v| v.to_le_bytes().to_vec()),
            Format::I8 => value.parse::<i8>().map(|v| v.to_le_bytes().to_vec()),
            Format::U16 => value.parse::<u16>().map(|v| v.to_le_bytes().to_vec()),
            Format::I16 => value.parse::<i16>().map(|v| v.to_le_bytes().to_vec()),
            Format::U32 => value.parse::<u32>().map(|v| v.to_le_bytes().to_vec()),
            Format::I32 => value.parse::<i32>().map(|v| v.to_le_bytes().to_vec()),
            Format::F32 => match value.parse::<f32>() {
                Ok(v) if v.is_finite() => Ok(v.to_le_bytes().to_vec()),
                _ => return Err(bad(value)),
            },
            Format::Hex => unreachable!("handled above"),
        }
        .map_err(|_| bad(value))?;
        parsed.push(bytes);
    }
    let count = parsed.len();
    out.extend(parsed);
    Ok(count)
}

/// Groups readings into messages of `batch` readings each.
#[derive(Debug)]
pub struct Batcher {
    batch: usize,
    readings: usize,
    message: Vec<u8>,
}

impl Batcher {
    /// A batcher of `batch` (at least 1) readings per message.
    pub fn new(batch: usize) -> Self {
        Self {
            batch: batch.max(1),
            readings: 0,
            message: Vec::new(),
        }
    }

    /// Adds one reading; returns the message when it completes a batch.
    pub fn push(&mut self, reading: &[u8]) -> Option<Vec<u8>> {
        self.message.extend_from_slice(reading);
        self.readings += 1;
        (self.readings == self.batch).then(|| self.take())
    }

    /// The readings of an incomplete batch as a message, if there are any.
    pub fn flush(&mut self) -> Option<Vec<u8>> {
        (self.readings > 0).then(|| self.take())
    }

    fn take(&mut self) -> Vec<u8> {
        self.readings = 0;
        std::mem::take(&mut self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_lines_and_errors() {
        let mut out = Vec::new();
        assert_eq!(parse_line("  # comment", Format::U8, &mut out), Ok(0));
        assert_eq!(parse_line("", Format::U16, &mut out), Ok(0));
        assert_eq!(parse_line("1, 2\t255", Format::U8, &mut out), Ok(3));
        assert_eq!(out, vec![vec![1], vec![2], vec![255]]);
        out.clear();
        assert_eq!(parse_line("-2 513", Format::I16, &mut out), Ok(2));
        assert_eq!(out, vec![(-2i16).to_le_bytes().to_vec(), 513u16.to_le_bytes().to_vec()]);
        out.clear();
        assert_eq!(parse_line("21.5", Format::F32, &mut out), Ok(1));
        assert_eq!(out, vec![21.5f32.to_le_bytes().to_vec()]);
        out.clear();
        assert_eq!(parse_line("0a ff 00", Format::Hex, &mut out), Ok(1));
        assert_eq!(out, vec![vec![0x0a, 0xff, 0x00]]);
        out.clear();
        for (line, format) in [
            ("256", Format::U8),
            ("1 x", Format::U8),
            ("-1", Format::U32),
            ("NaN", Format::F32),
            ("inf", Format::F32),
            ("abc", Format::Hex),
            ("0g", Format::Hex),
        ] {
            let e = parse_line(line, format, &mut out).unwrap_err();
            assert!(e.to_string().contains("is not"), "{e}");
            assert!(out.is_empty(), "{line}: nothing appended on error");
        }
    }

    #[test]
    fn batches() {
        let mut batcher = Batcher::new(3);
        assert_eq!(batcher.flush(), None);
        assert_eq!(batcher.push(&[1]), None);
        assert_eq!(batcher.push(&[2, 3]), None);
        assert_eq!(batcher.push(&[4]), Some(vec![1, 2, 3, 4]));
        assert_eq!(batcher.push(&[5]), None);
        assert_eq!(batcher.flush(), Some(vec![5]));
        assert_eq!(batcher.flush(), None);
        assert_eq!(Batcher::new(0).push(&[9]), Some(vec![9]));
    }
}
