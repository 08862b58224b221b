//! The firmware proper (Cortex-M only): the known-answer run, its digest check and the measurements. The run
//! is the boolean one ([`crate::run`]), with the feature `integer` the integer one ([`crate::integer_run`]),
//! with the feature `integer-public-key` the integer public-key one ([`crate::integer_public_key_run`]), or
//! with the feature `compact-list` the tfhe-rs compact-list one ([`crate::compact_list_run`]).
// With `stack-overflow`, main stops at the deliberate overflow: what follows it is unused.
#![cfg_attr(feature = "stack-overflow", allow(unused, unreachable_code))]

// (Two of these features: `main.rs` refuses the build.)
#[cfg(feature = "compact-list")]
use crate::compact_list_run as variant;
#[cfg(all(feature = "integer-public-key", not(feature = "integer")))]
use crate::integer_public_key_run as variant;
#[cfg(feature = "integer")]
use crate::integer_run as variant;
use crate::probe::{Phase, Probe};
#[cfg(not(any(feature = "integer", feature = "integer-public-key", feature = "compact-list")))]
use crate::run as variant;
use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::{ExceptionFrame, entry, exception};
use cortex_m_semihosting::{debug, hprintln};
use variant::{EXPECTED_DIGEST, Encryptor, FRAME_BYTES, Product, run};

/// The board this build is linked for (`build.rs`).
const BOARD: &str = env!("FIRMWARE_BOARD");
/// The target triple of this build (`build.rs`).
const TARGET: &str = env!("FIRMWARE_TARGET");
/// The [`Phase`]s this run measures: the integer run has a compact frame too (public-key frames have no
/// compact body). (The boolean build keeps its probe as small as before: the probe is on `main`'s stack,
/// which the RAM budget counts.)
#[cfg(feature = "integer")]
const PHASES: usize = Phase::CompactFrame as usize + 1;
#[cfg(feature = "compact-list")]
const PHASES: usize = Phase::List512 as usize + 1;
#[cfg(not(any(feature = "integer", feature = "compact-list")))]
const PHASES: usize = Phase::Frame as usize + 1;
/// Which run this build carries.
const VARIANT: &str = if cfg!(feature = "integer") {
    "integer"
} else if cfg!(feature = "integer-public-key") {
    "integer-public-key"
} else if cfg!(feature = "compact-list") {
    "compact-list"
} else {
    "boolean"
};

/// The value `cortex-m-rt` paints the stack with before `main`.
const PAINT: u32 = cortex_m_rt::STACK_PAINT_VALUE;
/// Iterations of the calibration loop (two instructions each).
const CALIBRATION_ITERATIONS: u32 = 1_000_000;

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

