//! What differs between the bare-metal targets the firmware runs on: the entry (and where its two large
//! statics come from), the clock that counts instructions, the stack's and statics' bounds, semihosting
//! output and exit, and the fault handler. Each platform module has the same items.

mod calibration;

#[cfg(target_arch = "arm")]
mod arm_cortex_m;
#[cfg(target_arch = "arm")]
pub(crate) use arm_cortex_m::*;

#[cfg(target_arch = "riscv32")]
mod riscv_virt;
#[cfg(target_arch = "riscv32")]
pub(crate) use riscv_virt::*;

// The symbols cortex-m-rt's and riscv-rt's linker scripts both define.
unsafe extern "C" {
    /// The initial stack pointer (the top of the stack).
    static _stack_start: u32;
    /// The start of `.data`, the first static in RAM.
    static __sdata: u32;
    /// The end of `.uninit` (riscv-rt: and of its empty heap), the last static in RAM.
    static __sheap: u32;
}

/// The stack's bounds `[lowest, top)`.
pub(crate) fn stack_bounds() -> (usize, usize) {
    (stack_lowest(), (&raw const _stack_start) as usize)
}

/// The statics' bounds in RAM `[start, end)`: `.data`, `.bss` and `.uninit`.
pub(crate) fn statics_bounds() -> (usize, usize) {
    ((&raw const __sdata) as usize, (&raw const __sheap) as usize)
}
