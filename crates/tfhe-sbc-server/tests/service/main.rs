//! The server's service tests, one binary: each module was a test binary of its own, and each compiled its
//! own copy of `tests/common` (the NATS, process and key-set helpers, with tfhe-rs's and async-nats's generics
//! instantiated again): about 60 s of compilation per binary on a fresh machine. As one binary they compile
//! once. Tests of one module may run at the same time, as libtest ran them before; tests of different
//! modules do not (`common::file_group`), so that no module's timing bounds meet another's load.
//!
//! `cargo test -p tfhe-sbc-server --all-features --test service jetstream::` runs one module.
//! `tests/cluster.rs` (the fault matrix, run alone by `scripts/cluster-faults.sh`) stays its own binary.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/nats_secure.rs"]
mod nats_secure;

mod clones;
mod compact_list;
mod floods;
mod gateway_bounds;
mod integer;
mod jetstream;
mod listener_bounds;
mod message_expiry;
mod nats_auth;
mod store_reader;
mod watermark_sync;
