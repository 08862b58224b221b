//! The kernel instance that runs is the one the build asked for.
//!
//! CI's soft-backend step builds with `--cfg tfhe_sbc_backend="soft"` and sets `TFHE_SBC_EXPECT_BACKEND=soft`,
//! so this test fails if the cfg does not reach the crate. Without the variable, the expected instance is
//! worked out from the CPU (std's feature detection) and the cfg.

#[test]
fn backend_is_the_expected_one() {
    let expected = match std::env::var("TFHE_SBC_EXPECT_BACKEND") {
        Ok(name) => name,
        Err(_) if cfg!(tfhe_sbc_backend = "soft") => "soft".to_owned(),
        Err(_) => detected().to_owned(),
    };
    assert_eq!(negacyclic_fft::backend(), expected);
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
