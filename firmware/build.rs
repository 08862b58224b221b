//! Picks the board's `memory.x` for a Cortex-M target, and computes on the host the digest the firmware must
//! reproduce (`$OUT_DIR/expected_digest.rs`), with the same crates and the same inputs (`src/kat_inputs.rs`).
//! The host path uses the host's product (the `f64` FFT), so a firmware built with another product (the
//! integer NTT on Cortex-M) is checked against it bit for bit.

#[path = "src/kat_inputs.rs"]
#[allow(dead_code)]
mod kat_inputs;

use blake2::{Blake2b256, Digest};
use kat_inputs::*;
use rand_core::SeedableRng;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::frame_mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::message::chunks;
use tfhe_sbc_device::wire::{FrameCounter, SEEDED_FRAME_BYTES_1024};
use tfhe_sbc_device::xof::Blake2bXof;

fn expected_digest() -> [u8; 32] {
    let params = TFHE_LIB_GLWE_1024;
    let key = GlweSecretKey::generate_binary(
        [0u8; 1024],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed(KEY_SEED),
    )
    .expect("KAT key");
    let mut encryptor =
        Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed(RNG_SEED)).expect("encryptor"));
    let mut hasher = Blake2b256::new();

    let mut body = [0u32; 1024];
    let seed = encryptor
        .encrypt_seeded_glwe_ciphertext(&MESSAGE, &mut body)
        .expect("encryption");
    hasher.update(seed);
    body.iter().for_each(|w| hasher.update(w.to_le_bytes()));

    let credentials = DeviceCredentials::new(DEVICE_ID, KEY_ID, MacKey::from_bytes(MAC_KEY));
    let mut counter = FrameCounter::new(FIRST_SEQUENCE);
    let message = encryptor.begin_message(&mut counter, MESSAGE.len()).expect("message");
    let chunk = chunks(&MESSAGE, 128).next().expect("one chunk");
    let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    let written = encryptor
        .encrypt_seeded_frame(&credentials, &message, &chunk, &mut body, &mut frame)
        .expect("frame");
    hasher.update(&frame[..written]);
    hasher.finalize().into()
}

fn main() {
    println!("cargo:rerun-if-changed=src/kat_inputs.rs");
    println!("cargo:rerun-if-changed=memory");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));

    let mut digest = String::from("/// BLAKE2b-256 of the known-answer run, computed on the host by build.rs.\n");
    digest.push_str("pub const EXPECTED_DIGEST: [u8; 32] = [");
    for b in expected_digest() {
        write!(digest, "{b:#04x}, ").expect("write to a String");
    }
    digest.push_str("];\n");
    fs::write(out.join("expected_digest.rs"), digest).expect("write expected_digest.rs");

    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none") {
        // thumbv7em runs on the MPS2 AN386 model; thumbv7m and thumbv6m code on the LM3S6965 model.
        let target = env::var("TARGET").expect("TARGET");
        let board = if target.starts_with("thumbv7em") {
            "mps2-an386"
        } else {
            "lm3s6965evb"
        };
        fs::copy(format!("memory/{board}.x"), out.join("memory.x")).expect("copy memory.x");
        println!("cargo:rustc-link-search={}", out.display());
        println!("cargo:rustc-link-arg-bins=--nmagic");
        println!("cargo:rustc-link-arg-bins=-Tlink.x");
        println!("cargo:rustc-env=FIRMWARE_BOARD={board}");
        println!("cargo:rustc-env=FIRMWARE_TARGET={target}");
    }
}
