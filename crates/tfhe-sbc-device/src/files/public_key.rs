//! The public-key file: what provisioning gives a public-key device.

use crate::encrypt::public_key_encryption::{PublicKeyBody, PublicKeyMask};
use crate::error::{Error, Result};
use crate::files::check::{CHECK_BYTES, file_check};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::{GlweParameters, ParameterSetId};
use tfhe_sbc_core::torus::UnsignedTorus;

/// The first bytes of a public-key file.
pub const PUBLIC_KEY_MAGIC: [u8; 4] = *b"TSPK";
/// The public-key file format version.
pub const PUBLIC_KEY_VERSION: u8 = 1;
/// The BLAKE2b personalization of the public-key file's checksum.
pub const PUBLIC_KEY_CHECK_PERSONALIZATION: &[u8; 16] = b"TFHE-SBC pk v1..";
const PUBLIC_KEY_HEADER_BYTES: usize = 4 + 1 + 2 + 4;
const PUBLIC_KEY_CHECK_BYTES: usize = CHECK_BYTES;

/// The bytes of a 32-bit-torus public-key file for polynomial size `n`:
/// `"TSPK" | version 1 | parameter set u16 LE | key id u32 LE | seed (32) | b (N LE u32) | check (16)`
/// (4,155 bytes at `N = 1024`).
pub const fn public_key_file_bytes(n: usize) -> usize {
    PUBLIC_KEY_HEADER_BYTES + MASK_SEED_BYTES + 4 * n + PUBLIC_KEY_CHECK_BYTES
}

/// The bytes of a public-key file for the set `params`: as [`public_key_file_bytes`], with `b` as `N`
/// little-endian words of the set's torus (`u64` on the integer set: 16,443 bytes at `N = 2048`).
pub const fn public_key_file_bytes_for(params: &GlweParameters) -> usize {
    let word_bytes = params.torus_bits() as usize / 8;
    PUBLIC_KEY_HEADER_BYTES + MASK_SEED_BYTES + word_bytes * params.polynomial_size().0 + PUBLIC_KEY_CHECK_BYTES
}

/// The checksum: BLAKE2b-128 of everything before it. It catches corruption, not forgery: the public key
/// must reach the device through an authentic channel (provisioning).
fn public_key_check(bytes: &[u8]) -> [u8; PUBLIC_KEY_CHECK_BYTES] {
    file_check(PUBLIC_KEY_CHECK_PERSONALIZATION, bytes)
}

/// Writes a public-key file (see [`public_key_file_bytes_for`]) into `out`, its body words `u32` or `u64` as
/// the set's torus; returns its length.
pub fn encode_public_key<T: UnsignedTorus>(
    parameter_set: ParameterSetId,
    key_id: u32,
    seed: &[u8; MASK_SEED_BYTES],
    body: &[T],
    out: &mut [u8],
) -> Result<usize> {
    let total = PUBLIC_KEY_HEADER_BYTES + MASK_SEED_BYTES + T::BYTES * body.len() + PUBLIC_KEY_CHECK_BYTES;
    let out = out.get_mut(..total).ok_or(Error::BufferTooSmall)?;
    out[..4].copy_from_slice(&PUBLIC_KEY_MAGIC);
    out[4] = PUBLIC_KEY_VERSION;
    out[5..7].copy_from_slice(&parameter_set.0.to_le_bytes());
    out[7..11].copy_from_slice(&key_id.to_le_bytes());
    out[11..43].copy_from_slice(seed);
    for (chunk, w) in out[43..43 + T::BYTES * body.len()].chunks_exact_mut(T::BYTES).zip(body) {
        w.write_le(chunk);
    }
    let check = public_key_check(&out[..total - PUBLIC_KEY_CHECK_BYTES]);
    out[total - PUBLIC_KEY_CHECK_BYTES..].copy_from_slice(&check);
    Ok(total)
}

/// A decoded public-key file: its parameter set, key id and seed; the body words go to the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublicKeyHeader {
    /// The named parameter set.
    pub parameters: GlweParameters,
    /// The key id frames encrypted under it carry.
    pub key_id: u32,
    /// The mask seed.
    pub seed: [u8; MASK_SEED_BYTES],
}

