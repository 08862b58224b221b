//! The board's program: the encryptor and the frame buffer in statics, the credential file and the provisioned
//! seed in flash, one message of full frames and one of compact frames. "Sending" prints each frame's length
//! over semihosting; `measure` reports what docs/firmware.md's figures are.
#![no_std]
#![no_main]

mod measure;

use cortex_m_rt::{ExceptionFrame, entry, exception};
use cortex_m_semihosting::{debug, hprintln};
use firmware_guide::{Encryptor, seed_without_trng, send_readings, set_key};
use static_cell::ConstStaticCell;
use tfhe_sbc_device::files::credentials::{Credentials, decode_credentials};
use tfhe_sbc_device::frame::mac::MacKey;
use tfhe_sbc_device::frame::{FrameCounter, SEEDED_FRAME_BYTES_1024};

/// The encryptor: `EMPTY` is all zero bytes, so this is in `.bss` (no flash), and `take` hands it out once as
/// `&'static mut` without ever moving it. Only `main` uses it, so no interrupt is ever masked for it.
static ENCRYPTOR: ConstStaticCell<Encryptor> = ConstStaticCell::new(Encryptor::EMPTY);
/// The one frame buffer: each frame's header, seed, body and MAC are written straight into it.
static FRAME: ConstStaticCell<[u8; SEEDED_FRAME_BYTES_1024]> = ConstStaticCell::new([0; SEEDED_FRAME_BYTES_1024]);
/// This device's credential file, as `tfhe-sbc-keys issue` writes it (`devices/<ID>.tsdc`), kept in flash.
/// Here a TEST file (docs/firmware.md: "A test credential").
static CREDENTIALS: &[u8] = include_bytes!("../devices/1.tsdc");
/// 32 secret bytes provisioned for this device alone, for a board without a hardware RNG (this one). TEST.
static PROVISIONED_SEED: [u8; 32] = *include_bytes!("../devices/1.seed");
/// Two frames' worth of sensor readings (yours come from your sensors).
static READINGS: [u8; 256] = [0x5a; 256];

#[entry]
fn main() -> ! {
    let Some(peripherals) = cortex_m::Peripherals::take() else {
        fail("core peripherals taken twice")
    };
    let clock = measure::Clock::start(peripherals.SYST);
    let encryptor = ENCRYPTOR.take();
    let frame = FRAME.take();
    let file = credentials();
    // Your boot counter: read from flash, incremented and written back (and read back) before it is used.
    let boot = 1;

    let start = clock.ticks();
    set_up(encryptor, &file, boot);
    let setup = clock.instructions_since(start);
    let stack_setup = measure::stack_peak();
    measure::repaint_stack();

    // One frame number per frame, never reused: this boot's range.
    let mut counter = FrameCounter::from_boot_counter(boot);
    let mut sent = [0usize; 3];
    let mut frames = 0;
    let send = &mut |bytes: &[u8]| {
        // Your transport here (UART, radio). This one notes the length.
        if let Some(slot) = sent.get_mut(frames) {
            *slot = bytes.len();
        }
        frames += 1;
    };

    // One message of 128 readings: one full frame (32-bit body).
    let (start, interrupts) = (clock.ticks(), measure::interrupts());
    if send_readings(encryptor, &file, &mut counter, &READINGS[..128], frame, &mut *send).is_err() {
        fail("full frame")
    }
    let full_frame = clock.instructions_since(start);
    let interrupts = measure::interrupts() - interrupts;

    // Compact frames: each body coefficient's top `compact_body_bits()` bits (11 for this set).
    if encryptor.set_body_bits(file.parameters.compact_body_bits()).is_err() {
        fail("set_body_bits")
    }
    let start = clock.ticks();
    if send_readings(encryptor, &file, &mut counter, &READINGS, frame, &mut *send).is_err() {
        fail("compact frames")
    }
    let compact_frame = clock.instructions_since(start) / 2;
    let stack_encrypt = measure::stack_peak();

    // Two more frames, not measured: a compact one and a full one. The XOR of their keyed BLAKE2b-128 digests
    // (the device crate's frame MAC under a public all-zero key) must equal what the host computes for the
    // same run (`test_credential --frames-digest`); it depends on every frame before it (the CSPRNG's state,
    // the frame counter), so a match shows the whole run right.
    let mut digest = [0u8; 16];
    let check = &mut |bytes: &[u8]| {
        let tag = MacKey::from_bytes([0; 32]).tag(bytes);
        digest.iter_mut().zip(tag).for_each(|(d, t)| *d ^= t);
    };
    if send_readings(encryptor, &file, &mut counter, &READINGS[..128], frame, &mut *check).is_err()
        || encryptor.set_body_bits(32).is_err()
        || send_readings(encryptor, &file, &mut counter, &READINGS[128..], frame, &mut *check).is_err()
    {
        fail("checked frames")
    }
    measure::print_hex("frames_digest", &digest);

    report(&Figures {
        sent,
        setup,
        full_frame,
        compact_frame,
        interrupts,
        stack_setup,
        stack_encrypt,
    });
    hprintln!("result=ok");
    debug::exit(debug::EXIT_SUCCESS);
    loop {
        cortex_m::asm::wfi();
    }
}

/// The credential file, checked. Not inlined, like [`set_up`].
#[inline(never)]
fn credentials() -> Credentials<'static> {
    match decode_credentials(CREDENTIALS) {
        Ok(file) => file,
        Err(_) => fail("bad credential file"),
    }
}

/// Sets the key and seeds the CSPRNG. Not inlined: the hash states of the key check and the seeding live in
/// this function's stack frame, popped before `main` encrypts, instead of in `main`'s, which stays under
/// every encryption.
#[inline(never)]
fn set_up(encryptor: &mut Encryptor, file: &Credentials<'_>, boot: u32) {
    if set_key(encryptor, file).is_err() {
        fail("set_key")
    }
    seed_without_trng(encryptor, &PROVISIONED_SEED, boot);
}

/// What `main` measured.
struct Figures {
    sent: [usize; 3],
    setup: u64,
    full_frame: u64,
    compact_frame: u64,
    interrupts: u32,
    stack_setup: usize,
    stack_encrypt: usize,
}

/// Prints the figures (its own stack frame: the formatting is not on the stack while `main` encrypts).
#[inline(never)]
fn report(f: &Figures) {
    let statics = measure::statics_bytes();
    hprintln!("frames: full={} compact={},{} (bytes)", f.sent[0], f.sent[1], f.sent[2]);
    hprintln!("size_of_encryptor={}", size_of::<Encryptor>());
    hprintln!(
        "instructions: setup={} full_frame={} compact_frame={} interrupts_during_full_frame={}",
        f.setup,
        f.full_frame,
        f.compact_frame,
        f.interrupts
    );
    hprintln!(
        "ram: statics={} stack_setup={} stack_encrypt={} total={}",
        statics,
        f.stack_setup,
        f.stack_encrypt,
        statics + f.stack_setup.max(f.stack_encrypt)
    );
}

/// Prints what failed and ends the run with a failure code.
fn fail(what: &str) -> ! {
    hprintln!("result=ERROR {}", what);
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    // The location only: formatting the message could pull in more formatting code.
    match info.location() {
        Some(at) => hprintln!("result=ERROR panic at {}:{}", at.file(), at.line()),
        None => hprintln!("result=ERROR panic"),
    }
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("result=ERROR HardFault at pc={:#010x}", frame.pc());
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}
