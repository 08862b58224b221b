//! Cortex-M firmware test of the device crate, run under `qemu-system-arm` by `scripts/firmware.sh`.
//!
//! On a Cortex-M target (`target_os = "none"`) this is `#![no_std] #![no_main]` firmware (cortex-m-rt,
//! semihosting for output and the exit code): it builds the known-answer encryptor ([`kat_inputs`]), encrypts,
//! prints the digest and exits non-zero unless it equals the one `build.rs` computed on the host. It also
//! prints what the budgets are checked on: the statics and the peak stack (the reset handler paints the stack,
//! `cortex-m-rt`'s `paint-stack`), and the instructions of each phase (SysTick under `-icount shift=0`,
//! calibrated against a loop of known length).
//!
//! On the host it runs the same sequence ([`run`]) with the host's product and checks it against the same
//! digest; its tests also tie the inputs to the device crate's pinned KAT.
#![cfg_attr(target_os = "none", no_std, no_main)]

mod kat_inputs;
mod run;

/// The expected digest, computed by `build.rs` on the host.
mod expected {
    include!(concat!(env!("OUT_DIR"), "/expected_digest.rs"));
}

#[cfg(target_os = "none")]
#[allow(unsafe_code)] // Linker symbols, the stack scan, the calibration loop: each `unsafe` has a SAFETY comment.
mod firmware;

/// On the host: the firmware's run with the host's product, checked against build.rs's digest.
#[cfg(not(target_os = "none"))]
fn main() {
    struct Quiet;
    impl run::Probe for Quiet {
        fn start(&mut self, _: run::Phase) {}
        fn end(&mut self, _: run::Phase) {}
    }
    let mut slot = Box::new(core::mem::MaybeUninit::uninit());
    let mut body = Box::new([0u32; 1024]);
    let mut frame = vec![0u8; tfhe_sbc_device::wire::SEEDED_FRAME_BYTES_1024];
    let hex = |d: &[u8]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    match run::run(&mut slot, &mut body, &mut frame, &mut Quiet) {
        Ok(digest) => {
            println!("digest={} (host run)", hex(&digest));
            println!("expected={} (build.rs)", hex(&expected::EXPECTED_DIGEST));
            println!("Cortex-M: bash scripts/firmware.sh builds this firmware and runs it under qemu-system-arm");
            // SAFETY: `run` succeeded, so it initialised the slot; dropping it wipes the key spectra.
            #[allow(unsafe_code)]
            unsafe {
                slot.assume_init_drop()
            };
            std::process::exit(if digest == expected::EXPECTED_DIGEST { 0 } else { 1 });
        }
        Err(what) => {
            eprintln!("error: {what}");
            std::process::exit(1);
        }
    }
}

#[cfg(all(test, not(target_os = "none")))]
mod tests {
    use super::kat_inputs::*;
    use super::run::{Phase, Probe, run};
    use rand_core::SeedableRng;
    use sha2::{Digest, Sha256};
    use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey};
    use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
    use tfhe_sbc_device::encryption::GlweEncryptor;
    use tfhe_sbc_device::wire::SEEDED_FRAME_BYTES_1024;
    use tfhe_sbc_device::xof::Blake2bXof;

    /// Records the phases, in order.
    #[derive(Default)]
    struct Phases(Vec<(Phase, bool)>);

    impl Probe for Phases {
        fn start(&mut self, phase: Phase) {
            self.0.push((phase, true));
        }
        fn end(&mut self, phase: Phase) {
            self.0.push((phase, false));
        }
    }

    /// The firmware's run, on the host: it reproduces the digest build.rs computed independently, and
    /// reports each phase once, start before end.
    #[test]
    fn the_firmware_run_gives_the_expected_digest_on_the_host() {
        let mut slot = Box::new(core::mem::MaybeUninit::uninit());
        let mut body = Box::new([0u32; 1024]);
        let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
        let mut phases = Phases::default();
        let digest = run(&mut slot, &mut body, &mut frame, &mut phases).unwrap();
        assert_eq!(digest, super::expected::EXPECTED_DIGEST);
        let expected: Vec<(Phase, bool)> = [Phase::Construct, Phase::Encrypt, Phase::Frame]
            .into_iter()
            .flat_map(|p| [(p, true), (p, false)])
            .collect();
        assert_eq!(phases.0, expected);
        // SAFETY: `run` succeeded, so it initialised the slot; dropping it wipes the key spectra.
        #[allow(unsafe_code)]
        unsafe {
            slot.assume_init_drop()
        };
    }

    /// The firmware's inputs are the device crate's KAT inputs: they reproduce its pinned SHA-256 digest
    /// (`crates/tfhe-sbc-device/tests/kat.rs`, `fixed_seeds_give_a_fixed_ciphertext`).
    #[test]
    fn inputs_reproduce_the_device_kat() {
        let params = TFHE_LIB_GLWE_1024;
        let key = GlweSecretKey::generate_binary(
            [0u8; 1024],
            params.polynomial_size(),
            &mut Blake2bXof::from_seed(KEY_SEED),
        )
        .unwrap();
        let mut encryptor =
            Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed(RNG_SEED)).unwrap());
        let mut hasher = Sha256::new();
        let mut body = [0u32; 1024];
        let seed = encryptor.encrypt_seeded_glwe_ciphertext(&MESSAGE, &mut body).unwrap();
        hasher.update(seed);
        body.iter().for_each(|w| hasher.update(w.to_le_bytes()));
        let mut full = GlweCiphertext::from_container([0u32; 2048], params.polynomial_size()).unwrap();
        encryptor.encrypt_glwe_ciphertext(&MESSAGE, &mut full).unwrap();
        full.as_slice().iter().for_each(|w| hasher.update(w.to_le_bytes()));
        let digest: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            digest,
            "14ce7dece9ab06189cd670a92e34aed8cd84a61af3f7e7448fd9ba5bf7a34f52"
        );
    }
}
