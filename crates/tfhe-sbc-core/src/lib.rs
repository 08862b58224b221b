//! The core of tfhe-sbc: torus scalars, parameter sets, message encodings, GLWE/LWE ciphertext and key
//! entities, and the Gaussian samplers, for a device that encrypts `N` bits at a time as one TRLWE (GLWE,
//! `k = 1`) ciphertext and a server that turns it into `N` TLWE ciphertexts by sample extraction.
//!
//! `no_std` and heap-free by default. Features: `alloc` (`Vec`-backed owned entities), `serde` (derives).
//!
//! Layout, after tfhe-rs's `core_crypto`: [`torus`], [`dimensions`] and [`parameters`] are the commons;
//! [`entities`] holds one type per object, each generic over its storage; [`encoding`] and [`gaussian`]
//! are the algorithms every encryption uses.
//!
//! # Example
//! ```
//! use rand_chacha::ChaCha20Rng;
//! use rand_core::SeedableRng;
//! use tfhe_sbc_core::encoding::{decode_bool, encode_bool};
//! use tfhe_sbc_core::gaussian::{NormalSampler, Ziggurat};
//! use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
//!
//! let params = TFHE_LIB_GLWE_1024;
//! let mut rng = ChaCha20Rng::seed_from_u64(1);
//! // A boolean with fresh-ciphertext-sized noise (sigma * q = 128) still decodes.
//! let noisy: u32 = encode_bool::<u32>(true)
//!     .wrapping_add(Ziggurat.sample_torus(&mut rng, params.noise_std_dev_scaled()));
//! assert!(decode_bool(noisy));
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's example, run as a doctest so that the published README compiles.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod compact_body;
pub mod dimensions;
pub mod encoding;
pub mod entities;
mod error;
pub mod gaussian;
pub mod parameters;
pub mod torus;
pub mod tuniform;

pub use error::{Error, Result};
