//! serde goes through the validating constructors: round trips work, malformed or insecure inputs are errors.
//!
//! The hand-made inputs are serialized from mirror types with the same field layout as the crate's private
//! serialized forms, so they are what an attacker can put on the wire.
#![cfg(all(feature = "serde", feature = "alloc"))]
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use tfhe_sbc_core::dimensions::{GlweDimension, PolynomialSize};
use tfhe_sbc_core::entities::{
    GlweCiphertext, GlweCiphertextOwned, LweCiphertext, LweCiphertextOwned, MASK_SEED_BYTES, SeededGlweCiphertext,
};
use tfhe_sbc_core::parameters::{
    GlweParameters, KeyDistribution, NoiseDistribution, ParameterSetId, TFHE_LIB_GLWE_1024,
};

/// Mirror of `GlweParameters`' serialized form.
#[derive(Serialize)]
enum ParamsRepr {
    Named(u16),
    Custom {
        torus_bits: u32,
        polynomial_size: PolynomialSize,
        glwe_dimension: GlweDimension,
        noise: NoiseDistribution,
        key_distribution: KeyDistribution,
        allow_insecure: bool,
    },
}

fn custom(torus_bits: u32, n: usize, k: usize, noise: NoiseDistribution, allow_insecure: bool) -> ParamsRepr {
    ParamsRepr::Custom {
        torus_bits,
        polynomial_size: PolynomialSize(n),
        glwe_dimension: GlweDimension(k),
        noise,
        key_distribution: KeyDistribution::Binary,
        allow_insecure,
    }
}

fn gaussian(std_dev: f64) -> NoiseDistribution {
    NoiseDistribution::Gaussian { std_dev }
}

fn tuniform(bound_log2: u32) -> NoiseDistribution {
    NoiseDistribution::TUniform { bound_log2 }
}

fn to_bytes<S: Serialize>(value: &S) -> Vec<u8> {
    postcard::to_allocvec(value).unwrap()
}

fn params_from(repr: &ParamsRepr) -> Result<GlweParameters, postcard::Error> {
    postcard::from_bytes(&to_bytes(repr))
}

/// A validation failure, as opposed to a format error: postcard reports the `try_from` error as a custom one.
fn is_refused<T: core::fmt::Debug>(result: Result<T, postcard::Error>) -> bool {
    matches!(result, Err(postcard::Error::SerdeDeCustom))
}

#[test]
fn named_set_travels_as_its_id() {
    let bytes = to_bytes(&TFHE_LIB_GLWE_1024);
    assert_eq!(bytes, to_bytes(&ParamsRepr::Named(1)));
    // Variant 0 (`Named`), then id 1: the noise and shape never travel for a named set.
    assert_eq!(bytes.len(), 2);
    assert_eq!(
        postcard::from_bytes::<GlweParameters>(&bytes).unwrap(),
        TFHE_LIB_GLWE_1024
    );
}

#[test]
fn every_named_set_round_trips_by_id() {
    for id in 1..=4u16 {
        let set = GlweParameters::from_id(ParameterSetId(id)).unwrap();
        let bytes = postcard::to_allocvec(&set).unwrap();
        assert_eq!(postcard::from_bytes::<GlweParameters>(&bytes).unwrap(), set, "id {id}");
    }
}

#[test]
fn unknown_ids_are_refused() {
    for id in [0, 5, 99, u16::MAX] {
        assert!(is_refused(params_from(&ParamsRepr::Named(id))), "id {id}");
    }
}

#[test]
fn custom_sets_round_trip() {
    let sets = [
        GlweParameters::new(32, PolynomialSize(2048), GlweDimension(1), gaussian(1e-9)).unwrap(),
        GlweParameters::new(32, PolynomialSize(1024), GlweDimension(1), tuniform(11)).unwrap(),
        GlweParameters::new(64, PolynomialSize(2048), GlweDimension(1), tuniform(17)).unwrap(),
        GlweParameters::new_allow_insecure(
            32,
            PolynomialSize(64),
            GlweDimension(1),
            gaussian(libm::ldexp(1.0, -25)),
        )
        .unwrap(),
        GlweParameters::new_allow_insecure(32, PolynomialSize(1024), GlweDimension(1), tuniform(8)).unwrap(),
    ];
    for p in sets {
        let back: GlweParameters = postcard::from_bytes(&to_bytes(&p)).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.is_insecure_opt_in(), !p.meets_security_floor());
    }
}

