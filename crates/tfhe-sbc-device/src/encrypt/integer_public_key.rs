//! The integer public-key encryptor: `u8`/`u16`/`u32` readings as tfhe-rs shortint radix blocks in one GLWE
//! ciphertext over the 64-bit torus, under an RLWE public key of the client key's GLWE key
//! ([`crate::encrypt::public_key_encryption`], whose documentation gives the noise of an encryption
//! under the public key). The device holds nothing that decrypts; the server only extracts, as for a fleet device.
//!
//! [`IntegerPublicKeyEncryptor`] is the [`Encryptor`] shell around a [`PublicKey`] on the 64-bit torus:
//! build it in place from `EMPTY`, [`set_integer_public_key`](Encryptor::set_integer_public_key) (or
//! [`set_integer_public_key_le_bytes`](Encryptor::set_integer_public_key_le_bytes) straight from a
//! public-key file), `seed`; no heap; `u`, its spectrum and the scratch wiped after every encryption.
//!
//! ```
//! # use rand_core::SeedableRng;
//! # use tfhe_sbc_core::entities::GlweSecretKey;
//! # use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
//! # use tfhe_sbc_device::csprng::xof::Blake2bXof;
//! # use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
//! # use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
//! # use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
//! # use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;
//! # use negacyclic_ntt::NttPlan64;
//! let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
//! let mut rng = Blake2bXof::from_seed([1; 32]); // a hardware TRNG on a device
//! // The trusted party: a seeded public key under the client key's GLWE key.
//! # let key = GlweSecretKey::generate_binary(vec![0u8; 2048], params.glwe().polynomial_size(), &mut rng)?;
//! # const PLAN: NttPlan64 = NttPlan64::new::<2048>();
//! # let mut key_spectrum = vec![[0u32; 3]; 2048];
//! # compute_glwe_key_spectrum(&PLAN, &key, &mut key_spectrum)?;
//! # let noise = DeviceNoise::for_tuniform_parameters(&params.glwe())?;
//! # let mut scratch = vec![[0u32; 3]; 2048];
//! let mut pk_body = vec![0u64; 2048];
//! let pk_seed = generate_seeded_glwe_public_key(&PLAN, &key_spectrum, &noise, &mut pk_body, &mut scratch, &mut rng)?;
//! // The device.
//! let mut encryptor = Box::new(IntegerPublicKeyEncryptor::<2048>::EMPTY); // a `static` in firmware
//! encryptor.set_integer_public_key(&params, &pk_seed, &pk_body)?;
//! encryptor.seed(&mut rng)?;
//! let (mut mask, mut body) = (vec![0u64; 2048], vec![0u64; 2048]);
//! encryptor.encrypt_u16(&[1200, 1310, 65535], &mut mask, &mut body)?;
//! # Ok::<(), tfhe_sbc_device::Error>(())
//! ```

use crate::encrypt::integer::{check_integer_parameters, encode_readings};
use crate::encrypt::public_key::PublicKey;
use crate::encrypt::public_key_body::PublicKeyBody;
use crate::encrypt::shell::Encryptor;
use crate::error::{Error, Result};
use crate::frame::{FrameKind, frame_bytes};
use crate::product::NegacyclicProductPlan;
use negacyclic_ntt::NttPlan64;
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::parameters::IntegerParameters;

/// An integer public-key encryptor (`k = 1`) for polynomial size `N` over the 64-bit torus, through the
/// exact product `P` ([`NttPlan64`] by default): the [`Encryptor`] shell around a [`PublicKey`]. It holds the
/// public key's two spectra, `u`'s spectrum and one scratch spectrum (`4 * 12 N` bytes: 96 KiB at
/// `N = 2048` with [`NttPlan64`]) and the [`crate::encrypt::EncryptorState`]. Its frames are public-key frames
/// (kind 2, the mask in full: `frame_bytes(PublicKey, 1, N, 64, 64)` bytes, 32,831 at `N = 2048`), sealed
/// through [`crate::encrypt::FrameEncryptor`] like every other encryptor's.
///
/// # Timing
/// The encoding, `u`'s bits, the TUniform noise and the NTT are constant-time: no branch or address depends
/// on the readings, `u`, the noise or the CSPRNG output.
pub type IntegerPublicKeyEncryptor<const N: usize = 2048, P = NttPlan64> =
    Encryptor<PublicKey<N, 1, P>, crate::csprng::DeviceConstruction>;

