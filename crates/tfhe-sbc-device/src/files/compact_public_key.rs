//! The compact public-key file: the raw tfhe-rs compact public key `[a | b]` a device encrypts
//! tfhe-rs `CompactCiphertextList`s under ([`crate::encrypt::compact_list`]), bound
//! to its key set. Provisioning (`tfhe-sbc-keys init --parameters integer --compact-list`) expands the key
//! on the host and writes this file; the firmware reads it in place, no heap, and hands the key's bytes to
//! `CompactListEncryptor::set_public_key_le_bytes` (no copy is made).
//!
//! ```text
//! offset  bytes
//!      0      4  magic "TSCP"
//!      4      1  version = 1
//!      5      1  reserved, 0
//!      6      2  compact public-key parameters, u16 LE: 1 = tfhe-rs PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128
//!                (N = 2048)
//!      8      2  the key set's parameter set, u16 LE (tfhe_sbc_core::parameters::ParameterSetId): 4, the
//!                integer set, whose server key holds the casting key
//!     10      2  reserved, 0
//!     12      4  key id, u32 LE (the key set's)
//!     16     32  the key set's server key fingerprint (the key set files' envelope's)
//!     48  16 N  [a | b]: 2 N words, u64 LE (32,768 bytes at N = 2048)
//! 48+16N     16  check: BLAKE2b-128, no key, personalization "TFHE-SBC cpk v1.", of bytes 0 .. 48 + 16 N
//! ```
//!
//! 32,832 bytes in all. The key starts 48 bytes in, so it is 8-aligned wherever the file is. The check catches
//! corruption and mix-ups, not forgery: the file must reach the device through an authentic channel. A
//! reader compares the key id (and, where it knows it, the server key fingerprint) with its key set's
//! ([`CompactPublicKeyFile::for_key_set`]).

use crate::encrypt::compact_list::{COMPACT_PKE_N, COMPACT_PUBLIC_KEY_BYTES};
use crate::encrypt::public_key_check::check_public_key_with_mask;
use crate::encrypt::public_key_encryption::PublicKeyBody;
use crate::error::PublicKeyDefect;
use crate::files::check::{CHECK_BYTES, file_check};
use tfhe_sbc_core::parameters::ParameterSetId;

/// The first bytes of a compact public-key file.
pub const COMPACT_PUBLIC_KEY_MAGIC: [u8; 4] = *b"TSCP";
/// The compact public-key file format version.
pub const COMPACT_PUBLIC_KEY_VERSION: u8 = 1;
/// The BLAKE2b personalization of the file's check.
pub const COMPACT_PUBLIC_KEY_CHECK_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC cpk v1.";
/// The file's id of tfhe-rs's `PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` (`N = 2048`), the only
/// compact public-key set a device encrypts for.
pub const PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128_ID: u16 = 1;
/// The bytes before the key.
pub const COMPACT_PUBLIC_KEY_HEADER_BYTES: usize = 48;
/// The bytes of a compact public-key file: header, `[a | b]` and check (32,832).
pub const COMPACT_PUBLIC_KEY_FILE_BYTES: usize =
    COMPACT_PUBLIC_KEY_HEADER_BYTES + COMPACT_PUBLIC_KEY_BYTES + CHECK_BYTES;

/// Why a compact public-key file was refused. Every check is on public bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactKeyFileError {
    /// The file does not start with [`COMPACT_PUBLIC_KEY_MAGIC`] (or is shorter than it).
    BadMagic,
    /// A version this code does not read.
    UnsupportedVersion(u8),
    /// A compact public-key parameter id this code does not know.
    UnknownParameters(u16),
    /// A reserved byte is not 0.
    ReservedNotZero,
    /// The file is not [`COMPACT_PUBLIC_KEY_FILE_BYTES`] long.
    WrongLength {
        /// The length the header implies.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// The check does not match: the file is corrupt.
    CheckFailed,
    /// The file belongs to another key set (its key id, or its server key fingerprint, differs).
    OtherKeySet {
        /// The key id of the reader's key set.
        expected_key_id: u32,
        /// The key id the file names.
        found_key_id: u32,
    },
    /// An output buffer is too small for the file ([`encode_compact_public_key_file`]).
    BufferTooSmall,
    /// The key is degenerate: the one public-key check (`crate::encrypt::public_key_check`) refuses it.
    DegenerateKey(PublicKeyDefect),
}

