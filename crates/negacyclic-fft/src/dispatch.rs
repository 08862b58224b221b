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
//! # Forcing an instance
//! `--cfg tfhe_sbc_backend="…"` caps the instances a build has, so that the tests of each one run on any
//! host that can execute it (an AVX-512 host otherwise never runs the AVX2 or portable code):
//!
//! | value | instances compiled in (widest first) | [`backend`] on a CPU with AVX2 |
//! |---|---|---|
//! | unset or `"avx512f"` | every one (the default) | `"avx2"` |
//! | `"avx2"` | AVX2 and portable: wider ones (the device XOF's AVX-512F) are compiled out | `"avx2"` |
//! | `"soft"` | portable only | `"soft"` |
//!
//! The value is the name [`backend`] reports for the widest instance kept, the ladder being `avx512f` >
//! `avx2` > portable; detection then picks the widest kept instance the CPU runs (portable on a CPU without
//! AVX2, which `tests/backend.rs` turns into a failure when `TFHE_SBC_EXPECT_BACKEND` names the forced one).
//! `tfhe-sbc-device`'s BLAKE2b lanes dispatch the same way, through the same two macros
//! ([`isa_enum!`](crate::isa_enum) and [`isa_function!`](crate::isa_function)), under the same cfg: those
//! two macros are the only place that reads it.

/// Defines `enum Isa`: `Portable` and, on x86_64, one variant per listed instance (`Variant => "feature"
/// (detector module)`, widest first) that `--cfg tfhe_sbc_backend` keeps (module docs: every instance when
/// unset, none wider than AVX2 under `"avx2"`, none under `"soft"`), with `Isa::detect` (the widest kept
/// instance the running CPU supports, detected once with `cpufeatures`, then cached) and `Isa::name` (the
/// feature's name, or `"portable"`, or `"soft"`). The calling crate depends on `cpufeatures` on x86_64.
///
/// An instance is kept when `all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft"),
/// any(not(tfhe_sbc_backend = "avx2"), tfhe_sbc_backend = "feature"))`: this predicate, written out in
/// both macros (a `cfg` cannot call a macro), is the whole override.
///
/// Shared with `tfhe-sbc-device`'s BLAKE2b lanes; not part of this crate's API.
#[doc(hidden)]
#[macro_export]
macro_rules! isa_enum {
    (
        $(#[$attr:meta])*
        $vis:vis enum Isa {
            $(#[$portable_attr:meta])*
            Portable,
            $($(#[$variant_attr:meta])* $variant:ident => $feature:tt ($detector:ident),)*
        }
    ) => {
        $(#[$attr])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum Isa {
            $(#[$portable_attr])*
            Portable,
            $(
                $(#[$variant_attr])*
                #[cfg(all(
                    target_arch = "x86_64",
                    not(tfhe_sbc_backend = "soft"),
                    any(not(tfhe_sbc_backend = "avx2"), tfhe_sbc_backend = $feature)
                ))]
                $variant,
            )*
        }

        $(
            #[cfg(all(
                target_arch = "x86_64",
                not(tfhe_sbc_backend = "soft"),
                any(not(tfhe_sbc_backend = "avx2"), tfhe_sbc_backend = $feature)
            ))]
            cpufeatures::new!($detector, $feature);
        )*

        impl Isa {
            /// The widest instance the running CPU supports (detected once, then cached).
            #[inline]
            pub(crate) fn detect() -> Self {
                $(
                    #[cfg(all(
                        target_arch = "x86_64",
                        not(tfhe_sbc_backend = "soft"),
                        any(not(tfhe_sbc_backend = "avx2"), tfhe_sbc_backend = $feature)
                    ))]
                    if $detector::get() {
                        return Self::$variant;
                    }
                )*
                Self::Portable
            }

            /// The name the crate's `backend()` reports.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    #[cfg(tfhe_sbc_backend = "soft")]
                    Self::Portable => "soft",
                    #[cfg(not(tfhe_sbc_backend = "soft"))]
                    Self::Portable => "portable",
                    $(
                        #[cfg(all(
                            target_arch = "x86_64",
                            not(tfhe_sbc_backend = "soft"),
                            any(not(tfhe_sbc_backend = "avx2"), tfhe_sbc_backend = $feature)
                        ))]
                        Self::$variant => $feature,
                    )*
                }
            }
        }
    };
}

