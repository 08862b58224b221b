//! The encryptor a credential file calls for, on the heap, built in place: whatever its mode (fleet,
//! per-device, public key) and parameter set (boolean sets 1-3, the integer set 4), or the compact-list
//! encryptor of a compact-list device, one [`FrameEncryptor`] behind one type, [`MessageEncryptor`], that
//! encrypts whole messages into frames.

use crate::encrypt::frame_encryptor::FrameSealing;
use crate::encrypt::integer::IntegerKey;
use crate::encrypt::public_key::PublicKey;
use crate::encrypt::secret_key::SecretKey;
use crate::encrypt::{CompactListFrameEncryptor, Encryptor, EncryptorKey, FrameEncryptor};
use crate::error::{Error, Result};
use crate::files::compact_public_key::{CompactKeyFileError, decode_compact_public_key_file};
use crate::files::credentials::{Credentials, KeyMode};
use crate::files::public_key::public_key_body;
use crate::frame::mac::DeviceCredentials;
use crate::frame::message::chunks;
use crate::frame::{FrameKind, OutgoingMessage};
use crate::product::DefaultProduct;
use negacyclic_ntt::NttPlan64;
use rand_core::TryCryptoRng;
use std::boxed::Box;
use std::fmt;
use std::vec;
use std::vec::Vec;
use tfhe_sbc_core::parameters::{GlweParameters, IntegerParameters};

/// One encrypted, authenticated frame and its sequence number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedFrame {
    /// The frame's sequence number.
    pub sequence: u64,
    /// The whole frame (wire format v2).
    pub bytes: Vec<u8>,
}

/// Where an encryptor's CSPRNG seed comes from: drawn straight into the encryptor, never through a copy.
enum SeedSource<'a, R: TryCryptoRng + ?Sized> {
    /// A caller's cryptographic RNG (32 bytes are drawn from it).
    Rng(&'a mut R),
    /// The operating system (`getrandom`).
    #[cfg(feature = "getrandom")]
    #[cfg_attr(docsrs, doc(cfg(feature = "getrandom")))]
    Os,
}

impl<R: TryCryptoRng + ?Sized> SeedSource<'_, R> {
    fn seed<Key: EncryptorKey>(&mut self, encryptor: &mut Encryptor<Key>) -> Result<()> {
        match self {
            Self::Rng(rng) => encryptor.seed(*rng),
            #[cfg(feature = "getrandom")]
            Self::Os => encryptor.seed_from_os(),
        }
    }
}

/// Builds an encryptor of key kind `Key` where it lives (on the heap, from the all-zero `EMPTY`, which holds
/// no secret), sets its key with `set_key` and seeds it in place: no secret state is ever moved or copied.
fn build_in_place<Key, R>(
    seed: &mut SeedSource<'_, R>,
    set_key: impl FnOnce(&mut Encryptor<Key>) -> Result<()>,
) -> Result<Box<dyn FrameEncryptor + Send>>
where
    Key: FrameSealing + Send + 'static,
    R: TryCryptoRng + ?Sized,
{
    let mut encryptor = Box::new(Encryptor::<Key>::EMPTY);
    set_key(&mut encryptor)?;
    seed.seed(&mut encryptor)?;
    Ok(encryptor)
}

/// The boolean secret-key encryptor of `N`, `K`.
fn secret_key<const N: usize, const K: usize, R: TryCryptoRng + ?Sized>(
    seed: &mut SeedSource<'_, R>,
    params: &GlweParameters,
    packed_key: &[u8],
) -> Result<Box<dyn FrameEncryptor + Send>> {
    build_in_place::<SecretKey<N, K, DefaultProduct>, R>(seed, |e| e.set_packed_key(params, packed_key))
}