#[entry]
fn main() -> ! {
    // cortex-m-rt turns these into `&'static mut` references, taken once. The encryptor and the frame buffer
    // are the only large statics; `EMPTY` is all zero bytes, so both are in `.bss`.
    static mut ENCRYPTOR: Encryptor = Encryptor::EMPTY;
    static mut FRAME: [u8; FRAME_BYTES] = [0; FRAME_BYTES];

    let Some(peripherals) = cortex_m::Peripherals::take() else {
        fail("the core peripherals were taken twice")
    };
    let clock = Clock::start(peripherals.SYST);
    #[cfg(feature = "stack-overflow")]
    overflow_the_stack(clock);
    hprintln!(
        "board={} target={} variant={} product={}",
        BOARD,
        TARGET,
        VARIANT,
        core::any::type_name::<Product>()
    );
    let calibration = clock.calibrate();

    let mut probe = Measure {
        clock,
        started: 0,
        ticks: [0; PHASES],
        #[cfg(any(feature = "integer", feature = "integer-public-key", feature = "compact-list"))]
        frame_bytes: [0; 3],
        stack_construct: 0,
        #[cfg(feature = "compact-list")]
        stack_list64: 0,
    };
    #[cfg(feature = "ram-image-plant-seed")]
    plant_the_seed();
    let digest = match run(ENCRYPTOR, FRAME, &mut probe) {
        Ok(digest) => digest,
        Err(what) => fail(what),
    };
    // The encryptions' peak: the stack was painted again after construction.
    let stack_encrypt = stack_peak();
    let stack_construct = probe.stack_construct;

    let instructions = |phase: Phase| calibration.instructions(probe.ticks.get(phase as usize).copied().unwrap_or(0));
    hprintln!(
        "calibration: loop_instructions={} ticks={}",
        calibration.loop_instructions,
        calibration.loop_ticks
    );
    #[cfg(not(feature = "compact-list"))]
    hprintln!(
        "instructions: construct={} encrypt={} frame={}",
        instructions(Phase::Construct),
        instructions(Phase::Encrypt),
        instructions(Phase::Frame)
    );
    // The list buffer (sized for the 512-reading list) is a static: `working` is the RAM besides it, the
    // larger stack peak included.
    #[cfg(feature = "compact-list")]
    hprintln!(
        "compact-list: construct={} list_64={} list_512={} bytes_64={} bytes_512={} stack_64={} buffer={}",
        instructions(Phase::Construct),
        instructions(Phase::List64),
        instructions(Phase::List512),
        probe.frame_bytes[0],
        probe.frame_bytes[1],
        probe.stack_list64,
        FRAME_BYTES
    );
    #[cfg(feature = "integer")]
    hprintln!(
        "integer: compact_frame={} frame_bytes={} compact_frame_bytes={}",
        instructions(Phase::CompactFrame),
        probe.frame_bytes[1],
        probe.frame_bytes[2]
    );
    #[cfg(feature = "integer-public-key")]
    hprintln!("integer-public-key: frame_bytes={}", probe.frame_bytes[1]);
    let statics = statics_bytes();
    hprintln!(
        "ram: statics={} stack_construct={} stack_encrypt={} total={}",
        statics,
        stack_construct,
        stack_encrypt,
        statics + stack_construct.max(stack_encrypt)
    );
    print_hex("digest", &digest);
    print_hex("expected", &EXPECTED_DIGEST);
    if digest == EXPECTED_DIGEST {
        hprintln!("result=ok");
        #[cfg(all(feature = "hold-for-ram-image", not(feature = "hold-for-ram-image-after-encryption")))]
        hold_for_ram_image("after the run");
        #[cfg(not(all(feature = "hold-for-ram-image", not(feature = "hold-for-ram-image-after-encryption"))))]
        exit(debug::EXIT_SUCCESS);
    } else {
        hprintln!("result=MISMATCH");
        exit(debug::EXIT_FAILURE)
    }
}

/// The firmware's [`Probe`]: SysTick ticks per phase, and the peak stack after construction (then the stack
/// is painted again, so that the encryptions' peak is measured on its own).
struct Measure {
    clock: Clock,
    started: u64,
    ticks: [u64; PHASES],
    /// The length of each frame (integer run: full, full, compact; integer public-key run: two full frames;
    /// compact-list run: the lists of 64 and 512 readings).
    #[cfg(any(feature = "integer", feature = "integer-public-key", feature = "compact-list"))]
    frame_bytes: [usize; 3],
    stack_construct: usize,
    /// The compact-list run: the peak stack of the list of 64 readings (the stack is painted again after it,
    /// so that `stack_encrypt` is the 512-reading list's).
    #[cfg(feature = "compact-list")]
    stack_list64: usize,
}

impl Probe for Measure {
    fn start(&mut self, _phase: Phase) {
        self.started = self.clock.ticks();
    }

    fn end(&mut self, phase: Phase) {
        let ticks = self.clock.ticks() - self.started;
        if let Some(slot) = self.ticks.get_mut(phase as usize) {
            *slot = ticks;
        }
        if phase == Phase::Construct {
            self.stack_construct = stack_peak();
            // The RAM-image build leaves the stack as the run left it: painting it again would wipe what the
            // construction left below the stack pointer.
            #[cfg(not(feature = "hold-for-ram-image"))]
            repaint_stack();
        }
        #[cfg(feature = "hold-for-ram-image-after-encryption")]
        if phase == Phase::Encrypt {
            hold_for_ram_image("after the first encryption");
        }
        #[cfg(feature = "compact-list")]
        if phase == Phase::List64 {
            self.stack_list64 = stack_peak();
            repaint_stack();
        }
    }

