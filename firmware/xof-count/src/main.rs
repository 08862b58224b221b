//! Counts the instructions of the device's keyed BLAKE2b XOF and of the keyed BLAKE2s XOF of the same shape
//! (`xof_count::Blake2sXof`) under qemu with `-icount shift=0`: on the Cortex-M4 model (SysTick on the core
//! clock, one tick per instruction) and on RV32 (`minstret`). Each clock is checked against a countdown loop
//! of known length. Prints one `key=value` line per figure; the output streams are checked against Python's
//! `hashlib` (first and last 8 bytes).
#![cfg_attr(target_os = "none", no_std, no_main)]

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!("xof-count runs on thumbv7em-none-eabihf or riscv32imc-unknown-none-elf under qemu (README.md)");
}

#[cfg(target_os = "none")]
mod count {
    use core::hint::black_box;
    use rand_core::{Rng, SeedableRng};
    use tfhe_sbc_device::csprng::mask::for_each_mask_run;
    use tfhe_sbc_device::csprng::xof::Blake2bXof;
    use xof_count::Blake2sXof;
    use xof_count::blake2b_folded::Blake2bFoldedXof;

    #[cfg(target_arch = "arm")]
    use crate::arm::{Clock, exit, hprintln};
    #[cfg(target_arch = "riscv32")]
    use crate::rv32::{Clock, exit, hprintln};

    /// Bytes of each measured stream.
    const STREAM_BYTES: usize = 4096;
    /// The seed of every measured stream.
    const SEED: [u8; 32] = [7; 32];
    /// The first and last 8 bytes of the 4096-byte streams of `SEED`, from Python's `hashlib`:
    /// `blake2b(LE64(i), key=SEED, person=b"TFHE-SBC rng v2.")` for i < 64 and
    /// `blake2s(LE64(i), key=SEED, person=b"TSBC-rng")` for i < 128.
    const B_ENDS: [[u8; 8]; 2] = [
        [0x16, 0xca, 0xcf, 0x4c, 0x54, 0xe7, 0x55, 0xfd],
        [0x14, 0x5a, 0x7b, 0x64, 0x6b, 0x44, 0xa4, 0x26],
    ];
    const S_ENDS: [[u8; 8]; 2] = [
        [0x65, 0xbd, 0xa5, 0xde, 0x9e, 0x0e, 0x0b, 0x49],
        [0xe2, 0xa0, 0x8f, 0x2b, 0x04, 0x85, 0x6b, 0xb5],
    ];
    /// Noise bytes of one `TFHE_LIB_GLWE_1024` encryption: 1024 TUniform(8) samples of 2 bytes each
    /// (`TUniform::bytes_per_sample`: b + 2 = 10 bits), drawn in 256-byte batches.
    const NOISE_BYTES: usize = 2048;
    const NOISE_BATCH: usize = 256;
    /// The mask of one encryption: 1024 `u32` words, expanded in runs of 256 bytes as the integer NTT
    /// product loads it (`for_each_mask_run`).
    const MASK_WORDS: usize = 1024;
    const MASK_RUN_BYTES: usize = 256;
    /// Iterations of the calibration loop (two instructions each).
    const CALIBRATION_ITERATIONS: u32 = 1_000_000;

    /// Each measurement runs this many times; the figure is the mean (SysTick's resolution on the M4 model
    /// is one tick, 40 instructions).
    const REPS: u64 = 16;

    /// Converts clock ticks to instructions with the calibration loop's ratio (1 on RV32, 40 on the M4
    /// model: its SysTick runs at the 25 MHz core clock, one instruction per virtual nanosecond).
    struct Counter {
        clock: Clock,
        loop_instructions: u64,
        loop_ticks: u64,
        /// The fewest ticks an empty interval took (the clock reads' own cost).
        empty: u64,
    }

    impl Counter {
        /// Mean instructions of one run of `f` over [`REPS`] runs.
        fn count(&self, mut f: impl FnMut()) -> u64 {
            let start = self.clock.ticks();
            for _ in 0..REPS {
                f();
            }
            let ticks = self.clock.ticks() - start - self.empty;
            let total = (u128::from(ticks) * u128::from(self.loop_instructions) + u128::from(self.loop_ticks / 2))
                / u128::from(self.loop_ticks);
            (total as u64 + REPS / 2) / REPS
        }
    }

    fn ends_ok(stream: &[u8; STREAM_BYTES], ends: &[[u8; 8]; 2]) -> bool {
        stream[..8] == ends[0] && stream[STREAM_BYTES - 8..] == ends[1]
    }

