//! Length-delimited framing for sockets: each frame is preceded by its length as a little-endian `u32`.
//!
//! The reader rejects a declared length above its limit before reading or allocating anything, and reuses
//! one buffer of at most `limit` bytes for every frame.

use crate::error::IntakeError;
use std::io::{self, Read, Write};
use tfhe_sbc_device::frame::compact_list::MAX_COMPACT_LIST_FRAME_BYTES;
use tfhe_sbc_device::frame::full_frame_bytes;

/// The default frame-size limit: the longest frame of a supported kind and set, a compact-list frame of 1,024
/// `u8` readings (49,426 bytes; a full frame at `N = 4096`, 32,831 bytes, is shorter).
pub const DEFAULT_MAX_FRAME_BYTES: usize = {
    let full = full_frame_bytes(4096);
    if MAX_COMPACT_LIST_FRAME_BYTES > full {
        MAX_COMPACT_LIST_FRAME_BYTES
    } else {
        full
    }
};

/// Writes one length-delimited frame.
pub fn write_frame<W: Write>(writer: &mut W, frame: &[u8]) -> io::Result<()> {
    let len = u32::try_from(frame.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    writer.write_all(&len.to_le_bytes())?;
    writer.write_all(frame)
}

/// Reads length-delimited frames from a byte stream.
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: R,
    limit: usize,
    buffer: Vec<u8>,
}

impl<R: Read> FrameReader<R> {
    /// A reader with the [`DEFAULT_MAX_FRAME_BYTES`] limit.
    pub fn new(reader: R) -> Self {
        Self::with_limit(reader, DEFAULT_MAX_FRAME_BYTES)
    }

    /// A reader that rejects frames longer than `limit` bytes.
    pub fn with_limit(reader: R, limit: usize) -> Self {
        Self {
            reader,
            limit,
            buffer: Vec::new(),
        }
    }

    /// The next frame's bytes, `Ok(None)` at a clean end of stream (between frames).
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>, IntakeError> {
        let mut len = [0u8; 4];
        match read_full(&mut self.reader, &mut len)? {
            0 => return Ok(None),
            4 => {}
            _ => return Err(IntakeError::TruncatedStream),
        }
        let declared = u32::from_le_bytes(len);
        if declared as usize > self.limit {
            return Err(IntakeError::FrameTooLarge {
                declared: u64::from(declared),
                limit: self.limit,
            });
        }
        self.buffer.resize(declared as usize, 0);
        if read_full(&mut self.reader, &mut self.buffer)? != self.buffer.len() {
            return Err(IntakeError::TruncatedStream);
        }
        Ok(Some(&self.buffer))
    }
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> Result<usize, IntakeError> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(IntakeError::Io(e.kind())),
        }
    }
    Ok(filled)
}
