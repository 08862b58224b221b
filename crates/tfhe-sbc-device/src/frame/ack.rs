//! Acknowledgements: what a server sends back for each frame it read, so that a device knows which frames
//! it may forget and which it must send again after a reconnect. No heap; the records are fixed-size.
//!
//! ```text
//! magic "TSAK" | version 2 | status u8 | device id u64 LE | sequence u64 LE | detail u64 LE | tag 16   (46 bytes)
//! tag = BLAKE2b-128(key = the device's MAC key, personalization "TFHE-SBC ACK v2.",
//!                   message = the 30 bytes before the tag || the 16-byte tag of the frame answered)
//! ```
//!
//! Over a stream (TCP), the device sends length-delimited frames (`u32` little-endian length, then the
//! frame) and the server answers every frame with one record, in order, without a length prefix. The server
//! sends a record only after it has decided on the frame; an [`AckStatus::Accepted`] or
//! [`AckStatus::Duplicate`] record means the frame's sequence number is consumed and the device forgets the
//! frame. A frame resent after a lost connection that the server had already accepted gets
//! [`AckStatus::Duplicate`]: acknowledgement is idempotent, and no frame is accepted twice.
//!
//! **Authentication.** A record answering an authentic frame (its MAC verified) carries a tag under the
//! device's MAC key over the record and the frame's own tag ([`Ack::seal`]): it answers that frame and no
//! other (not an earlier frame with the same sequence number), and nobody without the device's key can make
//! one. The personalization differs from the frame MAC's ([`ACK_PERSONALIZATION`]), so a record tag is never
//! a valid frame tag. A server that cannot authenticate the frame (unknown device, wrong key, bad MAC,
//! malformed) answers with an all-zero tag ([`Ack::unauthenticated`]): the device treats such a record, and any
//! record whose tag does not verify ([`AckRecord::open`]), as advice: it forgets nothing and stops
//! nothing because of it, so a forged record cannot make a device drop or stop sending data.

use crate::frame::mac::{MacKey, TAG_BYTES};

/// The first four bytes of every acknowledgement record.
pub const ACK_MAGIC: [u8; 4] = *b"TSAK";
/// The acknowledgement format version.
pub const ACK_VERSION: u8 = 2;
/// The bytes of a record before its tag (what the tag covers, with the frame's tag).
pub const ACK_FIELDS_BYTES: usize = 4 + 1 + 1 + 8 + 8 + 8;
/// The bytes of one acknowledgement record: the fields and a [`TAG_BYTES`]-byte tag.
pub const ACK_BYTES: usize = ACK_FIELDS_BYTES + TAG_BYTES;
/// The BLAKE2b personalization of acknowledgement tags (16 bytes; not the frame MAC's).
pub const ACK_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC ACK v2.";

/// What the server did with a frame. Exhaustive: a new status is a new wire version
/// of the tfhe-sbc wire format, and every place that answers or acts on one must be found by the compiler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
        match self {
            Self::Accepted | Self::Duplicate => true,
            Self::Busy
            | Self::TooOld
            | Self::Expired
            | Self::UnknownDevice
            | Self::BadCredentials
            | Self::NotAllowed
            | Self::Malformed => false,
        }
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
    /// The tag does not verify: the record is forged, answers another frame, or is unauthenticated (the
    /// server could not authenticate the frame).
    BadTag,
}

