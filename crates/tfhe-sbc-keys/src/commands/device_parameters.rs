//! The GLWE parameters a key set's devices encrypt with: what the devices `issue` makes are given
//! (`device_kinds.rs`) and what the key set's public key must carry (`key_files.rs`).

use crate::KeySetParameters;
use tfhe_sbc_core::parameters::{GlweParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128};

/// The GLWE parameters a key set's devices encrypt with: the boolean set's, or set 4 (`N = 2048`, `q = 2^64`)
/// for the integer key set.
pub(super) fn glwe_parameters(parameters: KeySetParameters) -> GlweParameters {
    match parameters {
        KeySetParameters::Boolean(set) => set.glwe_parameters(),
        KeySetParameters::Integer => MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe(),
    }
}
