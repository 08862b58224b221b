//! Cortex-M firmware test of the device crate, run under `qemu-system-arm` by `scripts/firmware.sh`.
//!
//! On a Cortex-M target (`target_os = "none"`) this is `#![no_std] #![no_main]` firmware (cortex-m-rt,
//! semihosting for output and the exit code): it sets up the known-answer encryptor ([`kat_inputs`]) in a
//! `static`, encrypts two frames, prints the digest and exits non-zero unless it equals the one `build.rs`
//! computed on the host. It also prints what the budgets are checked on: the statics and the peak stack (the
//! reset handler paints the stack, `cortex-m-rt`'s `paint-stack`), and the instructions of each phase
//! (SysTick under `-icount shift=0`, calibrated against a loop of known length).
//!
//! With the feature `integer` the firmware runs [`integer_run`] instead: the `u64` integer encryptor
//! (`IntegerEncryptor<2048, NttPlan64>`) on a frame of 512 `u8` readings, with the same
//! measurements (`scripts/firmware.sh` runs it on the M4 model with its own RAM budget). With the feature
//! `integer-public-key` it runs [`integer_public_key_run`]: the same readings under a public key
//! (`IntegerPublicKeyEncryptor<2048, NttPlan64>`, the key read from a public-key file in flash), again on the
//! M4 model with its own budgets. With the feature `compact-list` it runs [`compact_list_run`]: tfhe-rs's own
//! `CompactCiphertextList` of 64 and of 512 `u8` readings from the streaming `CompactListEncryptor`, its raw
//! public key read in place from 32 KiB of flash (the M4 and the M3 models).
//!
//! On the host it runs the same sequences ([`run`], [`integer_run`], [`integer_public_key_run`],
//! [`compact_list_run`]) with the
//! host's products and checks them against the same digests; its tests also tie the inputs to the device
//! crate's pinned KAT.
#![cfg_attr(target_os = "none", no_std, no_main)]

// A firmware carries one of the four runs (the feature `integer`, `integer-public-key` or `compact-list` picks
// which); the host runs them all.
#[cfg(all(
    target_os = "none",
    any(
        all(feature = "integer", feature = "integer-public-key"),
        all(feature = "compact-list", any(feature = "integer", feature = "integer-public-key"))
    )
))]
compile_error!("the features `integer`, `integer-public-key` and `compact-list` pick different runs: enable one");
// The constant-time trace's second secrets (and its planted leaks) exist for the boolean run only.
#[cfg(all(
    any(
        firmware_secrets = "alt",
        firmware_secrets = "third",
        firmware_ct_plant = "branch",
        firmware_ct_plant = "lookup"
    ),
    any(feature = "integer", feature = "integer-public-key", feature = "compact-list")
))]
compile_error!("TSBC_FIRMWARE_SECRETS and TSBC_FIRMWARE_CT_PLANT are for the boolean run");
#[cfg(test)]
mod compact_key;
#[cfg_attr(
    all(target_os = "none", not(feature = "compact-list")),
    allow(dead_code, unused_imports)
)]
mod compact_list_run;
#[cfg_attr(all(target_os = "none", feature = "compact-list"), allow(dead_code, unused_imports))]
mod frames;
#[cfg_attr(
    all(target_os = "none", not(feature = "integer-public-key")),
    allow(dead_code, unused_imports)
)]
mod integer_public_key_run;
#[cfg_attr(all(target_os = "none", not(feature = "integer")), allow(dead_code, unused_imports))]
mod integer_run;
#[cfg_attr(target_os = "none", allow(dead_code))]
mod kat_inputs;
#[cfg_attr(target_os = "none", allow(dead_code))]
mod probe;
#[cfg_attr(
    all(
        target_os = "none",
        any(feature = "integer", feature = "integer-public-key", feature = "compact-list")
    ),
    allow(dead_code, unused_imports)
)]
mod run;

mod expected;
// The integer runs use its MAC key only.
#[cfg_attr(
    all(
        target_os = "none",
        any(feature = "integer", feature = "integer-public-key", feature = "compact-list")
    ),
    allow(unused_imports)
)]
mod run_secrets;

#[cfg(any(firmware_ct_plant = "branch", firmware_ct_plant = "lookup"))]
mod ct_plant;

#[cfg(target_os = "none")]
#[allow(unsafe_code)] // RISC-V: the two statics, taken once; the `unsafe` has a SAFETY comment.
mod entry;
#[cfg(target_os = "none")]
#[allow(unsafe_code)] // The stack scan: each `unsafe` has a SAFETY comment.
mod firmware;
#[cfg(target_os = "none")]
#[allow(unsafe_code)] // Linker symbols, the calibration loop: each `unsafe` has a SAFETY comment.
mod platform;

/// On the host: the firmware's four runs (boolean, integer, integer public key, compact list) with the
/// host's products, checked against build.rs's digests.
#[cfg(not(target_os = "none"))]
fn main() {
    struct Quiet;
    impl probe::Probe for Quiet {
        fn start(&mut self, _: probe::Phase) {}
        fn end(&mut self, _: probe::Phase) {}
    }
    let hex = |d: &[u8]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut encryptor = Box::new(run::Encryptor::EMPTY);
    let mut frame = vec![0u8; run::FRAME_BYTES];
    let boolean = run::run(&mut encryptor, &mut frame, &mut Quiet);
    let mut integer_encryptor = Box::new(integer_run::Encryptor::EMPTY);
    let mut frame = vec![0u8; integer_run::FRAME_BYTES];
    let integer = integer_run::run(&mut integer_encryptor, &mut frame, &mut Quiet);
    let mut public_key_encryptor = Box::new(integer_public_key_run::Encryptor::EMPTY);
    let mut frame = vec![0u8; integer_public_key_run::FRAME_BYTES];
    let public_key = integer_public_key_run::run(&mut public_key_encryptor, &mut frame, &mut Quiet);
    let mut compact_list_encryptor = Box::new(compact_list_run::Encryptor::EMPTY);
    let mut list = vec![0u8; compact_list_run::FRAME_BYTES];
    let compact_list = compact_list_run::run(&mut compact_list_encryptor, &mut list, &mut Quiet);
    let mut ok = true;
    for (variant, result, expected) in [
        ("boolean", boolean.map(Vec::from), &run::EXPECTED_DIGEST[..]),
        ("integer", integer.map(Vec::from), &integer_run::EXPECTED_DIGEST[..]),
        (
            "integer-public-key",
            public_key.map(Vec::from),
            &integer_public_key_run::EXPECTED_DIGEST[..],
        ),
        (
            "compact-list",
            compact_list.map(Vec::from),
            &compact_list_run::EXPECTED_DIGEST[..],
        ),
    ] {
        match result {
            Ok(digest) => {
                println!("{variant}: digest={} (host run)", hex(&digest));
                println!("{variant}: expected={} (build.rs)", hex(expected));
                ok &= digest == expected;
            }
            Err(what) => {
                eprintln!("{variant}: error: {what}");
                ok = false;
            }
        }
    }
    println!("Cortex-M: bash scripts/firmware.sh builds this firmware and runs it under qemu-system-arm");
    std::process::exit(if ok { 0 } else { 1 });
}

#[cfg(test)]
mod tests;
