//! GLWE parameter sets: named constants and validated custom sets, each naming its noise distribution.
//!
//! Custom sets ([`GlweParameters::new`]) are refused below tfhe-rs's 132-bit minimal-noise floor
//! ([`secure_noise`]) unless built with the explicit [`GlweParameters::new_allow_insecure`]. With the `serde`
//! feature, a named set serializes as its id only, a custom set as its fields, and deserialization goes
//! through the same validation.

mod glwe_parameters;
mod integer;
mod named_sets;
mod noise_distribution;
pub mod secure_noise;
#[cfg(feature = "serde")]
mod serde_repr;

pub use glwe_parameters::{
    GlweParameters, KeyDistribution, MAX_LWE_DIMENSION, MAX_POLYNOMIAL_SIZE, MIN_POLYNOMIAL_SIZE, ParameterSetId,
};
pub use integer::{IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128};
pub use named_sets::{
    DEFAULT_KS_PBS_GLWE_512_K3, ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048,
    TFHE_LIB_GLWE_1024,
};
pub use noise_distribution::NoiseDistribution;
