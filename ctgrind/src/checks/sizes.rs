//! The sizes the checks share: the polynomial sizes of the device's sets, the encryptions per encryption
//! check and the samples per sampler check.

/// The polynomial size of every device check (`TFHE_LIB_GLWE_1024`).
pub(crate) const N: usize = 1024;
/// The integer set's polynomial size (`MESSAGE_2_CARRY_2_TUNIFORM_2M128`).
pub(crate) const N64: usize = 2048;
/// Encryptions per encryption check.
pub(crate) const ENCRYPTIONS: usize = 3;
/// Noise samples per sampler check.
pub(crate) const SAMPLES: usize = 4096;
