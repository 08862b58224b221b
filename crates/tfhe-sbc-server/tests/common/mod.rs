//! Helpers shared by the server's tests.

pub mod nats;
