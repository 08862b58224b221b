//! The device side of tfhe-sbc: what runs on the Raspberry Pi or the microcontroller.
//!
//! `no_std`, no heap. This first part holds the randomness: [`xof::Blake2bXof`], a BLAKE2b-based
//! extendable-output CSPRNG implementing rand_core 0.10's `TryRng`/`Rng`/`CryptoRng`/`SeedableRng`.
//!
//! # Example
//! ```
//! use rand_core::{Rng, SeedableRng};
//! use tfhe_sbc_device::xof::Blake2bXof;
//!
//! let mut xof = Blake2bXof::from_seed([7u8; 32]);
//! let mut a = [0u8; 100];
//! xof.fill_bytes(&mut a);
//! // The same seed gives the same stream, however it is read.
//! let mut again = Blake2bXof::from_seed([7u8; 32]);
//! let mut b = [0u8; 100];
//! for chunk in b.chunks_mut(7) {
//!     again.fill_bytes(chunk);
//! }
//! assert_eq!(a, b);
//! ```
#![no_std]

pub mod xof;