    #[cfg(any(feature = "integer", feature = "integer-public-key", feature = "compact-list"))]
    fn frame(&mut self, index: usize, bytes: &[u8]) {
        if let Some(len) = self.frame_bytes.get_mut(index) {
            *len = bytes.len();
        }
    }
}

/// A 1 KiB canary in `.bss`, for [`overflow_the_stack`].
#[cfg(feature = "stack-overflow")]
static CANARY: [AtomicU32; 256] = [const { AtomicU32::new(0) }; 256];

/// The flip-link check (feature `stack-overflow`): recurses until the stack overflows, checking at every
/// level that a static in `.bss` is intact. With flip-link the stack sits below the statics, so the overflow
/// runs off the start of RAM and faults (qemu: "Lockup") with `.bss` intact; without it, the stack runs into
/// `.bss` first, and this prints `result=CORRUPTED` (`scripts/firmware.sh` runs both).
#[cfg(feature = "stack-overflow")]
fn overflow_the_stack(_clock: Clock) -> ! {
    #[inline(never)]
    #[allow(unconditional_recursion)]
    fn recurse(depth: u32) -> u32 {
        let mut frame = [0u8; 256];
        frame[depth as usize % 256] = depth as u8;
        core::hint::black_box(&mut frame);
        if CANARY.iter().any(|word| word.load(Ordering::Relaxed) != 0xA5A5_A5A5) {
            hprintln!("result=CORRUPTED .bss at depth {}", depth);
            exit(debug::EXIT_FAILURE)
        }
        recurse(depth + 1).wrapping_add(u32::from(frame[0]))
    }
    CANARY
        .iter()
        .for_each(|word| word.store(0xA5A5_A5A5, Ordering::Relaxed));
    hprintln!("overflowing the stack");
    let never = recurse(0);
    hprintln!("result=ERROR the recursion returned {}", never);
    exit(debug::EXIT_FAILURE)
}

/// The RAM-image build (feature `hold-for-ram-image`): prints `ram-image: hold (<when>)` and waits forever,
/// so that `scripts/firmware-ram-image.sh` can save the RAM through qemu's monitor and then quit qemu.
#[cfg(feature = "hold-for-ram-image")]
fn hold_for_ram_image(when: &str) -> ! {
    hprintln!("ram-image: hold ({})", when);
    loop {
        cortex_m::asm::wfi();
    }
}

/// The RAM-image test's planted dead secret (feature `ram-image-plant-seed`): a copy of the CSPRNG's seed.
#[cfg(feature = "ram-image-plant-seed")]
static PLANTED_SEED: [AtomicU32; 8] = [const { AtomicU32::new(0) }; 8];

/// Copies the CSPRNG's seed into [`PLANTED_SEED`], where nothing wipes it: the scan must report it.
#[cfg(feature = "ram-image-plant-seed")]
fn plant_the_seed() {
    for (word, bytes) in PLANTED_SEED.iter().zip(crate::kat_inputs::RNG_SEED.chunks_exact(4)) {
        word.store(
            u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            Ordering::Relaxed,
        );
    }
    core::hint::black_box(&PLANTED_SEED);
}

/// Ends the qemu run with `status` (semihosting `SYS_EXIT`).
fn exit(status: debug::ExitStatus) -> ! {
    debug::exit(status);
    // Not reached under qemu; on a debugger-less board, wait here.
    loop {
        cortex_m::asm::wfi();
    }
}

/// Prints `what` and exits with a failure code.
fn fail(what: &str) -> ! {
    hprintln!("result=ERROR {}", what);
    exit(debug::EXIT_FAILURE)
}

/// Prints `label=` and up to 48 bytes in hex.
fn print_hex(label: &str, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 96];
    let bytes = &bytes[..bytes.len().min(48)];
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX[usize::from(b >> 4)];
        pair[1] = HEX[usize::from(b & 15)];
    }
    // The buffer holds only ASCII hex digits.
    let text = core::str::from_utf8(&out[..2 * bytes.len()]).unwrap_or("?");
    hprintln!("{}={}", label, text);
}

