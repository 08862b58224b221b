//! Encryptors that write tfhe-rs's own `CompactCiphertextList` (packed, conformant: two 2-bit blocks per
//! LWE, degree 15; [`crate::compact_list`]) of `u8`/`u16`/`u32`/`bool` readings into a caller's buffer,
//! under a raw tfhe-rs compact public key `[a | b]` of the set
//! [`PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`]. An unmodified tfhe-rs 1.8 server reads the bytes
//! with `safe_deserialize_conformant` and `expand`s them with its casting key; no adapter of ours is needed.
//! What tfhe-rs's `CompactCiphertextList::builder(&pk).extend(..).build_packed()` does (tfhe-rs
//! `integer/ciphertext/compact_list.rs`, `shortint/public_key/compact.rs`), without std, heap or rayon.
//!
//! Two forms, one lifecycle ([`Encryptor`]: `EMPTY` in a `static`, set the key, seed, `is_ready`, `reseed`,
//! `forget_key`, zeroize on drop, `Debug` without secrets), the same bytes from the same CSPRNG state:
//! * [`CompactListEncryptor`]: streaming ([`crate::encrypt::compact_list_encryption`]). It borrows the key
//!   where it lies (flash: `'k` is `'static` in firmware) and needs about 2.6 KiB of stack per list (`r`,
//!   one batch of words) besides the encryptor, whatever the list's length: 5,167 bytes of stack in all for
//!   a list of 512 `u8`, encryptor included (`tests/compact_list.rs`, x86_64). `N^2 + N n` masked additions per bin of `n` LWEs.
//! * [`CompactListNttEncryptor`]: the key's two spectra computed once through the exact product `P`
//!   ([`NttPlan64`] by default), then per bin three transforms and two products
//!   ([`crate::encrypt::public_key_encryption::encrypt_glwe_ciphertext_with_public_key_assign`]). It
//!   holds `4 * 12 N + 16 N` bytes (128 KiB at `N = 2048` with [`NttPlan64`]): where RAM allows.
//!
//! The set is fixed by the type, so [`Encryptor::parameter_set`] reports [`ParameterSetId::CUSTOM`] for
//! these encryptors (our wire ids name GLWE sets of our frames, and these lists are not frames).
//!
//! A stolen device holds only the public key: nothing on it decrypts. The CSPRNG erases its key after each
//! bin ([`crate::csprng::xof::KeyedXof::ratchet`]).
//!
//! # Timing
//! Constant-time in `r`, `e1`, `e2` and the readings (see [`crate::encrypt::compact_list_encryption`] and
//! [`negacyclic_ntt`]); checked by the workspace's constant-time check under valgrind.

use crate::compact_list::format::ListLayout;
use crate::compact_list::{
    CompactPkeParameters, CompactReading, PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, packed_plaintext,
};
use crate::csprng::construction::{DeviceConstruction, XofConstruction};
use crate::encrypt::compact_list_encryption::{CompactPublicKey, encrypt_compact_bin};
use crate::encrypt::public_key::PublicKey;
use crate::encrypt::public_key_encryption::PublicKeyMask;
use crate::encrypt::shell::{Encryptor, EncryptorKey};
use crate::encrypt::state::EncryptorState;
use crate::error::{Error, Result};
use crate::noise::DeviceNoise;
use crate::product::NegacyclicProductPlan;
use negacyclic_ntt::NttPlan64;
use tfhe_sbc_core::parameters::ParameterSetId;
use tfhe_sbc_core::tuniform::TUniform;
use zeroize::Zeroize;

/// The set every compact-list encryptor encrypts for.
const PARAMS: CompactPkeParameters = PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
/// Its `N`: 2048.
pub const COMPACT_PKE_N: usize = PARAMS.lwe_dimension;
/// The bytes of a raw compact public key `[a | b]`: `2 N` little-endian words, 32 KiB.
pub const COMPACT_PUBLIC_KEY_BYTES: usize = 16 * COMPACT_PKE_N;

/// The bytes of a packed list of `values` readings of type `T` ([`crate::compact_list::list_bytes`]):
/// `211 + 8 (2048 bins + LWEs) + 16 values` for integers. A `const`: firmware sizes a `static` buffer.
pub const fn compact_list_bytes<T: CompactReading>(values: usize) -> usize {
    crate::compact_list::list_bytes(&PARAMS, T::KIND, values)
}

/// The streaming encryptor's key material: the borrowed public key (public), or none.
pub struct BorrowedCompactKey<'k> {
    key: Option<CompactPublicKey<'k>>,
}

impl Zeroize for BorrowedCompactKey<'_> {
    /// Drops the borrow: the key itself is public and not the encryptor's to wipe.
    fn zeroize(&mut self) {
        self.key = None;
    }
}

