//! tfhe-rs integers: device readings as `tfhe::FheUint8/16/32/64` of the high-level
//! API, with tfhe-rs 1.8.2's default parameters `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`.
//!
//! # The set
//! The device encrypts with the GLWE side of that set ([`MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048`]: `k = 1`,
//! `N = 2048`, `q = 2^64`, TUniform(17)). Its encryption key choice is "big" (`KeyswitchBootstrap` order): a
//! shortint ciphertext is an LWE ciphertext of dimension `k * N = 2048` under the client key's GLWE key read
//! flat, and every operation key-switches it first. A coefficient sample-extracted from a GLWE ciphertext
//! under that key **is** such a ciphertext, with the noise of a fresh tfhe-rs encryption (extraction adds
//! none). So fleet intake ([`IntegerExtractor`]) is extraction and wrapping only, no key switch.
//!
//! # The packing
//! A `b`-bit reading (`b` = 8, 16, 32 or 64) is `b / 2` blocks of 2 message bits, **little-endian** (block 0
//! holds bits 0 and 1), each encoded as shortint encodes a fresh block: `m * 2^59` (message modulus 4, carry
//! modulus 4, one padding bit), carry empty. Reading `r`'s blocks are GLWE coefficients
//! `r * b/2 .. (r + 1) * b/2`, so one `N = 2048` ciphertext carries 512 `u8`, 256 `u16`, 128 `u32` or 64
//! `u64` readings; unused coefficients encode 0. The encoding is
//! [`tfhe_sbc_core::encoding::RadixEncoding`] (no_std, heap-free: the device's as well).
//!
//! # The wrapping
//! Each block becomes `shortint::Ciphertext::new(lwe, Degree::new(3), NoiseLevel::NOMINAL,
//! MessageModulus(4), CarryModulus(4), AtomicPatternKind::Standard(PBSOrder::KeyswitchBootstrap))`: degree 3
//! (a message in `0..4`, carry empty) and nominal noise, which is what a fresh `ClientKey` encryption
//! carries. **Never `NoiseLevel::ZERO`**: tfhe-rs treats a ciphertext of noise level zero whose mask is zero
//! as a trivial one, and the level also enters its noise bookkeeping. The blocks then become an
//! `integer::RadixCiphertext` and a high-level `FheUint` with `from_raw_parts`; the result passes tfhe-rs's
//! `ParameterSetConformant` check for the server key (`tests/integer.rs`).
//!
//! # Key modes
//! * fleet: the device holds the client key's GLWE key ([`glwe_key_from_client_key`]); [`IntegerExtractor`];
//! * per-device: the device holds its own key; the cloud switches each frame once, GLWE to GLWE, into the
//!   client key's GLWE key with a per-device seeded key ([`per_device`], `super::glwe_ksk`), then extracts;
//! * public key: the device holds a seeded RLWE public key under the client key's GLWE key and nothing that
//!   decrypts; the cloud only extracts ([`public_key`]);
//! * compact list: a public-key device sends tfhe-rs's own `CompactCiphertextList` in an authenticated
//!   frame; tfhe-rs reads and expands it with the server key's casting key ([`compact_list`]).
//!
//! The key store records each device's parameter set and mode (`key_set::key_store`), and
//! [`IntegerBridge`] (a [`Converter`](super::Converter), behind `keyed_intake::KeyedIntake`) picks the
//! conversion for the sending device in one call,
//! from an authenticated `IntegerFrame` to `FheUint` values. The trusted party provisions devices with
//! [`per_device::provision_integer_per_device`] / [`per_device::provision_integer_fleet_device`] and writes
//! their credential files with [`DeviceSecrets::credentials_file`](crate::interop::DeviceSecrets::credentials_file).
//!
//! Fleet intake costs about 5 us per `FheUint8` on one thread in batches of 16, frame intake included
//! (the `integer_intake` benchmark): about 3e-5 of tfhe-rs's
//! `CompactCiphertextList::expand` with casting, which key-switches and bootstraps every block. A whole frame
//! materialized at once (512 `FheUint8`, 32 MiB: tfhe-rs holds 4 x 2049 words per `FheUint8`) costs about 45
//! us per value, bound by fresh heap pages; extract in batches ([`IntegerExtractor::extract_readings`] takes a
//! range) to stay in cache.
//!
//! `encrypt_readings_reference` (feature `test-utils`) is a host-side stand-in device for tests: tfhe-rs's
//! `encrypt_glwe_ciphertext` of the same encoding.

mod bridge;
pub mod compact_list;
mod extractor;
pub(crate) mod keys;
pub mod per_device;
pub mod public_key;
mod readings;
#[cfg(feature = "test-utils")]
mod reference;

pub use super::fingerprint::integer_server_key_fingerprint;
pub use super::glwe_ksk::IntegerDeviceKsk;
pub use bridge::{DEFAULT_INTEGER_CACHE_CAPACITY, IntegerBridge};
pub use extractor::IntegerExtractor;
pub use keys::{
    IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128, MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048, check_parameters,
    glwe_key_from_client_key, tfhe_glwe_key_u64,
};
pub use readings::{FheUintReadings, ReadingBits};
#[cfg(feature = "test-utils")]
pub use reference::encrypt_readings_reference;
