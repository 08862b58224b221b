//! Links with cortex-m-rt's script and this board's `memory.x`, and says what to do when the device's
//! credential is missing (README.md, "From nothing to a checked frame").
use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::copy("memory.x", out.join("memory.x")).expect("copy memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    println!("cargo:rustc-link-arg-bins=--nmagic");
    // src/main.rs keeps these two files in flash (`include_bytes!`).
    for file in ["device.tsdc", "device.seed"] {
        println!("cargo:rerun-if-changed={file}");
        if fs::metadata(file).is_err() {
            panic!(
                "{file} is missing: make a development credential with the keys tool and copy it here \
                 (README.md): tfhe-sbc-keys issue --dir dev-keys --device-id 1 --mode per-device \
                 --unsafe-dev-credential; cp dev-keys/devices/1.UNSAFE-DEV.tsdc device.tsdc; \
                 cp dev-keys/devices/1.UNSAFE-DEV.seed device.seed"
            );
        }
    }
}