/// Defines `fn $name`, which runs the `#[inline(always)]` portable `$kernel` in the instance `$isa::detect`
/// (an enum of [`isa_enum!`](crate::isa_enum)) picks among `Variant => "feature"`, in that order.
///
/// For each instance other than the portable one, a `#[target_feature]` function takes the same parameters
/// and calls `$kernel` with them: `$kernel` is inlined there, so it is compiled for that instruction set, and
/// it keeps the parameters' facts (`noalias`, `dereferenceable`) that LLVM's vectorizer needs. (A closure
/// run inside a `#[target_feature]` function loses them with its captures: that made the BLAKE2b lanes of
/// `tfhe-sbc-device` 6x slower, so both crates use this shape.)
///
/// Shared with `tfhe-sbc-device`'s BLAKE2b lanes; not part of this crate's API.
#[doc(hidden)]
#[macro_export]
macro_rules! isa_function {
    (
        $isa:path { $($variant:ident => $feature:literal),* $(,)? }
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$($g:ident: $bound:path),*>)? ($($arg:ident: $ty:ty),* $(,)?) => $kernel:expr;
    ) => {
        $(#[$attr])*
        #[inline]
        $vis fn $name $(<$($g: $bound),*>)? ($($arg: $ty),*) {
            #[allow(dead_code)]
            type Instances = $isa;
            let detected = Instances::detect();
            $crate::isa_function!(
                @instances detected [$($variant $feature)*] [$(<$($g: $bound),*>)?] [$($arg: $ty),*] $kernel
            );
            let _ = detected;
            $kernel($($arg),*)
        }
    };
    // One `#[target_feature]` instance per listed variant, tried in order; then the portable code.
    (@instances $detected:ident [] $($rest:tt)*) => {};
    (
        @instances $detected:ident [$variant:ident $feature:literal $($more:tt)*] [$($generics:tt)*]
        [$($arg:ident: $ty:ty),*] $kernel:expr
    ) => {
        #[cfg(all(
            target_arch = "x86_64",
            not(tfhe_sbc_backend = "soft"),
            any(not(tfhe_sbc_backend = "avx2"), tfhe_sbc_backend = $feature)
        ))]
        {
            #[target_feature(enable = $feature)]
            fn instance $($generics)* ($($arg: $ty),*) {
                $kernel($($arg),*)
            }
            if $detected == Instances::$variant {
                // SAFETY: `instance` enables only `$feature`, and the CPU has it (`detect` checked).
                #[allow(unsafe_code)]
                return unsafe { instance($($arg),*) };
            }
        }
        $crate::isa_function!(@instances $detected [$($more)*] [$($generics)*] [$($arg: $ty),*] $kernel);
    };
}

isa_enum! {
    /// The instances of the kernels this build has.
    pub(crate) enum Isa {
        /// The portable code as the target's baseline compiles it (SSE2 on x86_64, NEON on aarch64).
        Portable,
        /// The portable code compiled with AVX2.
        Avx2 => "avx2" (avx2_detect),
    }
}

/// The instance of the transform kernels that runs on this CPU: `"avx2"` (x86_64 with AVX2, unless
/// `--cfg tfhe_sbc_backend="soft"`), `"portable"` (the target's baseline instruction set), or `"soft"` (the
/// portable kernels, forced by `--cfg tfhe_sbc_backend="soft"`). This crate's widest instance is AVX2, so
/// `tfhe_sbc_backend="avx512f"` and `"avx2"` build the same kernels here.
pub fn backend() -> &'static str {
    Isa::detect().name()
}

/// Defines `fn $name`, which runs the `#[inline(always)]` portable `$kernel` in the instance [`Isa::detect`]
/// picks ([`isa_function!`](crate::isa_function)).
macro_rules! dispatch {
    ($($function:tt)*) => {
        $crate::isa_function! { $crate::dispatch::Isa { Avx2 => "avx2" } $($function)* }
    };
}
pub(crate) use dispatch;
