//! A tfhe-rs `CompactCiphertextList` of 512 `u8` readings (1,024 packed LWEs, one bin), three ways, under
//! the same tfhe-rs 1.8.2 `CompactPublicKey` (`PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`, casting
//! key parameters `PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`), in one run:
//!
//! * the device's streaming form, `CompactListEncryptor` (the raw key `[a | b]` read in place, a few KiB of
//!   stack, `N^2 + N n` masked additions per bin): what a microcontroller runs;
//! * the device's NTT form, `CompactListNttEncryptor<NttPlan64>` (the key's spectra computed once, 128 KiB);
//! * tfhe-rs's own `CompactCiphertextList::builder(&pk).extend(..).build_packed()`, then `safe_serialize`
//!   (the device writes the serialized bytes, so the peer's row includes its serialization). tfhe-rs
//!   encrypts the list with `par_encrypt_lwe_compact_ciphertext_list_with_compact_public_key` (rayon):
//!   `RAYON_NUM_THREADS=1` compares one thread with one thread.
//!
//! The raw key is the `CompactPublicKey`'s `LweCompactPublicKey` container, as
//! `crates/tfhe-sbc-adapter/tests/compact_list.rs` takes it out. Before anything is timed, the bench checks
//! that both device forms write the same bytes from the same seed, that the list has exactly the length of
//! tfhe-rs's serialized list (same format), and that tfhe-rs's `safe_deserialize_conformant` accepts it
//! (the adapter test expands and decrypts such lists). After the run it prints a table: time per list, per
//! value, ratio to tfhe-rs's builder, and bytes per value.
//!
//! Run: `cargo bench --bench compact_list` (`cargo test --bench compact_list` runs each once).
#![allow(clippy::unwrap_used)]

mod common;

use criterion::Criterion;
use std::hint::black_box;
use std::time::Instant;
use tfhe::conformance::ListSizeConstraint;
use tfhe::safe_serialization::{safe_deserialize_conformant, safe_serialize};
use tfhe::shortint::parameters::PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
use tfhe::{
    ClientKey, CompactCiphertextList, CompactCiphertextListConformanceParams, CompactPublicKey, FheTypes, Seed,
};
use tfhe_sbc_device::encrypt::compact_list::{CompactListEncryptor, CompactListNttEncryptor, compact_list_bytes};

/// `u8` readings per list: 2,048 blocks, 1,024 packed LWEs, one bin.
const VALUES: usize = 512;
const GROUP: &str = "compact_list_512_u8";

const STREAMING: &str = "tfhe-sbc CompactListEncryptor (streaming)";
const NTT: &str = "tfhe-sbc CompactListNttEncryptor<NttPlan64>";
const TFHE: &str = "tfhe-rs builder.build_packed + safe_serialize";

/// Serializes `list` as a server receives it.
fn serialized(list: &CompactCiphertextList) -> Vec<u8> {
    let mut bytes = Vec::new();
    safe_serialize(list, &mut bytes, 1 << 24).unwrap();
    bytes
}