/// The boolean public-key encryptor of `N`, `K`, bound to the credentials' key id.
fn public_key<const N: usize, const K: usize, R: TryCryptoRng + ?Sized>(
    seed: &mut SeedSource<'_, R>,
    params: &GlweParameters,
    key_id: u32,
    public_key_file: &[u8],
) -> Result<Box<dyn FrameEncryptor + Send>> {
    let (header, body) = public_key_body(public_key_file, key_id)?;
    if header.parameters.id() != params.id() {
        return Err(Error::BadKeyFile);
    }
    build_in_place::<PublicKey<N, K, DefaultProduct>, R>(seed, |e| {
        e.set_public_key_le_bytes(params, &header.seed, body)
    })
}

/// The integer encryptor of set 4 (`N = 2048`, 64-bit torus).
fn integer<R: TryCryptoRng + ?Sized>(
    seed: &mut SeedSource<'_, R>,
    params: &GlweParameters,
    packed_key: &[u8],
) -> Result<Box<dyn FrameEncryptor + Send>> {
    let integer = IntegerParameters::from_id(params.id()).ok_or(Error::BadKeyFile)?;
    build_in_place::<IntegerKey<2048, NttPlan64>, R>(seed, |e| e.set_packed_key(&integer, packed_key))
}

/// The integer public-key encryptor of set 4, bound to the credentials' key id.
fn integer_public_key<R: TryCryptoRng + ?Sized>(
    seed: &mut SeedSource<'_, R>,
    params: &GlweParameters,
    key_id: u32,
    public_key_file: &[u8],
) -> Result<Box<dyn FrameEncryptor + Send>> {
    let integer = IntegerParameters::from_id(params.id()).ok_or(Error::BadKeyFile)?;
    let (header, body) = public_key_body(public_key_file, key_id)?;
    if header.parameters.id() != params.id() {
        return Err(Error::BadKeyFile);
    }
    build_in_place::<PublicKey<2048, 1, NttPlan64>, R>(seed, |e| {
        e.set_integer_public_key_le_bytes(&integer, &header.seed, body)
    })
}

/// The encryptor a credential file calls for: secret-key (fleet or per-device) or public-key, boolean or
/// integer, for the file's parameter set, on the heap. Encrypts whole messages into frames.
///
/// Boolean sets encrypt message bits (`N / 8` bytes per frame); the integer set encrypts reading bytes
/// (`N / 4` per frame: little-endian `u8`, `u16` or `u32` readings, two-bit blocks, for tfhe-rs
/// `FheUint8/16/32`).
pub struct MessageEncryptor {
    inner: Box<dyn FrameEncryptor + Send>,
    mode: KeyMode,
    parameters: GlweParameters,
}

impl MessageEncryptor {
    /// The encryptor for `credentials`, its CSPRNG seeded in place with 32 bytes drawn from `rng`.
    pub fn new<R: TryCryptoRng + ?Sized>(credentials: &Credentials<'_>, rng: &mut R) -> Result<Self> {
        Self::build(credentials, SeedSource::Rng(rng))
    }

    /// The encryptor for `credentials`, its CSPRNG seeded in place from the operating system.
    #[cfg(feature = "getrandom")]
    #[cfg_attr(docsrs, doc(cfg(feature = "getrandom")))]
    pub fn from_os_entropy(credentials: &Credentials<'_>) -> Result<Self> {
        Self::build::<crate::csprng::Blake2bXof>(credentials, SeedSource::Os)
    }

    /// The compact-list encryptor of a compact-list device ([`CompactListFrameEncryptor`]: one tfhe-rs
    /// `CompactCiphertextList` of `value_bits`-bit readings per frame), its CSPRNG seeded in place with 32
    /// bytes drawn from `rng`. `credentials` give the device id, key id and MAC key; the key is the key set's
    /// compact public-key file (`devices/<ID>.tscp`), which must name the credentials' key id
    /// ([`Error::PublicKeyOfAnotherKeySet`]; [`Error::BadKeyFile`] if it is no such file).
    pub fn compact_list<R: TryCryptoRng + ?Sized>(
        credentials: &Credentials<'_>,
        compact_public_key_file: &[u8],
        value_bits: u32,
        rng: &mut R,
    ) -> Result<Self> {
        Self::build_compact_list(credentials, compact_public_key_file, value_bits, SeedSource::Rng(rng))
    }

