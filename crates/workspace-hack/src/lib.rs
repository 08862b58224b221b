//! Not a library: a workspace member with no code, whose dependencies pin the features of the crates tfhe-rs
//! depends on, so that every workspace-wide build (`cargo clippy --workspace --all-targets`, `cargo doc
//! --workspace`, `cargo test --workspace`) resolves tfhe-rs and its dependencies alike and checks or compiles
//! them once. Nothing depends on it and it is never published; its manifest says which features and why, and
//! `scripts/check-feature-unification.sh` fails when a workspace-wide build would resolve them differently
//! again (the `cargo-hakari` idea, written by hand for three features).
#![no_std]
