//! The bytes of a serialized `tfhe::CompactCiphertextList` (tfhe-rs 1.8.2, plain: no proof), as
//! `tfhe::safe_serialization::safe_serialize` writes them: bincode 1.3 with fixed-width little-endian
//! integers (`tfhe-safe-serialize-0.1.1/src/lib.rs`), each versioned type as its dispatch enum (a `u32`
//! version index, then its fields in declaration order; `tfhe-versionable-derive`).
//!
//! ```text
//! SerializationHeader     u64 3 "0.5" | u32 0 (Versioned) u64 3 "0.1" | u64 37 "high_level_api::CompactCiphertextList"
//! HL list V1              u32 1   (high_level_api/backward_compatibility/compact_list.rs)
//! integer list V1         u32 1   (integer/backward_compatibility/ciphertext/mod.rs)
//! shortint list V2        u32 2   (shortint/backward_compatibility/ciphertext/mod.rs)
//! LweCompactCiphertextList V0 u32 0, data: u64 len, every bin's mask (N words), then every body
//! ...                     lwe_size N + 1, lwe count, modulus (u128 0 = native, u64 64), all as V0
//! shortint fields         degree 15, message modulus 4, carry modulus 4, expansion kind V1 RequiresCasting
//! integer info            u64 values, per value DataKind V1 (Unsigned: u32 0 u64 blocks; Boolean: u32 2)
//! HL tag                  u32 0 (TagVersions::V0), u64 0 (empty)
//! ```
//!
//! 211 bytes of header and trailer besides `8 (N bins + lwes)` of words and the per-value info (16 bytes for
//! an unsigned value, 8 for a boolean). Checked byte for byte against lists tfhe-rs 1.8.2 serializes
//! (the adapter's `tests/compact_list.rs`). tfhe-rs 1.8.2 reads exactly these version indices; an older
//! server may not read newer ones.

use crate::compact_list::parameters::{CompactPkeParameters, ValueKind};
use crate::error::{Error, Result};

/// `SerializationHeader::header_version` (`SERIALIZATION_VERSION`).
const HEADER_VERSION: &str = "0.5";
/// `SerializationVersioningMode::Versioned::versioning_version` (`VERSIONING_VERSION`).
const VERSIONING_VERSION: &str = "0.1";
/// `<tfhe::CompactCiphertextList as Named>::NAME`.
const NAME: &str = "high_level_api::CompactCiphertextList";

/// The bytes before the first data word: the serialization header (71), the four version tags and the
/// data's length.
pub const DATA_OFFSET: usize = 8 + HEADER_VERSION.len() + 4 + 8 + VERSIONING_VERSION.len() + 8 + NAME.len() + 4 * 4 + 8;

/// The trailer's bytes besides the per-value info: LWE size, count, modulus, degree, moduli, expansion
/// kind, the info's length and the empty tag.
const TRAILER_FIXED_BYTES: usize = 12 + 12 + (4 + 16 + 8) + 12 + 12 + 12 + 8 + 8 + 12;

/// The info bytes of one value of `kind`: a `DataKindVersions::V1` tag, the variant and its block count.
const fn info_bytes(kind: ValueKind) -> usize {
    match kind {
        ValueKind::Unsigned { .. } => 4 + 4 + 8,
        ValueKind::Boolean => 4 + 4,
    }
}

/// The bytes of a packed list of `values` values of `kind` under `params`:
/// `211 + 8 (N bins + lwes) + info`. Panics on overflow (a `const` in firmware fails to compile).
pub const fn list_bytes(params: &CompactPkeParameters, kind: ValueKind, values: usize) -> usize {
    let lwes = (values * kind.blocks()).div_ceil(2);
    let bins = lwes.div_ceil(params.lwe_dimension);
    DATA_OFFSET + 8 * (bins * params.lwe_dimension + lwes) + TRAILER_FIXED_BYTES + values * info_bytes(kind)
}

/// Where everything of one packed list goes: its shape (`values` values of one kind) and the offsets of its
/// masks, bodies and trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListLayout {
    params: CompactPkeParameters,
    kind: ValueKind,
    values: usize,
    lwes: usize,
    bins: usize,
    bytes: usize,
}

