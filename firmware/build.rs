//! Picks the board's `memory.x` for a bare-metal target (Cortex-M or RISC-V), and computes on the host the packed KAT key and the
//! digest the firmware must reproduce (`$OUT_DIR/expected.rs`), with the same crates and the same inputs
//! (`src/kat_inputs.rs`): for the boolean run, the integer run (feature `integer`) and the integer public-key
//! run (feature `integer-public-key`, whose public-key file build.rs also writes, `integer_public_key.tspk`)
//! and the compact-list run (feature `compact-list`: its raw public key, expanded from a seed,
//! `compact_public_key.bin`).
//! The host path uses the host's product (the `f64` FFT), so a firmware built with another product (the
//! integer NTT on Cortex-M) is checked against it bit for bit. It uses the target's XOF construction
//! (`tfhe_sbc_device::csprng::construction::DeviceConstruction` of the target, read from
//! `CARGO_CFG_TARGET_POINTER_WIDTH`: BLAKE2s on the 32-bit firmware targets), named as the encryptors' type
//! parameter, so the host computes exactly the stream and the masks the firmware does.

#[path = "src/compact_key.rs"]
mod compact_key;
#[path = "src/kat_inputs.rs"]
#[allow(dead_code)]
mod kat_inputs;

use kat_inputs::*;
use negacyclic_ntt::NttPlan64;
use rand_core::SeedableRng;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::parameters::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::csprng::xof::{Blake2bXof, KeyedXof};
use tfhe_sbc_device::csprng::{Blake2bCounter, Blake2sCounter, XofConstruction};
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::compact_list::{CompactKeySpectra, compact_list_bytes};
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::public_key::PublicKey;
use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::encrypt::shell::Encryptor;
use tfhe_sbc_device::files::public_key::{encode_public_key, public_key_file_bytes_for};
use tfhe_sbc_device::noise::DeviceNoise;
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;
use tfhe_sbc_device::product::{DefaultProduct, NegacyclicProductPlan};

use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, SEEDED_FRAME_BYTES_1024};

/// The KAT key, packed (128 bytes), and the digests of the run's two frames (keyed BLAKE2b-128 under
/// `DIGEST_KEY`), computed with the plain host
/// API (`new`, `encrypt_seeded_frame` with a body buffer): the firmware's in-place path must match it. With
/// `secrets` other than `Kat` (a firmware built with `TSBC_FIRMWARE_SECRETS=alt` or `=third`) from the
/// constant-time trace's other sets instead.
fn expected<X: XofConstruction>(secrets: Secrets) -> ([u8; 128], [u8; 32]) {
    let (key_seed, rng_seed, mac_key, plaintext) = match secrets {
        Secrets::Kat => (KEY_SEED, RNG_SEED, MAC_KEY, MESSAGE),
        Secrets::Complement => (KEY_SEED, ALT_RNG_SEED, ALT_MAC_KEY, ALT_MESSAGE),
        Secrets::Third => (THIRD_KEY_SEED, THIRD_RNG_SEED, THIRD_MAC_KEY, THIRD_MESSAGE),
    };
    let params = TFHE_LIB_GLWE_1024;
    let mut key = GlweSecretKey::generate_binary(
        [0u8; 1024],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed(key_seed),
    )
    .expect("KAT key");
    if matches!(secrets, Secrets::Complement) {
        // The KAT key with every coefficient flipped.
        let mut bits = [0u8; 1024];
        for (flipped, bit) in bits.iter_mut().zip(key.as_bytes()) {
            *flipped = 1 - bit;
        }
        key = GlweSecretKey::from_container(bits, params.polynomial_size()).expect("the complemented key");
    }
    let mut packed = [0u8; 128];
    pack_secret_key(key.as_bytes(), &mut packed).expect("pack the key");
    let mut encryptor = Box::new(
        GlweEncryptor::<1024, 1, DefaultProduct, X>::new(&params, &key, KeyedXof::from_seed(rng_seed))
            .expect("encryptor"),
    );
    let credentials = DeviceCredentials::new(DEVICE_ID, KEY_ID, MacKey::from_bytes(mac_key));
    let mut counter = FrameCounter::new(FIRST_SEQUENCE);
    let chunk = chunks(&plaintext, 128).next().expect("one chunk");
    let mut digest = [0u8; 32];
    let mut body = [0u32; 1024];
    let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    let digest_key = MacKey::from_bytes(DIGEST_KEY);
    for half in digest.chunks_exact_mut(16) {
        let message = encryptor.begin_message(&mut counter, plaintext.len()).expect("message");
        let written = encryptor
            .encrypt_seeded_frame(&credentials, &message, &chunk, &mut body, &mut frame)
            .expect("frame");
        half.copy_from_slice(&digest_key.tag(&frame[..written]));
    }
    (packed, digest)
}