#[test]
fn below_floor_sets_need_the_flag() {
    let toy = [
        (32, 64, 1, gaussian(libm::ldexp(1.0, -25))),
        (32, 1024, 1, gaussian(1e-12)),
        (32, 1024, 1, gaussian(libm::ldexp(1.0, -25))),
        (32, 1024, 1, tuniform(10)),
        (64, 1024, 1, gaussian(1e-12)),
    ];
    for (bits, n, k, noise) in toy {
        assert!(
            is_refused(params_from(&custom(bits, n, k, noise, false))),
            "{noise:?}, N = {n}"
        );
        let p = params_from(&custom(bits, n, k, noise, true)).unwrap();
        assert!(p.is_insecure_opt_in());
    }
    // The flag is only an opt-in: on a secure set it changes nothing.
    let with = params_from(&custom(32, 1024, 1, tuniform(11), true)).unwrap();
    let without = params_from(&custom(32, 1024, 1, tuniform(11), false)).unwrap();
    assert_eq!(with, without);
    assert!(!with.is_insecure_opt_in());
}

#[test]
fn invalid_fields_are_refused_even_with_the_flag() {
    for flag in [false, true] {
        for s in [f64::NAN, f64::INFINITY, 0.0, -1e-9, 0.5] {
            assert!(
                is_refused(params_from(&custom(32, 2048, 1, gaussian(s), flag))),
                "std dev {s}"
            );
        }
        for n in [0, 1000, 32, 8192] {
            assert!(
                is_refused(params_from(&custom(32, n, 1, gaussian(1e-9), flag))),
                "N = {n}"
            );
        }
        assert!(is_refused(params_from(&custom(32, 2048, 0, gaussian(1e-9), flag))));
        assert!(is_refused(params_from(&custom(
            32,
            4096,
            1 << 20,
            gaussian(1e-9),
            flag
        ))));
        assert!(is_refused(params_from(&custom(16, 2048, 1, gaussian(1e-9), flag))));
        assert!(is_refused(params_from(&custom(32, 1024, 1, tuniform(0), flag))));
        assert!(is_refused(params_from(&custom(32, 1024, 1, tuniform(31), flag))));
    }
}

/// Mirror of the `GlweCiphertext` and `LweCiphertext` serialized forms.
#[derive(Serialize)]
struct GlweRepr {
    data: Vec<u32>,
    polynomial_size: PolynomialSize,
}

#[derive(Serialize)]
struct LweRepr {
    data: Vec<u32>,
}

/// Mirror of the `SeededGlweCiphertext` serialized form.
#[derive(Serialize)]
struct SeededRepr {
    seed: [u8; MASK_SEED_BYTES],
    polynomial_size: PolynomialSize,
    body: Vec<u32>,
}