impl EncryptorKey for BorrowedCompactKey<'_> {
    const EMPTY: Self = Self { key: None };
    const NAME: &'static str = "CompactListEncryptor";
    const TORUS_BITS: u32 = 64;
    const COMPACT_BODY: bool = false;
}

/// The streaming compact-list encryptor: the [`Encryptor`] shell around a [`BorrowedCompactKey`]. It
/// holds a reference to the key and the [`EncryptorState`]; each list takes about 2.6 KiB of stack
/// (`r`, one batch of words) and [`compact_list_bytes`] of the caller's buffer.
///
/// ```
/// # use tfhe_sbc_device::encrypt::compact_list::{CompactListEncryptor, compact_list_bytes};
/// # fn main() -> tfhe_sbc_device::Result<()> {
/// # // A uniform-looking stand-in for a real key (SplitMix64): the key check refuses structured bodies.
/// # let mut x = 0u64;
/// # let key: Vec<u64> = (0..4096).map(|_| {
/// #     x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
/// #     let z = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
/// #     let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
/// #     z ^ (z >> 31)
/// # }).collect();
/// let mut encryptor = CompactListEncryptor::EMPTY; // a `static` in firmware, the key in flash
/// encryptor.set_public_key(&key)?; // [a | b], 2 x 2048 words
/// encryptor.seed_from_bytes(&mut [7; 32]); // a hardware TRNG's bytes on a device
/// let mut list = vec![0u8; compact_list_bytes::<u8>(3)];
/// let written = encryptor.encrypt_list(&[0u8, 17, 255], &mut list)?;
/// assert_eq!(written, 16_691); // 211 + 8 (2048 + 6) + 16 * 3: tfhe-rs's own size for three packed u8
/// # Ok(())
/// # }
/// ```
pub type CompactListEncryptor<'k> = Encryptor<BorrowedCompactKey<'k>, DeviceConstruction>;

impl<'k, X: XofConstruction> Encryptor<BorrowedCompactKey<'k>, X> {
    /// Sets the public key `[a | b]` (`2 N` words, `N` = 2048), borrowed for as long as the encryptor
    /// uses it. Refuses a key of another size and a degenerate key; on error the encryptor has no key.
    pub fn set_public_key(&mut self, key: &'k [u64]) -> Result<()> {
        self.set_compact_key(CompactPublicKey::from_words(key, COMPACT_PKE_N))
    }

    /// [`Self::set_public_key`] from the key's little-endian bytes ([`COMPACT_PUBLIC_KEY_BYTES`]), read in
    /// place (a key in flash is never copied into RAM).
    pub fn set_public_key_le_bytes(&mut self, key: &'k [u8]) -> Result<()> {
        self.set_compact_key(CompactPublicKey::from_le_bytes(key, COMPACT_PKE_N))
    }

    fn set_compact_key(&mut self, key: Result<CompactPublicKey<'k>>) -> Result<()> {
        self.forget_key();
        self.key.key = Some(key?);
        self.state.set_key(ParameterSetId::CUSTOM, compact_noise()?);
        Ok(())
    }

    /// Encrypts `readings` as one packed tfhe-rs `CompactCiphertextList` into `out` (at least
    /// [`compact_list_bytes`] bytes) and returns its length. Each bin of up to 2048 LWEs is one encryption
    /// (its own `r`, the CSPRNG's key erased afterwards).
    pub fn encrypt_list<T: CompactReading>(&mut self, readings: &[T], out: &mut [u8]) -> Result<usize> {
        let key = self.key.key;
        write_list(&mut self.state, readings, out, |state, layout, bin, out| {
            let key = key.as_ref().ok_or(Error::KeyNotSet)?;
            state.encrypt_with(|noise, rng| encrypt_compact_bin(key, noise, layout, bin, readings, out, rng))
        })
    }
}

/// The NTT encryptor's key material: the public key's spectra and the scratch of
/// [`PublicKey`] (`K = 1`), and the mask and body words of one bin (wiped after every bin).
#[derive(Zeroize)]
pub struct CompactKeySpectra<P: NegacyclicProductPlan<COMPACT_PKE_N, Torus = u64>> {
    key: PublicKey<COMPACT_PKE_N, 1, P>,
    mask: [u64; COMPACT_PKE_N],
    body: [u64; COMPACT_PKE_N],
}

