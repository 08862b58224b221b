//! Exact, constant-time negacyclic polynomial products over the 32- and 64-bit torus with integer NTTs,
//! for cores without a double-precision FPU (Cortex-M0/M0+/M3/M4).
//!
//! A product in `Z[X]/(X^N + 1)` of a torus polynomial (wrapping `u32` or `u64` coefficients) and a binary
//! (or ternary) polynomial is computed exactly as an integer polynomial by negacyclic number-theoretic
//! transforms modulo `L` primes of 30 bits, then reconstructed by Garner's CRT and wrapped modulo `2^32` or
//! `2^64`. The result equals the schoolbook product bit for bit (`tests/exactness.rs` checks it against
//! `negacyclic_fft::naive` with proptest, and at the extreme magnitudes), so it can replace the `f64` FFT
//! without changing a ciphertext.
//!
//! * **Compile-time plans**: [`NttPlan::new`] is a `const fn` generic in `N`; an unsupported `N` is a compile
//!   error, and the twiddle tables (one `N`-entry table per prime: 4 KiB at `N = 1024`, or 8 KiB with the
//!   Shoup companions of the Cortex-M0/M3 build, see Timing) are associated `const`s
//!   computed by `const fn`s, so a program contains the tables of the sizes it names and no others, in debug
//!   builds too. `N` is a power of two from 64 to 4096.
//! * **No heap, caller scratch**: a spectrum is a caller-owned `[[u32; L]]` of length `N` (`4LN` bytes: 8 KiB
//!   for the 32-bit torus at `N = 1024`, as much as the `f64` FFT's).
//! * **Fast**: merged twisting (the `2N`-th roots folded into the twiddles: Cooley-Tukey forward,
//!   Gentleman-Sande inverse, no bit reversal since pointwise products do not care about order), two stages
//!   per pass, Montgomery products (three instructions on a Cortex-M4), and the inverse's `N^-1` and the
//!   Montgomery factor folded into the CRT constants. The 32-bit torus runs on two primes below `2^23`
//!   (below), whose residues have 8 bits of headroom in a signed word: the forward butterfly is a signed
//!   Montgomery product (`SMULL`, `MUL`, `SMLAL`), an addition and a subtraction, with no reduction but in
//!   its first pass, which brings the operands that no twiddle multiplies below `3p/2` (Barrett: `SMMUL`,
//!   `MLS`; a twiddle product takes any word), so that loading a polynomial is a copy; the inverse reduces
//!   the sums of one stage in one pass (two at `N = 4096`), where a bound computed from `N` says the next
//!   step could not run otherwise; spectra hold signed residues (below `16p`), and Garner's second
//!   digit comes out exact from one Montgomery reduction, with no centring. On Armv7 and Armv8-M Mainline
//!   (Cortex-M4/M7/M33, Armv7-A/R: `build.rs` sets `negacyclic_ntt_arm_asm` from the target triple) the
//!   radix-4 passes whose quarter is 1, 4, 16, 64 or 256 (all of `N = 1024`'s), the pointwise product and
//!   the CRT into a `u32` body are naked assembly functions (`src/arm_asm.rs`) that own all fourteen
//!   registers: a pass keeps its four values, both Montgomery temporaries, its three twiddles, `p` and
//!   `-p^-1` in registers, addresses the four operands with immediate offsets, and the passes over groups of
//!   four consecutive values load and store them with one `LDM` and one `STM` (30 instructions per radix-4
//!   butterfly of four values, 26-28 with `LDM`/`STM`, against LLVM's 37-39: with the frame pointer reserved
//!   LLVM has 13 registers and spilled a twiddle). Each computes exactly what its portable twin computes
//!   (the same words out: its unit tests compare them, run on Arm, see Cost); elsewhere, and for the other
//!   quarters, LLVM compiles the portable kernels. The 64-bit torus (30-bit primes) and the 16x16-bit
//!   multiplier build keep Harvey's lazy butterflies (values in `[0, 4p)` and `[0, 2p)`).
//!
//! # Primes and bounds
//! The 64-bit torus uses `p_0 = 0x3fff4001`, `p_1 = 0x3ffe8001` and `p_2 = 0x3ffc0001` ([`P0`], [`P1`],
//! [`P2`]): below `2^30` so that `4p < 2^32` (lazy reductions in 32-bit words). The 32-bit torus uses
//! `q_0 = 0x7e4001` and `q_1 = 0x7e0001` ([`Q0`], [`Q1`]: `2^23 - 7 * 2^14 + 1` and `2^23 - 8 * 2^14 + 1`,
//! product about `2^45.96`), except in the 16x16-bit multiplier build (Cortex-M0/M3), which keeps `p_0, p_1`.
//! All are `= 1 mod 2^14` so that `2N | p - 1` up to `N = 8192`.
//! Torus inputs are read centred (`a - 2^B` when `a >= 2^(B-1)`, `B` = 32 or 64), as the `f64` FFT reads
//! them, so a ternary key's `-1` (the word `2^B - 1`) counts as `-1`; key bytes are `0` or `1`. Every
//! coefficient of the integer product of a torus polynomial and a binary or ternary one then satisfies
//! `|X| <= N 2^(B-1)`:
//! * [`NttPlan32`] (`P_2 = q_0 q_1 ~ 2^45.96`, or `p_0 p_1 ~ 2^60`), 32-bit torus: `|X| <= 4096 * 2^31 =
//!   2^43` at `N = 4096`;
//! * [`NttPlan64`] (`P_3 = p_0 p_1 p_2 ~ 2^90`), 64-bit torus: `|X| <= 4096 * 2^63 = 2^75` at `N = 4096`
//!   (the integer set needs `N = 2048`, `2^74`).
//!
//! Garner's digits `d_i` (`X = d_0 + d_1 P_1 + ... + d_{L-1} P_{L-1}`, `P_i = p_0 ... p_{i-1}`) are kept lazy
//! in `[0, 2p_i)` except the last, which is reduced and taken centred (`d - p` when `d > (p - 1)/2`, a masked
//! select). The sum `S` of the lower digits' terms is below `2q_0 < 2^24` or `2p_0 < 2^31` (`L = 2`) or `2p_0 + 2p_0 p_1 < 2^61`
//! (`L = 3`), so the computed value lies in `[S - P_L/2, S + P_L/2]`; it is congruent to `X` modulo `P_L`,
//! and `X` lies in the same interval whenever `|X| + S < P_L/2`: `2^43 + 2^24 < 2^44.96`
//! (with `p_0, p_1`: `2^43 + 2^31 < 2^59`) and `2^75 + 2^61 < 2^89`. So the value is `X`
//! exactly, and wrapping it modulo `2^B` (32-bit or 64-bit multiplies by `P_i mod 2^B`) gives the torus
//! product.
//!
//! # Timing
//! No branch and no memory address depends on the data: loop bounds and table indices depend on `N` only (in
//! the Arm assembly too: its loops end on pointers derived from `N`, and it reads and writes the addresses
//! the portable kernels do, in the same order),
//! conditional subtractions and the centring are masks, and all arithmetic on values is `wrapping_*` (a
//! checked `+` would branch on the data in builds with overflow checks). The compiler turns a mask into a
//! conditional move (`CMOV`, `CSEL`) or a Thumb-2 `IT` block, which run in fixed time; Thumb-1 (`thumbv6m`,
//! `thumbv8m.base`) and RISC-V (no conditional move in the base ISA or the M, A, C extensions) have neither,
//! so there an empty `asm!` hides each mask from the optimizer, which would otherwise make it a branch (on
//! `riscv32imc` it did: a `bltz` over a `mv` in every conditional subtraction). Checked:
//! * x86_64: the tfhe-sbc workspace's constant-time check runs the key spectrum, products, CRT and whole
//!   encryptions through this crate under valgrind memcheck with the key (and the message, the CSPRNG)
//!   marked secret, in release and in dev builds: no report.
//! * Cortex-M and RISC-V: the tfhe-sbc workspace's firmware trace check runs its firmware (the
//!   boolean known-answer encryptor through this crate) for `thumbv7em`, `thumbv7m`, `thumbv6m`,
//!   `riscv32imc` and `riscv32imac` under qemu with two different sets of secrets and a plugin that
//!   fingerprints every executed instruction address and every memory address: the fingerprints must be
//!   equal, and differ for a planted secret branch or secret-indexed load.
//!
//! The multiplier is the one operand-dependent instruction left, so it is chosen per target (`build.rs`, from
//! the target triple: rustc does not expose the ARM `dsp` feature to `cfg`):
//! * Cortex-M4/M7 (`thumbv7em`), and every other target: `UMULL`/`UMLAL`, and `SMULL`/`SMLAL`/`SMMUL` for
//!   the small primes' signed arithmetic (all single-cycle on the M4, whatever the operands) through `u64`
//!   and `i64` products.
//! * Cortex-M3 (`thumbv7m`), Cortex-M0/M0+ (`thumbv6m`) and ARMv8-M Baseline (`thumbv8m.base`): the 64-bit
//!   product is built from four 16x16-bit partial products with the 32-bit `MUL`/`MULS` and `ADDS`/`ADCS`,
//!   because the M3's `UMULL`/`UMLAL` terminate early depending on the operands (3 to 5 cycles, Cortex-M3
//!   TRM, instruction timings) and the M0/M0+ have no long multiply (a `u64` product would call
//!   compiler-builtins' `__aeabi_lmul`). `MUL` is single-cycle on the M3; `MULS` takes 1 cycle (or 32 with
//!   the M0's small-multiplier option) whatever the operands. To need fewer of these products, the twiddles
//!   are stored with Shoup's companion `w' = floor(w 2^32 / p)` there (`y w mod p = y w - hi(y w') p`: one
//!   high product instead of Montgomery's two), which doubles the tables (8 KiB per prime at `N = 1024`);
//!   the pointwise products and the CRT stay Montgomery. This costs about twice the M4's instructions.
//!   `RUSTFLAGS="--cfg negacyclic_ntt_mul16"` selects it on any target, so that the host tests and the
//!   ctgrind check can cover it.
//! * On Cortex-M0 the transforms also call `__aeabi_uidiv` once per stage, on lengths derived from `N`
//!   (public).
//!
//! # Cost
//! Instructions per `N = 1024` product of the 32-bit torus (forward transform of the torus polynomial for
//! both primes, pointwise product with the precomputed key spectrum, inverse transforms and CRT, added into
//! the body), counted exactly under qemu-arm with a TCG plugin (the tfhe-sbc workspace's
//! `scripts/qemu-plugin/insn_count.c`) on a Thumb-2 build of the `product_count` example (Armv7-A in Thumb-2:
//! the same assembly as the Cortex-M4's), `count(4) - count(0)` over 4; `PART=forward|mul|inverse` for the
//! parts:
//!
//! ```text
//! export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER=arm-linux-gnueabihf-gcc
//! RUSTFLAGS="-C target-feature=+thumb-mode" cargo build --release -p negacyclic-ntt \
//!     --example product_count --target armv7-unknown-linux-gnueabihf
//! qemu-arm -L /usr/arm-linux-gnueabihf -plugin insn_count.so product_count 4   # and 0
//! ```
//!
//! | build                          | per product | forward (load + transforms) | pointwise | inverse + CRT |
//! |--------------------------------|------------:|---------------------------:|----------:|--------------:|
//! | `SMULL` assembly (Cortex-M4)   |     186 k   |            82 k (5 k + 79 k) |     9 k   |       96 k    |
//! | 16x16 partial products (M3/M0) |     921 k   |         369 k (43 k + 331 k) |    87 k   |      466 k    |
//!
//! (`--cfg negacyclic_ntt_mul16` in `RUSTFLAGS` for the second row; `PART=load|floaded` split the forward
//! step.) Before the assembly (LLVM's code of the same kernels, radix 4 with constant quarters): 232 k per
//! product, 96 k (5 k + 93 k), 13 k and 124 k. The 64-bit torus at `N = 2048` (three primes): 1.46 M per
//! product (M4 build), 3.29 M (M3/M0 build). The `f64` FFT this replaces on Cortex-M took 5.5 M
//! instructions per encryption in software floating point. The assembly is tested on Arm under qemu-arm, in
//! Thumb-2 and in A32 (`RUSTFLAGS` without `+thumb-mode`), its twins and the exactness tests:
//!
//! ```text
//! CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_RUNNER="qemu-arm -L /usr/arm-linux-gnueabihf" \
//! RUSTFLAGS="-C target-feature=+thumb-mode" cargo test --release -p negacyclic-ntt \
//!     --target armv7-unknown-linux-gnueabihf
//! ```
//!
//! # Example
//! ```
//! use negacyclic_ntt::NttPlan32;
//!
//! // The plan is built at compile time: `NttPlan32::new::<1000>()` would not compile.
//! const PLAN: NttPlan32 = NttPlan32::new::<1024>();
//!
//! let a: Vec<u32> = (0..1024u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
//! let key: Vec<u8> = (0..1024u32).map(|i| ((i * 7 + 3) % 5 % 2) as u8).collect();
//!
//! // The key's spectrum is computed once and reused for every product.
//! let mut key_spectrum = [[0u32; 2]; 1024];
//! PLAN.forward(&key, &mut key_spectrum);
//!
//! let mut spectrum = [[0u32; 2]; 1024];
//! PLAN.forward(&a, &mut spectrum);
//! PLAN.mul_assign(&mut spectrum, &key_spectrum);
//! let mut product = [0u32; 1024];
//! PLAN.inverse_wrapping(&mut spectrum, &mut product);
//!
//! let key32: Vec<u32> = key.iter().map(|&s| u32::from(s)).collect();
//! let mut expected = [0u32; 1024];
//! negacyclic_fft::naive::negacyclic_product_wrapping_into(&a, &key32, &mut expected);
//! assert_eq!(product, expected);
//! ```
#![no_std]

/// The README's example, run as a doctest so that the published README compiles.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod arith;
#[cfg(all(negacyclic_ntt_arm_asm, not(negacyclic_ntt_mul16)))]
mod arm_asm;
#[cfg(all(test, negacyclic_ntt_arm_asm, not(negacyclic_ntt_mul16)))]
mod arm_asm_twins;
mod coefficients;
mod ntt;
mod plan;
mod primes;
#[cfg(not(negacyclic_ntt_mul16))]
mod small_crt;
#[cfg(not(negacyclic_ntt_mul16))]
mod small_ntt;

pub use coefficients::{Input, Output};
pub use plan::{MAX_POLYNOMIAL_SIZE, MIN_POLYNOMIAL_SIZE, NttPlan, NttPlan32, NttPlan64};
pub use primes::{P0, P1, P2, Q0, Q1};