fn bench(c: &mut Criterion) {
    let t = Instant::now();
    let config = tfhe_sbc_adapter::interop::integer::compact_list::compact_list_config();
    let client_key = ClientKey::generate_with_seed(config, Seed(0xC0_11EC7));
    let public_key = CompactPublicKey::new(&client_key);
    let (integer, _tag) = public_key.clone().into_raw_parts();
    let (lwe_key, _params) = integer.into_raw_parts().into_raw_parts();
    let raw: Vec<u64> = lwe_key.into_container();
    assert_eq!(raw.len(), 2 * 2048);
    eprintln!(
        "tfhe-rs client key and compact public key: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let readings: Vec<u8> = (0..VALUES as u32).map(|i| (i * 151 + 17) as u8).collect();

    let mut streaming = CompactListEncryptor::EMPTY;
    streaming.set_public_key(&raw).unwrap();
    streaming.seed_from_bytes(&mut [0x51; 32]);
    let mut ntt = Box::new(CompactListNttEncryptor::<negacyclic_ntt::NttPlan64>::EMPTY);
    ntt.set_public_key(&raw).unwrap();
    ntt.seed_from_bytes(&mut [0x51; 32]);
    let mut list = vec![0u8; compact_list_bytes::<u8>(VALUES)];
    let mut list_ntt = vec![0u8; list.len()];
    let written = streaming.encrypt_list(&readings, &mut list).unwrap();
    assert_eq!(ntt.encrypt_list(&readings, &mut list_ntt), Ok(written));
    assert!(
        list == list_ntt,
        "the streaming and NTT forms differ from the same seed"
    );

    let tfhe_list = |readings: &[u8]| -> CompactCiphertextList {
        let mut builder = CompactCiphertextList::builder(&public_key);
        builder.extend(readings.iter().copied());
        builder.build_packed()
    };
    let peer = serialized(&tfhe_list(&readings));
    assert_eq!(written, peer.len(), "the device's list and tfhe-rs's differ in length");
    let conformance = CompactCiphertextListConformanceParams::from_parameters_and_size_constraint(
        PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
        ListSizeConstraint::try_size_in_range(1, 4096).unwrap(),
    );
    let parsed: CompactCiphertextList = safe_deserialize_conformant(&list[..written], 1 << 24, &conformance).unwrap();
    assert_eq!(parsed.len(), VALUES);
    assert!((0..VALUES).all(|i| parsed.get_kind_of(i) == Some(FheTypes::Uint8)));

    let mut group = c.benchmark_group(GROUP);
    group.bench_function(STREAMING, |b| {
        b.iter(|| streaming.encrypt_list(black_box(&readings), &mut list).unwrap())
    });
    group.bench_function(NTT, |b| {
        b.iter(|| ntt.encrypt_list(black_box(&readings), &mut list).unwrap())
    });
    group.bench_function(TFHE, |b| b.iter(|| serialized(&tfhe_list(black_box(&readings)))));
    group.finish();

    print_table(written, peer.len());
}

fn human(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} us", ns / 1e3)
    }
}

fn print_table(device_bytes: usize, tfhe_bytes: usize) {
    let Some(reference) = common::median_ns(GROUP, TFHE) else {
        println!("(no criterion estimate for {GROUP}/{TFHE}: test mode, or filtered out)");
        println!(
            "bytes per value: device {:.2}, tfhe-rs {:.2} ({device_bytes} and {tfhe_bytes} B per list of {VALUES})",
            device_bytes as f64 / VALUES as f64,
            tfhe_bytes as f64 / VALUES as f64,
        );
        return;
    };
    println!(
        "\nA packed CompactCiphertextList of {VALUES} u8 (1,024 LWEs, N = 2048, TUniform(17)) under one tfhe-rs \
         1.8.2 CompactPublicKey; medians of criterion's samples; ratio = time / {TFHE}"
    );
    println!(
        "| {:<46} | {:>10} | {:>10} | {:>7} | {:>15} |",
        "encryption", "per list", "per value", "ratio", "bytes per value"
    );
    println!("|{:-<48}|{:->12}|{:->12}|{:->9}|{:->17}|", "", "", "", "", "");
    for (name, bytes) in [(STREAMING, device_bytes), (NTT, device_bytes), (TFHE, tfhe_bytes)] {
        let Some(ns) = common::median_ns(GROUP, name) else {
            continue;
        };
        println!(
            "| {name:<46} | {:>10} | {:>10} | {:>7.2} | {:>15.2} |",
            human(ns),
            human(ns / VALUES as f64),
            ns / reference,
            bytes as f64 / VALUES as f64
        );
    }
    println!(
        "Bytes: the serialized list / {VALUES} (tfhe-rs's safe_serialize; the device writes the same bytes). \
         Threads: tfhe-rs's builder encrypts with par_encrypt_lwe_compact_ciphertext_list_with_compact_public_key \
         (rayon; RAYON_NUM_THREADS=1 for one thread), the device forms with one thread."
    );
}

fn main() {
    common::run(bench);
}
