//! Instruction-set dispatch of the BLAKE2b XOF lanes: the portable code compiled twice more on x86_64,
//! with AVX-512F and with AVX2.
//!
//! The same shape as `negacyclic-fft`'s dispatch: an [`Isa`] per instance this build has, detected at run
//! time with `cpufeatures` (no_std, cached in an atomic), and a `dispatch!` macro that defines a function
//! running an `#[inline(always)]` portable kernel in that instance. Other targets use the portable code as it
//! is (NEON is baseline on aarch64).
//!
//! `--cfg tfhe_sbc_backend="soft"` compiles the AVX-512F and AVX2 instances out, so that the portable lanes
//! run (and are tested) on any host; [`backend`] then says `"soft"`. `negacyclic-fft` reads the same cfg.

/// The instances of the XOF lanes this build has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// The portable code as the target's baseline compiles it (SSE2 on x86_64, NEON on aarch64).
    Portable,
    /// The portable code compiled with AVX2 (8 lanes in two registers).
    #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
    Avx2,
    /// The portable code compiled with AVX-512F (8 lanes in one register, native 64-bit rotates).
    #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
    Avx512f,
}

#[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
cpufeatures::new!(avx512f_detect, "avx512f");
#[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
cpufeatures::new!(avx2_detect, "avx2");

impl Isa {
    /// The widest instance the running CPU supports (detected once, then cached).
    #[inline]
    pub(crate) fn detect() -> Self {
        #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
        {
            if avx512f_detect::get() {
                return Self::Avx512f;
            }
            if avx2_detect::get() {
                return Self::Avx2;
            }
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
            #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
            Self::Avx512f => "avx512f",
        }
    }
}

/// The instance of the BLAKE2b XOF lanes that runs on this CPU: `"avx512f"` or `"avx2"` (x86_64 with that
/// extension), `"portable"` (the target's baseline instruction set), or `"soft"` (the portable lanes, forced
/// by `--cfg tfhe_sbc_backend="soft"`). The FFT's instance is [`negacyclic_fft::backend`].
pub fn backend() -> &'static str {
    Isa::detect().name()
}

/// Defines `fn $name`, which runs the `#[inline(always)]` portable `$kernel` in the instance [`Isa::detect`]
/// picks.
///
/// For each instance other than the portable one, a `#[target_feature]` function takes the same parameters
/// and calls `$kernel` with them: `$kernel` is inlined there, so it is compiled for that instruction set, and
/// it keeps the parameters' facts (`noalias`, `dereferenceable`) that LLVM's vectorizer needs. (A closure
/// run inside a `#[target_feature]` function loses them with its captures: the lanes then ran 6x slower.)
macro_rules! dispatch {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$($g:ident: $bound:path),*>)? ($($arg:ident: $ty:ty),* $(,)?) => $kernel:expr;
    ) => {
        $(#[$attr])*
        #[inline]
        $vis fn $name $(<$($g: $bound),*>)? ($($arg: $ty),*) {
            #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
            #[target_feature(enable = "avx512f")]
            fn avx512f $(<$($g: $bound),*>)? ($($arg: $ty),*) {
                $kernel($($arg),*)
            }
            #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
            #[target_feature(enable = "avx2")]
            fn avx2 $(<$($g: $bound),*>)? ($($arg: $ty),*) {
                $kernel($($arg),*)
            }

            match $crate::csprng::dispatch::Isa::detect() {
                #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
                // SAFETY: `avx512f` enables only `avx512f`, and the CPU has it (`detect` checked).
                #[allow(unsafe_code)]
                $crate::csprng::dispatch::Isa::Avx512f => unsafe { avx512f($($arg),*) },
                #[cfg(all(target_arch = "x86_64", not(tfhe_sbc_backend = "soft")))]
                // SAFETY: `avx2` enables only `avx2`, and the CPU has it (`detect` checked).
                #[allow(unsafe_code)]
                $crate::csprng::dispatch::Isa::Avx2 => unsafe { avx2($($arg),*) },
                $crate::csprng::dispatch::Isa::Portable => $kernel($($arg),*),
            }
        }
    };
}
pub(crate) use dispatch;
