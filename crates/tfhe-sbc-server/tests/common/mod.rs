//! Helpers shared by the server's tests.
#![allow(dead_code, clippy::unwrap_used)]

pub mod file_group;
pub mod nats;
pub mod process;
pub mod service;
