//! Links a bare-metal build for its qemu board: `memory/mps2-an386.x` (Cortex-M4) or
//! `memory/qemu-riscv-virt.x` (RV32 `virt`) as `memory.x`, and the runtime's `link.x`.

use std::{env, fs, path::PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=memory");
    let target = env::var("TARGET").expect("TARGET");
    let board = if target.starts_with("thumbv") {
        "mps2-an386"
    } else if target.starts_with("riscv32") {
        "qemu-riscv-virt"
    } else {
        return;
    };
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    fs::copy(format!("memory/{board}.x"), out.join("memory.x")).expect("copy memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=--nmagic");
    if board == "qemu-riscv-virt" {
        // riscv-rt's link.x does not include memory.x itself.
        println!("cargo:rustc-link-arg-bins=-Tmemory.x");
    }
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
}
