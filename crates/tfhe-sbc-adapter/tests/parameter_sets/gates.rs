//! Gates of a set's `ServerKey` on device inputs, every result decrypted and its noise measured.

use crate::common::noise::PhaseNoise;
use crate::keys::{Keys, big_phase};
use std::time::{Duration, Instant};
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::server_key::BinaryBooleanGates;

/// Decrypts every input with the `ClientKey` (and measures its noise with the big key); returns the number
/// of wrong decryptions.
pub fn check_inputs(keys: &Keys, inputs: &[Ciphertext], bits: &[bool], noise: &mut PhaseNoise) -> usize {
    let mut errors = 0;
    for (ct, &expected) in inputs.iter().zip(bits) {
        errors += usize::from(keys.client.decrypt(ct) != expected);
        let Ciphertext::Encrypted(lwe) = ct else {
            panic!("an extracted input is never trivial");
        };
        assert_eq!(lwe.lwe_size().0, keys.bridge.set().big_lwe_dimension() + 1);
        noise.add_phase(big_phase(keys, lwe), expected);
    }
    errors
}

/// What a batch of gates did.
#[derive(Default, Debug)]
pub struct GateReport {
    pub nand: usize,
    pub and: usize,
    pub xor: usize,
    pub mux: usize,
    pub failures: usize,
    pub output_noise: PhaseNoise,
    pub time: Duration,
}

impl GateReport {
    pub fn total(&self) -> usize {
        self.nand + self.and + self.xor + self.mux
    }
}

/// `count` gates cycling NAND, AND, XOR, MUX over `inputs` (three fresh inputs per gate); every odd gate
/// takes the previous gate's output as its first operand, so half the gates compute on bootstrapped
/// outputs. Every result is decrypted with the `ClientKey`, and its noise measured with the big key.
pub fn run_gates(keys: &Keys, inputs: &[Ciphertext], bits: &[bool], count: usize) -> GateReport {
    assert!(inputs.len() >= 3 * count, "three fresh inputs per gate");
    let server = &keys.server;
    let mut report = GateReport::default();
    let mut previous: Option<(Ciphertext, bool)> = None;
    let start = Instant::now();
    for g in 0..count {
        let (a, va) = match (&previous, g % 2) {
            (Some((ct, v)), 1) => (ct.clone(), *v),
            _ => (inputs[3 * g].clone(), bits[3 * g]),
        };
        let (b, vb) = (&inputs[3 * g + 1], bits[3 * g + 1]);
        let (c, vc) = (&inputs[3 * g + 2], bits[3 * g + 2]);
        let (out, expected) = match g % 4 {
            0 => {
                report.nand += 1;
                (server.nand(&a, b), !(va && vb))
            }
            1 => {
                report.and += 1;
                (server.and(&a, b), va && vb)
            }
            2 => {
                report.xor += 1;
                (server.xor(&a, b), va ^ vb)
            }
            _ => {
                report.mux += 1;
                (server.mux(c, &a, b), if vc { va } else { vb })
            }
        };
        report.failures += usize::from(keys.client.decrypt(&out) != expected);
        if let Ciphertext::Encrypted(lwe) = &out {
            report.output_noise.add_phase(big_phase(keys, lwe), expected);
        }
        previous = Some((out, expected));
    }
    report.time = start.elapsed();
    report
}
