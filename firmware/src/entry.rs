//! The reset entry of each platform: it takes the firmware's two large statics (the encryptor and the frame
//! buffer, both in `.bss`: `EMPTY` is all zero bytes) and the platform's clock, and runs
//! [`crate::firmware::main`].

use crate::firmware::{Encryptor, FRAME_BYTES};
use crate::platform::Clock;

#[cfg(target_arch = "arm")]
#[cortex_m_rt::entry]
fn main() -> ! {
    // cortex-m-rt turns these into `&'static mut` references, taken once.
    static mut ENCRYPTOR: Encryptor = Encryptor::EMPTY;
    static mut FRAME: [u8; FRAME_BYTES] = [0; FRAME_BYTES];

    let Some(peripherals) = cortex_m::Peripherals::take() else {
        crate::firmware::fail("the core peripherals were taken twice")
    };
    crate::firmware::main(Clock::start(peripherals.SYST), ENCRYPTOR, FRAME)
}

/// The encryptor (riscv-rt's entry has no `static mut` transform).
#[cfg(target_arch = "riscv32")]
static mut ENCRYPTOR: Encryptor = Encryptor::EMPTY;
/// The frame buffer.
#[cfg(target_arch = "riscv32")]
static mut FRAME: [u8; FRAME_BYTES] = [0; FRAME_BYTES];

#[cfg(target_arch = "riscv32")]
#[riscv_rt::entry]
fn main() -> ! {
    // SAFETY: riscv-rt's reset handler calls `main` once on the one hart (`single-hart`) and nothing else
    // names these statics, so the two references are the only ones ever made, and unique.
    let (encryptor, frame) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(ENCRYPTOR),
            &mut *core::ptr::addr_of_mut!(FRAME),
        )
    };
    crate::firmware::main(Clock, encryptor, frame)
}