    /// [`Self::compact_list`], its CSPRNG seeded in place from the operating system.
    #[cfg(feature = "getrandom")]
    #[cfg_attr(docsrs, doc(cfg(feature = "getrandom")))]
    pub fn compact_list_from_os_entropy(
        credentials: &Credentials<'_>,
        compact_public_key_file: &[u8],
        value_bits: u32,
    ) -> Result<Self> {
        Self::build_compact_list::<crate::csprng::Blake2bXof>(
            credentials,
            compact_public_key_file,
            value_bits,
            SeedSource::Os,
        )
    }

    fn build_compact_list<R: TryCryptoRng + ?Sized>(
        credentials: &Credentials<'_>,
        compact_public_key_file: &[u8],
        value_bits: u32,
        mut seed: SeedSource<'_, R>,
    ) -> Result<Self> {
        let file = decode_compact_public_key_file(compact_public_key_file).map_err(|e| match e {
            CompactKeyFileError::DegenerateKey(defect) => Error::DegeneratePublicKey(defect),
            CompactKeyFileError::BadMagic
            | CompactKeyFileError::UnsupportedVersion(_)
            | CompactKeyFileError::UnknownParameters(_)
            | CompactKeyFileError::ReservedNotZero
            | CompactKeyFileError::WrongLength { .. }
            | CompactKeyFileError::CheckFailed
            | CompactKeyFileError::OtherKeySet { .. }
            | CompactKeyFileError::BufferTooSmall => Error::BadKeyFile,
        })?;
        let key_id = credentials.credentials.key_id();
        let key = file
            .for_key_set(key_id, None)
            .map_err(|_| Error::PublicKeyOfAnotherKeySet {
                expected_key_id: key_id,
                found_key_id: file.binding.key_id,
            })?;
        // Built in place: the 128 KiB `EMPTY` holds no secret; the key's spectra and the seed go in there.
        let mut encryptor = Box::new(CompactListFrameEncryptor::<NttPlan64>::EMPTY);
        encryptor.set_value_bits(value_bits)?;
        encryptor.list.set_public_key_le_bytes(key)?;
        seed.seed(&mut encryptor.list)?;
        Ok(Self {
            inner: encryptor,
            mode: credentials.mode,
            parameters: credentials.parameters,
        })
    }

    fn build<R: TryCryptoRng + ?Sized>(credentials: &Credentials<'_>, mut seed: SeedSource<'_, R>) -> Result<Self> {
        let params = &credentials.parameters;
        let (n, k) = (params.polynomial_size().0, params.glwe_dimension().0);
        let material = credentials.key_material;
        let key_id = credentials.credentials.key_id();
        let seed = &mut seed;
        let inner = match (credentials.mode, params.torus_bits(), n, k) {
            (KeyMode::PublicKey, 32, 1024, 1) => public_key::<1024, 1, R>(seed, params, key_id, material)?,
            (KeyMode::PublicKey, 32, 512, 3) => public_key::<512, 3, R>(seed, params, key_id, material)?,
            (KeyMode::PublicKey, 32, 1024, 2) => public_key::<1024, 2, R>(seed, params, key_id, material)?,
            (KeyMode::PublicKey, 64, 2048, 1) => integer_public_key::<R>(seed, params, key_id, material)?,
            (KeyMode::PublicKey, ..) => return Err(Error::UnsupportedGlweDimension(k)),
            (KeyMode::FleetSecretKey | KeyMode::PerDeviceSecretKey, 32, 1024, 1) => {
                secret_key::<1024, 1, R>(seed, params, material)?
            }
            (KeyMode::FleetSecretKey | KeyMode::PerDeviceSecretKey, 32, 512, 3) => {
                secret_key::<512, 3, R>(seed, params, material)?
            }
            (KeyMode::FleetSecretKey | KeyMode::PerDeviceSecretKey, 32, 1024, 2) => {
                secret_key::<1024, 2, R>(seed, params, material)?
            }
            (KeyMode::FleetSecretKey | KeyMode::PerDeviceSecretKey, 64, 2048, 1) => {
                integer::<R>(seed, params, material)?
            }
            (KeyMode::FleetSecretKey | KeyMode::PerDeviceSecretKey, ..) => {
                return Err(Error::UnsupportedGlweDimension(k));
            }
        };
        Ok(Self {
            inner,
            mode: credentials.mode,
            parameters: *params,
        })
    }

