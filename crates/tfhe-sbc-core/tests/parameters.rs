//! Parameter sets: noise distributions, shape validation and the 132-bit security floor.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use tfhe_sbc_core::Error;
use tfhe_sbc_core::dimensions::{GlweDimension, LweDimension, PolynomialSize};
use tfhe_sbc_core::parameters::secure_noise::{
    minimal_lwe_variance_gaussian, minimal_lwe_variance_tuniform, minimal_tuniform_bound, tuniform_bound_floor,
};
use tfhe_sbc_core::parameters::{GlweParameters, NoiseDistribution, ParameterSetId, TFHE_LIB_GLWE_1024};

fn gaussian(std_dev: f64) -> NoiseDistribution {
    NoiseDistribution::Gaussian { std_dev }
}

fn tuniform(bound_log2: u32) -> NoiseDistribution {
    NoiseDistribution::TUniform { bound_log2 }
}

fn new(bits: u32, n: usize, k: usize, noise: NoiseDistribution) -> Result<GlweParameters, Error> {
    GlweParameters::new(bits, PolynomialSize(n), GlweDimension(k), noise)
}

fn insecure(bits: u32, n: usize, k: usize, noise: NoiseDistribution) -> Result<GlweParameters, Error> {
    GlweParameters::new_allow_insecure(bits, PolynomialSize(n), GlweDimension(k), noise)
}

/// The figures behind `TFHE_LIB_GLWE_1024`'s doc: the named set is below the floor, and by how much.
#[test]
fn the_named_set_is_below_the_floor_and_says_so() {
    let p = TFHE_LIB_GLWE_1024;
    let floor = p.security_floor_variance();
    assert_eq!(floor, minimal_lwe_variance_gaussian(LweDimension(1024), 32));
    assert_eq!(p.noise_variance(), libm::ldexp(1.0, -50));
    let floor_log2_std = libm::log2(floor) / 2.0;
    // tfhe-rs's formula at n = 1024, q = 2^32: std dev 2^-22.83, 4.5 times the set's 2^-25 (variance 20 times).
    assert!((-22.84..-22.82).contains(&floor_log2_std), "{floor_log2_std}");
    let ratio = libm::sqrt(floor) / p.noise_std_dev();
    assert!((4.4..4.6).contains(&ratio), "{ratio}");
    let variance_ratio = floor / p.noise_variance();
    assert!((20.0..20.3).contains(&variance_ratio), "{variance_ratio}");
    assert!(!p.meets_security_floor());
    assert!(!p.is_insecure_opt_in());
    // The same numbers as a custom set: refused by `new`, accepted (and flagged) by `new_allow_insecure`.
    let refused = new(32, 1024, 1, p.noise_distribution()).unwrap_err();
    assert_eq!(
        refused,
        Error::NoiseBelowSecurityFloor {
            variance: p.noise_variance(),
            minimum: floor
        }
    );
    let custom = insecure(32, 1024, 1, p.noise_distribution()).unwrap();
    assert!(custom.is_insecure_opt_in() && !custom.meets_security_floor());
    assert_eq!(custom.id(), ParameterSetId::CUSTOM);
    // The constant-time replacement the device may choose: the smallest TUniform with std dev >= 2^-25.
    let b = p.noise_distribution().tuniform_bound_at_least(32);
    assert_eq!(b, 8);
    assert!(tuniform(b).std_dev_scaled(32) >= p.noise_std_dev_scaled());
    assert!(tuniform(b - 1).std_dev_scaled(32) < p.noise_std_dev_scaled());
    // ... which is below the TUniform floor at n = 1024 as well (bound 11).
    assert_eq!(tuniform_bound_floor(LweDimension(1024), 32), 11);
}

#[test]
fn tiny_noise_small_n_and_nan_are_refused() {
    let e = new(32, 1024, 1, gaussian(1e-12)).unwrap_err();
    assert!(matches!(e, Error::NoiseBelowSecurityFloor { variance, minimum } if variance == 1e-24 && minimum > 1e-15));
    let e = new(32, 64, 1, gaussian(libm::ldexp(1.0, -25))).unwrap_err();
    let Error::NoiseBelowSecurityFloor { variance, minimum } = e else {
        panic!("{e:?}");
    };
    assert_eq!(variance, libm::ldexp(1.0, -50));
    assert_eq!(minimum, minimal_lwe_variance_gaussian(LweDimension(64), 32));
    // At n = 64 the formula asks for more noise than the torus holds: no Gaussian set passes.
    assert!(minimum > 0.25);
    for bits in [32, 64] {
        assert!(matches!(new(bits, 1024, 1, gaussian(f64::NAN)), Err(Error::InvalidNoiseStdDev(s)) if s.is_nan()));
        assert!(matches!(
            insecure(bits, 1024, 1, gaussian(f64::NAN)),
            Err(Error::InvalidNoiseStdDev(s)) if s.is_nan()
        ));
        for s in [0.0, -1.0, 0.5, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(insecure(bits, 1024, 1, gaussian(s)), Err(Error::InvalidNoiseStdDev(s)));
        }
    }
}

