//! The RISC-V platform (`riscv32imc`, `riscv32imac` on qemu's `virt` machine, `-bios none`, M-mode):
//! the `minstret` counter as the clock (under `-icount shift=0` it counts instructions exactly), RISC-V
//! semihosting for output and the exit code, an exception handler that reports the trap. riscv-rt does not
//! paint the stack: the firmware's `main` paints what lies below it before the run. (The entry is in
//! [`crate::entry`].)

use riscv_semihosting::debug;
pub(crate) use riscv_semihosting::hprintln;

use super::calibration::Calibration;

/// The value the stack is painted with (the same as cortex-m-rt's, so the scans read alike).
pub(crate) const PAINT: u32 = 0xCCCC_CCCC;

unsafe extern "C" {
    /// The lowest address the stack may reach: the end of the statics (riscv-rt's empty heap).
    static __estack: u32;
}

/// The lowest address the stack may reach.
pub(crate) fn stack_lowest() -> usize {
    (&raw const __estack) as usize
}

/// The current stack pointer.
#[inline(always)]
pub(crate) fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: copies the stack pointer into a register; no memory is touched.
    unsafe { core::arch::asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

/// Whether the reset handler painted the stack before `main` (riscv-rt does not: `main` paints it).
pub(crate) const PAINTED_AT_RESET: bool = false;

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

/// Sleeps forever.
pub(crate) fn wait_forever() -> ! {
    loop {
        riscv::asm::wfi();
    }
}

/// Any exception (an illegal instruction, a misaligned or faulting access): prints its cause and address.
#[unsafe(export_name = "ExceptionHandler")]
fn exception_handler(_frame: &riscv_rt::TrapFrame) -> ! {
    hprintln!(
        "result=ERROR exception mcause={:#x} at pc={:#010x}",
        riscv::register::mcause::read().bits(),
        riscv::register::mepc::read()
    );
    exit(false)
}

/// The hart's retired-instruction counter (`minstret`, 64 bits through `minstreth`).
pub(crate) struct Clock;

impl Clock {
    pub(crate) fn ticks(&self) -> u64 {
        riscv::register::minstret::read64()
    }

    /// Times a loop of `2 * iterations` instructions (`addi`, `bnez`).
    pub(crate) fn calibrate(&self, iterations: u32) -> Calibration {
        let start = self.ticks();
        // SAFETY: a register-only countdown loop: it touches no memory and no stack, and leaves its register
        // at 0, which is declared clobbered.
        unsafe {
            core::arch::asm!(
                "2:",
                "addi {0}, {0}, -1",
                "bnez {0}, 2b",
                inout(reg) iterations => _,
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
