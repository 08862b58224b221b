//! The device's key files, as provisioning writes them and the firmware reads them at boot, no heap:
//! [`credentials`] (the credential file: device id, key id, MAC key and the key material of its mode),
//! [`public_key`] (the public-key file) and [`compact_public_key`] (the raw tfhe-rs compact public key of the
//! compact-list mode). `check` is their integrity check (unkeyed BLAKE2b-128). Each module gives
//! its file's layout byte by byte. The packing of a secret key's bits lives with the key
//! (`tfhe_sbc_core::entities::glwe_secret_key`).

pub(crate) mod check;
pub mod compact_public_key;
pub mod credentials;
pub mod public_key;
