//! Exact negacyclic polynomial products over `f64`, for TFHE.
//!
//! A product in `Z[X]/(X^N + 1)` of a torus polynomial (wrapping `u32` coefficients) and a small-integer
//! polynomial (a binary or ternary secret key) is computed with the *folded* negacyclic FFT: the `N`
//! real coefficients are folded into `N/2` complex numbers, twisted by the `2N`-th roots of unity
//! (the discrete weighted transform of the TFHE-SBC paper, §2.3), and transformed by an `N/2`-point complex
//! FFT. tfhe-rs and TFHEpp compute the same transform.
//!
//! * **Plan once**: a [`Plan`] is a `Copy` handle on twiddle and twisting tables that `build.rs` computes with
//!   `libm` into `static`s, so they are bit-identical on every target and cost no RAM on a microcontroller.
//! * **No heap, caller scratch**: a spectrum is a caller-owned `[f64]` of length `N` (the real parts of the
//!   `N/2` frequencies, then their imaginary parts); every transform runs in place in it.
//! * **Exact**: the inverse rounds to the nearest integer. For a 32-bit torus polynomial times a binary or
//!   ternary polynomial, the result equals the naive product bit for bit (the tests check this against the
//!   schoolbook product, and measure the distance to the nearest integer before rounding).
//!
//! Frequencies come out in bit-reversed order, which is all that pointwise products need.
//!
//! A 64-bit torus can later be served with two 32-bit limbs: write each coefficient as `hi * 2^32 + lo`
//! with `lo` read centered (as [`Coefficient`] reads a `u32`), compute one product per limb, round each one
//! with [`Plan::inverse_wrapping`] (into `u32` for `hi`, which only matters mod 2^32, into `i64` for `lo`),
//! then add `hi << 32` and `lo` wrapping mod 2^64: that equals the naive 64-bit product. The limbs must be
//! rounded *before* they are recombined: an unrounded [`Plan::inverse_raw`] value is off by up to ~4e-5 at
//! N = 1024 (binary key), which the shift by 2^32 turns into an error of ~2e5, and an `f64` near 2^73 has
//! no integer precision left anyway.
//!
//! # Backend
//! On x86_64 the kernels also run compiled for AVX2 when the CPU has it (run-time detection, no_std).
//! `RUSTFLAGS='--cfg tfhe_sbc_backend="soft"'` (after RustCrypto sha2's `sha2_backend`) compiles that out
//! and keeps the portable kernels only, e.g. to test them on a host that would otherwise never run them;
//! `"avx2"` and `"avx512f"` cap the device XOF's instances the same way (the table in `dispatch`'s docs);
//! [`backend`] says which instance runs. `tfhe-sbc-device` reads the same cfg for its BLAKE2b XOF.
//!
//! # Example
//! ```
//! use negacyclic_fft::Plan;
//!
//! let plan = Plan::new(1024).expect("supported size");
//! let a: Vec<u32> = (0..1024u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
//! let key: Vec<u32> = (0..1024u32).map(|i| (i * 7 + 3) % 5 % 2).collect();
//!
//! // The key's spectrum is computed once and reused for every product.
//! let mut key_spectrum = [0.0f64; 1024];
//! plan.forward(&key, &mut key_spectrum);
//!
//! let mut spectrum = [0.0f64; 1024];
//! plan.forward(&a, &mut spectrum);
//! plan.mul_assign(&mut spectrum, &key_spectrum);
//! let mut product = [0u32; 1024];
//! plan.inverse_wrapping(&mut spectrum, &mut product);
//!
//! let mut expected = [0u32; 1024];
//! negacyclic_fft::naive::negacyclic_product_wrapping_into(&a, &key, &mut expected);
//! assert_eq!(product, expected);
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's example, run as a doctest so that the published README compiles.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod coefficient;
mod dispatch;
mod kernels;
pub mod naive;
mod plan;

pub use coefficient::{Coefficient, RoundedCoefficient};
pub use dispatch::backend;
pub use plan::{FftError, MAX_POLYNOMIAL_SIZE, MIN_POLYNOMIAL_SIZE, Plan};

mod tables;
