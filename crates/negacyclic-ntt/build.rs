//! Picks the multiplier and the select style from the target triple (rustc does not expose the ARM target
//! features `dsp` or `thumb2` to `cfg` on stable):
//! * `negacyclic_ntt_mul16`: 64-bit products from 16x16-bit partial products with the 32-bit `MUL`, for
//!   Cortex-M0/M0+ (`thumbv6m`, no long multiply), Cortex-M3 (`thumbv7m`, whose `UMULL`/`UMLAL` terminate
//!   early) and ARMv8-M Baseline (`thumbv8m.base`). `RUSTFLAGS="--cfg negacyclic_ntt_mul16"` forces it on any
//!   target (the host tests cover it that way).
//! * `negacyclic_ntt_no_cmov`: targets with no conditional move, where the compiler would turn a masked
//!   select into a branch, so an empty `asm!` hides each mask from the optimizer: Thumb-1 only targets
//!   (`thumbv6m`, `thumbv8m.base`: no `IT` block) and RISC-V (the base ISA and its M, A, C extensions have no
//!   conditional move; LLVM made `csub` a `bltz` over a `mv` on `riscv32imc`, found by
//!   `scripts/firmware-ct-trace.sh`).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(negacyclic_ntt_mul16)");
    println!("cargo::rustc-check-cfg=cfg(negacyclic_ntt_no_cmov)");
    println!("cargo::rustc-check-cfg=cfg(negacyclic_ntt_arm_asm)");
    println!("cargo::rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let thumb1 = target.starts_with("thumbv6m") || target.starts_with("thumbv8m.base");
    if thumb1 || target.starts_with("thumbv7m") {
        println!("cargo::rustc-cfg=negacyclic_ntt_mul16");
    }
    // Armv7 (A or R profile, either instruction set) and the Cortex-M cores with a long multiply and the
    // 32-bit product (M4/M7, M33/M35P/M55/M85): the small primes' passes in assembly (`src/arm_asm.rs`).
    let arm_asm = ["armv7", "thumbv7em", "thumbv7neon", "thumbv7a", "thumbv8m.main"];
    if arm_asm.iter().any(|prefix| target.starts_with(prefix)) {
        println!("cargo::rustc-cfg=negacyclic_ntt_arm_asm");
    }
    if thumb1 || target.starts_with("riscv") {
        println!("cargo::rustc-cfg=negacyclic_ntt_no_cmov");
    }
}
