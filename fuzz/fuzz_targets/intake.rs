//! Fuzzes the adapter's intake: frame decoding and length-delimited stream reading must never panic, and
//! whatever decodes must be internally consistent (`tfhe_sbc_adapter::fuzzing::intake`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tfhe_sbc_adapter::fuzzing::intake(data));
