//! The server side of tfhe-sbc: what a Rust cloud service links to receive device frames and compute on
//! them with tfhe-rs.
//!
//! The path, by name:
//! 1. [`stream::FrameReader`]: length-delimited frames off a socket, with a size limit.
//! 2. [`intake::decode_frame`]: full validation (magic, version, parameter set, XOF, chunking, exact
//!    lengths), typed [`IntakeError`]s, and the seeded mask regenerated bit for bit.
//! 3. [`extraction`]: sample extraction of one, all, or lazily chosen coefficients (and a rayon batch).
//! 4. `interop` (feature `tfhe`): tfhe-rs keys for the trusted party and [`interop::BooleanBridge`], which
//!    key-switches extracted ciphertexts into `tfhe::boolean` ciphertexts.
//!
//! # Example
//! ```
//! use rand_core::SeedableRng;
//! use tfhe_sbc_adapter::extraction::extract_lwe_sample;
//! use tfhe_sbc_adapter::intake::decode_frame;
//! use tfhe_sbc_core::entities::{GlweSecretKey, LweCiphertext};
//! use tfhe_sbc_core::encoding::decode_bool;
//! use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
//! use tfhe_sbc_device::decryption::decrypt_lwe_phase;
//! use tfhe_sbc_device::encryption::GlweEncryptor;
//! use tfhe_sbc_device::message::chunks;
//! use tfhe_sbc_device::wire::MAX_SEEDED_FRAME_BYTES_1024;
//! use tfhe_sbc_device::xof::Blake2bXof;
//!
//! // Device side.
//! let params = TFHE_LIB_GLWE_1024;
//! let key = GlweSecretKey::generate_binary(vec![0u8; 1024], params.polynomial_size(), &mut Blake2bXof::from_seed([1; 32])).unwrap();
//! let mut encryptor = Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([2; 32])).unwrap());
//! let message = [0b1010_0101u8];
//! let chunk = chunks(&message, 128).next().unwrap();
//! let mut body = [0u32; 1024];
//! let mut frame = vec![0u8; MAX_SEEDED_FRAME_BYTES_1024];
//! let len = encryptor.encrypt_seeded_frame(&chunk, message.len(), &mut body, &mut frame).unwrap();
//!
//! // Server side: validate, regenerate the mask, extract bit 2 as an LWE ciphertext.
//! let received = decode_frame(&frame[..len]).unwrap();
//! let mut lwe = vec![0u32; 1025];
//! extract_lwe_sample(&received.ciphertext, 2, &mut lwe);
//!
//! // Trusted party: bit 2 of 0b1010_0101 is 1.
//! let phase = decrypt_lwe_phase(&key, &LweCiphertext::from_container(&lwe[..]).unwrap()).unwrap();
//! assert!(decode_bool(phase));
//! ```

mod error;
pub mod extraction;
#[doc(hidden)]
pub mod fuzzing;
pub mod intake;
#[cfg(feature = "tfhe")]
pub mod interop;
pub mod keyfile;
pub mod stream;

pub use error::IntakeError;
