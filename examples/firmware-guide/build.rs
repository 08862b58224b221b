//! Hands the linker cortex-m-rt's script and this board's `memory.x` (which `link.x` includes).
use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::copy("memory.x", out.join("memory.x")).expect("copy memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    // cortex-m-rt's linker script: the vector table, the sections, the stack (it includes memory.x).
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    // No page alignment of the sections: flash starts at 0, with the vector table.
    println!("cargo:rustc-link-arg-bins=--nmagic");
}
