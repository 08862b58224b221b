//! The kernel instance that runs is the one the build asked for.
//!
//! CI's forced-instance steps build with `--cfg tfhe_sbc_backend="soft"` (or `"avx2"`) and set
//! `TFHE_SBC_EXPECT_BACKEND` to the same value, so this test fails if the cfg does not reach the crate, and
//! fails (loudly, never skipped) if the CPU cannot run the instance it names: a forced AVX2 run on a CPU
//! without AVX2 would otherwise test the portable kernels under the AVX2 step's name. The variable names the
//! widest instance wanted (`avx512f`, `avx2`, `soft`, `portable`); this crate's widest is AVX2, so
//! `avx512f` expects `avx2` here. Without the variable, the expected instance is worked out from the CPU
//! (std's feature detection) and the cfg.

#[test]
fn backend_is_the_expected_one() {
    let expected = match std::env::var("TFHE_SBC_EXPECT_BACKEND") {
        Ok(name) => {
            assert!(
                cpu_runs(&name),
                "TFHE_SBC_EXPECT_BACKEND={name}: this CPU cannot run that instance, so the forced build \
                 would test another one; run this step on a CPU with {name}, or leave it out"
            );
            match name.as_str() {
                "avx512f" => "avx2".to_owned(),
                _ => name,
            }
        }
        Err(_) if cfg!(tfhe_sbc_backend = "soft") => "soft".to_owned(),
        Err(_) => detected().to_owned(),
    };
    assert_eq!(negacyclic_fft::backend(), expected);
}

/// Whether this CPU can run the instance `name` (std's feature detection).
fn cpu_runs(name: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    match name {
        "avx512f" => return std::arch::is_x86_feature_detected!("avx512f"),
        "avx2" => return std::arch::is_x86_feature_detected!("avx2"),
        _ => {}
    }
    matches!(name, "soft" | "portable")
}

#[cfg(target_arch = "x86_64")]
fn detected() -> &'static str {
    if std::arch::is_x86_feature_detected!("avx2") {
        "avx2"
    } else {
        "portable"
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detected() -> &'static str {
    "portable"
}