#[test]
fn gaussian_floor_is_the_formula_exactly() {
    for (bits, n, k) in [(32, 1024, 1), (32, 512, 2), (64, 2048, 1), (64, 1024, 2), (32, 2048, 1)] {
        let minimum = minimal_lwe_variance_gaussian(LweDimension(n * k), bits);
        let std_dev = libm::sqrt(minimum);
        assert!(std_dev < 0.5);
        let at = new(bits, n, k, gaussian(std_dev * 1.000_001)).unwrap();
        assert!(at.meets_security_floor() && !at.is_insecure_opt_in());
        assert_eq!(at.security_floor_variance(), minimum);
        assert!(matches!(
            new(bits, n, k, gaussian(std_dev * 0.999_999)),
            Err(Error::NoiseBelowSecurityFloor { .. })
        ));
    }
}

#[test]
fn tuniform_floor_at_1024_is_bound_11() {
    // tfhe-rs's bound formula: ceil(-0.025167785 * 1024 + 32 + 4.100671) = ceil(10.33) = 11.
    assert_eq!(minimal_tuniform_bound(LweDimension(1024), 32), 11);
    for (n, k) in [(1024, 1), (512, 2)] {
        let ok = new(32, n, k, tuniform(11)).unwrap();
        assert!(ok.meets_security_floor());
        assert_eq!(ok.noise_distribution(), tuniform(11));
        assert_eq!(
            new(32, n, k, tuniform(10)),
            Err(Error::TUniformBoundBelowSecurityFloor {
                bound_log2: 10,
                minimum: 11
            })
        );
        assert!(insecure(32, n, k, tuniform(10)).unwrap().is_insecure_opt_in());
    }
    // TUniform(11)'s variance is tfhe-rs's variance formula minus its 2^4.44 / q^2 term: comparing variances
    // would have refused it (which is why the floor compares bounds, see `tuniform_bound_floor`).
    let q2 = libm::ldexp(1.0, 64);
    let v11 = tuniform(11).variance(32);
    let formula = minimal_lwe_variance_tuniform(LweDimension(1024), 32);
    assert!(v11 < formula);
    assert!(((formula - v11) * q2 - libm::exp2(4.44)).abs() < 1e-3);
    assert!(tuniform(10).variance(32) < new(32, 1024, 1, tuniform(11)).unwrap().security_floor_variance());
}

#[test]
fn tuniform_floor_never_drops_below_bound_4() {
    // At k*N = 2048, q = 2^32, tfhe-rs's bound formula gives ceil(-15.4) -> 0.
    assert_eq!(minimal_tuniform_bound(LweDimension(2048), 32), 0);
    assert_eq!(
        new(32, 2048, 1, tuniform(3)),
        Err(Error::TUniformBoundBelowSecurityFloor {
            bound_log2: 3,
            minimum: 4
        })
    );
    assert!(new(32, 2048, 1, tuniform(4)).is_ok());
    // The floor of 4 is where TUniform's variance reaches the formula's 2^4.44 / q^2 term.
    assert!(NoiseDistribution::tuniform_variance_scaled(3) < libm::exp2(4.44));
    assert!(NoiseDistribution::tuniform_variance_scaled(4) >= libm::exp2(4.44));
}

#[test]
fn tuniform_bound_range_is_validated() {
    assert_eq!(insecure(32, 1024, 1, tuniform(0)), Err(Error::InvalidTUniformBound(0)));
    assert!(new(32, 1024, 1, tuniform(30)).is_ok());
    assert_eq!(
        insecure(32, 1024, 1, tuniform(31)),
        Err(Error::InvalidTUniformBound(31))
    );
    assert!(new(64, 1024, 1, tuniform(62)).is_ok());
    assert_eq!(
        insecure(64, 1024, 1, tuniform(63)),
        Err(Error::InvalidTUniformBound(63))
    );
    assert_eq!(
        insecure(64, 1024, 1, tuniform(u32::MAX)),
        Err(Error::InvalidTUniformBound(u32::MAX))
    );
}

#[test]
fn shapes_are_validated() {
    let g = gaussian(1e-9);
    assert!(new(32, 2048, 1, g).is_ok());
    assert_eq!(insecure(32, 1000, 1, g), Err(Error::PolynomialSizeNotPowerOfTwo(1000)));
    assert_eq!(insecure(32, 0, 1, g), Err(Error::PolynomialSizeNotPowerOfTwo(0)));
    assert!(matches!(
        insecure(32, 32, 1, g),
        Err(Error::PolynomialSizeOutOfRange { size: 32, .. })
    ));
    assert!(matches!(
        insecure(32, 8192, 1, g),
        Err(Error::PolynomialSizeOutOfRange { size: 8192, .. })
    ));
    assert_eq!(insecure(32, 1024, 0, g), Err(Error::ZeroGlweDimension));
    assert!(matches!(
        insecure(32, 1024, usize::MAX, g),
        Err(Error::GlweDimensionTooLarge { .. })
    ));
    assert!(insecure(32, 4096, 16, g).is_ok());
    assert!(matches!(
        insecure(32, 4096, 17, g),
        Err(Error::GlweDimensionTooLarge { .. })
    ));
    for bits in [0, 16, 31, 33, 63, 128, u32::MAX] {
        assert_eq!(insecure(bits, 1024, 1, g), Err(Error::UnsupportedTorusBits(bits)));
    }
    assert_eq!(new(32, 2048, 1, g).map(|p| p.id()), Ok(ParameterSetId::CUSTOM));
}