    pub(crate) fn run(clock: Clock) -> ! {
        // The first calibration settles the clock (SysTick's first reload), the second is used.
        let _ = clock.calibrate(CALIBRATION_ITERATIONS);
        let (loop_instructions, loop_ticks) = clock.calibrate(CALIBRATION_ITERATIONS);
        let empty = (0..8)
            .map(|_| {
                let a = clock.ticks();
                clock.ticks() - a
            })
            .min()
            .unwrap_or(0);
        hprintln!(
            "calibration: loop_instructions={} ticks={} empty_interval_ticks={}",
            loop_instructions,
            loop_ticks,
            empty
        );
        let counter = Counter {
            clock,
            loop_instructions,
            loop_ticks: loop_ticks - empty,
            empty,
        };

        // The device's BLAKE2b XOF. Its stream of SEED against Python's hashlib first (not measured).
        let mut stream = [0u8; STREAM_BYTES];
        Blake2bXof::from_seed(SEED).fill_bytes(&mut stream);
        let b_ok = ends_ok(&stream, &B_ENDS);
        // Setup (the key block's compression; the drop's wipe included), then 4096 bytes in one call.
        let setup = counter.count(|| {
            black_box(Blake2bXof::from_seed(black_box(SEED)));
        });
        let mut b = Blake2bXof::from_seed(SEED);
        let stream_4096 = counter.count(|| b.fill_bytes(black_box(&mut stream)));
        // One encryption's draws, as the device makes them: from the secret stream the 32-byte mask seed and
        // the noise (256-byte batches), then the ratchet; then the mask, 1024 u32 words from a stream keyed
        // with the mask seed, in 256-byte runs (`for_each_mask_run`, what the M4's NTT product calls).
        let mut seed = [0u8; 32];
        let mut noise = [0u8; NOISE_BYTES];
        let secret = counter.count(|| {
            b.fill_bytes(&mut seed);
            for batch in noise.chunks_mut(NOISE_BATCH) {
                b.fill_bytes(black_box(batch));
            }
            b.ratchet();
        });
        let mask = counter.count(|| for_each_mask_run::<tfhe_sbc_device::csprng::Blake2bCounter, u32>(black_box(&seed), 0, MASK_WORDS, sink));
        report("blake2b", setup, stream_4096, secret, mask, b_ok);

        let folded_b_ok = blake2b_folded(&counter);
        let s_ok = blake2s::<false>(&counter, "blake2s");
        let folded_ok = blake2s::<true>(&counter, "blake2s-folded");
        let ok = b_ok && folded_b_ok && s_ok && folded_ok;
        hprintln!("result={}", if ok { "ok" } else { "MISMATCH" });
        exit(ok)
    }

    /// The mask's consumer: takes each run's words (as the NTT's `load` would).
    fn sink(offset: usize, words: &[u32]) {
        black_box((offset, words));
    }

    fn report(name: &str, setup: u64, stream_4096: u64, secret: u64, mask: u64, check: bool) {
        hprintln!(
            "{}: setup={} stream_4096={} per_byte_x1000={} encryption_secret={} encryption_mask={} encryption_total={} check={}",
            name,
            setup,
            stream_4096,
            stream_4096 * 1000 / STREAM_BYTES as u64,
            secret,
            mask,
            secret + mask,
            check
        );
    }