impl<const N: usize, P: NegacyclicProductPlan<N, Torus = u64>, X: crate::csprng::XofConstruction>
    Encryptor<PublicKey<N, 1, P>, X>
{
    /// The reading bytes one frame carries: `N / 4` (512 at `N = 2048`), four two-bit blocks per byte.
    pub const READING_BYTES: usize = N / 4;
    /// The bytes of one of its frames: `frame_bytes(PublicKey, 1, N, 64, 64)`.
    pub const PUBLIC_KEY_FRAME_BYTES: usize = frame_bytes(FrameKind::PublicKey, 1, N, 64, 64);

    /// Sets the public key `(seed, body)` (`N` words) of the integer set `params`, in place: checks the set
    /// (a 64-bit `k = 1` set of size `N`, two-bit blocks) and resolves its constant-time TUniform noise,
    /// refuses a degenerate key, computes its spectra once. On error the encryptor has no key.
    pub fn set_integer_public_key(
        &mut self,
        params: &IntegerParameters,
        seed: &[u8; MASK_SEED_BYTES],
        body: &[u64],
    ) -> Result<()> {
        self.set_integer_key_body(params, seed, PublicKeyBody::Words(body))
    }

    /// [`Self::set_integer_public_key`] with the body as a public-key file holds it: `8 N` little-endian
    /// bytes (`crate::files::public_key::public_key_body`), read in place (no copy of the key in RAM).
    pub fn set_integer_public_key_le_bytes(
        &mut self,
        params: &IntegerParameters,
        seed: &[u8; MASK_SEED_BYTES],
        body_le: &[u8],
    ) -> Result<()> {
        self.set_integer_key_body(params, seed, PublicKeyBody::LeBytes(body_le))
    }

    /// Checks the integer set `params` and resolves its noise, then sets the key `(seed, body)`.
    fn set_integer_key_body(
        &mut self,
        params: &IntegerParameters,
        seed: &[u8; MASK_SEED_BYTES],
        body: PublicKeyBody<'_, u64>,
    ) -> Result<()> {
        let noise = check_integer_parameters::<N>(params);
        self.set_seeded_public_key(params.glwe().id(), noise, seed, body)
    }

    /// Encrypts up to `N / 4` `u8` readings: the mask (`N` words) into `mask`, the body into `body`; every
    /// coefficient after the last reading encrypts 0.
    pub fn encrypt_u8(&mut self, readings: &[u8], mask: &mut [u64], body: &mut [u64]) -> Result<()> {
        self.encrypt_integer_readings(readings, 8, mask, body)
    }

    /// [`Self::encrypt_u8`] for `u16` readings (8 blocks each).
    pub fn encrypt_u16(&mut self, readings: &[u16], mask: &mut [u64], body: &mut [u64]) -> Result<()> {
        self.encrypt_integer_readings(readings, 16, mask, body)
    }

    /// [`Self::encrypt_u8`] for `u32` readings (16 blocks each).
    pub fn encrypt_u32(&mut self, readings: &[u32], mask: &mut [u64], body: &mut [u64]) -> Result<()> {
        self.encrypt_integer_readings(readings, 32, mask, body)
    }

    fn encrypt_integer_readings<T: Copy + Into<u64>>(
        &mut self,
        readings: &[T],
        value_bits: u32,
        mask: &mut [u64],
        body: &mut [u64],
    ) -> Result<()> {
        self.state.check_ready()?;
        Error::check_length(N, mask.len())?;
        Error::check_length(N, body.len())?;
        let encoding = IntegerParameters::from_id(self.parameter_set())
            .map(|p| p.encoding())
            .ok_or(Error::KeyNotSet)?;
        encode_readings(&encoding, readings, value_bits, body)?;
        self.key.encrypt_plaintexts(&mut self.state, mask, body)
    }
}