/// The integer KAT key, packed (256 bytes), and the digests of the integer run's three frames (two with the
/// full body, one with the compact body), computed with `set_key` (the unpacked key), `set_rng` and
/// `encrypt_frame_into` for every frame: the firmware sets the packed key, seeds in place and writes
/// frame 0 around `encrypt_u8` itself.
fn expected_integer<X: XofConstruction>() -> ([u8; 256], [u8; 48]) {
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let key = GlweSecretKey::generate_binary(
        vec![0u8; 2048],
        params.glwe().polynomial_size(),
        &mut Blake2bXof::from_seed(INTEGER_KEY_SEED),
    )
    .expect("integer KAT key");
    let mut packed = [0u8; 256];
    pack_secret_key(key.as_bytes(), &mut packed).expect("pack the integer key");
    let mut encryptor = Box::new(IntegerEncryptor::<2048, NttPlan64, X>::EMPTY);
    encryptor.set_key(&params, &key).expect("integer key");
    encryptor.set_rng(KeyedXof::from_seed(INTEGER_RNG_SEED));
    let digest = integer_frame_digests(&mut *encryptor, Some(2));
    (packed, digest)
}

/// The digests (keyed BLAKE2b-128 under `DIGEST_KEY`) of `D / 16` frames of `INTEGER_READINGS`, one
/// message each from `FIRST_SEQUENCE` on, that `encryptor` seals with `encrypt_frame_into` as the KAT
/// device; from frame `compact_from` on (if any) with the set's compact body.
fn integer_frame_digests<const D: usize>(encryptor: &mut dyn FrameEncryptor, compact_from: Option<usize>) -> [u8; D] {
    let credentials = DeviceCredentials::new(DEVICE_ID, KEY_ID, MacKey::from_bytes(MAC_KEY));
    let mut counter = FrameCounter::new(FIRST_SEQUENCE);
    let chunk = chunks(&INTEGER_READINGS, encryptor.chunk_bytes())
        .next()
        .expect("one chunk");
    let mut frame = vec![0u8; encryptor.frame_buffer_len()];
    let digest_key = MacKey::from_bytes(DIGEST_KEY);
    let mut digest = [0u8; D];
    for (i, part) in digest.chunks_exact_mut(16).enumerate() {
        if compact_from == Some(i) {
            let compact = encryptor.compact_body_bits();
            encryptor.set_frame_body_bits(compact).expect("the set's compact width");
        }
        let message = encryptor
            .begin_message(&mut counter, INTEGER_READINGS.len())
            .expect("message");
        let written = encryptor
            .encrypt_frame_into(&credentials, &message, &chunk, &mut frame)
            .expect("integer frame");
        part.copy_from_slice(&digest_key.tag(&frame[..written]));
    }
    digest
}

/// The integer public-key KAT: the public key of the integer KAT key (`INTEGER_KEY_SEED`), drawn from
/// `INTEGER_PUBLIC_KEY_SEED` and written as a public-key file under `KEY_ID` (16,443 bytes), and the digests
/// of the public-key run's two frames, computed with the plain API: `set_integer_public_key` (the body as
/// words), `set_rng` and `encrypt_frame_into` for both frames. The firmware reads the key from the file's
/// bytes in flash and writes frame 0 around `encrypt_u8` itself.
fn expected_integer_public_key<X: XofConstruction>() -> (Vec<u8>, [u8; 32]) {
    const N: usize = 2048;
    let plan = <NttPlan64 as NegacyclicProductPlan<N>>::PLAN;
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let key = GlweSecretKey::generate_binary(
        vec![0u8; N],
        params.glwe().polynomial_size(),
        &mut Blake2bXof::from_seed(INTEGER_KEY_SEED),
    )
    .expect("integer KAT key");
    let mut key_spectrum = vec![[0u32; 3]; N];
    compute_glwe_key_spectrum(&plan, &key, &mut key_spectrum).expect("the key's spectrum");
    let noise = DeviceNoise::for_tuniform_parameters(&params.glwe()).expect("the set's noise");
    let (mut body, mut scratch) = (vec![0u64; N], vec![[0u32; 3]; N]);
    let seed = generate_seeded_glwe_public_key(
        &plan,
        &key_spectrum,
        &noise,
        &mut body,
        &mut scratch,
        &mut Blake2bXof::from_seed(INTEGER_PUBLIC_KEY_SEED),
    )
    .expect("integer KAT public key");
    let mut file = vec![0u8; public_key_file_bytes_for(&params.glwe())];
    let written = encode_public_key(params.glwe().id(), KEY_ID, &seed, &body, &mut file).expect("public-key file");
    assert_eq!(written, file.len());

    let mut encryptor = Box::new(Encryptor::<PublicKey<N, 1, NttPlan64>, X>::EMPTY);
    encryptor
        .set_integer_public_key(&params, &seed, &body)
        .expect("integer public key");
    encryptor.set_rng(KeyedXof::from_seed(INTEGER_RNG_SEED));
    let digest = integer_frame_digests(&mut *encryptor, None);
    (file, digest)
}