impl core::fmt::Display for CompactKeyFileError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::BadMagic => f.write_str("not a compact public-key file (bad magic)"),
            Self::UnsupportedVersion(v) => write!(
                f,
                "compact public-key file version {v}, this code reads version {COMPACT_PUBLIC_KEY_VERSION}"
            ),
            Self::UnknownParameters(id) => write!(f, "unknown compact public-key parameters {id}"),
            Self::ReservedNotZero => f.write_str("a reserved byte of the compact public-key file is not 0"),
            Self::WrongLength { expected, found } => {
                write!(f, "compact public-key file of {found} bytes, expected {expected}")
            }
            Self::CheckFailed => f.write_str("the compact public-key file's check fails: the file is corrupt"),
            Self::OtherKeySet {
                expected_key_id,
                found_key_id,
            } => write!(
                f,
                "compact public key of key id {found_key_id:#010x} (or of another server key), the key set's is \
                 {expected_key_id:#010x}"
            ),
            Self::BufferTooSmall => f.write_str("output buffer too small for the compact public-key file"),
            Self::DegenerateKey(defect) => write!(f, "compact public key refused: {defect}"),
        }
    }
}

impl core::error::Error for CompactKeyFileError {}

impl From<CompactKeyFileError> for crate::Error {
    /// A length error as [`crate::Error::WrongLength`], another key set as
    /// [`crate::Error::PublicKeyOfAnotherKeySet`], a degenerate key as [`crate::Error::DegeneratePublicKey`],
    /// every other refusal as [`crate::Error::BadKeyFile`].
    fn from(e: CompactKeyFileError) -> Self {
        match e {
            CompactKeyFileError::WrongLength { expected, found } => Self::WrongLength { expected, found },
            CompactKeyFileError::OtherKeySet {
                expected_key_id,
                found_key_id,
            } => Self::PublicKeyOfAnotherKeySet {
                expected_key_id,
                found_key_id,
            },
            CompactKeyFileError::BufferTooSmall => Self::BufferTooSmall,
            CompactKeyFileError::DegenerateKey(defect) => Self::DegeneratePublicKey(defect),
            CompactKeyFileError::BadMagic
            | CompactKeyFileError::UnsupportedVersion(_)
            | CompactKeyFileError::UnknownParameters(_)
            | CompactKeyFileError::ReservedNotZero
            | CompactKeyFileError::CheckFailed => Self::BadKeyFile,
        }
    }
}

/// What binds a compact public key to its key set: the header's fields after the magic and version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactKeyBinding {
    /// The key set's parameter set (4, the integer set).
    pub key_set_parameters: ParameterSetId,
    /// The key set's key id.
    pub key_id: u32,
    /// The key set's server key fingerprint.
    pub server_key_fingerprint: [u8; 32],
}

/// A checked compact public-key file, borrowed: the key stays where it is (flash, or the caller's buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactPublicKeyFile<'a> {
    /// The compact public-key parameters' id ([`PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128_ID`]).
    pub pke_parameters: u16,
    /// The key set it belongs to.
    pub binding: CompactKeyBinding,
    /// `[a | b]`: `2 N` words, little-endian ([`COMPACT_PUBLIC_KEY_BYTES`]), for
    /// `CompactListEncryptor::set_public_key_le_bytes`.
    pub key: &'a [u8],
}

impl<'a> CompactPublicKeyFile<'a> {
    /// The key's bytes if the file belongs to the key set of key id `key_id` (and, if given, of server key
    /// fingerprint `server_key_fingerprint`), else [`CompactKeyFileError::OtherKeySet`].
    pub fn for_key_set(
        &self,
        key_id: u32,
        server_key_fingerprint: Option<&[u8; 32]>,
    ) -> Result<&'a [u8], CompactKeyFileError> {
        let same_server_key = server_key_fingerprint.is_none_or(|f| *f == self.binding.server_key_fingerprint);
        if self.binding.key_id == key_id && same_server_key {
            Ok(self.key)
        } else {
            Err(CompactKeyFileError::OtherKeySet {
                expected_key_id: key_id,
                found_key_id: self.binding.key_id,
            })
        }
    }
}

fn check_of(bytes: &[u8]) -> [u8; CHECK_BYTES] {
    file_check(COMPACT_PUBLIC_KEY_CHECK_PERSONALIZATION, bytes)
}

