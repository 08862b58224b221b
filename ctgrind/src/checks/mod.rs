//! The checks of each [`Mode`](crate::Mode): one device path each, with its secrets classified. The three
//! lists ([`DEFAULT`], [`ZIGGURAT`], [`SELF_TEST`], in `lists.rs`) are the one place that says which checks
//! run; each check lives in the module of what it checks, and takes its inputs, outputs and sizes from
//! `inputs.rs`, `outputs.rs` and `sizes.rs`. This file only declares the modules and re-exports the lists.
//!
//! Conventions: a secret generator is a [`Blake2bXof`](tfhe_sbc_device::csprng::xof::Blake2bXof) seeded from
//! a classified seed (so its whole output stream is secret, as on the device); [`ClassifiedRng`](crate::ClassifiedRng)
//! instead marks each output of a public generator, to check a sampler apart from the XOF. A binary key has
//! only bit 0 of each byte classified: that each coefficient is 0 or 1 is public (the key check
//! `from_container` makes), which one is secret.

/// tfhe-rs's compact lists: the streaming and NTT compact-list encryptors.
mod compact_list;
/// Encryption: the GLWE encryptors (secret key, k = 3, public key, integer) and the encryption core.
mod encryption;
/// Framing: the frame MAC and the encryptors' frame paths, as the firmware and the clients run them.
mod frames;
/// The secret and public inputs of the checks: generators, keys, messages, readings, MAC keys.
mod inputs;
/// Key generation, the key spectrum and the message encodings.
mod keys;
/// The three lists of checks, one per mode.
mod lists;
/// The public outputs of the checks: taint, declassification, digest.
mod outputs;
/// The negacyclic products on their own (NTT, 32- and 64-bit torus).
mod products;
/// The noise samplers (TUniform, the Ziggurat) and the XOF.
mod randomness;
/// The planted leaks that prove the check can fail.
mod self_test;
/// The sizes the checks share: polynomial sizes, encryptions and samples per check.
mod sizes;

pub use lists::{DEFAULT, SELF_TEST, ZIGGURAT};
