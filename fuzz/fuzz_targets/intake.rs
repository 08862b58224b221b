//! Fuzzes the adapter's authenticated v2 intake: frame parsing, the MAC check, the replay window, the mask
//! expansion, reassembly and length-delimited stream reading must never panic, and whatever is accepted
//! must be internally consistent (`tfhe_sbc_adapter::fuzzing::intake`: every input runs raw and with its
//! MAC fixed up under the fuzz devices' keys, so the fuzzer gets past the MAC).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tfhe_sbc_adapter::fuzzing::intake(data));