impl<P: NegacyclicProductPlan<COMPACT_PKE_N, Torus = u64>> EncryptorKey for CompactKeySpectra<P> {
    const EMPTY: Self = Self {
        key: <PublicKey<COMPACT_PKE_N, 1, P> as EncryptorKey>::EMPTY,
        mask: [0; COMPACT_PKE_N],
        body: [0; COMPACT_PKE_N],
    };
    const NAME: &'static str = "CompactListNttEncryptor";
    const TORUS_BITS: u32 = 64;
    const COMPACT_BODY: bool = false;
}

/// The compact-list encryptor through the exact product `P` ([`NttPlan64`] by default): the [`Encryptor`]
/// shell around [`CompactKeySpectra`] (128 KiB with [`NttPlan64`]: build it in a `static` or a `Box`). The
/// same bytes as [`CompactListEncryptor`] from the same CSPRNG state, in a fraction of the time.
pub type CompactListNttEncryptor<P = NttPlan64> = Encryptor<CompactKeySpectra<P>, DeviceConstruction>;

impl<P: NegacyclicProductPlan<COMPACT_PKE_N, Torus = u64>, X: XofConstruction> Encryptor<CompactKeySpectra<P>, X> {
    /// Sets the public key `[a | b]` (`2 N` words): refuses a key of another size and a degenerate key,
    /// then computes its two spectra once (the key is not kept). On error the encryptor has no key.
    pub fn set_public_key(&mut self, key: &[u64]) -> Result<()> {
        self.set_compact_key(CompactPublicKey::from_words(key, COMPACT_PKE_N))
    }

    /// [`Self::set_public_key`] from the key's little-endian bytes ([`COMPACT_PUBLIC_KEY_BYTES`]).
    pub fn set_public_key_le_bytes(&mut self, key: &[u8]) -> Result<()> {
        self.set_compact_key(CompactPublicKey::from_le_bytes(key, COMPACT_PKE_N))
    }

    fn set_compact_key(&mut self, key: Result<CompactPublicKey<'_>>) -> Result<()> {
        self.forget_key();
        let key = key?;
        self.key.key.install(PublicKeyMask::Full(key.mask()), key.body())?;
        self.state.set_key(ParameterSetId::CUSTOM, compact_noise()?);
        Ok(())
    }

    /// [`CompactListEncryptor::encrypt_list`] through the product: the same bytes from the same CSPRNG
    /// state.
    pub fn encrypt_list<T: CompactReading>(&mut self, readings: &[T], out: &mut [u8]) -> Result<usize> {
        let CompactKeySpectra { key, mask, body } = &mut self.key;
        write_list(&mut self.state, readings, out, |state, layout, bin, out| {
            let n = COMPACT_PKE_N;
            let lwes = layout.lwes_in_bin(bin);
            // The plaintext of LWE j at position N - 1 - j: body_j is then (b * u)_{N-1-j} with u = rev(r).
            body.iter_mut().for_each(|w| *w = 0);
            for j in 0..lwes {
                let p = packed_plaintext(&PARAMS, readings, bin * n + j);
                body[n - 1 - j] = PARAMS.delta().wrapping_mul(p);
            }
            let encrypted = key.encrypt_plaintexts(state, mask, body);
            if encrypted.is_ok() {
                let at = layout.mask_offset(bin);
                for (word, le) in mask.iter().zip(out[at..at + 8 * n].chunks_exact_mut(8)) {
                    le.copy_from_slice(&word.to_le_bytes());
                }
                for j in 0..lwes {
                    let at = layout.body_offset(bin * n + j);
                    out[at..at + 8].copy_from_slice(&body[n - 1 - j].to_le_bytes());
                }
            }
            mask.zeroize();
            body.zeroize();
            encrypted
        })
    }
}

/// TUniform(17), the set's encryption noise, constant-time.
fn compact_noise() -> Result<DeviceNoise> {
    Ok(DeviceNoise::TUniform(TUniform::new(PARAMS.noise_bound_log2)?))
}

/// Writes a packed list of `readings` into `out`: header, each bin through `encrypt_bin(state, layout, bin,
/// out)`, trailer. Checks readiness and the buffer first; returns the list's length.
fn write_list<X: XofConstruction, T: CompactReading>(
    state: &mut EncryptorState<X>,
    readings: &[T],
    out: &mut [u8],
    mut encrypt_bin: impl FnMut(&mut EncryptorState<X>, &ListLayout, usize, &mut [u8]) -> Result<()>,
) -> Result<usize> {
    state.check_ready()?;
    let layout = ListLayout::new(&PARAMS, T::KIND, readings.len())?;
    let out = out.get_mut(..layout.bytes()).ok_or(Error::BufferTooSmall)?;
    layout.write_header(out)?;
    for bin in 0..layout.bins() {
        encrypt_bin(state, &layout, bin, out)?;
    }
    layout.write_trailer(out)?;
    Ok(layout.bytes())
}
