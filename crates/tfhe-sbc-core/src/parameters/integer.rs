//! What integer intake needs besides the GLWE side: tfhe-rs shortint's message and carry moduli, and the
//! radix encoding they imply.

use super::glwe_parameters::{GlweParameters, ParameterSetId};
use super::named_sets::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048;
use crate::encoding::RadixEncoding;

/// A named 64-bit GLWE set together with tfhe-rs shortint's message and carry moduli: what a device needs to
/// encode unsigned integers as radix blocks, and what the server needs to wrap each extracted coefficient
/// as a `tfhe::shortint::Ciphertext`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntegerParameters {
    glwe: GlweParameters,
    message_modulus: u64,
    carry_modulus: u64,
}

/// tfhe-rs 1.8.2's high-level default, `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`, as far as the
/// device and the intake see it: the GLWE set [`MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048`], message and
/// carry moduli 4 and 4, so `delta = 2^63 / 16 = 2^59` and 2 message bits per block.
pub const MESSAGE_2_CARRY_2_TUNIFORM_2M128: IntegerParameters = IntegerParameters {
    glwe: MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048,
    message_modulus: 4,
    carry_modulus: 4,
};

impl IntegerParameters {
    /// The integer set whose GLWE side has this id, if any.
    pub const fn from_id(id: ParameterSetId) -> Option<Self> {
        match id {
            ParameterSetId::MESSAGE_2_CARRY_2_TUNIFORM_2M128_GLWE_2048 => Some(MESSAGE_2_CARRY_2_TUNIFORM_2M128),
            _ => None,
        }
    }

    /// The GLWE side (what the device encrypts with).
    pub const fn glwe(&self) -> GlweParameters {
        self.glwe
    }

    /// shortint's message modulus (4: two message bits per block).
    pub const fn message_modulus(&self) -> u64 {
        self.message_modulus
    }

    /// shortint's carry modulus (4).
    pub const fn carry_modulus(&self) -> u64 {
        self.carry_modulus
    }

    /// Message bits per block: `log2` of the message modulus (2).
    pub const fn block_bits(&self) -> u32 {
        self.message_modulus.trailing_zeros()
    }

    /// `delta = 2^(q_bits - 1) / (message_modulus * carry_modulus)`: `2^59` for the default set. The named
    /// sets are 64-bit, so this is a `u64`.
    pub const fn delta(&self) -> u64 {
        1 << (self.glwe.torus_bits() - 1 - (self.message_modulus * self.carry_modulus).trailing_zeros())
    }

    /// The radix encoding of this set: blocks of [`IntegerParameters::block_bits`] message bits, each
    /// encoded with `delta` ([`IntegerParameters::delta`]).
    pub const fn encoding(&self) -> RadixEncoding {
        // The named sets' moduli are valid for their torus (this file's tests check each against
        // `RadixEncoding::new`).
        RadixEncoding::from_valid(
            self.message_modulus.trailing_zeros(),
            (self.message_modulus * self.carry_modulus).trailing_zeros(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dimensions::{GlweDimension, PolynomialSize};
    use crate::parameters::noise_distribution::NoiseDistribution;

    #[test]
    fn the_default_integer_set() {
        let p = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
        let g = p.glwe();
        assert_eq!(GlweParameters::from_id(g.id()), Some(g));
        assert_eq!(IntegerParameters::from_id(g.id()), Some(p));
        assert_eq!(IntegerParameters::from_id(ParameterSetId::TFHE_LIB_GLWE_1024), None);
        assert_eq!(
            (g.torus_bits(), g.polynomial_size(), g.glwe_dimension()),
            (64, PolynomialSize(2048), GlweDimension(1))
        );
        assert_eq!(g.noise_distribution(), NoiseDistribution::TUniform { bound_log2: 17 });
        assert!(g.meets_security_floor() && !g.is_insecure_opt_in());
        assert!(g.check_torus::<u64>().is_ok() && g.check_torus::<u32>().is_err());
        // The same numbers as a custom set pass `new` (the floor), with id CUSTOM.
        let custom = GlweParameters::new(64, PolynomialSize(2048), GlweDimension(1), g.noise_distribution());
        assert_eq!(custom.map(|c| c.noise_variance()), Ok(g.noise_variance()));
        assert_eq!((p.message_modulus(), p.carry_modulus(), p.block_bits()), (4, 4, 2));
        assert_eq!(p.delta(), 1 << 59);
        assert_eq!(Ok(p.encoding()), RadixEncoding::new(4, 4, 64));
        assert_eq!(p.encoding().delta::<u64>(), p.delta());
    }
}
