//! The one encryptor shell: [`Encryptor`] holds a key kind ([`EncryptorKey`]: the spectra of a secret key
//! or a public key, and their scratch) and one [`EncryptorState`]. Every encryptor is an instance:
//! [`crate::encrypt::GlweEncryptor`], [`crate::encrypt::PublicKeyEncryptor`],
//! [`crate::encrypt::IntegerEncryptor`].
//!
//! The lifecycle is the same for all, and written once here:
//!
//! 1. [`Encryptor::EMPTY`]: all zero bytes, so `static E: Mutex<RefCell<GlweEncryptor<1024>>> = ...EMPTY`
//!    sits in `.bss` and costs no flash and no stack;
//! 2. set the key in place (`set_key`, `set_packed_key` or `set_public_key`, per key kind);
//! 3. seed the CSPRNG in place ([`Encryptor::seed`] from a hardware RNG, [`Encryptor::seed_from_bytes`],
//!    or `Encryptor::seed_from_os` with the `getrandom` feature);
//! 4. encrypt, directly or through [`crate::encrypt::FrameEncryptor`]; [`Encryptor::reseed`] mixes in
//!    fresh entropy at any time;
//! 5. [`Encryptor::forget_key`] wipes the key; dropping wipes everything secret.
//!
//! Build it where it lives: no secret is ever moved or copied by these methods. A value returned by value
//! (the host conveniences `new`) leaves its bytes behind wherever it was; firmware and the Pi client never
//! do that.

use crate::csprng::construction::{DeviceConstruction, XofConstruction};
use crate::csprng::xof::{KeyedXof, SEED_BYTES};
use crate::encrypt::state::EncryptorState;
use crate::error::Result;
use crate::noise::DeviceNoise;
use rand_core::TryCryptoRng;
use tfhe_sbc_core::parameters::ParameterSetId;
use zeroize::Zeroize;

/// The key material of one kind of encryptor: what [`Encryptor`] holds besides its [`EncryptorState`].
/// Zeroizing it wipes the key material and every buffer that held a secret (scratch, per-encryption secrets).
pub trait EncryptorKey: Zeroize {
    /// No key: all zero bytes.
    const EMPTY: Self;
    /// The encryptor's name in `Debug` output.
    const NAME: &'static str;
    /// The torus width of its ciphertexts: 32 or 64.
    const TORUS_BITS: u32;
    /// Whether its frames may carry a compact body ([`Encryptor::set_body_bits`] below the torus width).
    const COMPACT_BODY: bool;
}

/// An encryptor: the key material `Key` and the shared [`EncryptorState`], whose CSPRNG and seeded-mask
/// expansion are the XOF construction `X` ([`DeviceConstruction`] by default: BLAKE2s on 32-bit targets,
/// BLAKE2b elsewhere; any host can name either). Not `Clone`; `Debug` prints no secret; everything secret
/// is zeroized on drop (the final location only: build it in place).
pub struct Encryptor<Key: EncryptorKey, X: XofConstruction = DeviceConstruction> {
    pub(crate) key: Key,
    pub(crate) state: EncryptorState<X>,
}

impl<Key: EncryptorKey, X: XofConstruction> Encryptor<Key, X> {
    /// No key, an unseeded CSPRNG: all zero bytes, for a `static` (`.bss`) or `Box::new`.
    pub const EMPTY: Self = Self {
        key: Key::EMPTY,
        state: EncryptorState::EMPTY,
    };

    /// [`Self::EMPTY`], as a `const fn`.
    pub const fn empty() -> Self {
        Self::EMPTY
    }

    /// Seeds the CSPRNG, in place, with 32 bytes from `rng` (a hardware TRNG; a HAL's rand_core 0.6 or 0.9
    /// RNG through `seeding::Rng06` / `seeding::Rng09`). The first call keys it; a later call mixes the bytes
    /// into the current state ([`KeyedXof::reseed`]), so the result is unpredictable if either is. If
    /// `rng` fails, returns [`crate::Error::RngFailed`] and leaves the CSPRNG as it was.
    pub fn seed<R: TryCryptoRng + ?Sized>(&mut self, rng: &mut R) -> Result<()> {
        self.state.seed(rng)
    }

