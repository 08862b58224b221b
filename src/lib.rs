//! The tfhe-sbc workspace's umbrella package: it owns the top-level `examples/` and `benches/` and
//! re-exports the workspace crates under one name. It is not published; depend on the crates themselves.

pub use negacyclic_fft;
pub use tfhe_sbc_adapter;
pub use tfhe_sbc_core;
pub use tfhe_sbc_device;