    /// The same measurements for the folded BLAKE2b control (one block of buffer, as the BLAKE2s XOF).
    fn blake2b_folded(counter: &Counter) -> bool {
        let mut stream = [0u8; STREAM_BYTES];
        Blake2bFoldedXof::from_seed(&SEED).fill(&mut stream);
        let ok = ends_ok(&stream, &B_ENDS);
        let setup = counter.count(|| {
            black_box(Blake2bFoldedXof::from_seed(black_box(&SEED)));
        });
        let mut s = Blake2bFoldedXof::from_seed(&SEED);
        let stream_4096 = counter.count(|| s.fill(black_box(&mut stream)));
        let mut seed = [0u8; 32];
        let mut noise = [0u8; NOISE_BYTES];
        let secret = counter.count(|| {
            s.fill(&mut seed);
            for batch in noise.chunks_mut(NOISE_BATCH) {
                s.fill(black_box(batch));
            }
            s.ratchet();
        });
        let mask = counter.count(|| {
            let mut m = Blake2bFoldedXof::from_seed(black_box(&seed));
            let mut bytes = [0u8; MASK_RUN_BYTES];
            let mut words = [0u32; MASK_RUN_BYTES / 4];
            for offset in (0..MASK_WORDS).step_by(MASK_RUN_BYTES / 4) {
                m.fill(&mut bytes);
                for (w, b) in words.iter_mut().zip(bytes.chunks_exact(4)) {
                    *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                sink(offset, &words);
            }
        });
        report("blake2b-folded", setup, stream_4096, secret, mask, ok);
        ok
    }

    /// The same measurements for the BLAKE2s XOF (`Z`: with the zero message words folded away).
    fn blake2s<const Z: bool>(counter: &Counter, name: &str) -> bool {
        let mut stream = [0u8; STREAM_BYTES];
        Blake2sXof::<Z>::from_seed(&SEED).fill(&mut stream);
        let ok = ends_ok(&stream, &S_ENDS);
        let setup = counter.count(|| {
            black_box(Blake2sXof::<Z>::from_seed(black_box(&SEED)));
        });
        let mut s = Blake2sXof::<Z>::from_seed(&SEED);
        let stream_4096 = counter.count(|| s.fill(black_box(&mut stream)));
        let mut seed = [0u8; 32];
        let mut noise = [0u8; NOISE_BYTES];
        let secret = counter.count(|| {
            s.fill(&mut seed);
            for batch in noise.chunks_mut(NOISE_BATCH) {
                s.fill(black_box(batch));
            }
            s.ratchet();
        });
        let mask = counter.count(|| {
            let mut m = Blake2sXof::<Z>::from_seed(black_box(&seed));
            let mut bytes = [0u8; MASK_RUN_BYTES];
            let mut words = [0u32; MASK_RUN_BYTES / 4];
            for offset in (0..MASK_WORDS).step_by(MASK_RUN_BYTES / 4) {
                m.fill(&mut bytes);
                for (w, b) in words.iter_mut().zip(bytes.chunks_exact(4)) {
                    *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                sink(offset, &words);
            }
        });
        report(name, setup, stream_4096, secret, mask, ok);
        ok
    }
}

#[cfg(all(target_os = "none", target_arch = "arm"))]
mod arm {
    //! Cortex-M: SysTick on the core clock (one tick per instruction under `-icount shift=0`), its 24-bit
    //! wraps counted by its interrupt, as firmware/src/platform/arm_cortex_m.rs does.
    use core::sync::atomic::{AtomicU32, Ordering};
    use cortex_m::peripheral::SYST;
    use cortex_m::peripheral::syst::SystClkSource;
    use cortex_m_rt::{ExceptionFrame, entry, exception};
    use cortex_m_semihosting::debug;
    pub(crate) use cortex_m_semihosting::hprintln;

    static WRAPS: AtomicU32 = AtomicU32::new(0);

    #[exception]
    fn SysTick() {
        WRAPS.store(WRAPS.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }

    #[exception]
    unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
        hprintln!("result=ERROR HardFault at pc={:#010x}", frame.pc());
        exit(false)
    }

    #[entry]
    fn main() -> ! {
        let Some(mut peripherals) = cortex_m::Peripherals::take() else {
            exit(false)
        };
        let syst = &mut peripherals.SYST;
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
        crate::count::run(Clock)
    }

    pub(crate) fn exit(success: bool) -> ! {
        debug::exit(if success {
            debug::EXIT_SUCCESS
        } else {
            debug::EXIT_FAILURE
        });
        loop {
            cortex_m::asm::wfi();
        }
    }

    pub(crate) struct Clock;

    impl Clock {
        #[inline(never)]
        pub(crate) fn ticks(&self) -> u64 {
            loop {
                let before = WRAPS.load(Ordering::Relaxed);
                let current = SYST::get_current();
                if WRAPS.load(Ordering::Relaxed) == before {
                    return (u64::from(before) << 24) | u64::from(0x00FF_FFFF - current);
                }
            }
        }

        /// Ticks over a loop of `2 * iterations` instructions (`subs`, `bne`): `(instructions, ticks)`.
        pub(crate) fn calibrate(&self, iterations: u32) -> (u64, u64) {
            let start = self.ticks();
            // SAFETY: a register-only countdown loop: no memory, no stack; r0 ends at 0 and is clobbered.
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
            (2 * u64::from(iterations), end - start)
        }
    }
}

#[cfg(all(target_os = "none", target_arch = "riscv32"))]
mod rv32 {
    //! RV32 on qemu's `virt` machine (M-mode, `-bios none`): `minstret`, exact under `-icount shift=0`.
    use riscv_semihosting::debug;
    pub(crate) use riscv_semihosting::hprintln;

    #[riscv_rt::entry]
    fn main() -> ! {
        crate::count::run(Clock)
    }

    #[unsafe(export_name = "ExceptionHandler")]
    fn exception_handler(_frame: &riscv_rt::TrapFrame) -> ! {
        hprintln!(
            "result=ERROR exception mcause={:#x} at pc={:#010x}",
            riscv::register::mcause::read().bits(),
            riscv::register::mepc::read()
        );
        exit(false)
    }

    pub(crate) fn exit(success: bool) -> ! {
        debug::exit(if success {
            debug::EXIT_SUCCESS
        } else {
            debug::EXIT_FAILURE
        });
        loop {
            riscv::asm::wfi();
        }
    }

    pub(crate) struct Clock;

    impl Clock {
        #[inline(never)]
        pub(crate) fn ticks(&self) -> u64 {
            riscv::register::minstret::read64()
        }

        /// Instructions retired over a loop of `2 * iterations` (`addi`, `bnez`): `(instructions, counted)`.
        pub(crate) fn calibrate(&self, iterations: u32) -> (u64, u64) {
            let start = self.ticks();
            // SAFETY: a register-only countdown loop: no memory, no stack; its register ends at 0, clobbered.
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
            (2 * u64::from(iterations), end - start)
        }
    }
}

#[cfg(target_os = "none")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    #[cfg(target_arch = "arm")]
    arm::exit(false);
    #[cfg(target_arch = "riscv32")]
    rv32::exit(false);
}
