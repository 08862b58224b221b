//! A Cortex-M firmware that encrypts sensor readings into authenticated tfhe-sbc frames.
//!
//! The device's credential (`device.tsdc`) and CSPRNG seed (`device.seed`) are what `tfhe-sbc-keys issue`
//! wrote for it; both stay in flash. Each message of readings becomes one frame per 128 bytes, "sent" here
//! as a line of hex over semihosting (`frame ... hex=...`), which `tfhe-sbc-keys check-frame --hex` checks
//! and decrypts on the host. Replace `read_sensor`, `send` and `seed` with your board's.
#![no_std]
#![no_main]

mod report;

use cortex_m_rt::{ExceptionFrame, entry, exception};
use cortex_m_semihosting::{debug, hio, hprintln};
use static_cell::ConstStaticCell;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::encrypt::{FrameEncryptor, GlweEncryptor};
use tfhe_sbc_device::files::credentials::{Credentials, KeyMode, decode_credentials};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, SEEDED_FRAME_BYTES_1024};

/// The encryptor for `TFHE_LIB_GLWE_1024` (N = 1024, k = 1) in a secret-key mode: 17 KB, the key spectrum
/// among them. `EMPTY` is all zero bytes, so the static is in `.bss` and costs no flash.
type Encryptor = GlweEncryptor<1024>;
static ENCRYPTOR: ConstStaticCell<Encryptor> = ConstStaticCell::new(Encryptor::EMPTY);
/// The one frame buffer, as long as the longest frame (a full body); each frame is written straight into it.
static FRAME: ConstStaticCell<[u8; SEEDED_FRAME_BYTES_1024]> = ConstStaticCell::new([0; SEEDED_FRAME_BYTES_1024]);

/// `devices/<ID>.tsdc` from `tfhe-sbc-keys issue`, copied here (a secret: read-protect your flash).
static CREDENTIAL: &[u8] = include_bytes!("../device.tsdc");
/// `devices/<ID>.seed`: 32 secret bytes for this device alone, for a board without a hardware RNG (`seed`).
static SEED: [u8; 32] = *include_bytes!("../device.seed");

/// Messages per run, and readings (u16, little-endian) per message: 16 readings, 32 bytes, one frame each.
const MESSAGES: u16 = 3;
const READINGS: usize = 16;

#[entry]
fn main() -> ! {
    let encryptor = ENCRYPTOR.take();
    let frame = FRAME.take();
    let Ok(file) = decode_credentials(CREDENTIAL) else {
        fail("device.tsdc is not a credential file")
    };
    // Your boot counter: read from flash, incremented, written back and read back BEFORE it is used, so that
    // no two boots share one (a reset that repeats a count repeats the masks and noise of that boot).
    let boot = 1;
    set_up(encryptor, &file, boot);
    hprintln!(
        "device={} key_id={:#010x} boot={}",
        file.credentials.device_id(),
        file.credentials.key_id(),
        boot
    );

    // Frame numbers: this boot's own range, never reused.
    let mut counter = FrameCounter::from_boot_counter(boot);
    for m in 0..MESSAGES {
        let mut readings = [0u8; 2 * READINGS];
        for (i, r) in readings.chunks_exact_mut(2).enumerate() {
            r.copy_from_slice(&read_sensor(m, i as u16).to_le_bytes());
        }
        // Bring-up only: a product never prints its readings (that is what the encryption is for).
        print_hex(format_args!("plaintext message={m} "), &readings);
        let Ok(message) = encryptor.begin_message(&mut counter, readings.len()) else {
            fail("begin_message")
        };
        for (c, chunk) in chunks(&readings, Encryptor::MESSAGE_BYTES).enumerate() {
            match encryptor.encrypt_frame_into(&file.credentials, &message, &chunk, frame) {
                Ok(n) => print_hex(format_args!("frame message={m} chunk={c} bytes={n} "), &frame[..n]),
                Err(_) => fail("encrypt_frame_into"),
            }
        }
    }

    report::print();
    hprintln!("result=ok");
    debug::exit(debug::EXIT_SUCCESS);
    loop {
        cortex_m::asm::wfi();
    }
}

/// Sets the key from the credential, seeds the CSPRNG and selects compact frames. Not inlined: the hash
/// states of the key check and the seeding live on the stack only here, not under every encryption.
#[inline(never)]
fn set_up(encryptor: &mut Encryptor, file: &Credentials<'_>, boot: u32) {
    // This encryptor takes the secret-key modes (per-device, fleet) of the one parameter set it is built for.
    // (The public-key mode needs `PublicKeyEncryptor`, 33 KB of RAM.)
    if file.mode == KeyMode::PublicKey
        || file.parameters.id() != TFHE_LIB_GLWE_1024.id()
        || encryptor.set_packed_key(&file.parameters, file.key_material).is_err()
    {
        fail("device.tsdc is not a secret-key credential for TFHE_LIB_GLWE_1024")
    }
    seed(encryptor, boot);
    // Compact frames: the top 11 bits of each body coefficient, 1,503 bytes a frame instead of 4,191.
    if encryptor.set_body_bits(file.parameters.compact_body_bits()).is_err() {
        fail("set_body_bits")
    }
}

/// Seeds the encryptor's CSPRNG once per boot. This board (qemu's MPS2 AN386) has no hardware RNG, so the
/// seed is the 32 bytes provisioned for this device and the boot counter is mixed in. A board with a TRNG
/// seeds from it instead (feature `rand_core_06` of tfhe-sbc-device, Cargo.toml), e.g. with stm32f4xx-hal:
/// `let mut rng = dp.RNG.constrain(&clocks);`
/// `encryptor.seed(&mut tfhe_sbc_device::csprng::seeding::Rng06(&mut rng))` (an `Err` if the TRNG fails).
fn seed(encryptor: &mut Encryptor, boot: u32) {
    // `seed_from_bytes` wipes what it is given: hand it a copy, the provisioned seed stays in flash.
    let mut seed = SEED;
    encryptor.seed_from_bytes(&mut seed);
    encryptor.reseed(&boot.to_le_bytes());
}

/// Your sensor: here a made-up temperature in hundredths of a degree.
fn read_sensor(message: u16, index: u16) -> u16 {
    2150 + 10 * message + index
}

/// "Sends" bytes: one line, `prefix` then `hex=` and the bytes in hex. Your UART or radio here.
#[inline(never)]
fn print_hex(prefix: core::fmt::Arguments<'_>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let Ok(mut out) = hio::hstdout() else { return };
    cortex_m_semihosting::hprint!("{}hex=", prefix);
    let mut line = [0u8; 128];
    for part in bytes.chunks(line.len() / 2) {
        for (pair, b) in line.chunks_exact_mut(2).zip(part) {
            pair.copy_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
        let _ = out.write_all(&line[..2 * part.len()]);
    }
    let _ = out.write_all(b"\n");
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
    match info.location() {
        Some(at) => hprintln!("result=ERROR panic at {}:{}", at.file(), at.line()),
        None => hprintln!("result=ERROR panic"),
    }
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}

/// A stack overflow (flip-link) or a bad access ends here.
#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("result=ERROR HardFault at pc={:#010x}", frame.pc());
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}
