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
//!
//! `--cfg tfhe_sbc_backend="soft"` compiles the AVX2 instance out, so that the portable code runs (and is
//! tested) on any host; [`backend`] then says `"soft"`. `tfhe-sbc-device`'s BLAKE2b lanes dispatch the same
//! way, under the same cfg.

/// The instances of the kernels this build has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// The portable code as the target's baseline compiles it (SSE2 on x86_64, NEON on aarch64).
    Portable,
    /// The portable code compiled with AVX2.
    #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
    Avx2,
}

#[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
cpufeatures::new!(avx2_detect, "avx2");

impl Isa {
    /// The fastest instance the running CPU supports (detected once, then cached).
    #[inline]
    pub(crate) fn detect() -> Self {
        #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
        if avx2_detect::get() {
            return Self::Avx2;
        }
        Self::Portable
    }

    /// The name [`backend`] reports.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            #[cfg(tfhe_sbc_backend = "soft")]
            Self::Portable => "soft",
            #[cfg(not(tfhe_sbc_backend = "soft"))]
            Self::Portable => "portable",
            #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
            Self::Avx2 => "avx2",
        }
    }
}

/// The instance of the transform kernels that runs on this CPU: `"avx2"` (x86_64 with AVX2), `"portable"`
/// (the target's baseline instruction set), or `"soft"` (the portable kernels, forced by
/// `--cfg tfhe_sbc_backend="soft"`).
pub fn backend() -> &'static str {
    Isa::detect().name()
}

/// Defines `fn $name`, which runs the `#[inline(always)]` portable `$kernel` in the instance [`Isa::detect`]
/// picks.
///
/// For each instance other than the portable one, a `#[target_feature]` function takes the same parameters
/// and calls `$kernel` with them: `$kernel` is inlined there, so it is compiled for that instruction set, and
/// it keeps the parameters' facts (`noalias`, `dereferenceable`) that LLVM's vectorizer needs. (A closure
/// run inside a `#[target_feature]` function loses them with its captures: that made the BLAKE2b lanes of
/// `tfhe-sbc-device` 6x slower, so both crates use this shape.)
macro_rules! dispatch {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$($g:ident: $bound:path),*>)? ($($arg:ident: $ty:ty),* $(,)?) => $kernel:expr;
    ) => {
        $(#[$attr])*
        #[inline]
        $vis fn $name $(<$($g: $bound),*>)? ($($arg: $ty),*) {
            #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
            #[target_feature(enable = "avx2")]
            fn avx2 $(<$($g: $bound),*>)? ($($arg: $ty),*) {
                $kernel($($arg),*)
            }

            match $crate::dispatch::Isa::detect() {
                #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
                // SAFETY: `avx2` enables only `avx2`, and the CPU has it (`detect` checked).
                #[allow(unsafe_code)]
                $crate::dispatch::Isa::Avx2 => unsafe { avx2($($arg),*) },
                $crate::dispatch::Isa::Portable => $kernel($($arg),*),
            }
        }
    };
}
pub(crate) use dispatch;
