//! The firmware proper (bare metal: Cortex-M or RISC-V, the differences in [`crate::platform`]): the
//! known-answer run, its digest check and the measurements. The run
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
use crate::platform::{self, Clock, PAINT, hprintln};
use crate::probe::{Phase, Probe};
#[cfg(not(any(feature = "integer", feature = "integer-public-key", feature = "compact-list")))]
use crate::run as variant;
#[cfg(any(feature = "stack-overflow", feature = "ram-image-plant-seed"))]
use core::sync::atomic::{AtomicU32, Ordering};
use variant::{EXPECTED_DIGEST, Product, run};
pub(crate) use variant::{Encryptor, FRAME_BYTES};

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

/// The expected digest in flash, as a `static` (a constant's place may depend on its value).
static EXPECTED: [u8; EXPECTED_DIGEST.len()] = EXPECTED_DIGEST;
/// Iterations of the calibration loop (two instructions each).
const CALIBRATION_ITERATIONS: u32 = 1_000_000;

/// The run, from the platform's entry: `encryptor` and `frame` are its two large statics (in `.bss`).
pub(crate) fn main(clock: Clock, encryptor: &'static mut Encryptor, frame: &'static mut [u8; FRAME_BYTES]) -> ! {
    if !platform::PAINTED_AT_RESET {
        repaint_stack();
    }
    #[cfg(feature = "stack-overflow")]
    overflow_the_stack(clock);
    hprintln!(
        "board={} target={} variant={} product={}",
        BOARD,
        TARGET,
        VARIANT,
        core::any::type_name::<Product>()
    );
    let calibration = clock.calibrate(CALIBRATION_ITERATIONS);

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
    let digest = match run(encryptor, frame, &mut probe) {
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
    print_hex("expected", core::hint::black_box(&EXPECTED));
    // Compared through `black_box`: the constant-time trace's builds with other secrets (other digests) must
    // have the same code.
    if digest == *core::hint::black_box(&EXPECTED) {
        hprintln!("result=ok");
        #[cfg(all(feature = "hold-for-ram-image", not(feature = "hold-for-ram-image-after-encryption")))]
        hold_for_ram_image("after the run");
        #[cfg(not(all(feature = "hold-for-ram-image", not(feature = "hold-for-ram-image-after-encryption"))))]
        platform::exit(true);
    } else {
        hprintln!("result=MISMATCH");
        platform::exit(false)
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
        ct_checkpoint();
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
            platform::exit(false)
        }
        recurse(depth + 1).wrapping_add(u32::from(frame[0]))
    }
    CANARY
        .iter()
        .for_each(|word| word.store(0xA5A5_A5A5, Ordering::Relaxed));
    hprintln!("overflowing the stack");
    let never = recurse(0);
    hprintln!("result=ERROR the recursion returned {}", never);
    platform::exit(false)
}

/// The RAM-image build (feature `hold-for-ram-image`): prints `ram-image: hold (<when>)` and waits forever,
/// so that `scripts/firmware-ram-image.sh` can save the RAM through qemu's monitor and then quit qemu.
#[cfg(feature = "hold-for-ram-image")]
fn hold_for_ram_image(when: &str) -> ! {
    hprintln!("ram-image: hold ({})", when);
    platform::wait_forever()
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

/// Prints `what` and exits with a failure code.
pub(crate) fn fail(what: &str) -> ! {
    hprintln!("result=ERROR {}", what);
    platform::exit(false)
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
    let (start, end) = platform::statics_bounds();
    end - start
}

/// The deepest the stack has been since it was last painted: from the initial stack pointer down to the
/// lowest word that no longer holds the paint.
fn stack_peak() -> usize {
    let (mut p, top) = platform::stack_bounds();
    while p < top {
        // SAFETY: the stack's bounds are RAM the linker script reserves for the stack; reading a
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
    let sp = platform::stack_pointer();
    let (mut p, _) = platform::stack_bounds();
    while p + MARGIN < sp {
        // SAFETY: the words below the stack pointer less MARGIN are not in use: the stack grows down, this
        // function calls nothing, and an exception taken meanwhile (Cortex-M SysTick: an 8-word frame and a
        // small handler; none on RISC-V) stays within MARGIN. Nothing else lives within the stack's bounds.
        unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

/// Called at the end of every measured phase: `scripts/firmware-ct-trace.sh` gives its address to a qemu
/// plugin (scripts/qemu-plugin/ct_trace.c), which prints the trace's fingerprint (every instruction address
/// and memory address so far) each time it runs. Two builds with different secrets must print the same.
#[inline(never)]
#[unsafe(no_mangle)]
extern "C" fn tsbc_ct_checkpoint() {
    core::hint::black_box(());
}

/// [`tsbc_ct_checkpoint`], called.
fn ct_checkpoint() {
    tsbc_ct_checkpoint();
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    // The location only: formatting the message could pull in float formatting.
    match info.location() {
        Some(at) => hprintln!("result=ERROR panic at {}:{}", at.file(), at.line()),
        None => hprintln!("result=ERROR panic"),
    }
    platform::exit(false)
}
