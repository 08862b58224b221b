//! The noise distribution a parameter set names, after tfhe-rs's `DynamicDistribution`.

/// `2^bits` as an `f64` exponent, saturated so that absurd widths give `inf`/`0` rather than wrapping.
fn exponent(bits: u32) -> i32 {
    bits.min(4096) as i32
}

/// The distribution of the encryption noise, after tfhe-rs's `DynamicDistribution` (`Gaussian` /
/// `TUniform`).
///
/// The enum is plain data: [`GlweParameters::new`](super::GlweParameters::new) validates it (finite
/// standard deviation, bound range) and checks it against the security floor.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum NoiseDistribution {
    /// A centered (discretized) Gaussian.
    Gaussian {
        /// The standard deviation in torus units, a fraction of 1 (e.g. `2^-25`).
        std_dev: f64,
    },
    /// tfhe-rs's TUniform(b): uniform on the integers `[-2^b, 2^b]` in units of `1/q`, with the two end
    /// points at half weight. Sampled from `b + 2` uniform bits `r` as `(r >> 1) + (r & 1) - 2^b`, with no
    /// table and no branch. Variance `(2^(2b+1) + 1) / 6` in units of `1/q^2`.
    TUniform {
        /// `b`: the bound is `2^b` in units of `1/q`.
        bound_log2: u32,
    },
}

impl NoiseDistribution {
    /// The variance of TUniform(`bound_log2`) in units of `1/q^2`: `(2^(2b+1) + 1) / 6`.
    pub fn tuniform_variance_scaled(bound_log2: u32) -> f64 {
        let two_b_plus_1 = (2 * i64::from(bound_log2) + 1).min(4096) as i32;
        (libm::ldexp(1.0, two_b_plus_1) + 1.0) / 6.0
    }

    /// The variance in units of `1/q^2`, for `q = 2^torus_bits`.
    pub fn variance_scaled(&self, torus_bits: u32) -> f64 {
        match *self {
            Self::Gaussian { .. } => {
                let s = self.std_dev_scaled(torus_bits);
                s * s
            }
            Self::TUniform { bound_log2 } => Self::tuniform_variance_scaled(bound_log2),
        }
    }

    /// The standard deviation in units of `1/q`, for `q = 2^torus_bits` (`128` for a Gaussian of `2^-25`
    /// at `q = 2^32`, `147.8` for TUniform(8)).
    pub fn std_dev_scaled(&self, torus_bits: u32) -> f64 {
        match *self {
            Self::Gaussian { std_dev } => libm::ldexp(std_dev, exponent(torus_bits)),
            Self::TUniform { bound_log2 } => libm::sqrt(Self::tuniform_variance_scaled(bound_log2)),
        }
    }

    /// The standard deviation in torus units (a fraction of 1), for `q = 2^torus_bits`.
    pub fn std_dev(&self, torus_bits: u32) -> f64 {
        match *self {
            Self::Gaussian { std_dev } => std_dev,
            Self::TUniform { .. } => libm::ldexp(self.std_dev_scaled(torus_bits), -exponent(torus_bits)),
        }
    }

    /// The variance in torus units squared, for `q = 2^torus_bits` (the unit of
    /// [`secure_noise`](super::secure_noise)).
    pub fn variance(&self, torus_bits: u32) -> f64 {
        libm::ldexp(self.variance_scaled(torus_bits), -2 * exponent(torus_bits))
    }

    /// The smallest TUniform bound `b >= 1` whose standard deviation is at least this distribution's, for
    /// `q = 2^torus_bits`.
    ///
    /// For a Gaussian of `2^-25` at `q = 2^32` (128 in units of `1/q`) this is 8: TUniform(7) has standard
    /// deviation 73.9, TUniform(8) 147.8. For TUniform(b) with `b >= 1` it is `b`. The result is not
    /// checked against a torus width: build the set with [`GlweParameters::new`](super::GlweParameters::new)
    /// to validate it. For a non-finite standard deviation (which no validated set has) it returns 1 for
    /// NaN and a bound beyond any torus for infinity.
    pub fn tuniform_bound_at_least(&self, torus_bits: u32) -> u32 {
        let target = self.variance_scaled(torus_bits);
        let mut b = 1;
        // TUniform's variance overflows to `inf` at b = 512, which ends the loop for any target.
        while b < 2048 && Self::tuniform_variance_scaled(b) < target {
            b += 1;
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_between_units() {
        let g = NoiseDistribution::Gaussian {
            std_dev: libm::ldexp(1.0, -25),
        };
        assert_eq!(g.std_dev_scaled(32), 128.0);
        assert_eq!(g.variance_scaled(32), 16384.0);
        assert_eq!(g.std_dev(32), libm::ldexp(1.0, -25));
        assert_eq!(g.variance(32), libm::ldexp(1.0, -50));
        assert_eq!(g.tuniform_bound_at_least(32), 8);

        let t = NoiseDistribution::TUniform { bound_log2: 8 };
        assert_eq!(t.variance_scaled(32), (131072.0 + 1.0) / 6.0);
        assert!((t.std_dev_scaled(32) - 147.80).abs() < 0.01);
        assert!((t.std_dev(32) * libm::ldexp(1.0, 32) - t.std_dev_scaled(32)).abs() < 1e-9);
        assert_eq!(t.tuniform_bound_at_least(32), 8);
        assert_eq!(
            NoiseDistribution::TUniform { bound_log2: 0 }.tuniform_bound_at_least(32),
            1
        );
        assert!(NoiseDistribution::TUniform { bound_log2: 7 }.std_dev_scaled(32) < 128.0);
    }

    #[test]
    fn non_finite_inputs_terminate() {
        let nan = NoiseDistribution::Gaussian { std_dev: f64::NAN };
        assert_eq!(nan.tuniform_bound_at_least(32), 1);
        let inf = NoiseDistribution::Gaussian { std_dev: f64::INFINITY };
        assert!(inf.tuniform_bound_at_least(32) > 64);
        let huge = NoiseDistribution::TUniform { bound_log2: u32::MAX };
        assert_eq!(huge.variance_scaled(32), f64::INFINITY);
    }
}
