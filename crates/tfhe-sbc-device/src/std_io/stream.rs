//! Frames and acknowledgements over a byte stream (TCP): length-delimited frames out, fixed-size
//! acknowledgement records ([`crate::frame::ack`]) in.

use crate::frame::ack::{ACK_BYTES, AckRecord};
use std::io::{self, Read, Write};
use std::vec::Vec;

/// Writes one length-delimited frame: its length as a little-endian `u32`, then its bytes.
pub fn write_frame<W: Write + ?Sized>(writer: &mut W, frame: &[u8]) -> io::Result<()> {
    let len = u32::try_from(frame.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    let mut prefixed = Vec::with_capacity(4 + frame.len());
    prefixed.extend_from_slice(&len.to_le_bytes());
    prefixed.extend_from_slice(frame);
    writer.write_all(&prefixed)
}

/// Writes one acknowledgement record (the server's side).
pub fn write_ack<W: Write + ?Sized>(writer: &mut W, record: &[u8; ACK_BYTES]) -> io::Result<()> {
    writer.write_all(record)
}

/// Reads one acknowledgement record, its tag not yet checked ([`AckRecord::open`]); `Ok(None)` at a clean end
/// of stream (between records). A record that does not decode is an [`io::ErrorKind::InvalidData`] error
/// carrying the [`crate::frame::ack::AckError`].
pub fn read_ack<R: Read + ?Sized>(reader: &mut R) -> io::Result<Option<AckRecord>> {
    let mut record = [0u8; ACK_BYTES];
    let mut filled = 0;
    while filled < ACK_BYTES {
        match reader.read(&mut record[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    AckRecord::decode(&record)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}
