//! Declares the crate's one configuration flag: `--cfg negacyclic_ntt_mul16` forces the 16x16-bit partial
//! product multiplier (the Cortex-M0/M3 build) on any target, so that host tests cover it.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(negacyclic_ntt_mul16)");
    println!("cargo::rerun-if-changed=build.rs");
}