    /// Keys the CSPRNG in place with these 32 bytes, exactly as `KeyedXof::<X>::from_seed(seed)` would (the same
    /// stream: a known-answer test reproduces it), and wipes `seed`. Replaces the CSPRNG's state. The bytes
    /// must be secret and never used twice (e.g. read from a hardware TRNG into a buffer).
    pub fn seed_from_bytes(&mut self, seed: &mut [u8; SEED_BYTES]) {
        self.state.seed_from_bytes(seed);
    }

    /// Seeds the CSPRNG in place from the operating system (`getrandom(2)` on Linux): no copy of the
    /// generator is made anywhere. [`crate::Error::Entropy`] if the OS fails.
    #[cfg(feature = "getrandom")]
    #[cfg_attr(docsrs, doc(cfg(feature = "getrandom")))]
    pub fn seed_from_os(&mut self) -> Result<()> {
        self.state.seed_from_os()
    }

    /// Replaces the CSPRNG with `rng` (already seeded). A host's convenience for tests: the moved generator's
    /// bytes stay where it was built. Devices seed in place.
    pub fn set_rng(&mut self, rng: KeyedXof<X>) {
        self.state.set_rng(rng);
    }

    /// Mixes `entropy` (from a hardware TRNG or the OS) into the CSPRNG ([`KeyedXof::reseed`]). On an
    /// unseeded encryptor this does not count as seeding: use [`Self::seed`].
    pub fn reseed(&mut self, entropy: &[u8]) {
        self.state.reseed(entropy);
    }

    /// Whether a key is set and the CSPRNG seeded: whether encrypting can succeed.
    pub fn is_ready(&self) -> bool {
        self.state.is_ready()
    }

    /// Wipes the key material and the scratch; encrypting then fails with [`crate::Error::KeyNotSet`] until
    /// a key is set again. The CSPRNG stays seeded.
    pub fn forget_key(&mut self) {
        self.key.zeroize();
        self.state.forget_key();
    }

    /// The parameter set of the key (`ParameterSetId(0)` before one is set).
    pub fn parameter_set(&self) -> ParameterSetId {
        self.state.parameter_set()
    }

    /// The noise sampler in use (`None` before a key is set).
    pub fn noise(&self) -> Option<DeviceNoise> {
        self.state.noise()
    }

    /// Makes frames carry only the top `body_bits` bits of each body coefficient (a compact body,
    /// [`tfhe_sbc_core::compact_body`]): from the key's set's
    /// [`tfhe_sbc_core::parameters::GlweParameters::compact_body_bits`] (11 bits for `TFHE_LIB_GLWE_1024`,
    /// 14 for the integer set) up to the torus width (the full body, the default). Needs a key; setting a
    /// key again restores the full body. Public-key frames carry the full body only.
    pub fn set_body_bits(&mut self, body_bits: u32) -> Result<()> {
        self.state.set_body_bits(Key::TORUS_BITS, Key::COMPACT_BODY, body_bits)
    }

    /// The top bits of each body coefficient that frames carry (the torus width unless
    /// [`Self::set_body_bits`] chose fewer).
    pub fn body_bits(&self) -> u32 {
        self.state.body_bits(Key::TORUS_BITS)
    }

    /// The wire id of the XOF that expands this encryptor's seeded masks (`X::MASK_XOF_ID`: 2 for BLAKE2b, 3
    /// for BLAKE2s), as its seeded frames name it.
    pub const fn mask_xof_id(&self) -> u8 {
        X::MASK_XOF_ID
    }

    /// The shared state (readiness, parameter set, noise), by reference.
    pub fn state(&self) -> &EncryptorState<X> {
        &self.state
    }
}

impl<Key: EncryptorKey, X: XofConstruction> Drop for Encryptor<Key, X> {
    fn drop(&mut self) {
        // The CSPRNG wipes itself (`KeyedXof` is `ZeroizeOnDrop`).
        self.key.zeroize();
    }
}

impl<Key: EncryptorKey, X: XofConstruction> zeroize::ZeroizeOnDrop for Encryptor<Key, X> {}

impl<Key: EncryptorKey, X: XofConstruction> core::fmt::Debug for Encryptor<Key, X> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct(Key::NAME)
            .field("parameter_set", &self.state.parameter_set())
            .field("key_set", &self.state.key_is_set())
            .field("seeded", &self.state.is_seeded())
            .field("xof", &X::NAME)
            .finish_non_exhaustive()
    }
}
