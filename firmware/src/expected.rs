//! The packed KAT key and the expected digest, computed by `build.rs` on the host.

include!(concat!(env!("OUT_DIR"), "/expected.rs"));
