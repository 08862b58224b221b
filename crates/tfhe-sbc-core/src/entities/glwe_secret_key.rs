//! A binary GLWE secret key: `k` polynomials of `N` coefficients in `{0, 1}`, one byte each.

use crate::dimensions::{GlweDimension, LweDimension, PolynomialSize};
use crate::error::{Error, Result};
use rand_core::CryptoRng;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Storage a [`GlweSecretKey`] can wrap: read access to the bytes, and a wipe that runs when the key is
/// dropped.
///
/// Every writable container (`AsRef<[u8]> + AsMut<[u8]>`: `[u8; N]`, `&mut [u8]`, `Vec<u8>`, ...) is one,
/// and is zeroized. [`ReadOnlyBytes`] wraps read-only bytes (a key in a microcontroller's flash, or in a
/// buffer someone else owns): the key cannot wipe them, and wiping any RAM copy is its owner's job.
pub trait KeyStorage: AsRef<[u8]> {
    /// Erases the key bytes if this storage can be written; a no-op for read-only storage.
    fn wipe(&mut self);
}

impl<C: AsRef<[u8]> + AsMut<[u8]>> KeyStorage for C {
    fn wipe(&mut self) {
        self.as_mut().zeroize();
    }
}

/// Read-only key bytes, e.g. `GlweSecretKey::from_container(ReadOnlyBytes(&KEY_IN_FLASH), n)`: a key that
/// is only read (encryptors and decryptors compute its spectra and keep those) can stay where it is.
/// Dropping the key does not wipe them.
#[derive(Clone, Copy)]
pub struct ReadOnlyBytes<'a>(pub &'a [u8]);

impl AsRef<[u8]> for ReadOnlyBytes<'_> {
    fn as_ref(&self) -> &[u8] {
        self.0
    }
}

impl KeyStorage for ReadOnlyBytes<'_> {
    fn wipe(&mut self) {}
}

impl core::fmt::Debug for ReadOnlyBytes<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ReadOnlyBytes(<{} bytes redacted>)", self.0.len())
    }
}

/// A binary GLWE secret key stored in `C` (`[u8; N]` on a device, [`ReadOnlyBytes`] for a key in flash,
/// `Vec<u8>` behind `alloc`), one byte (0 or 1) per coefficient, polynomial after polynomial.
///
/// Read as a flat vector, it is also the LWE key (dimension `k * N`) of sample-extracted ciphertexts.
///
/// The key wipes writable storage on drop ([`KeyStorage::wipe`]: a key built over a `&mut [u8]` wipes that
/// buffer; one over [`ReadOnlyBytes`] cannot), its `Debug` output never shows the coefficients, and it is
/// not `Clone`: a copy is made on purpose, with [`GlweSecretKey::from_container`] over a buffer whose fate
/// the caller controls.
pub struct GlweSecretKey<C: KeyStorage> {
    data: C,
    polynomial_size: PolynomialSize,
}

/// A key that owns a `Vec`.
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub type GlweSecretKeyOwned = GlweSecretKey<alloc::vec::Vec<u8>>;

impl<C: KeyStorage> GlweSecretKey<C> {
    /// Wraps existing key bytes: the length must be a non-zero multiple of `N` and every byte 0 or 1.
    ///
    /// On error the input is wiped ([`KeyStorage::wipe`]) before it is dropped.
    pub fn from_container(mut data: C, polynomial_size: PolynomialSize) -> Result<Self> {
        let len = data.as_ref().len();
        let n = polynomial_size.0;
        if n == 0 || len == 0 || len % n != 0 {
            data.wipe();
            return Err(Error::WrongLength {
                expected: n,
                found: len,
            });
        }
        // Constant-time in the key bits: OR all bytes' high bits together.
        let not_binary = data.as_ref().iter().fold(0u8, |acc, &b| acc | (b & 0xfe));
        if not_binary != 0 {
            data.wipe();
            return Err(Error::NonBinaryKey);
        }
        Ok(Self { data, polynomial_size })
    }

