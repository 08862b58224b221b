//! The cloud's side of a key set (feature `tfhe`): the files the trusted party's tool writes and the server
//! reads, in one place.
//!
//! * [`key_store`]: what the cloud holds per device (key id, parameter set, key mode, MAC key, seeded
//!   key-switching key) and the key store file's format (`key_store.bin`).
pub mod key_store;