impl ListLayout {
    /// The layout of a packed list of `values` values of `kind`: `ceil(values * blocks / 2)` LWEs in
    /// `ceil(lwes / N)` bins. [`Error::MessageTooLarge`] if its size overflows `usize`.
    pub fn new(params: &CompactPkeParameters, kind: ValueKind, values: usize) -> Result<Self> {
        let n = params.lwe_dimension;
        let lwes = values
            .checked_mul(kind.blocks())
            .ok_or(Error::MessageTooLarge)?
            .div_ceil(2);
        let bins = lwes.div_ceil(n);
        let bytes = bins
            .checked_mul(n)
            .and_then(|words| words.checked_add(lwes))
            .and_then(|words| words.checked_mul(8))
            .and_then(|b| b.checked_add(values.checked_mul(info_bytes(kind))?))
            .and_then(|b| b.checked_add(DATA_OFFSET + TRAILER_FIXED_BYTES))
            .ok_or(Error::MessageTooLarge)?;
        Ok(Self {
            params: *params,
            kind,
            values,
            lwes,
            bins,
            bytes,
        })
    }

    /// The parameters of the key the list is encrypted under.
    pub const fn params(&self) -> CompactPkeParameters {
        self.params
    }

    /// The list's bytes.
    pub const fn bytes(&self) -> usize {
        self.bytes
    }

    /// The number of values.
    pub const fn values(&self) -> usize {
        self.values
    }

    /// The number of (packed) LWE ciphertexts: `lwe_ciphertext_count`.
    pub const fn lwes(&self) -> usize {
        self.lwes
    }

    /// The number of bins (mask polynomials), each serving up to `N` LWEs.
    pub const fn bins(&self) -> usize {
        self.bins
    }

    /// The LWEs of bin `bin`: `N`, except in the last bin.
    pub const fn lwes_in_bin(&self, bin: usize) -> usize {
        let n = self.params.lwe_dimension;
        let rest = self.lwes - bin * n;
        if rest < n { rest } else { n }
    }

    /// The byte offset of bin `bin`'s mask (`N` words).
    pub const fn mask_offset(&self, bin: usize) -> usize {
        DATA_OFFSET + 8 * bin * self.params.lwe_dimension
    }

    /// The byte offset of the body of LWE `lwe` (one word).
    pub const fn body_offset(&self, lwe: usize) -> usize {
        DATA_OFFSET + 8 * (self.bins * self.params.lwe_dimension + lwe)
    }

    /// The byte offset of the trailer (everything after the data words).
    pub const fn trailer_offset(&self) -> usize {
        self.body_offset(self.lwes)
    }

    /// Writes the header (everything before the data words, [`DATA_OFFSET`] bytes) into `out`.
    /// [`Error::BufferTooSmall`] unless `out` holds [`Self::bytes`].
    pub fn write_header(&self, out: &mut [u8]) -> Result<()> {
        let out = out.get_mut(..self.bytes).ok_or(Error::BufferTooSmall)?;
        let mut w = Cursor { out, at: 0 };
        w.str(HEADER_VERSION);
        w.u32(0); // SerializationVersioningMode::Versioned
        w.str(VERSIONING_VERSION);
        w.str(NAME);
        w.u32(1); // high_level_api CompactCiphertextListVersions::V1 { inner, tag }
        w.u32(1); // integer CompactCiphertextListVersions::V1 { ct_list, info }
        w.u32(2); // shortint CompactCiphertextListVersions::V2 { ct_list, degree, moduli, expansion_kind }
        w.u32(0); // LweCompactCiphertextListVersions::V0 { data, lwe_size, count, modulus }
        w.u64((self.bins * self.params.lwe_dimension + self.lwes) as u64);
        debug_assert_eq!(w.at, DATA_OFFSET);
        Ok(())
    }