    /// The key mode.
    pub fn mode(&self) -> KeyMode {
        self.mode
    }

    /// The mode's name for logs: the key mode's ([`KeyMode::name`]), or `tfhe-compact-list` for
    /// [`Self::compact_list`].
    pub fn mode_name(&self) -> &'static str {
        if self.inner.frame_kind() == FrameKind::CompactList {
            "tfhe-compact-list"
        } else {
            self.mode.name()
        }
    }

    /// The parameter set.
    pub fn parameters(&self) -> &GlweParameters {
        &self.parameters
    }

    /// Whether frames carry integer readings (the 64-bit integer set) rather than boolean bits.
    pub fn is_integer(&self) -> bool {
        self.parameters.torus_bits() == 64
    }

    /// The message bytes one frame carries: `N / 8` bits for booleans, `N / 4` reading bytes for integers.
    pub fn chunk_bytes(&self) -> usize {
        self.inner.chunk_bytes()
    }

    /// The kind of frame this encryptor writes.
    pub fn frame_kind(&self) -> FrameKind {
        self.inner.frame_kind()
    }

    /// Makes frames carry only the top `body_bits` bits of each body coefficient (a compact body: from the
    /// set's `compact_body_bits()` to the torus width). Public-key frames take only the full width.
    pub fn set_body_bits(&mut self, body_bits: u32) -> Result<()> {
        self.inner.set_frame_body_bits(body_bits)
    }

    /// Makes frames compact at the set's smallest width where the mode allows it (secret-key frames);
    /// public-key frames stay full. Returns the body bits frames now carry.
    pub fn use_compact_body(&mut self) -> u32 {
        let bits = self.inner.compact_body_bits();
        // The set's own width is always accepted where compact bodies are offered.
        let _ = self.inner.set_frame_body_bits(bits);
        self.inner.frame_body_bits()
    }

    /// The body bits frames carry.
    pub fn body_bits(&self) -> u32 {
        self.inner.frame_body_bits()
    }

    /// The length of each frame (with the body bits in use).
    pub fn frame_bytes(&self) -> usize {
        self.inner.frame_len()
    }

    /// Encrypts `message` (reserved as `outgoing`, of `message.len()` bytes in chunks of
    /// [`Self::chunk_bytes`]) into its frames, in sequence order.
    pub fn encrypt_message(
        &mut self,
        credentials: &DeviceCredentials,
        outgoing: &OutgoingMessage,
        message: &[u8],
    ) -> Result<Vec<SealedFrame>> {
        let mut frames = Vec::with_capacity(outgoing.chunk_count() as usize);
        let mut out = vec![0u8; self.inner.frame_buffer_len()];
        for chunk in chunks(message, self.chunk_bytes()) {
            let len = self.inner.encrypt_frame_into(credentials, outgoing, &chunk, &mut out)?;
            frames.push(SealedFrame {
                sequence: outgoing.first_sequence() + u64::from(chunk.index),
                bytes: out[..len].to_vec(),
            });
        }
        Ok(frames)
    }
}

impl fmt::Debug for MessageEncryptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageEncryptor")
            .field("mode", &self.mode)
            .field("parameter_set", &self.parameters.id())
            .finish_non_exhaustive()
    }
}
