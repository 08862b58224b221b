//! The device side of tfhe-sbc: what runs on the Raspberry Pi or the microcontroller.
//!
//! `no_std` and heap-free: no `alloc` anywhere (a test counts the allocations of an encryption: 0).
//!
//! The encryption path, by name:
//! 1. [`xof::Blake2bXof`]: the CSPRNG (BLAKE2b in counter mode, one compression per 64 bytes), seeded from
//!    the OS ([`seeding`], feature `getrandom`) or from any caller `CryptoRng` (a hardware RNG).
//! 2. [`encryption::GlweEncryptor`]: takes the binary key once and keeps only its FFT
//!    ([`key_spectrum::KeySpectrum`]); each call draws a 32-byte seed, expands the mask from it straight into
//!    the FFT scratch ([`mask`]), multiplies by the key spectrum, and adds the boolean encoding and Ziggurat
//!    noise.
//! 3. [`wire`]: the seeded `(seed, body)` frame, postcard into a caller slice.
//!
//! [`decryption`] is for the trusted party and for tests.
//!
//! # Timing
//! Mask expansion, the FFT product and the encoding run in time independent of the key and the message
//! (the encoding is branch-free). The Ziggurat's rejection path is not constant-time: the total time of an
//! encryption varies slightly with how many of its `N` noise samples fell in a wedge or the tail, which
//! says something about the noise magnitudes, not about the key or the message bits.
//!
//! # Example
//! ```
//! use rand_core::SeedableRng;
//! use tfhe_sbc_core::entities::GlweSecretKey;
//! use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
//! use tfhe_sbc_device::decryption::{GlweDecryptor, decode_bits};
//! use tfhe_sbc_device::encryption::GlweEncryptor;
//! use tfhe_sbc_device::xof::Blake2bXof;
//!
//! let params = TFHE_LIB_GLWE_1024;
//! let mut rng = Blake2bXof::from_seed([1; 32]); // use `seeding::from_os_entropy()` on a real device
//! let key = GlweSecretKey::generate_binary([0u8; 1024], params.polynomial_size(), &mut rng).unwrap();
//! let mut encryptor = GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([2; 32])).unwrap();
//!
//! let message = [0xA5u8; 128]; // 1024 bits
//! let mut body = [0u32; 1024];
//! let seed = encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body).unwrap();
//!
//! let mut decryptor = GlweDecryptor::<1024>::new(&key).unwrap();
//! let mut phase = [0u32; 1024];
//! decryptor.decrypt_seeded_phase_parts(&seed, &body, &mut phase).unwrap();
//! let mut decrypted = [0u8; 128];
//! decode_bits(&phase, &mut decrypted).unwrap();
//! assert_eq!(decrypted, message);
//! ```
#![no_std]

#[cfg(feature = "getrandom")]
extern crate std;

mod blake2b_lanes;
pub mod decryption;
pub mod encryption;
mod error;
pub mod frame_mac;
pub mod key_spectrum;
pub mod mask;
pub mod message;
pub mod noise;
pub mod seeding;
pub mod wire;
pub mod xof;

pub use error::{Error, Result};