/// Writes a compact public-key file of `key` (`[a | b]`, `2 N` words) bound to `binding` into `out`; returns
/// its length ([`COMPACT_PUBLIC_KEY_FILE_BYTES`]).
pub fn encode_compact_public_key_file(
    binding: &CompactKeyBinding,
    key: &[u64],
    out: &mut [u8],
) -> Result<usize, CompactKeyFileError> {
    if key.len() != 2 * COMPACT_PKE_N {
        return Err(CompactKeyFileError::WrongLength {
            expected: 2 * COMPACT_PKE_N,
            found: key.len(),
        });
    }
    let out = out
        .get_mut(..COMPACT_PUBLIC_KEY_FILE_BYTES)
        .ok_or(CompactKeyFileError::BufferTooSmall)?;
    out[..4].copy_from_slice(&COMPACT_PUBLIC_KEY_MAGIC);
    out[4] = COMPACT_PUBLIC_KEY_VERSION;
    out[5] = 0;
    out[6..8].copy_from_slice(&PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128_ID.to_le_bytes());
    out[8..10].copy_from_slice(&binding.key_set_parameters.0.to_le_bytes());
    out[10..12].fill(0);
    out[12..16].copy_from_slice(&binding.key_id.to_le_bytes());
    out[16..48].copy_from_slice(&binding.server_key_fingerprint);
    let body_end = COMPACT_PUBLIC_KEY_HEADER_BYTES + COMPACT_PUBLIC_KEY_BYTES;
    for (chunk, word) in out[COMPACT_PUBLIC_KEY_HEADER_BYTES..body_end]
        .chunks_exact_mut(8)
        .zip(key)
    {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    let check = check_of(&out[..body_end]);
    out[body_end..].copy_from_slice(&check);
    Ok(COMPACT_PUBLIC_KEY_FILE_BYTES)
}

/// Reads a compact public-key file, no heap: magic, version, known parameters, zero reserved bytes, the
/// exact length, the check and the public-key check of `[a | b]` ([`CompactKeyFileError::DegenerateKey`]),
/// in that order. Never panics, whatever `bytes` holds. The key's bytes are
/// borrowed from `bytes`; [`CompactPublicKeyFile::for_key_set`] then checks the key set.
pub fn decode_compact_public_key_file(bytes: &[u8]) -> Result<CompactPublicKeyFile<'_>, CompactKeyFileError> {
    if bytes.get(..4) != Some(&COMPACT_PUBLIC_KEY_MAGIC[..]) {
        return Err(CompactKeyFileError::BadMagic);
    }
    let header = bytes
        .get(..COMPACT_PUBLIC_KEY_HEADER_BYTES)
        .ok_or(CompactKeyFileError::WrongLength {
            expected: COMPACT_PUBLIC_KEY_FILE_BYTES,
            found: bytes.len(),
        })?;
    let u16_at = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
    if header[4] != COMPACT_PUBLIC_KEY_VERSION {
        return Err(CompactKeyFileError::UnsupportedVersion(header[4]));
    }
    let pke_parameters = u16_at(6);
    if pke_parameters != PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128_ID {
        return Err(CompactKeyFileError::UnknownParameters(pke_parameters));
    }
    if header[5] != 0 || u16_at(10) != 0 {
        return Err(CompactKeyFileError::ReservedNotZero);
    }
    if bytes.len() != COMPACT_PUBLIC_KEY_FILE_BYTES {
        return Err(CompactKeyFileError::WrongLength {
            expected: COMPACT_PUBLIC_KEY_FILE_BYTES,
            found: bytes.len(),
        });
    }
    let (content, check) = bytes.split_at(COMPACT_PUBLIC_KEY_FILE_BYTES - CHECK_BYTES);
    if check_of(content) != check {
        return Err(CompactKeyFileError::CheckFailed);
    }
    let key = &content[COMPACT_PUBLIC_KEY_HEADER_BYTES..];
    let (mask, body) = key.split_at(key.len() / 2);
    check_public_key_with_mask(PublicKeyBody::<u64>::LeBytes(mask), PublicKeyBody::LeBytes(body)).map_err(
        |e| match e {
            crate::Error::DegeneratePublicKey(defect) => CompactKeyFileError::DegenerateKey(defect),
            crate::Error::Core(_)
            | crate::Error::PolynomialSizeMismatch { .. }
            | crate::Error::UnsupportedGlweDimension(_)
            | crate::Error::MessageTooLong { .. }
            | crate::Error::WrongLength { .. }
            | crate::Error::BufferTooSmall
            | crate::Error::MessageTooLarge
            | crate::Error::Entropy
            | crate::Error::RngFailed
            | crate::Error::KeyNotSet
            | crate::Error::NotSeeded
            | crate::Error::ZigguratNeedsGaussianSet
            | crate::Error::NoiseOutOfRange
            | crate::Error::SequenceExhausted
            | crate::Error::BadKeyFile
            | crate::Error::ChunkNotInMessage { .. }
            | crate::Error::PublicKeyOfAnotherKeySet { .. }
            | crate::Error::UnsupportedReadingWidth(_)
            | crate::Error::PartialReading { .. } => CompactKeyFileError::CheckFailed,
        },
    )?;
    let mut server_key_fingerprint = [0u8; 32];
    server_key_fingerprint.copy_from_slice(&header[16..48]);
    Ok(CompactPublicKeyFile {
        pke_parameters,
        binding: CompactKeyBinding {
            key_set_parameters: ParameterSetId(u16_at(8)),
            key_id: u32::from_le_bytes([header[12], header[13], header[14], header[15]]),
            server_key_fingerprint,
        },
        key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BINDING: CompactKeyBinding = CompactKeyBinding {
        key_set_parameters: ParameterSetId(4),
        key_id: 0x1d00_0005,
        server_key_fingerprint: [0xab; 32],
    };

    /// Uniform-looking words (SplitMix64): a key the public-key check takes.
    fn key() -> [u64; 2 * COMPACT_PKE_N] {
        core::array::from_fn(|i| {
            let mut z = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
    }

    #[test]
    fn round_trip_and_binding() {
        let key = key();
        let mut file = [0u8; COMPACT_PUBLIC_KEY_FILE_BYTES];
        assert_eq!(encode_compact_public_key_file(&BINDING, &key, &mut file), Ok(32_832));
        let decoded = decode_compact_public_key_file(&file).unwrap();
        assert_eq!(decoded.binding, BINDING);
        assert_eq!(decoded.pke_parameters, 1);
        assert_eq!(decoded.key.len(), COMPACT_PUBLIC_KEY_BYTES);
        assert_eq!(decoded.key[8..16], key[1].to_le_bytes());
        assert_eq!(decoded.for_key_set(BINDING.key_id, Some(&[0xab; 32])), Ok(decoded.key));
        assert_eq!(decoded.for_key_set(BINDING.key_id, None), Ok(decoded.key));
        let other = CompactKeyFileError::OtherKeySet {
            expected_key_id: 7,
            found_key_id: BINDING.key_id,
        };
        assert_eq!(decoded.for_key_set(7, None), Err(other));
        assert!(decoded.for_key_set(BINDING.key_id, Some(&[0; 32])).is_err());
        assert_eq!(
            crate::Error::from(other),
            crate::Error::PublicKeyOfAnotherKeySet {
                expected_key_id: 7,
                found_key_id: BINDING.key_id
            }
        );
    }

    #[test]
    fn refusals_are_typed() {
        let mut file = [0u8; COMPACT_PUBLIC_KEY_FILE_BYTES];
        encode_compact_public_key_file(&BINDING, &key(), &mut file).unwrap();
        let refused = |edit: &dyn Fn(&mut [u8])| {
            let mut copy = file;
            edit(&mut copy);
            decode_compact_public_key_file(&copy).unwrap_err()
        };
        assert_eq!(refused(&|f| f[0] = b'X'), CompactKeyFileError::BadMagic);
        assert_eq!(refused(&|f| f[4] = 2), CompactKeyFileError::UnsupportedVersion(2));
        assert_eq!(refused(&|f| f[6] = 9), CompactKeyFileError::UnknownParameters(9));
        assert_eq!(refused(&|f| f[5] = 1), CompactKeyFileError::ReservedNotZero);
        assert_eq!(refused(&|f| f[11] = 1), CompactKeyFileError::ReservedNotZero);
        assert_eq!(refused(&|f| f[100] ^= 1), CompactKeyFileError::CheckFailed);
        assert_eq!(refused(&|f| f[12] ^= 1), CompactKeyFileError::CheckFailed);
        assert_eq!(
            decode_compact_public_key_file(&file[..file.len() - 1]),
            Err(CompactKeyFileError::WrongLength {
                expected: COMPACT_PUBLIC_KEY_FILE_BYTES,
                found: COMPACT_PUBLIC_KEY_FILE_BYTES - 1
            })
        );
        assert_eq!(
            decode_compact_public_key_file(&file[..20]),
            Err(CompactKeyFileError::WrongLength {
                expected: COMPACT_PUBLIC_KEY_FILE_BYTES,
                found: 20
            })
        );
        assert_eq!(decode_compact_public_key_file(&[]), Err(CompactKeyFileError::BadMagic));
        assert_eq!(
            encode_compact_public_key_file(&BINDING, &key()[1..], &mut file),
            Err(CompactKeyFileError::WrongLength {
                expected: 4096,
                found: 4095
            })
        );
        assert_eq!(
            encode_compact_public_key_file(&BINDING, &key(), &mut file[1..]),
            Err(CompactKeyFileError::BufferTooSmall)
        );
    }
}
