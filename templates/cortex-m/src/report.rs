//! The run's RAM and flash, from the linker's symbols and the painted stack (cortex-m-rt's `paint-stack`).
//! Bring-up only: drop this module (and the feature) in a product.
#![allow(unsafe_code)]

use cortex_m_semihosting::hprintln;

unsafe extern "C" {
    /// The initial stack pointer (the top of the stack).
    static _stack_start: u32;
    /// The lowest address the stack may reach (with flip-link: the start of RAM).
    static _stack_end: u32;
    /// The first static in RAM (`.data`) and the end of the last (`.uninit`).
    static __sdata: u32;
    static __sheap: u32;
    /// The end of `.data` in RAM, and where its initial values are in flash (after code and constants).
    static __edata: u32;
    static __sidata: u32;
}

/// Prints `ram: statics=S stack=P total=T` (every static, the deepest the stack has been, their sum) and
/// `flash: used=F` (vector table, code, constants and `.data`'s initial values; flash starts at 0).
pub fn print() {
    let statics = (&raw const __sheap) as usize - (&raw const __sdata) as usize;
    let top = (&raw const _stack_start) as usize;
    let mut p = (&raw const _stack_end) as usize;
    // SAFETY: `[_stack_end, _stack_start)` is the RAM the linker reserved for the stack, every word of it
    // readable (paint or stack data); volatile, because the compiler cannot see who wrote it.
    while p < top && unsafe { core::ptr::read_volatile(p as *const u32) } == cortex_m_rt::STACK_PAINT_VALUE {
        p += 4;
    }
    let stack = top - p;
    let flash = (&raw const __sidata) as usize + ((&raw const __edata) as usize - (&raw const __sdata) as usize);
    hprintln!("ram: statics={} stack={} total={}", statics, stack, statics + stack);
    hprintln!("flash: used={}", flash);
}