    /// `N`.
    pub fn polynomial_size(&self) -> PolynomialSize {
        self.polynomial_size
    }

    /// `k`.
    pub fn glwe_dimension(&self) -> GlweDimension {
        GlweDimension(self.data.as_ref().len() / self.polynomial_size.0)
    }

    /// The dimension `k * N` of the key read as an LWE key.
    pub fn lwe_dimension(&self) -> LweDimension {
        LweDimension(self.data.as_ref().len())
    }

    /// The coefficients (0 or 1), polynomial after polynomial. Handle with care: this is the secret.
    pub fn as_bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// The coefficients of polynomial `i`.
    pub fn polynomial(&self, i: usize) -> &[u8] {
        let n = self.polynomial_size.0;
        &self.data.as_ref()[i * n..(i + 1) * n]
    }
}

impl<C: KeyStorage + AsMut<[u8]>> GlweSecretKey<C> {
    /// Fills `data` (length a non-zero multiple of `N`) with a fresh uniform binary key from `rng`.
    pub fn generate_binary<R: CryptoRng + ?Sized>(
        mut data: C,
        polynomial_size: PolynomialSize,
        rng: &mut R,
    ) -> Result<Self> {
        let n = polynomial_size.0;
        let bytes = data.as_mut();
        if n == 0 || bytes.is_empty() || bytes.len() % n != 0 {
            return Err(Error::WrongLength {
                expected: n,
                found: bytes.len(),
            });
        }
        for chunk in bytes.chunks_mut(32) {
            let mut word = rng.next_u32();
            for b in chunk.iter_mut() {
                *b = (word & 1) as u8;
                word >>= 1;
            }
            word.zeroize();
        }
        Ok(Self { data, polynomial_size })
    }
}

impl<C: KeyStorage> Drop for GlweSecretKey<C> {
    fn drop(&mut self) {
        self.data.wipe();
    }
}

/// Writable storage is zeroized on drop; a key over [`ReadOnlyBytes`] is not `ZeroizeOnDrop`.
impl<C: AsRef<[u8]> + AsMut<[u8]>> ZeroizeOnDrop for GlweSecretKey<C> {}

impl<C: KeyStorage> core::fmt::Debug for GlweSecretKey<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let fields: [(&str, &dyn core::fmt::Debug); 3] = [
            ("glwe_dimension", &self.glwe_dimension().0),
            ("polynomial_size", &self.polynomial_size.0),
            ("coefficients", &"<redacted>"),
        ];
        crate::error::debug_struct(f, "GlweSecretKey", &fields)
    }
}

/// Packs binary key coefficients (one byte, 0 or 1, each) eight to a byte, least-significant bit first: the
/// form a device's credential file carries (`k * N / 8` bytes). Branch-free. `bits` must be exactly
/// `8 * packed.len()` long.
pub fn pack_secret_key(bits: &[u8], packed: &mut [u8]) -> Result<()> {
    if bits.len() != 8 * packed.len() {
        return Err(Error::WrongLength {
            expected: 8 * packed.len(),
            found: bits.len(),
        });
    }
    for (byte, eight) in packed.iter_mut().zip(bits.chunks_exact(8)) {
        *byte = eight.iter().enumerate().fold(0u8, |acc, (j, &b)| acc | ((b & 1) << j));
    }
    Ok(())
}

/// Unpacks a packed key ([`pack_secret_key`]) into one byte (0 or 1) per coefficient, e.g. into a
/// [`GlweSecretKey`]'s storage. Branch-free. `bits` must be exactly `8 * packed.len()` long.
pub fn unpack_secret_key(packed: &[u8], bits: &mut [u8]) -> Result<()> {
    if bits.len() != 8 * packed.len() {
        return Err(Error::WrongLength {
            expected: 8 * packed.len(),
            found: bits.len(),
        });
    }
    for (eight, &byte) in bits.chunks_exact_mut(8).zip(packed) {
        for (j, b) in eight.iter_mut().enumerate() {
            *b = (byte >> j) & 1;
        }
    }
    Ok(())
}