/// The bytes of `.data`, `.bss` and `.uninit` (everything static in RAM, alignment included).
fn statics_bytes() -> usize {
    (&raw const __sheap) as usize - (&raw const __sdata) as usize
}

/// The deepest the stack has been since it was last painted: from the initial stack pointer down to the
/// lowest word that no longer holds the paint.
fn stack_peak() -> usize {
    let top = (&raw const _stack_start) as usize;
    let mut p = (&raw const _stack_end) as usize;
    while p < top {
        // SAFETY: `[_stack_end, _stack_start)` is RAM reserved for the stack by the linker script; reading a
        // word of it is always valid (it is either paint or stack data), and the read is volatile so the scan
        // is not optimised on the assumption that nothing else writes there.
        if unsafe { core::ptr::read_volatile(p as *const u32) } != PAINT {
            break;
        }
        p += 4;
    }
    top - p
}

/// Paints the unused part of the stack again (below the current stack pointer, less a margin for an
/// exception frame), so that the next [`stack_peak`] measures what runs from here on.
#[inline(never)]
#[cfg_attr(feature = "hold-for-ram-image", allow(dead_code))]
fn repaint_stack() {
    const MARGIN: usize = 256;
    let sp = cortex_m::register::msp::read() as usize;
    let mut p = (&raw const _stack_end) as usize;
    while p + MARGIN < sp {
        // SAFETY: the words below the stack pointer less MARGIN are not in use: the stack grows down, this
        // function calls nothing, and an exception taken meanwhile (SysTick: an 8-word frame and a small
        // handler) stays within MARGIN. Nothing else lives in `[_stack_end, _stack_start)`.
        unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

/// SysTick wraps (every 2^24 ticks) since [`Clock::start`].
static WRAPS: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    // Only this handler writes WRAPS (a load and a store: thumbv6m has no atomic read-modify-write).
    WRAPS.store(WRAPS.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    // The location only: formatting the message could pull in float formatting.
    match info.location() {
        Some(at) => hprintln!("result=ERROR panic at {}:{}", at.file(), at.line()),
        None => hprintln!("result=ERROR panic"),
    }
    exit(debug::EXIT_FAILURE)
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("result=ERROR HardFault at pc={:#010x}", frame.pc());
    exit(debug::EXIT_FAILURE)
}

/// A 64-bit tick counter from SysTick (core clock, 24-bit reload, wraps counted by the interrupt).
struct Clock {
    _syst: SYST,
}

/// Ticks per known instruction count, measured once.
struct Calibration {
    loop_instructions: u64,
    loop_ticks: u64,
}

impl Calibration {
    /// The instructions executed in `ticks` (under `-icount`, the virtual clock advances by a fixed time per
    /// instruction, so ticks are proportional to instructions).
    fn instructions(&self, ticks: u64) -> u64 {
        (ticks * self.loop_instructions + self.loop_ticks / 2) / self.loop_ticks.max(1)
    }
}

impl Clock {
    fn start(mut syst: SYST) -> Self {
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
        Self { _syst: syst }
    }

    fn ticks(&self) -> u64 {
        loop {
            let before = WRAPS.load(Ordering::Relaxed);
            let current = SYST::get_current();
            if WRAPS.load(Ordering::Relaxed) == before {
                return (u64::from(before) << 24) | u64::from(0x00FF_FFFF - current);
            }
        }
    }

    /// Times a loop of `2 * CALIBRATION_ITERATIONS` instructions (`subs`, `bne`).
    fn calibrate(&self) -> Calibration {
        let start = self.ticks();
        // SAFETY: a register-only countdown loop: it touches no memory and no stack, and leaves r0 at 0,
        // which is declared clobbered.
        unsafe {
            core::arch::asm!(
                "2:",
                "subs r0, #1",
                "bne 2b",
                inout("r0") CALIBRATION_ITERATIONS => _,
                options(nomem, nostack),
            );
        }
        let end = self.ticks();
        Calibration {
            loop_instructions: 2 * u64::from(CALIBRATION_ITERATIONS),
            loop_ticks: end - start,
        }
    }
}