/// The compact-list KAT: the raw compact public key `[a | b]` of `COMPACT_KEY_SEED` as little-endian bytes
/// (32 KiB, for the firmware's flash), and the digests of the run's two lists (the first 64 readings, then
/// all 512), computed with the NTT form (`CompactListNttEncryptor<NttPlan64>`, `set_rng`): the firmware
/// writes them with the streaming form from the key's bytes in flash.
fn expected_compact_list<X: XofConstruction>() -> (Vec<u8>, [u8; 32]) {
    let (_s, key) = compact_key::compact_key_pair(COMPACT_KEY_SEED);
    let key_bytes: Vec<u8> = key.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut encryptor = Box::new(Encryptor::<CompactKeySpectra<NttPlan64>, X>::EMPTY);
    encryptor.set_public_key(&key).expect("compact public key");
    encryptor.set_rng(KeyedXof::from_seed(COMPACT_RNG_SEED));
    let mut list = vec![0u8; compact_list_bytes::<u8>(INTEGER_READINGS.len())];
    let digest_key = MacKey::from_bytes(DIGEST_KEY);
    let mut digest = [0u8; 32];
    for (part, count) in digest
        .chunks_exact_mut(16)
        .zip([COMPACT_SHORT_READINGS, INTEGER_READINGS.len()])
    {
        let written = encryptor
            .encrypt_list(&INTEGER_READINGS[..count], &mut list)
            .expect("compact list");
        part.copy_from_slice(&digest_key.tag(&list[..written]));
    }
    (key_bytes, digest)
}

/// The boolean run's secrets: the KAT's, or one of the constant-time trace's other sets.
#[derive(Clone, Copy)]
enum Secrets {
    /// `KEY_SEED`, `RNG_SEED`, `MAC_KEY`, `MESSAGE`.
    Kat,
    /// Every bit of the KAT's flipped (`TSBC_FIRMWARE_SECRETS=alt`): the key's coefficients, `ALT_*`.
    Complement,
    /// Arbitrary bytes (`TSBC_FIRMWARE_SECRETS=third`): `THIRD_*`.
    Third,
}

fn main() {
    println!("cargo:rerun-if-changed=src/kat_inputs.rs");
    println!("cargo:rerun-if-changed=src/compact_key.rs");
    println!("cargo:rerun-if-changed=memory");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));

    // The constant-time trace (scripts/firmware-ct-trace.sh), firmware only: `TSBC_FIRMWARE_SECRETS=alt` runs
    // the boolean KAT with the second set of secrets (`ALT_*`), `TSBC_FIRMWARE_CT_PLANT=branch|lookup` plants a
    // leak. Environment variables, not features: features enter the crate's metadata hash, and with it the
    // names and so the order of its constants in flash, while the two builds' code must be byte for byte the
    // same.
    println!("cargo::rustc-check-cfg=cfg(firmware_secrets, values(\"alt\", \"third\"))");
    println!("cargo::rustc-check-cfg=cfg(firmware_ct_plant, values(\"branch\", \"lookup\"))");
    println!("cargo:rerun-if-env-changed=TSBC_FIRMWARE_SECRETS");
    println!("cargo:rerun-if-env-changed=TSBC_FIRMWARE_CT_PLANT");
    let firmware = env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none");
    let secrets = match env::var("TSBC_FIRMWARE_SECRETS").as_deref() {
        _ if !firmware => Secrets::Kat,
        Ok("alt") => Secrets::Complement,
        Ok("third") => Secrets::Third,
        Ok("" | "kat") | Err(_) => Secrets::Kat,
        Ok(other) => panic!("TSBC_FIRMWARE_SECRETS={other}: expected kat, alt or third"),
    };
    match secrets {
        Secrets::Kat => {}
        Secrets::Complement => println!("cargo:rustc-cfg=firmware_secrets=\"alt\""),
        Secrets::Third => println!("cargo:rustc-cfg=firmware_secrets=\"third\""),
    }
    if firmware {
        match env::var("TSBC_FIRMWARE_CT_PLANT").as_deref() {
            Ok("branch") => println!("cargo:rustc-cfg=firmware_ct_plant=\"branch\""),
            Ok("lookup") => println!("cargo:rustc-cfg=firmware_ct_plant=\"lookup\""),
            Ok("") | Err(_) => {}
            Ok(other) => panic!("TSBC_FIRMWARE_CT_PLANT={other}: expected branch or lookup"),
        }
    }
    // The target's XOF construction (`DeviceConstruction` where the firmware runs).
    let out_rs = match env::var("CARGO_CFG_TARGET_POINTER_WIDTH").as_deref() {
        Ok("32") => expected_rs::<Blake2sCounter>(secrets, &out),
        Ok("64") => expected_rs::<Blake2bCounter>(secrets, &out),
        other => panic!("target pointer width {other:?}: expected 32 or 64"),
    };
    fs::write(out.join("expected.rs"), out_rs).expect("write expected.rs");
    board_memory(&out);
}

