//! Instruction-set dispatch: the portable kernels compiled once more with AVX2 (x86_64 only).
//!
//! The kernels are plain scalar Rust over split re/im arrays. With the baseline x86_64 target (SSE2) LLVM
//! vectorizes them two lanes wide; compiled with AVX2 enabled they run four lanes wide. On this project's
//! x86_64 machines that takes the N = 1024 product from about 1.35x tfhe-fft's time to within its range
//! (see `benches/negacyclic_product.rs`). The choice is made at run time with `cpufeatures` (no_std,
//! cached in an atomic), so one binary runs on every x86_64 CPU. Other targets use the portable code as
//! it is (NEON on aarch64 is part of the baseline, so no dispatch is needed there).
//!
//! Both paths compute the same exact integer results; intermediate `f64` values may differ in the last
//! bits between instruction sets, which the rounding margin (< 1e-4 at N = 1024) absorbs.

#[cfg(target_arch = "x86_64")]
cpufeatures::new!(avx2_detect, "avx2");

/// Whether the running CPU has AVX2 (detected once, then cached).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx2() -> bool {
    avx2_detect::get()
}

/// Evaluates the kernel call `$call` in the fastest instance the running CPU supports.
macro_rules! dispatch {
    ($call:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if $crate::dispatch::has_avx2() {
                // SAFETY: `avx2::run` enables only `avx2`, and the CPU has it (checked just above).
                #[allow(unsafe_code)]
                unsafe {
                    $crate::dispatch::avx2::run(|| $call)
                }
            } else {
                $call
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $call
        }
    }};
}
pub(crate) use dispatch;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    /// Runs `f` with AVX2 enabled: `f` is inlined here, so its loops are compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[allow(unsafe_code)]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) unsafe fn run<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
}