/// Reads a public-key file's header, no heap: checks magic, version, a known parameter set, the exact length
/// for its torus and the checksum, then refuses a degenerate key ([`Error::DegeneratePublicKey`]: the one
/// public-key check, `crate::encrypt::public_key_check`, the encryptors run too); the body stays in `bytes`.
pub fn decode_public_key_header(bytes: &[u8]) -> Result<PublicKeyHeader> {
    if bytes.len() < PUBLIC_KEY_HEADER_BYTES || bytes[..4] != PUBLIC_KEY_MAGIC || bytes[4] != PUBLIC_KEY_VERSION {
        return Err(Error::BadKeyFile);
    }
    let id = u16::from_le_bytes([bytes[5], bytes[6]]);
    let parameters = GlweParameters::from_id(ParameterSetId(id)).ok_or(Error::BadKeyFile)?;
    Error::check_length(public_key_file_bytes_for(&parameters), bytes.len())?;
    let (content, check_bytes) = bytes.split_at(bytes.len() - PUBLIC_KEY_CHECK_BYTES);
    if public_key_check(content) != check_bytes {
        return Err(Error::BadKeyFile);
    }
    let key_id = u32::from_le_bytes([bytes[7], bytes[8], bytes[9], bytes[10]]);
    let mut seed = [0u8; MASK_SEED_BYTES];
    seed.copy_from_slice(&bytes[11..43]);
    let body = &content[PUBLIC_KEY_HEADER_BYTES + MASK_SEED_BYTES..];
    let k = parameters.glwe_dimension().0;
    if parameters.torus_bits() == 64 {
        PublicKeyMask::Seeded(&seed).check_key(k, PublicKeyBody::<u64>::LeBytes(body))?;
    } else {
        PublicKeyMask::Seeded(&seed).check_key(k, PublicKeyBody::<u32>::LeBytes(body))?;
    }
    Ok(PublicKeyHeader {
        parameters,
        key_id,
        seed,
    })
}

/// Reads a public-key file, no heap: [`decode_public_key_header`]'s checks, then writes `b` into `body`
/// (`N` words of the set's torus, `u32` or `u64`; another torus is an error).
pub fn decode_public_key<T: UnsignedTorus>(bytes: &[u8], body: &mut [T]) -> Result<PublicKeyHeader> {
    let header = decode_public_key_header(bytes)?;
    header.parameters.check_torus::<T>()?;
    Error::check_length(header.parameters.polynomial_size().0, body.len())?;
    let words = &bytes[PUBLIC_KEY_HEADER_BYTES + MASK_SEED_BYTES..bytes.len() - PUBLIC_KEY_CHECK_BYTES];
    for (w, chunk) in body.iter_mut().zip(words.chunks_exact(T::BYTES)) {
        *w = T::from_le_slice(chunk);
    }
    Ok(header)
}

/// A public-key file bound to the key set of the credentials it came with: [`decode_public_key_header`]'s
/// checks, then the key id must be `key_id` (the credential file's), else
/// [`Error::PublicKeyOfAnotherKeySet`]. Returns the header and the body's little-endian bytes (`4 N` or `8 N`),
/// for `PublicKeyEncryptor::set_public_key_le_bytes` or `IntegerPublicKeyEncryptor::set_integer_public_key_le_bytes`
/// (no copy of the body is made).
pub fn public_key_body(bytes: &[u8], key_id: u32) -> Result<(PublicKeyHeader, &[u8])> {
    let header = decode_public_key_header(bytes)?;
    if header.key_id != key_id {
        return Err(Error::PublicKeyOfAnotherKeySet {
            expected_key_id: key_id,
            found_key_id: header.key_id,
        });
    }
    let body = &bytes[PUBLIC_KEY_HEADER_BYTES + MASK_SEED_BYTES..bytes.len() - PUBLIC_KEY_CHECK_BYTES];
    Ok((header, body))
}