impl core::fmt::Display for AckError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadMagic => f.write_str("not a tfhe-sbc acknowledgement (bad magic): is the peer a tfhe-sbc server?"),
            Self::UnsupportedVersion(v) => write!(f, "acknowledgement version {v} (this device reads {ACK_VERSION})"),
            Self::UnknownStatus(s) => write!(f, "unknown acknowledgement status {s}"),
            Self::BadTag => f.write_str(
                "acknowledgement tag does not verify (forged, for another frame, or the server could not \
                 authenticate the frame): ignored",
            ),
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

    /// The record's fields (what the tag covers, before the frame's tag).
    pub fn fields(&self) -> [u8; ACK_FIELDS_BYTES] {
        let mut out = [0u8; ACK_FIELDS_BYTES];
        out[..4].copy_from_slice(&ACK_MAGIC);
        out[4] = ACK_VERSION;
        out[5] = self.status.to_u8();
        out[6..14].copy_from_slice(&self.device_id.to_le_bytes());
        out[14..22].copy_from_slice(&self.sequence.to_le_bytes());
        out[22..30].copy_from_slice(&self.detail.to_le_bytes());
        out
    }

    /// The record answering the authentic frame whose tag is `frame_tag`, tagged under the device's MAC key.
    pub fn seal(&self, mac_key: &MacKey, frame_tag: &[u8; TAG_BYTES]) -> [u8; ACK_BYTES] {
        let mut out = [0u8; ACK_BYTES];
        out[..ACK_FIELDS_BYTES].copy_from_slice(&self.fields());
        let tag = ack_tag(mac_key, &self.fields(), frame_tag);
        out[ACK_FIELDS_BYTES..].copy_from_slice(&tag);
        out
    }

    /// The record with an all-zero tag: the answer to a frame the server could not authenticate. A device
    /// takes it as advice only ([`AckRecord::open`] refuses it).
    pub fn unauthenticated(&self) -> [u8; ACK_BYTES] {
        let mut out = [0u8; ACK_BYTES];
        out[..ACK_FIELDS_BYTES].copy_from_slice(&self.fields());
        out
    }
}

/// The tag a frame ends with (the last [`TAG_BYTES`] bytes), which its acknowledgement's tag covers; `None`
/// for bytes too short to carry one.
pub fn frame_tag(frame: &[u8]) -> Option<&[u8; TAG_BYTES]> {
    frame
        .len()
        .checked_sub(TAG_BYTES)
        .and_then(|start| frame[start..].try_into().ok())
}

/// The tag of a record's `fields` answering the frame whose tag is `frame_tag`.
fn ack_tag(mac_key: &MacKey, fields: &[u8; ACK_FIELDS_BYTES], frame_tag: &[u8; TAG_BYTES]) -> [u8; TAG_BYTES] {
    let mut message = [0u8; ACK_FIELDS_BYTES + TAG_BYTES];
    message[..ACK_FIELDS_BYTES].copy_from_slice(fields);
    message[ACK_FIELDS_BYTES..].copy_from_slice(frame_tag);
    mac_key.tag_with(ACK_PERSONALIZATION, &message)
}

/// A record as read from the stream: its fields decoded, its tag not yet checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRecord {
    /// The decoded fields. Unauthenticated until [`AckRecord::open`] says otherwise: act on them only after.
    pub claimed: Ack,
    fields: [u8; ACK_FIELDS_BYTES],
    tag: [u8; TAG_BYTES],
}

