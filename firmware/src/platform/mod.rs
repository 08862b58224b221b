//! What differs between the bare-metal targets the firmware runs on: the entry (and where its two large
//! statics come from), the clock that counts instructions, the stack's and statics' bounds, semihosting
//! output and exit, and the fault handler. Each platform module has the same items.

#[cfg(target_arch = "arm")]
mod arm_cortex_m;
#[cfg(target_arch = "arm")]
pub(crate) use arm_cortex_m::*;

#[cfg(target_arch = "riscv32")]
mod riscv_virt;
#[cfg(target_arch = "riscv32")]
pub(crate) use riscv_virt::*;
