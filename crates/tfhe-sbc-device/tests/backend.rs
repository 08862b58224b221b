//! The XOF lanes and the FFT kernels that run are the instances the build asked for.
//!
//! CI's forced-instance steps build with `--cfg tfhe_sbc_backend="soft"` (or `"avx2"`) and set
//! `TFHE_SBC_EXPECT_BACKEND` to the same value, so this test fails if the cfg does not reach both crates, and
//! fails (loudly, never skipped) if the CPU cannot run the instance it names: a forced AVX2 run on a CPU
//! without AVX2 would otherwise test the portable code under the AVX2 step's name. The variable names the
//! widest instance wanted (`avx512f`, `avx2`, `soft`, `portable`); the FFT's widest is AVX2, so `avx512f`
//! expects `avx2` of it. Without the variable, the expected instances are worked out from the CPU (std's
//! feature detection) and the cfg.

#[test]
fn backends_are_the_expected_ones() {
    let expected = std::env::var("TFHE_SBC_EXPECT_BACKEND").ok();
    let (xof, fft) = match &expected {
        Some(name) => {
            assert!(
                cpu_runs(name),
                "TFHE_SBC_EXPECT_BACKEND={name}: this CPU cannot run that instance, so the forced build \
                 would test another one; run this step on a CPU with {name}, or leave it out"
            );
            let fft = if name == "avx512f" { "avx2" } else { name.as_str() };
            (name.as_str(), fft)
        }
        None if cfg!(tfhe_sbc_backend = "soft") => ("soft", "soft"),
        None => detected(),
    };
    assert_eq!(tfhe_sbc_device::backend(), xof, "BLAKE2b XOF lanes");
    assert_eq!(negacyclic_fft::backend(), fft, "negacyclic FFT kernels");
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

/// The widest instance of (the XOF lanes, the FFT kernels) this CPU supports, capped by
/// `--cfg tfhe_sbc_backend="avx2"`.
#[cfg(target_arch = "x86_64")]
fn detected() -> (&'static str, &'static str) {
    let avx2 = std::arch::is_x86_feature_detected!("avx2");
    let xof = if std::arch::is_x86_feature_detected!("avx512f") && !cfg!(tfhe_sbc_backend = "avx2") {
        "avx512f"
    } else if avx2 {
        "avx2"
    } else {
        "portable"
    };
    (xof, if avx2 { "avx2" } else { "portable" })
}

#[cfg(not(target_arch = "x86_64"))]
fn detected() -> (&'static str, &'static str) {
    ("portable", "portable")
}
