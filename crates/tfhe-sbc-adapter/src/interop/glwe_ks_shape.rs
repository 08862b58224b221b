//! The decomposition of a GLWE key switch ([`GlweKsShape`]): what a key-switching key
//! ([`super::glwe_ksk`]) and its spectra ([`super::glwe_ksk_spectra`]) are shaped by.

use tfhe::core_crypto::prelude::{DecompositionBaseLog, DecompositionLevelCount};

/// The decomposition of a GLWE key switch: base `2^base_log`, `levels` levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlweKsShape {
    /// `log2` of the decomposition base.
    pub base_log: DecompositionBaseLog,
    /// The number of levels.
    pub levels: DecompositionLevelCount,
}

impl GlweKsShape {
    /// Base `2^12`, 2 levels: the top 24 bits of each mask coefficient are kept. The rounding of the other 40
    /// dominates the switch's noise (std `2^43.2` on the 2^64 torus at `N = 2048`), and the key is
    /// `2 * N` body words (32 KiB at `N = 2048`).
    pub const INTEGER: Self = Self {
        base_log: DecompositionBaseLog(12),
        levels: DecompositionLevelCount(2),
    };
}
