//! The device's credential file: what provisioning writes once and the firmware reads at boot, no heap.
//!
//! ```text
//! "TSDC" | version 1 | mode u8 | parameter set u16 LE | device id u64 LE | key id u32 LE | MAC key (32)
//!        | key material | check (16)
//! ```
//!
//! The key material depends on the mode ([`KeyMode`]):
//! * fleet or per-device secret key: the `k * N` key bits packed least-significant bit first
//!   (`k * N / 8` bytes: 128 at `N = 1024`, `k = 1`; 256 for the 64-bit integer set, id 4, which
//!   `IntegerEncryptor::set_packed_key` takes), see [`tfhe_sbc_core::entities::pack_secret_key`] / [`tfhe_sbc_core::entities::unpack_secret_key`].
//!   A firmware hands it as it is to `GlweEncryptor::set_packed_key`: [`decode_credentials`] only borrows the
//!   file (it may stay in flash) and the encryptor keeps the key's spectra, no unpacked copy;
//! * public key: a whole public-key file ([`crate::files::public_key`], 4,155 bytes at `N = 1024`), bound to
//!   the credentials: it must name the same parameter set and key id, else [`Error::PublicKeyOfAnotherKeySet`].
//!
//! The check is BLAKE2b-128 (personalization `"TFHE-SBC cred v1"`) of every byte before it: it catches
//! corruption and mix-ups, not forgery; the file's secrecy and authenticity are the provisioning channel's
//! and the flash's. A buffer holding a credential file holds secrets: wipe it after use.

use crate::error::{Error, Result};
use crate::files::check::{CHECK_BYTES, file_check};
use crate::files::public_key::{public_key_body, public_key_file_bytes_for};
use crate::frame::mac::{DeviceCredentials, MAC_KEY_BYTES, MacKey};
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};

/// The first bytes of a credential file.
pub const CREDENTIALS_MAGIC: [u8; 4] = *b"TSDC";
/// The credential file format version.
pub const CREDENTIALS_VERSION: u8 = 1;
/// The BLAKE2b personalization of the credential file's check.
pub const CREDENTIALS_CHECK_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC cred v1";
const HEADER_BYTES: usize = 4 + 1 + 1 + 2 + 8 + 4 + MAC_KEY_BYTES;

/// How a device encrypts, and so what key material it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyMode {
    /// The tfhe-rs `ClientKey`'s GLWE key, shared by the fleet. A stolen device plus the server key
    /// decrypts every device's traffic.
    FleetSecretKey,
    /// The device's own GLWE key; the cloud key-switches its ciphertexts with a per-device key.
    PerDeviceSecretKey,
    /// The published public key only: the device holds no decryption key.
    PublicKey,
}

impl KeyMode {
    /// Every mode, in wire order.
    pub const ALL: [Self; 3] = [Self::FleetSecretKey, Self::PerDeviceSecretKey, Self::PublicKey];

    /// The mode's one name, used by every tool and log: `fleet`, `per-device`, `public-key`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::FleetSecretKey => "fleet",
            Self::PerDeviceSecretKey => "per-device",
            Self::PublicKey => "public-key",
        }
    }

    /// The mode named `name` ([`Self::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mode| mode.name() == name)
    }

    /// The wire value in a credential file.
    pub const fn to_u8(self) -> u8 {
        match self {
            Self::FleetSecretKey => 0,
            Self::PerDeviceSecretKey => 1,
            Self::PublicKey => 2,
        }
    }

    /// The mode with this wire value.
    pub const fn from_u8(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::FleetSecretKey),
            1 => Some(Self::PerDeviceSecretKey),
            2 => Some(Self::PublicKey),
            _ => None,
        }
    }
}

/// Whether a credential file may name `params` in `mode`: every mode on the 32-bit sets and on the 64-bit
/// integer set (its packed key is `k * N / 8` bytes as on any set; its public-key file holds 64-bit words).
fn mode_allowed(_: KeyMode, params: &GlweParameters) -> bool {
    matches!(params.torus_bits(), 32 | 64)
}

/// The key material bytes of a credential file in `mode` for the set `params` (the public-key mode: the
/// set's public-key file, [`public_key_file_bytes_for`]).
pub const fn key_material_bytes(mode: KeyMode, params: &GlweParameters) -> usize {
    let (n, k) = (params.polynomial_size().0, params.glwe_dimension().0);
    match mode {
        KeyMode::FleetSecretKey | KeyMode::PerDeviceSecretKey => k * n / 8,
        KeyMode::PublicKey => public_key_file_bytes_for(params),
    }
}

