//! The XOF lanes and the FFT kernels that run are the instances the build asked for.
//!
//! CI's soft-backend step builds with `--cfg tfhe_sbc_backend="soft"` and sets `TFHE_SBC_EXPECT_BACKEND=soft`,
//! so this test fails if the cfg does not reach both crates. Without the variable, the expected instances are
//! worked out from the CPU (std's feature detection) and the cfg.

#[test]
fn backends_are_the_expected_ones() {
    let expected = std::env::var("TFHE_SBC_EXPECT_BACKEND").ok();
    let soft = cfg!(tfhe_sbc_backend = "soft");
    let (xof, fft) = match &expected {
        Some(name) => (name.as_str(), name.as_str()),
        None if soft => ("soft", "soft"),
        None => detected(),
    };
    assert_eq!(tfhe_sbc_device::backend(), xof, "BLAKE2b XOF lanes");
    assert_eq!(negacyclic_fft::backend(), fft, "negacyclic FFT kernels");
}

/// The widest instance of (the XOF lanes, the FFT kernels) this CPU supports.
#[cfg(target_arch = "x86_64")]
fn detected() -> (&'static str, &'static str) {
    let avx2 = std::arch::is_x86_feature_detected!("avx2");
    let xof = if std::arch::is_x86_feature_detected!("avx512f") {
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