impl AckRecord {
    /// Reads a record; any failure is a typed [`AckError`], never a panic. The tag is not checked.
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
        let mut fields = [0u8; ACK_FIELDS_BYTES];
        fields.copy_from_slice(&bytes[..ACK_FIELDS_BYTES]);
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&bytes[ACK_FIELDS_BYTES..]);
        Ok(Self {
            claimed: Ack {
                status,
                device_id: word(6),
                sequence: word(14),
                detail: word(22),
            },
            fields,
            tag,
        })
    }

    /// The acknowledgement, if its tag verifies under `mac_key` for the frame whose tag is `frame_tag`
    /// (compared in constant time); [`AckError::BadTag`] otherwise, all-zero (unauthenticated) tags included.
    pub fn open(&self, mac_key: &MacKey, frame_tag: &[u8; TAG_BYTES]) -> Result<Ack, AckError> {
        let expected = ack_tag(mac_key, &self.fields, frame_tag);
        let difference = expected.iter().zip(&self.tag).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if core::hint::black_box(difference) == 0 {
            Ok(self.claimed)
        } else {
            Err(AckError::BadTag)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejections() {
        let key = MacKey::from_bytes([5; 32]);
        let frame_tag = [9u8; TAG_BYTES];
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
            let record = AckRecord::decode(&ack.seal(&key, &frame_tag)).unwrap();
            assert_eq!(record.claimed, ack);
            assert_eq!(record.open(&key, &frame_tag), Ok(ack));
        }
        let good = Ack::new(AckStatus::Duplicate, 7, 9).seal(&key, &frame_tag);
        let mut bad = good;
        bad[0] ^= 1;
        assert_eq!(AckRecord::decode(&bad), Err(AckError::BadMagic));
        let mut bad = good;
        bad[4] = 1;
        assert_eq!(AckRecord::decode(&bad), Err(AckError::UnsupportedVersion(1)));
        let mut bad = good;
        bad[5] = 9;
        assert_eq!(AckRecord::decode(&bad), Err(AckError::UnknownStatus(9)));
        assert!(AckStatus::Duplicate.is_acknowledged() && !AckStatus::Busy.is_acknowledged());
    }

    /// Only the device's key, for this very frame, over these very fields, opens a record.
    #[test]
    fn tags_bind_key_frame_and_every_field() {
        let key = MacKey::from_bytes([5; 32]);
        let frame_tag = [9u8; TAG_BYTES];
        let ack = Ack::new(AckStatus::Accepted, 3, 77);
        let sealed = ack.seal(&key, &frame_tag);
        let open = |bytes: &[u8; ACK_BYTES], key: &MacKey, frame_tag: &[u8; TAG_BYTES]| {
            AckRecord::decode(bytes).and_then(|r| r.open(key, frame_tag))
        };
        assert_eq!(open(&sealed, &key, &frame_tag), Ok(ack));
        assert_eq!(
            open(&sealed, &MacKey::from_bytes([6; 32]), &frame_tag),
            Err(AckError::BadTag)
        );
        assert_eq!(open(&sealed, &key, &[8; TAG_BYTES]), Err(AckError::BadTag));
        assert_eq!(open(&ack.unauthenticated(), &key, &frame_tag), Err(AckError::BadTag));
        for byte in 5..ACK_BYTES {
            let mut flipped = sealed;
            flipped[byte] ^= 0x01;
            if let Ok(record) = AckRecord::decode(&flipped) {
                assert_eq!(record.open(&key, &frame_tag), Err(AckError::BadTag), "byte {byte}");
            }
        }
        // A record tag is not the frame MAC of the same bytes (another personalization).
        let mut message = [0u8; ACK_FIELDS_BYTES + TAG_BYTES];
        message[..ACK_FIELDS_BYTES].copy_from_slice(&ack.fields());
        message[ACK_FIELDS_BYTES..].copy_from_slice(&frame_tag);
        assert_ne!(key.tag(&message)[..], sealed[ACK_FIELDS_BYTES..]);
    }

    /// The tag is what the module documentation specifies, computed with RustCrypto's keyed, personalized
    /// BLAKE2b-128 (an independent implementation) over the 30 field bytes and the frame's tag.
    #[test]
    fn tag_is_the_specified_rustcrypto_blake2b_mac() {
        use blake2::Blake2bMac;
        use blake2::digest::Mac;
        use blake2::digest::consts::U16;
        let key = MacKey::from_bytes(core::array::from_fn(|i| i as u8));
        let frame_tag: [u8; TAG_BYTES] = core::array::from_fn(|i| 0xA0 + i as u8);
        let ack = Ack {
            detail: 873,
            ..Ack::new(AckStatus::TooOld, 7, 1000)
        };
        let record = ack.seal(&key, &frame_tag);
        let mut reference =
            Blake2bMac::<U16>::new_with_salt_and_personal(Some(key.as_bytes()), &[], b"TFHE-SBC ACK v2.").unwrap();
        reference.update(&record[..30]);
        reference.update(&frame_tag);
        assert_eq!(record[30..], reference.finalize().into_bytes()[..]);
        assert_eq!(&record[..6], b"TSAK\x02\x03");
    }
}