    /// Writes the trailer (everything after the data words) into `out`, which holds the whole list.
    /// [`Error::BufferTooSmall`] unless `out` holds [`Self::bytes`].
    pub fn write_trailer(&self, out: &mut [u8]) -> Result<()> {
        let out = out.get_mut(..self.bytes).ok_or(Error::BufferTooSmall)?;
        let mut w = Cursor {
            out,
            at: self.trailer_offset(),
        };
        w.versioned_u64(self.params.lwe_dimension as u64 + 1); // LweSize
        w.versioned_u64(self.lwes as u64); // LweCiphertextCount
        w.u32(0); // SerializableCiphertextModulusVersions::V0
        w.u128(0); // native modulus
        w.u64(64); // scalar_bits
        w.versioned_u64(self.params.packed_degree()); // Degree
        w.versioned_u64(self.params.message_modulus); // MessageModulus
        w.versioned_u64(self.params.carry_modulus); // CarryModulus
        w.u32(1); // CompactCiphertextListExpansionKindVersions::V1
        w.u32(0); // CompactCiphertextListExpansionKind::RequiresCasting
        w.u64(self.values as u64);
        for _ in 0..self.values {
            w.u32(1); // DataKindVersions::V1
            match self.kind {
                ValueKind::Unsigned { blocks } => {
                    w.u32(0); // DataKind::Unsigned(NonZeroUsize)
                    w.u64(blocks as u64);
                }
                ValueKind::Boolean => w.u32(2), // DataKind::Boolean
            }
        }
        w.u32(0); // TagVersions::V0
        w.u64(0); // an empty tag
        debug_assert_eq!(w.at, self.bytes);
        Ok(())
    }
}

/// Little-endian writes into a slice the caller has checked is long enough.
struct Cursor<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Cursor<'_> {
    fn bytes(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn u128(&mut self, v: u128) {
        self.bytes(&v.to_le_bytes());
    }
    /// A string: its length as `u64`, then its bytes.
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
    /// A versioned newtype of a `usize` or `u64` at version 0.
    fn versioned_u64(&mut self, v: u64) {
        self.u32(0);
        self.u64(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact_list::parameters::PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 as P;

    const U8: ValueKind = ValueKind::Unsigned { blocks: 4 };

    #[test]
    fn sizes_match_the_formula_and_tfhe_rs() {
        assert_eq!(DATA_OFFSET + TRAILER_FIXED_BYTES, 211);
        // 211 + 8 (2048 bins + lwes) + 16 values; tfhe-rs 1.8.2's own lists of u8 (the notes' table).
        for (values, bytes) in [(1, 16_627), (64, 18_643), (512, 32_979), (1024, 49_363)] {
            assert_eq!(list_bytes(&P, U8, values), bytes);
            assert_eq!(ListLayout::new(&P, U8, values).map(|l| l.bytes()), Ok(bytes));
        }
        let layout = ListLayout::new(&P, ValueKind::Unsigned { blocks: 16 }, 513).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((layout.lwes(), layout.bins(), layout.lwes_in_bin(1)), (4104, 3, 2048));
        assert_eq!(layout.lwes_in_bin(2), 8);
        assert_eq!(list_bytes(&P, ValueKind::Boolean, 3), 211 + 8 * (2048 + 2) + 3 * 8);
        assert_eq!(ListLayout::new(&P, U8, usize::MAX), Err(Error::MessageTooLarge));
    }

    #[test]
    fn header_and_trailer() {
        let layout = ListLayout::new(&P, U8, 2).unwrap_or_else(|e| panic!("{e}"));
        let mut out = [0xAAu8; 16_659];
        assert_eq!(layout.bytes(), out.len());
        layout.write_header(&mut out).unwrap_or_else(|e| panic!("{e}"));
        layout.write_trailer(&mut out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&out[..11], b"\x03\0\0\0\0\0\0\x000.5");
        assert_eq!(
            &out[71..DATA_OFFSET],
            &[
                1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x08, 0, 0, 0, 0, 0, 0
            ]
        );
        let trailer = &out[layout.trailer_offset()..];
        assert_eq!(&trailer[..12], &[0, 0, 0, 0, 0x01, 0x08, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&trailer[trailer.len() - 12..], &[0; 12]);
        assert_eq!(layout.write_header(&mut out[..10]), Err(Error::BufferTooSmall));
    }
}
