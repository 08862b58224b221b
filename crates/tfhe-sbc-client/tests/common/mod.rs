//! Code shared by this crate's tests (and, by `#[path]`, by the firmware's RAM-image scanner).

pub mod ratchet_replay;
