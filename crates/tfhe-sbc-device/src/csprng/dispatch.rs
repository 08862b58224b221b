//! Instruction-set dispatch of the BLAKE2b XOF lanes: the portable code compiled twice more on x86_64,
//! with AVX-512F and with AVX2.
//!
//! The same machinery as `negacyclic-fft`'s dispatch, from its `isa_enum!` and `isa_function!` macros: an
//! [`Isa`] per instance this build has, detected at run time with `cpufeatures` (no_std, cached in an
//! atomic), and a `dispatch!` macro that defines a function running an `#[inline(always)]` portable kernel in
//! that instance. Other targets use the portable code as it is (NEON is baseline on aarch64).
//!
//! `--cfg tfhe_sbc_backend="soft"` compiles the AVX-512F and AVX2 instances out, so that the portable lanes
//! run (and are tested) on any host; [`backend`] then says `"soft"`. `--cfg tfhe_sbc_backend="avx2"`
//! compiles the AVX-512F instance out, so that an AVX-512 host runs (and tests) the AVX2 lanes; `"avx512f"`
//! keeps every instance (the default). `negacyclic-fft` reads the same cfg, in the same two macros.

negacyclic_fft::isa_enum! {
    /// The instances of the XOF lanes this build has.
    pub(crate) enum Isa {
        /// The portable code as the target's baseline compiles it (SSE2 on x86_64, NEON on aarch64).
        Portable,
        /// The portable code compiled with AVX-512F (8 lanes in one register, native 64-bit rotates).
        Avx512f => "avx512f" (avx512f_detect),
        /// The portable code compiled with AVX2 (8 lanes in two registers).
        Avx2 => "avx2" (avx2_detect),
    }
}

/// The instance of the BLAKE2b XOF lanes that runs on this CPU: `"avx512f"` or `"avx2"` (x86_64 with that
/// extension, and not compiled out by `--cfg tfhe_sbc_backend`), `"portable"` (the target's baseline
/// instruction set), or `"soft"` (the portable lanes, forced by `--cfg tfhe_sbc_backend="soft"`). The FFT's instance is [`negacyclic_fft::backend`].
pub fn backend() -> &'static str {
    Isa::detect().name()
}

/// Defines `fn $name`, which runs the `#[inline(always)]` portable `$kernel` in the instance [`Isa::detect`]
/// picks, widest first (`negacyclic_fft::isa_function!`: a `#[target_feature]` function per instance, which
/// keeps the parameters' facts LLVM's vectorizer needs; a closure lost them and the lanes ran 6x slower).
macro_rules! dispatch {
    ($($function:tt)*) => {
        negacyclic_fft::isa_function! {
            $crate::csprng::dispatch::Isa { Avx512f => "avx512f", Avx2 => "avx2" } $($function)*
        }
    };
}
pub(crate) use dispatch;
