//! How the guide's figures are measured: the peak stack (cortex-m-rt painted it, feature `paint-stack`), the
//! statics, and instructions (SysTick under qemu's `-icount shift=0`, one virtual nanosecond per instruction,
//! calibrated against a loop of known length). Not needed in a product.
#![allow(unsafe_code)]

use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::exception;
use cortex_m_semihosting::hprintln;

unsafe extern "C" {
    /// The initial stack pointer (the top of the stack).
    static _stack_start: u32;
    /// The lowest address the stack may reach (with flip-link: the start of RAM).
    static _stack_end: u32;
    /// The start of `.data`, the first static in RAM.
    static __sdata: u32;
    /// The end of `.uninit`, the last static in RAM.
    static __sheap: u32;
}

/// The bytes of `.data`, `.bss` and `.uninit`: every static in RAM.
pub fn statics_bytes() -> usize {
    (&raw const __sheap) as usize - (&raw const __sdata) as usize
}

/// The deepest the stack has been since it was painted: from its top down to the lowest word that no longer
/// holds the paint.
pub fn stack_peak() -> usize {
    let top = (&raw const _stack_start) as usize;
    let mut p = (&raw const _stack_end) as usize;
    // SAFETY: `[_stack_end, _stack_start)` is RAM the linker reserved for the stack; every word of it is
    // readable (paint or stack data). Volatile: the compiler must not assume nothing else writes there.
    while p < top && unsafe { core::ptr::read_volatile(p as *const u32) } == cortex_m_rt::STACK_PAINT_VALUE {
        p += 4;
    }
    top - p
}

/// Paints the unused stack again (below the stack pointer, less room for an interrupt), so that the next
/// [`stack_peak`] measures only what runs from here on.
#[inline(never)]
pub fn repaint_stack() {
    const MARGIN: usize = 256;
    let sp = cortex_m::register::msp::read() as usize;
    let mut p = (&raw const _stack_end) as usize;
    while p + MARGIN < sp {
        // SAFETY: the stack grows down and this function calls nothing, so the words more than MARGIN below
        // the stack pointer are unused (an interrupt taken meanwhile stays within MARGIN).
        unsafe { core::ptr::write_volatile(p as *mut u32, cortex_m_rt::STACK_PAINT_VALUE) };
        p += 4;
    }
}

/// SysTick reload: an interrupt every 4,096 ticks, so that a frame sees several (interrupts stay on).
const RELOAD: u32 = 0xFFF;
/// SysTick interrupts so far.
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    // Only this handler writes INTERRUPTS.
    INTERRUPTS.store(INTERRUPTS.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

/// SysTick interrupts taken so far.
pub fn interrupts() -> u32 {
    INTERRUPTS.load(Ordering::Relaxed)
}

/// Counts instructions with SysTick.
pub struct Clock {
    _syst: SYST,
    /// Ticks of a loop of [`Self::LOOP_INSTRUCTIONS`] instructions.
    loop_ticks: u64,
}

impl Clock {
    /// Instructions in the calibration loop (`subs`, `bne`, a million times).
    const LOOP_INSTRUCTIONS: u64 = 2_000_000;

    /// Starts SysTick from the core clock and calibrates it.
    pub fn start(mut syst: SYST) -> Self {
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(RELOAD);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
        // The counter reads 0 until its first reload.
        while SYST::get_current() == 0 {}
        let mut clock = Self {
            _syst: syst,
            loop_ticks: 1,
        };
        let start = clock.ticks();
        // SAFETY: a register-only countdown loop; it touches no memory and leaves r0 at 0 (declared clobbered).
        unsafe {
            core::arch::asm!("2:", "subs r0, #1", "bne 2b", inout("r0") (Self::LOOP_INSTRUCTIONS / 2) as u32 => _,
                options(nomem, nostack));
        }
        clock.loop_ticks = (clock.ticks() - start).max(1);
        clock
    }

    /// Ticks since [`Self::start`].
    pub fn ticks(&self) -> u64 {
        loop {
            let before = interrupts();
            let current = SYST::get_current();
            if interrupts() == before {
                return u64::from(before) * u64::from(RELOAD + 1) + u64::from(RELOAD - current);
            }
        }
    }

    /// The instructions executed since `start` (a [`Self::ticks`] value).
    pub fn instructions_since(&self, start: u64) -> u64 {
        let ticks = self.ticks() - start;
        (ticks * Self::LOOP_INSTRUCTIONS + self.loop_ticks / 2) / self.loop_ticks
    }
}

/// Prints `label=` and `bytes` (up to 32) in hex.
pub fn print_hex(label: &str, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 64];
    for (pair, b) in text.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX[usize::from(b >> 4)];
        pair[1] = HEX[usize::from(b & 15)];
    }
    let hex = core::str::from_utf8(&text[..2 * bytes.len().min(32)]).unwrap_or("?");
    hprintln!("{}={}", label, hex);
}
