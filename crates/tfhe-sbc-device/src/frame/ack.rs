//! Acknowledgements: what a server sends back for each frame it read, so that a device knows which frames
//! it may forget and which it must send again after a reconnect. No heap; the records are fixed-size.
//!
//! ```text
//! magic "TSAK" | version 1 | status u8 | device id u64 LE | sequence u64 LE | detail u64 LE   (30 bytes)
//! ```
//!
//! Over a stream (TCP), the device sends length-delimited frames (`u32` little-endian length, then the
//! frame) and the server answers every frame with one record, in order, without a length prefix. The server
//! sends a record only after its intake has decided on the frame; an [`AckStatus::Accepted`] or
//! [`AckStatus::Duplicate`] record means the frame's sequence number is consumed and the device forgets the
//! frame. A frame resent after a lost connection that the server had already accepted gets
//! [`AckStatus::Duplicate`]: acknowledgement is idempotent, and no frame is accepted twice (the intake's
//! replay window refuses the second copy).
//!
//! Records are not authenticated: whoever can write to the connection can acknowledge a frame that never
//! arrived. Like the frames' confidentiality against traffic analysis, that is the transport's (TLS, a
//! VPN); a forged acknowledgement loses data, it cannot forge or replay any.

/// The first four bytes of every acknowledgement record.
pub const ACK_MAGIC: [u8; 4] = *b"TSAK";
/// The acknowledgement format version.
pub const ACK_VERSION: u8 = 1;
/// The bytes of one acknowledgement record.
pub const ACK_BYTES: usize = 4 + 1 + 1 + 8 + 8 + 8;

/// What the server did with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AckStatus {
    /// Accepted now: the device forgets the frame.
    Accepted,
    /// Accepted before (a resend after a lost connection): the device forgets the frame.
    Duplicate,
    /// Not decided: the server is at a limit (open messages). Send it again later.
    Busy,
    /// The sequence number is below what the server still accepts from this device; `detail` is the lowest
    /// it accepts. A device whose persisted frame counter went back (a restored or deleted counter file)
    /// gets this for new frames.
    TooOld,
    /// The frame's message was dropped by the server before it was complete (too slow): the frame is
    /// dropped too.
    Expired,
    /// The server has no device with this id.
    UnknownDevice,
    /// The frame's MAC or key id is not what the server holds for this device: the device's credential file
    /// and the server's key store are not from the same provisioning.
    BadCredentials,
    /// The server does not take this frame kind or parameter set from this device.
    NotAllowed,
    /// The frame is malformed, or of a format version the server does not read.
    Malformed,
}

impl AckStatus {
    /// The wire value.
    pub const fn to_u8(self) -> u8 {
        match self {
            Self::Accepted => 0,
            Self::Duplicate => 1,
            Self::Busy => 2,
            Self::TooOld => 3,
            Self::Expired => 4,
            Self::UnknownDevice => 5,
            Self::BadCredentials => 6,
            Self::NotAllowed => 7,
            Self::Malformed => 8,
        }
    }

    /// The status with this wire value, if any.
    pub const fn from_u8(value: u8) -> Option<Self> {
        Some(match value {
            0 => Self::Accepted,
            1 => Self::Duplicate,
            2 => Self::Busy,
            3 => Self::TooOld,
            4 => Self::Expired,
            5 => Self::UnknownDevice,
            6 => Self::BadCredentials,
            7 => Self::NotAllowed,
            8 => Self::Malformed,
            _ => return None,
        })
    }

    /// Whether the frame's sequence number is consumed and the device can forget the frame.
    pub const fn is_acknowledged(self) -> bool {
        matches!(self, Self::Accepted | Self::Duplicate)
    }
}

/// One acknowledgement record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ack {
    /// What the server did.
    pub status: AckStatus,
    /// The device the frame names (0 when the frame was too malformed to name one).
    pub device_id: u64,
    /// The frame's sequence number (0 when the frame was too malformed to carry one).
    pub sequence: u64,
    /// For [`AckStatus::TooOld`], the lowest sequence number the server accepts; otherwise 0.
    pub detail: u64,
}

/// Why bytes are not an acknowledgement record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckError {
    /// The first four bytes are not `"TSAK"`: the peer is not a tfhe-sbc server.
    BadMagic,
    /// A version this code does not read.
    UnsupportedVersion(u8),
    /// An unknown status value.
    UnknownStatus(u8),
}

impl core::fmt::Display for AckError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadMagic => f.write_str("not a tfhe-sbc acknowledgement (bad magic): is the peer a tfhe-sbc server?"),
            Self::UnsupportedVersion(v) => write!(f, "acknowledgement version {v} (this device reads {ACK_VERSION})"),
            Self::UnknownStatus(s) => write!(f, "unknown acknowledgement status {s}"),
        }
    }
}

impl core::error::Error for AckError {}

impl Ack {
    /// An acknowledgement with no detail.
    pub const fn new(status: AckStatus, device_id: u64, sequence: u64) -> Self {
        Self {
            status,
            device_id,
            sequence,
            detail: 0,
        }
    }

    /// The record's bytes.
    pub fn encode(&self) -> [u8; ACK_BYTES] {
        let mut out = [0u8; ACK_BYTES];
        out[..4].copy_from_slice(&ACK_MAGIC);
        out[4] = ACK_VERSION;
        out[5] = self.status.to_u8();
        out[6..14].copy_from_slice(&self.device_id.to_le_bytes());
        out[14..22].copy_from_slice(&self.sequence.to_le_bytes());
        out[22..30].copy_from_slice(&self.detail.to_le_bytes());
        out
    }

    /// Reads a record; any failure is a typed [`AckError`], never a panic.
    pub fn decode(bytes: &[u8; ACK_BYTES]) -> Result<Self, AckError> {
        if bytes[..4] != ACK_MAGIC {
            return Err(AckError::BadMagic);
        }
        if bytes[4] != ACK_VERSION {
            return Err(AckError::UnsupportedVersion(bytes[4]));
        }
        let status = AckStatus::from_u8(bytes[5]).ok_or(AckError::UnknownStatus(bytes[5]))?;
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(w)
        };
        Ok(Self {
            status,
            device_id: word(6),
            sequence: word(14),
            detail: word(22),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejections() {
        for value in 0..=u8::MAX {
            let Some(status) = AckStatus::from_u8(value) else {
                continue;
            };
            assert_eq!(status.to_u8(), value);
            let ack = Ack {
                status,
                device_id: 0x0102_0304_0506_0708 ^ u64::from(value),
                sequence: u64::MAX - u64::from(value),
                detail: u64::from(value) << 40,
            };
            assert_eq!(Ack::decode(&ack.encode()), Ok(ack));
        }
        let good = Ack::new(AckStatus::Duplicate, 7, 9).encode();
        let mut bad = good;
        bad[0] ^= 1;
        assert_eq!(Ack::decode(&bad), Err(AckError::BadMagic));
        let mut bad = good;
        bad[4] = 2;
        assert_eq!(Ack::decode(&bad), Err(AckError::UnsupportedVersion(2)));
        let mut bad = good;
        bad[5] = 9;
        assert_eq!(Ack::decode(&bad), Err(AckError::UnknownStatus(9)));
        assert!(AckStatus::Duplicate.is_acknowledged() && !AckStatus::Busy.is_acknowledged());
    }
}
