//! The Cortex-M platform (`thumbv6m`, `thumbv7m`, `thumbv7em` on qemu's LM3S6965 and MPS2 AN386 models):
//! cortex-m-rt's stack painting, SysTick as the clock, ARM semihosting for output and the exit code, the
//! HardFault handler. (The entry is in [`crate::entry`].)

use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::{ExceptionFrame, exception};
use cortex_m_semihosting::debug;
pub(crate) use cortex_m_semihosting::hprintln;

use super::calibration::Calibration;

/// The value `cortex-m-rt` paints the stack with before `main` (`paint-stack`).
pub(crate) const PAINT: u32 = cortex_m_rt::STACK_PAINT_VALUE;

unsafe extern "C" {
    /// The lowest address the stack may reach (with flip-link: the start of RAM).
    static _stack_end: u32;
}

/// The lowest address the stack may reach.
pub(crate) fn stack_lowest() -> usize {
    (&raw const _stack_end) as usize
}

/// The current stack pointer.
#[inline(always)]
pub(crate) fn stack_pointer() -> usize {
    cortex_m::register::msp::read() as usize
}

/// Whether the reset handler painted the stack before `main` (cortex-m-rt's `paint-stack` does).
pub(crate) const PAINTED_AT_RESET: bool = true;

/// Ends the qemu run (semihosting `SYS_EXIT`), successfully or not.
pub(crate) fn exit(success: bool) -> ! {
    debug::exit(if success {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Not reached under qemu; on a debugger-less board, wait here.
    wait_forever()
}

/// Sleeps forever (the RAM-image build waits here for qemu's monitor).
pub(crate) fn wait_forever() -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}

/// SysTick wraps (every 2^24 ticks) since [`Clock::start`].
static WRAPS: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    // Only this handler writes WRAPS (a load and a store: thumbv6m has no atomic read-modify-write).
    WRAPS.store(WRAPS.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("result=ERROR HardFault at pc={:#010x}", frame.pc());
    exit(false)
}

/// A 64-bit tick counter from SysTick (core clock, 24-bit reload, wraps counted by the interrupt). Under
/// `-icount shift=0` a tick is an instruction; [`Clock::calibrate`] checks the ratio.
pub(crate) struct Clock {
    _syst: SYST,
}

impl Clock {
    /// Starts SysTick counting core clock ticks, its wraps counted by the interrupt.
    pub(crate) fn start(mut syst: SYST) -> Self {
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
        Self { _syst: syst }
    }

    pub(crate) fn ticks(&self) -> u64 {
        loop {
            let before = WRAPS.load(Ordering::Relaxed);
            let current = SYST::get_current();
            if WRAPS.load(Ordering::Relaxed) == before {
                return (u64::from(before) << 24) | u64::from(0x00FF_FFFF - current);
            }
        }
    }

    /// Times a loop of `2 * iterations` instructions (`subs`, `bne`).
    pub(crate) fn calibrate(&self, iterations: u32) -> Calibration {
        let start = self.ticks();
        // SAFETY: a register-only countdown loop: it touches no memory and no stack, and leaves r0 at 0,
        // which is declared clobbered.
        unsafe {
            core::arch::asm!(
                "2:",
                "subs r0, #1",
                "bne 2b",
                inout("r0") iterations => _,
                options(nomem, nostack),
            );
        }
        let end = self.ticks();
        Calibration {
            loop_instructions: 2 * u64::from(iterations),
            loop_ticks: end - start,
        }
    }
}