#[test]
fn allow_insecure_accepts_toy_sets_and_changes_nothing_for_secure_ones() {
    let toy = [
        (32, 64, 1, gaussian(libm::ldexp(1.0, -25))),
        (64, 64, 1, gaussian(1e-12)),
        (32, 64, 2, gaussian(1e-9)),
        (32, 1024, 1, gaussian(1e-12)),
        (32, 64, 1, tuniform(1)),
    ];
    for (bits, n, k, noise) in toy {
        assert!(new(bits, n, k, noise).is_err());
        let p = insecure(bits, n, k, noise).unwrap();
        assert!(p.is_insecure_opt_in() && !p.meets_security_floor());
        assert_eq!(p.noise_distribution(), noise);
    }
    for (bits, n, k, noise) in [(32, 2048, 1, gaussian(1e-9)), (32, 1024, 1, tuniform(12))] {
        let secure = insecure(bits, n, k, noise).unwrap();
        assert!(!secure.is_insecure_opt_in());
        assert_eq!(Ok(secure), new(bits, n, k, noise));
    }
}

#[test]
fn errors_say_what_to_fix() {
    let e = new(32, 1024, 1, gaussian(1e-12)).unwrap_err().to_string();
    // The variance 1e-24, printed as a power of two without float formatting (cheap on a microcontroller).
    let variance = format!("2^{:.2}", 1e-24f64.log2());
    assert!(
        e.contains(&variance) && e.contains("security floor") && e.contains("new_allow_insecure"),
        "{e}"
    );
    let e = new(32, 1024, 1, tuniform(10)).unwrap_err().to_string();
    assert!(
        e.contains("bound_log2 >= 11") && e.contains("new_allow_insecure"),
        "{e}"
    );
    let e = new(16, 1024, 1, gaussian(1e-9)).unwrap_err().to_string();
    assert!(e.contains("16") && e.contains("32 or 64"), "{e}");
}

#[test]
fn std_dev_accessors_follow_the_distribution() {
    let p = new(32, 1024, 1, tuniform(11)).unwrap();
    let var_scaled = (libm::ldexp(1.0, 23) + 1.0) / 6.0;
    assert_eq!(p.noise_std_dev_scaled(), libm::sqrt(var_scaled));
    assert!((p.noise_std_dev() - libm::ldexp(libm::sqrt(var_scaled), -32)).abs() < 1e-18);
    assert_eq!(p.noise_variance(), libm::ldexp(var_scaled, -64));
}

proptest! {
    /// `tuniform_bound_at_least` is the smallest b >= 1 whose TUniform std dev reaches the distribution's.
    #[test]
    fn tuniform_bound_at_least_is_minimal(log2_std in -60.0f64..-2.0, bits in prop::sample::select(vec![32u32, 64])) {
        let g = gaussian(libm::exp2(log2_std));
        let b = g.tuniform_bound_at_least(bits);
        prop_assert!(b >= 1);
        prop_assert!(tuniform(b).std_dev_scaled(bits) >= g.std_dev_scaled(bits));
        if b > 1 {
            prop_assert!(tuniform(b - 1).std_dev_scaled(bits) < g.std_dev_scaled(bits));
        }
    }

    /// Any input: no panic; `new` succeeds only at or above the floor, and then equals `new_allow_insecure`.
    #[test]
    fn construction_never_panics(
        bits in prop_oneof![Just(32u32), Just(64), any::<u32>()],
        n in prop_oneof![(6u32..=12).prop_map(|e| 1usize << e), any::<usize>()],
        k in prop_oneof![1usize..4, any::<usize>()],
        noise in prop_oneof![
            any::<f64>().prop_map(gaussian),
            (-70.0f64..0.0).prop_map(|l| gaussian(libm::exp2(l))),
            any::<u32>().prop_map(tuniform),
            (0u32..64).prop_map(tuniform),
        ],
    ) {
        let loose = insecure(bits, n, k, noise);
        match new(bits, n, k, noise) {
            Ok(p) => {
                prop_assert!(p.meets_security_floor());
                prop_assert_eq!(Ok(p), loose);
            }
            Err(Error::NoiseBelowSecurityFloor { .. } | Error::TUniformBoundBelowSecurityFloor { .. }) => {
                prop_assert!(loose.unwrap().is_insecure_opt_in());
            }
            Err(e) => prop_assert_eq!(Err(e), loose),
        }
    }
}