fn words(len: usize) -> Vec<u32> {
    (0..len as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect()
}

#[test]
fn glwe_ciphertext_round_trips_and_rejects_bad_lengths() {
    let data = words(3 * 64);
    // Serialized from a borrowed view, deserialized as an owned one.
    let view = GlweCiphertext::<u32, _>::from_container(&data[..], PolynomialSize(64)).unwrap();
    let owned: GlweCiphertextOwned<u32> = postcard::from_bytes(&to_bytes(&view)).unwrap();
    assert_eq!(owned.as_slice(), &data[..]);
    assert_eq!(owned.glwe_dimension(), GlweDimension(2));
    assert_eq!(
        to_bytes(&view),
        to_bytes(&GlweRepr {
            data: data.clone(),
            polynomial_size: PolynomialSize(64)
        })
    );

    for (len, n) in [(100, 64), (64, 64), (0, 64), (0, 0), (128, 0), (2 * 64 + 1, 64)] {
        let bytes = to_bytes(&GlweRepr {
            data: words(len),
            polynomial_size: PolynomialSize(n),
        });
        assert!(
            is_refused(postcard::from_bytes::<GlweCiphertextOwned<u32>>(&bytes)),
            "length {len}, N = {n}"
        );
    }
}

#[test]
fn lwe_ciphertext_round_trips_and_rejects_bad_lengths() {
    let ct = LweCiphertext::<u64, _>::from_container(vec![1u64, 2, 3, u64::MAX]).unwrap();
    let back: LweCiphertextOwned<u64> = postcard::from_bytes(&to_bytes(&ct)).unwrap();
    assert_eq!(back, ct);
    for len in [0, 1] {
        let bytes = to_bytes(&LweRepr { data: words(len) });
        assert!(
            is_refused(postcard::from_bytes::<LweCiphertextOwned<u32>>(&bytes)),
            "length {len}"
        );
    }
}

#[test]
fn seeded_ciphertext_round_trips_and_rejects_bad_lengths() {
    let body = words(64);
    let ct =
        SeededGlweCiphertext::<u32, _>::from_parts([7; MASK_SEED_BYTES], body.clone(), PolynomialSize(64)).unwrap();
    let back: SeededGlweCiphertext<u32, Vec<u32>> = postcard::from_bytes(&to_bytes(&ct)).unwrap();
    assert_eq!(back, ct);
    assert_eq!(back.polynomial_size(), PolynomialSize(64));
    assert_eq!(
        to_bytes(&ct),
        to_bytes(&SeededRepr {
            seed: [7; MASK_SEED_BYTES],
            polynomial_size: PolynomialSize(64),
            body
        })
    );
    for (len, n) in [(63, 64), (65, 64), (64, 1024), (0, 0), (0, 64)] {
        let bytes = to_bytes(&SeededRepr {
            seed: [1; MASK_SEED_BYTES],
            polynomial_size: PolynomialSize(n),
            body: words(len),
        });
        assert!(
            is_refused(postcard::from_bytes::<SeededGlweCiphertext<u32, Vec<u32>>>(&bytes)),
            "length {len}, N = {n}"
        );
    }
}

/// Checks that a deserialized value satisfies its type's invariants (the accessors would panic otherwise).
fn accessors_hold<T: for<'de> Deserialize<'de>>(bytes: &[u8], check: impl Fn(&T)) {
    if let Ok(value) = postcard::from_bytes::<T>(bytes) {
        check(&value);
    }
}

proptest! {
    /// Arbitrary bytes never panic, and whatever deserializes is a valid object.
    #[test]
    fn arbitrary_bytes_never_yield_invalid_objects(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        accessors_hold::<GlweParameters>(&bytes, |p| {
            // A custom set that deserialized is exactly what a constructor builds.
            if p.id() == ParameterSetId::CUSTOM {
                let rebuilt = GlweParameters::new_allow_insecure(
                    p.torus_bits(),
                    p.polynomial_size(),
                    p.glwe_dimension(),
                    p.noise_distribution(),
                );
                assert_eq!(rebuilt, Ok(*p));
                assert_eq!(p.meets_security_floor(), !p.is_insecure_opt_in());
            } else {
                assert_eq!(GlweParameters::from_id(p.id()), Some(*p));
            }
        });
        accessors_hold::<GlweCiphertextOwned<u32>>(&bytes, |c| {
            assert_eq!(c.body().len(), c.polynomial_size().0);
            assert_eq!(c.mask().len(), c.glwe_dimension().0 * c.polynomial_size().0);
        });
        accessors_hold::<LweCiphertextOwned<u32>>(&bytes, |c| {
            assert_eq!(c.mask().len(), c.lwe_dimension().0);
            let _ = c.body();
        });
        accessors_hold::<SeededGlweCiphertext<u32, Vec<u32>>>(&bytes, |c| {
            assert!(!c.body().is_empty());
        });
    }

    /// Structured custom sets: deserialization accepts exactly what the constructors accept.
    #[test]
    fn deserialization_matches_the_constructors(
        bits in prop_oneof![Just(32u32), Just(64), any::<u32>()],
        log2_n in 0u32..14,
        k in 0usize..4,
        noise in prop_oneof![
            (-70.0f64..0.0).prop_map(|l| gaussian(libm::exp2(l))),
            any::<f64>().prop_map(gaussian),
            (0u32..64).prop_map(tuniform),
        ],
        flag in any::<bool>(),
    ) {
        let n = 1usize << log2_n;
        let expected = if flag {
            GlweParameters::new_allow_insecure(bits, PolynomialSize(n), GlweDimension(k), noise)
        } else {
            GlweParameters::new(bits, PolynomialSize(n), GlweDimension(k), noise)
        };
        let got = params_from(&custom(bits, n, k, noise, flag));
        match expected {
            Ok(p) => prop_assert_eq!(got.unwrap(), p),
            Err(_) => prop_assert!(is_refused(got)),
        }
    }
}