/// The text of `expected.rs` for a target whose encryptors' XOF construction is `X`; writes the key files
/// it includes into `out`.
fn expected_rs<X: XofConstruction>(secrets: Secrets, out: &std::path::Path) -> String {
    let (packed, digest) = expected::<X>(secrets);
    let mut out_rs = String::new();
    let mut array = |doc: &str, name: &str, bytes: &[u8]| {
        write!(out_rs, "/// {doc}\npub const {name}: [u8; {}] = [", bytes.len()).expect("write to a String");
        for b in bytes {
            write!(out_rs, "{b:#04x}, ").expect("write to a String");
        }
        out_rs.push_str("];\n");
    };
    array(
        "The KAT key (`KEY_SEED`), packed eight coefficients to a byte: build.rs, on the host.",
        "PACKED_KEY",
        &packed,
    );
    array(
        "The run's two frame digests: build.rs, on the host, with the host's product.",
        "EXPECTED_DIGEST",
        &digest,
    );
    let (packed, digest) = expected_integer::<X>();
    array(
        "The integer KAT key (`INTEGER_KEY_SEED`), packed: build.rs, on the host.",
        "INTEGER_PACKED_KEY",
        &packed,
    );
    array(
        "The integer run's three frame digests: build.rs, on the host.",
        "INTEGER_EXPECTED_DIGEST",
        &digest,
    );
    let (file, digest) = expected_integer_public_key::<X>();
    array(
        "The integer public-key run's two frame digests: build.rs, on the host.",
        "INTEGER_PUBLIC_KEY_EXPECTED_DIGEST",
        &digest,
    );
    let (key, digest) = expected_compact_list::<X>();
    array(
        "The compact-list run's two list digests: build.rs, on the host, with the NTT form.",
        "COMPACT_LIST_EXPECTED_DIGEST",
        &digest,
    );
    // The public-key file, as provisioning would put it in flash (`include_bytes!`).
    fs::write(out.join("integer_public_key.tspk"), &file).expect("write integer_public_key.tspk");
    let len = file.len();
    write!(
        out_rs,
        "/// The integer KAT public key as a public-key file ({len} bytes): build.rs, on the host, from \
         `INTEGER_KEY_SEED` and `INTEGER_PUBLIC_KEY_SEED`.\npub static INTEGER_PUBLIC_KEY_FILE: [u8; {len}] = \
         *include_bytes!(concat!(env!(\"OUT_DIR\"), \"/integer_public_key.tspk\"));\n"
    )
    .expect("write to a String");
    // The raw compact public key, as provisioning would put it in flash, 8-byte aligned (`include_bytes!`).
    fs::write(out.join("compact_public_key.bin"), &key).expect("write compact_public_key.bin");
    let len = key.len();
    write!(
        out_rs,
        "/// A byte array on an 8-byte boundary (the key's words are read in place).\n#[repr(C, align(8))]\n\
         pub struct Aligned<T: ?Sized>(pub T);\n\
         /// The compact-list run's raw public key `[a | b]` ({len} bytes, little-endian words): build.rs, on the \
         host, from `COMPACT_KEY_SEED`.\npub static COMPACT_PUBLIC_KEY: Aligned<[u8; {len}]> = \
         Aligned(*include_bytes!(concat!(env!(\"OUT_DIR\"), \"/compact_public_key.bin\")));\n"
    )
    .expect("write to a String");
    out_rs
}

/// The board's `memory.x` on a bare-metal target.
fn board_memory(out: &std::path::Path) {
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none") {
        // thumbv7em runs on the MPS2 AN386 model; thumbv7m and thumbv6m code on the LM3S6965 model; riscv32
        // on qemu's RISC-V `virt` machine.
        let target = env::var("TARGET").expect("TARGET");
        let board = if target.starts_with("thumbv7em") {
            "mps2-an386"
        } else if target.starts_with("riscv32") {
            "qemu-riscv-virt"
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