/// The bytes of a credential file in `mode` for `params`.
pub const fn credentials_file_bytes(mode: KeyMode, params: &GlweParameters) -> usize {
    HEADER_BYTES + key_material_bytes(mode, params) + CHECK_BYTES
}

fn check_of(bytes: &[u8]) -> [u8; CHECK_BYTES] {
    file_check(CREDENTIALS_CHECK_PERSONALIZATION, bytes)
}

/// Writes a credential file into `out`; `key_material` is the packed secret key or the public-key file, of
/// [`key_material_bytes`]. Returns the file's length.
pub fn encode_credentials(
    mode: KeyMode,
    params: &GlweParameters,
    credentials: &DeviceCredentials,
    key_material: &[u8],
    out: &mut [u8],
) -> Result<usize> {
    if !mode_allowed(mode, params) {
        return Err(Error::BadKeyFile);
    }
    let expected = key_material_bytes(mode, params);
    if key_material.len() != expected {
        return Err(Error::WrongLength {
            expected,
            found: key_material.len(),
        });
    }
    let total = credentials_file_bytes(mode, params);
    let out = out.get_mut(..total).ok_or(Error::BufferTooSmall)?;
    out[..4].copy_from_slice(&CREDENTIALS_MAGIC);
    out[4] = CREDENTIALS_VERSION;
    out[5] = mode.to_u8();
    out[6..8].copy_from_slice(&params.id().0.to_le_bytes());
    out[8..16].copy_from_slice(&credentials.device_id().to_le_bytes());
    out[16..20].copy_from_slice(&credentials.key_id().to_le_bytes());
    out[20..HEADER_BYTES].copy_from_slice(credentials.mac_key().as_bytes());
    out[HEADER_BYTES..total - CHECK_BYTES].copy_from_slice(key_material);
    let check = check_of(&out[..total - CHECK_BYTES]);
    out[total - CHECK_BYTES..].copy_from_slice(&check);
    Ok(total)
}

/// A checked credential file, borrowed: the key material stays where it is (flash, or the caller's buffer).
#[derive(Debug)]
pub struct Credentials<'a> {
    /// How the device encrypts.
    pub mode: KeyMode,
    /// The named parameter set.
    pub parameters: GlweParameters,
    /// Device id, key id and MAC key.
    pub credentials: DeviceCredentials,
    /// The packed secret key or the public-key file.
    pub key_material: &'a [u8],
}

/// Reads a credential file: magic, version, mode, a known parameter set (32-bit, or the 64-bit integer set
/// in a secret-key mode), the exact length and the check. Any failure is [`Error::BadKeyFile`] (or a length
/// error), never a panic.
pub fn decode_credentials(bytes: &[u8]) -> Result<Credentials<'_>> {
    if bytes.len() < HEADER_BYTES + CHECK_BYTES || bytes[..4] != CREDENTIALS_MAGIC || bytes[4] != CREDENTIALS_VERSION {
        return Err(Error::BadKeyFile);
    }
    let mode = KeyMode::from_u8(bytes[5]).ok_or(Error::BadKeyFile)?;
    let parameters =
        GlweParameters::from_id(ParameterSetId(u16::from_le_bytes([bytes[6], bytes[7]]))).ok_or(Error::BadKeyFile)?;
    if !mode_allowed(mode, &parameters) {
        return Err(Error::BadKeyFile);
    }
    let total = credentials_file_bytes(mode, &parameters);
    Error::check_length(total, bytes.len())?;
    let (content, check) = bytes.split_at(total - CHECK_BYTES);
    if check_of(content) != check {
        return Err(Error::BadKeyFile);
    }
    let mut id = [0u8; 8];
    id.copy_from_slice(&bytes[8..16]);
    let mut key_id = [0u8; 4];
    key_id.copy_from_slice(&bytes[16..20]);
    let key_material = &content[HEADER_BYTES..];
    if mode == KeyMode::PublicKey {
        let (header, _) = public_key_body(key_material, u32::from_le_bytes(key_id))?;
        if header.parameters.id() != parameters.id() {
            return Err(Error::BadKeyFile);
        }
    }
    Ok(Credentials {
        mode,
        parameters,
        credentials: DeviceCredentials::new(
            u64::from_le_bytes(id),
            u32::from_le_bytes(key_id),
            MacKey::from_slice(&bytes[20..HEADER_BYTES])?,
        ),
        key_material,
    })
}
