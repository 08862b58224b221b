//! Integer intake per `FheUint8`, in one run, with tfhe-rs 1.8.2's high-level
//! default parameters and its dedicated compact public-key parameters (PKE + casting key):
//!
//! * fleet mode: a device frame (512 `u8` readings, `IntegerEncryptor` under the client key's GLWE key) ->
//!   [`Intake::receive_integer`] (MAC, mask from the seed) -> [`IntegerExtractor`] -> `FheUint8`: the whole
//!   frame at once on one thread, the same in batches of 16 values (each batch dropped before the next: a
//!   consumer that keeps up), and the whole frame on rayon's pool; batched also from a compact-body frame
//!   (`set_body_bits(compact_body_bits())`: the intake unpacks the top 14 bits of each body word);
//! * per-device mode: a frame of 512 readings under the device's own key -> intake -> one GLWE switch of the
//!   whole frame to the client key's GLWE key with the device's `IntegerDeviceKsk` (decompressed once, timed
//!   apart) -> [`IntegerExtractor`] in batches of 16 -> `FheUint8`, one thread, as fleet mode;
//! * public-key mode: a public-key frame (the mask in full, 32,831 B) of 512 readings under a public key of
//!   the client key's GLWE key (`IntegerPublicKeyEncryptor`) -> intake (MAC, the mask read) ->
//!   [`IntegerExtractor`] in batches of 16, one thread, as fleet mode: extraction only;
//! * tfhe-rs: `CompactCiphertextList::expand` of the same values encrypted under a `CompactPublicKey`, with
//!   casting (per block: a key switch to the small key and a PBS), unpacked and packed, then `get` of every
//!   `FheUint8`.
//!
//! Every path is decrypted with the `ClientKey` before anything is timed. tfhe-rs's expand (a PBS per block)
//! runs [`SLOW_VALUES`] values per iteration. Criterion's medians go into a table; paired rounds (per-device
//! and expand timed back to back, `PAIRED_ROUNDS` times) give the ratio on a shared machine. In test mode
//! (`cargo test`, no `--bench`) the slow modes take 2 values and one round.
//!
//! `cargo bench -p tfhe-sbc-adapter --features tfhe --bench integer_intake -- --warm-up-time 1`
#![allow(clippy::unwrap_used, missing_docs)]

use criterion::{Criterion, SamplingMode, criterion_group};
use rand_core::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tfhe::core_crypto::prelude::{
    CiphertextModulus, GlweCiphertext as TfheGlweCiphertext, GlweCiphertextOwned as TfheGlweCiphertextOwned, GlweSize,
    PolynomialSize as TfhePolynomialSize,
};
use tfhe::prelude::*;
use tfhe::{ClientKey, CompactCiphertextList, CompactPublicKey, FheUint8, FheUint8Id, Seed, set_server_key};
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig, IntegerFrame};
use tfhe_sbc_adapter::interop::glwe_ksk::keyswitch_glwe;
use tfhe_sbc_adapter::interop::integer::per_device::IntegerDeviceKsk;
use tfhe_sbc_adapter::interop::integer::public_key::integer_public_key_from_client_key;
use tfhe_sbc_adapter::interop::integer::{IntegerExtractor, glwe_key_from_client_key};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, GlweSecretKeyOwned};
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::files::public_key::public_key_body;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;

const N: usize = 2048;
/// `u8` readings per frame (four two-bit blocks each).
const FRAME_VALUES: usize = N / 4;
/// Fleet mode, batched: values extracted per batch.
const BATCH: usize = 16;
/// Values per iteration of the slow modes (a PBS per block), in bench mode: 16 `FheUint8` = 64 blocks.
const SLOW_VALUES: usize = 16;
/// The same in test mode.
const SLOW_VALUES_TEST: usize = 2;
/// Paired rounds in bench mode (1 in test mode); odd rounds time the three in reverse order.
const PAIRED_ROUNDS: usize = 7;

const FLEET_FRAME: &str = "fleet: frame -> FheUint8 x 512, 1 thread";
const FLEET_BATCHED: &str = "fleet: frame -> FheUint8 x 512 in batches of 16, 1 thread";
const FLEET_COMPACT: &str = "fleet: compact frame -> FheUint8 x 512 in batches of 16, 1 thread";
const FLEET_RAYON: &str = "fleet: frame -> FheUint8 x 512, rayon";
const PER_DEVICE_GLWE: &str = "per-device: frame -> GLWE switch (NTT) -> FheUint8 x 512 in batches of 16, 1 thread";
const PER_DEVICE_SCHOOLBOOK: &str = "per-device, tfhe-rs keyswitch_glwe_ciphertext instead of the NTT switch";
const PUBLIC_KEY: &str = "public key: frame -> FheUint8 x 512 in batches of 16, 1 thread";
const GLWE_KSK_DECOMPRESSION: &str = "per-device: decompress + transform a device's GLWE key, / 512";
const EXPAND: &str = "tfhe-rs CompactCiphertextList expand + cast";
const EXPAND_PACKED: &str = "tfhe-rs CompactCiphertextList packed expand + cast";

/// Seconds per value of every sample criterion took, per benchmark.
static SAMPLES: Mutex<BTreeMap<&'static str, Vec<f64>>> = Mutex::new(BTreeMap::new());

fn record(name: &'static str, elapsed: Duration, iters: u64, values: usize) {
    let per_value = elapsed.as_secs_f64() / iters as f64 / values as f64;
    SAMPLES.lock().unwrap().entry(name).or_default().push(per_value);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// A ratio with three significant digits (fleet mode is four orders of magnitude below expand).
fn ratio(r: f64) -> String {
    if r < 0.01 {
        format!("{r:.2e}")
    } else {
        format!("{r:.3}")
    }
}

fn median_of(name: &str) -> Option<f64> {
    SAMPLES.lock().unwrap().get(name).cloned().map(median)
}

const FLEET_DEVICE: u64 = 0x1D_0010;
const OWN_KEY_DEVICE: u64 = 0x1D_0011;
const PUBLIC_KEY_DEVICE: u64 = 0x1D_0012;

fn credentials(device: u64) -> DeviceCredentials {
    DeviceCredentials::new(device, 1, MacKey::from_bytes([device as u8; 32]))
}

/// A fresh intake (its replay window empty), so that the same frame can be received again.
fn intake() -> Intake {
    let mut registry = DeviceRegistry::new();
    registry.register(credentials(FLEET_DEVICE)).unwrap();
    registry.register(credentials(OWN_KEY_DEVICE)).unwrap();
    registry.register_public_key(credentials(PUBLIC_KEY_DEVICE)).unwrap();
    Intake::new(IntakeConfig::default(), registry)
}

/// One seeded v2 frame of `readings` (at most 512) from `device`, encrypted under `key`, with the full body
/// or (`compact`) the set's compact body.
fn frame(device: u64, key: &GlweSecretKeyOwned, readings: &[u8], seed: u8, compact: bool) -> Vec<u8> {
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let mut encryptor = Box::new(IntegerEncryptor::<N>::EMPTY);
    encryptor.set_key(&params, key).unwrap();
    if compact {
        encryptor.set_body_bits(params.glwe().compact_body_bits()).unwrap();
    }
    encryptor.seed_from_bytes(&mut [seed; 32]);
    first_frame(&mut *encryptor, device, readings)
}

/// The first frame of a message of `readings` that `encryptor` seals as device `device`'s.
fn first_frame(encryptor: &mut dyn FrameEncryptor, device: u64, readings: &[u8]) -> Vec<u8> {
    let message = encryptor
        .begin_message(&mut FrameCounter::new(0), readings.len())
        .unwrap();
    let chunk = chunks(readings, encryptor.chunk_bytes()).next().unwrap();
    let mut out = vec![0u8; encryptor.frame_buffer_len()];
    let len = encryptor
        .encrypt_frame_into(&credentials(device), &message, &chunk, &mut out)
        .unwrap();
    out.truncate(len);
    out
}

/// One public-key frame of `readings` (at most 512) from the public-key device, under the public-key file
/// `public_key`.
fn public_key_frame(public_key: &[u8], readings: &[u8], seed: u8) -> Vec<u8> {
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let (header, body) = public_key_body(public_key, 1).unwrap();
    let mut encryptor = Box::new(IntegerPublicKeyEncryptor::<N>::EMPTY);
    encryptor
        .set_integer_public_key_le_bytes(&params, &header.seed, body)
        .unwrap();
    encryptor.seed_from_bytes(&mut [seed; 32]);
    first_frame(&mut *encryptor, PUBLIC_KEY_DEVICE, readings)
}

/// Times `iters` runs of `f`, each on a fresh intake built outside the timed region.
fn timed_with_intake(iters: u64, mut f: impl FnMut(&mut Intake)) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let mut intake = intake();
        let t = Instant::now();
        f(&mut intake);
        total += t.elapsed();
    }
    total
}

fn intake_bench(c: &mut Criterion) {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let slow_values = if bench_mode { SLOW_VALUES } else { SLOW_VALUES_TEST };
    let rounds = if bench_mode { PAIRED_ROUNDS } else { 1 };

    let t = Instant::now();
    let config = tfhe_sbc_adapter::interop::integer::compact_list::compact_list_config();
    let client_key = ClientKey::generate_with_seed(config, Seed(7));
    let server_key = client_key.generate_server_key();
    set_server_key(server_key.clone());
    eprintln!(
        "tfhe-rs keys (with the casting key): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let mut rng = Blake2bXof::from_seed([7; 32]);
    let readings: Vec<u8> = (0..FRAME_VALUES).map(|_| rng.next_u64() as u8).collect();
    let slow = &readings[..slow_values];
    let extractor = IntegerExtractor::new();

    // Fleet: the client key's GLWE key on the device.
    let fleet_key = glwe_key_from_client_key(&client_key).unwrap();
    let fleet_frame = frame(FLEET_DEVICE, &fleet_key, &readings, 1, false);
    let compact_frame = frame(FLEET_DEVICE, &fleet_key, &readings, 3, true);
    eprintln!(
        "frames: {} B full body, {} B compact body",
        fleet_frame.len(),
        compact_frame.len()
    );
    // Per-device: the device's own key, and its seeded key-switching key in the cloud.
    let t = Instant::now();
    let device_key: GlweSecretKeyOwned = GlweSecretKey::generate_binary(
        vec![0u8; N],
        MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().polynomial_size(),
        &mut rng,
    )
    .unwrap();
    let glwe_device_frame = frame(OWN_KEY_DEVICE, &device_key, &readings, 4, false);
    let glwe_ksk = IntegerDeviceKsk::generate(&device_key, &client_key, &mut rng).unwrap();
    eprintln!("per-device key-switching key: {:.3} s", t.elapsed().as_secs_f64());
    let glwe_key = glwe_ksk.decompress();
    // Public key: a seeded public key under the client key's GLWE key.
    let public_key = integer_public_key_from_client_key(&client_key, 1, &mut rng).unwrap();
    let pk_frame = public_key_frame(&public_key, &readings, 5);
    let glwe_spectra = glwe_ksk.spectra();
    // tfhe-rs: the same values under the compact public key.
    let public_key = CompactPublicKey::new(&client_key);
    let list = CompactCiphertextList::builder(&public_key)
        .extend(slow.iter().copied())
        .build();
    let packed = CompactCiphertextList::builder(&public_key)
        .extend(slow.iter().copied())
        .build_packed();

    // The measured operations.
    let fleet = |intake: &mut Intake| -> Vec<FheUint8> {
        let opened: IntegerFrame = intake.receive_integer(&fleet_frame).unwrap();
        extractor
            .extract_readings::<FheUint8Id, _>(&opened.ciphertext, 0, FRAME_VALUES)
            .unwrap()
    };
    // Returns the last batch, for the check.
    let fleet_batched = |intake: &mut Intake, frame: &[u8]| -> Vec<FheUint8> {
        let opened = intake.receive_integer(frame).unwrap();
        let mut last = Vec::new();
        for first in (0..FRAME_VALUES).step_by(BATCH) {
            last = black_box(
                extractor
                    .extract_readings::<FheUint8Id, _>(&opened.ciphertext, first, BATCH)
                    .unwrap(),
            );
        }
        last
    };
    let fleet_rayon = |intake: &mut Intake| -> Vec<FheUint8> {
        let opened = intake.receive_integer(&fleet_frame).unwrap();
        extractor
            .extract_readings_par::<FheUint8Id, _>(&opened.ciphertext, 0, FRAME_VALUES)
            .unwrap()
    };
    // The NTT switch (the adapter's), or tfhe-rs's schoolbook one (the previous design) as the peer.
    let per_device = |intake: &mut Intake, keep_all: bool, schoolbook: bool| -> Vec<FheUint8> {
        let opened = intake.receive_integer(&glwe_device_frame).unwrap();
        let native = CiphertextModulus::new_native();
        let input = TfheGlweCiphertext::from_container(opened.ciphertext.as_slice(), TfhePolynomialSize(N), native);
        let mut output = TfheGlweCiphertextOwned::new(0u64, GlweSize(2), TfhePolynomialSize(N), native);
        if schoolbook {
            keyswitch_glwe(&glwe_key, &input, &mut output.as_mut_view()).unwrap();
        } else {
            glwe_spectra.keyswitch(&input, &mut output.as_mut_view()).unwrap();
        }
        let switched = GlweCiphertext::from_container(output.into_container(), PolynomialSize(N)).unwrap();
        // As fleet mode batched: each batch dropped before the next. Returns the whole frame's values when
        // checked, the last batch when timed.
        let mut all = Vec::new();
        for first in (0..FRAME_VALUES).step_by(BATCH) {
            let batch = black_box(
                extractor
                    .extract_readings::<FheUint8Id, _>(&switched, first, BATCH)
                    .unwrap(),
            );
            if keep_all {
                all.extend(batch);
            }
        }
        all
    };
    let per_device_glwe = |intake: &mut Intake, keep_all: bool| per_device(intake, keep_all, false);
    let expand = |l: &CompactCiphertextList| -> Vec<FheUint8> {
        let expander = l.expand().unwrap();
        (0..slow_values)
            .map(|i| expander.get::<FheUint8>(i).unwrap().unwrap())
            .collect()
    };

    // Everything decrypts before it is timed.
    let check = |what: &str, cts: &[FheUint8], expected: &[u8]| {
        assert_eq!(cts.len(), expected.len(), "{what}");
        for (i, (ct, &v)) in cts.iter().zip(expected).enumerate() {
            let d: u8 = ct.decrypt(&client_key);
            assert_eq!(d, v, "{what}: value {i}");
        }
    };
    check("fleet", &fleet(&mut intake()), &readings);
    check("fleet, rayon", &fleet_rayon(&mut intake()), &readings);
    let last = &readings[FRAME_VALUES - BATCH..];
    check("fleet, batched", &fleet_batched(&mut intake(), &fleet_frame), last);
    check(
        "fleet, compact, batched",
        &fleet_batched(&mut intake(), &compact_frame),
        last,
    );
    for (what, frame) in [("fleet, compact", &compact_frame), ("public key", &pk_frame)] {
        let opened = intake().receive_integer(frame).unwrap();
        let all = extractor
            .extract_readings::<FheUint8Id, _>(&opened.ciphertext, 0, FRAME_VALUES)
            .unwrap();
        check(what, &all, &readings);
    }
    check("public key, batched", &fleet_batched(&mut intake(), &pk_frame), last);
    check(
        "per-device, GLWE switch",
        &per_device_glwe(&mut intake(), true),
        &readings,
    );
    check("tfhe-rs expand", &expand(&list), slow);
    check("tfhe-rs packed expand", &expand(&packed), slow);

    let mut group = c.benchmark_group("integer_intake_per_fheuint8");
    // Flat sampling: the slow modes run 10 iterations, not criterion's 55 of linear sampling.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.bench_function(FLEET_FRAME, |b| {
        b.iter_custom(|iters| {
            let e = timed_with_intake(iters, |intake| drop(black_box(fleet(intake))));
            record(FLEET_FRAME, e, iters, FRAME_VALUES);
            e
        })
    });
    for (name, frame) in [(FLEET_BATCHED, &fleet_frame), (FLEET_COMPACT, &compact_frame)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let e = timed_with_intake(iters, |intake| drop(fleet_batched(intake, frame)));
                record(name, e, iters, FRAME_VALUES);
                e
            })
        });
    }
    group.bench_function(PUBLIC_KEY, |b| {
        b.iter_custom(|iters| {
            let e = timed_with_intake(iters, |intake| drop(fleet_batched(intake, &pk_frame)));
            record(PUBLIC_KEY, e, iters, FRAME_VALUES);
            e
        })
    });
    group.bench_function(FLEET_RAYON, |b| {
        b.iter_custom(|iters| {
            let e = timed_with_intake(iters, |intake| drop(black_box(fleet_rayon(intake))));
            record(FLEET_RAYON, e, iters, FRAME_VALUES);
            e
        })
    });
    group.bench_function(PER_DEVICE_GLWE, |b| {
        b.iter_custom(|iters| {
            let e = timed_with_intake(iters, |intake| drop(black_box(per_device_glwe(intake, false))));
            record(PER_DEVICE_GLWE, e, iters, FRAME_VALUES);
            e
        })
    });
    group.bench_function(PER_DEVICE_SCHOOLBOOK, |b| {
        b.iter_custom(|iters| {
            let e = timed_with_intake(iters, |intake| drop(black_box(per_device(intake, false, true))));
            record(PER_DEVICE_SCHOOLBOOK, e, iters, FRAME_VALUES);
            e
        })
    });
    group.bench_function(GLWE_KSK_DECOMPRESSION, |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                drop(black_box(glwe_ksk.spectra()));
            }
            let e = t.elapsed();
            record(GLWE_KSK_DECOMPRESSION, e, iters, FRAME_VALUES);
            e
        })
    });
    for (name, l) in [(EXPAND, &list), (EXPAND_PACKED, &packed)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    drop(black_box(expand(l)));
                }
                let e = t.elapsed();
                record(name, e, iters, slow_values);
                e
            })
        });
    }
    group.finish();

    // Paired rounds: on a shared machine the load drifts between criterion's benchmarks, so each round times
    // per-device intake and both expansions back to back; the ratios are the medians of the rounds' ratios.
    let (mut unpacked_ratios, mut packed_ratios) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut times = [Duration::ZERO; 3];
        let order: [usize; 3] = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
        for which in order {
            times[which] = match which {
                0 => {
                    timed_with_intake(1, |intake| drop(black_box(per_device_glwe(intake, false)))) / FRAME_VALUES as u32
                        * slow_values as u32
                }
                _ => {
                    let t = Instant::now();
                    drop(black_box(expand(if which == 1 { &list } else { &packed })));
                    t.elapsed()
                }
            };
        }
        let [per_device_time, unpacked_time, packed_time] = times;
        unpacked_ratios.push(per_device_time.as_secs_f64() / unpacked_time.as_secs_f64());
        packed_ratios.push(per_device_time.as_secs_f64() / packed_time.as_secs_f64());
    }
    let rounded = |v: &[f64]| v.iter().map(|r| format!("{r:.2e}")).collect::<Vec<_>>();
    let paired_unpacked = median(unpacked_ratios.clone());
    let paired_packed = median(packed_ratios.clone());

    let expand_median = median_of(EXPAND).unwrap_or(f64::NAN);
    let packed_median = median_of(EXPAND_PACKED).unwrap_or(f64::NAN);
    println!(
        "\nInteger intake per FheUint8 (4 blocks), medians of criterion's samples; {} rayon threads; slow modes \
         {slow_values} values per iteration",
        rayon::current_num_threads()
    );
    println!(
        "| {:<66} | {:>13} | {:>13} | {:>9} | {:>9} |",
        "mode", "per value", "per block", "/ expand", "/ packed"
    );
    println!("|{:-<68}|{:->15}|{:->15}|{:->11}|{:->11}|", "", "", "", "", "");
    for name in [
        FLEET_FRAME,
        FLEET_BATCHED,
        FLEET_COMPACT,
        FLEET_RAYON,
        PUBLIC_KEY,
        PER_DEVICE_GLWE,
        PER_DEVICE_SCHOOLBOOK,
        GLWE_KSK_DECOMPRESSION,
        EXPAND,
        EXPAND_PACKED,
    ] {
        if let Some(m) = median_of(name) {
            println!(
                "| {name:<66} | {:>10.3} us | {:>10.3} us | {:>9} | {:>9} |",
                m * 1e6,
                m * 1e6 / 4.0,
                ratio(m / expand_median),
                ratio(m / packed_median)
            );
        }
    }
    println!(
        "Paired rounds ({rounds}), per-device / expand: {paired_unpacked:.2e} (rounds {:?}); per-device / packed \
         expand: {paired_packed:.2e} (rounds {:?})",
        rounded(&unpacked_ratios),
        rounded(&packed_ratios)
    );
    let fleet_best = [FLEET_FRAME, FLEET_BATCHED, FLEET_COMPACT]
        .iter()
        .filter_map(|n| median_of(n))
        .fold(f64::INFINITY, f64::min);
    let glwe_per_device = median_of(PER_DEVICE_GLWE).unwrap_or(f64::NAN);
    let fleet_batched_median = median_of(FLEET_BATCHED).unwrap_or(f64::NAN);
    println!(
        "Per-device (NTT GLWE switch) / fleet (batches of 16, 1 thread): {:.3}x; tfhe-rs's switch / NTT switch: \
         {:.2}x",
        glwe_per_device / fleet_batched_median,
        median_of(PER_DEVICE_SCHOOLBOOK).unwrap_or(f64::NAN) / glwe_per_device
    );
    let public_key_median = median_of(PUBLIC_KEY).unwrap_or(f64::NAN);
    println!(
        "Public key / fleet (batches of 16, 1 thread): {:.3}x",
        public_key_median / fleet_batched_median
    );
    if !std::env::args().any(|a| a == "--bench") {
        println!("Goals: not judged in test mode (one sample per mode, test profile); `cargo bench` measures them");
        return;
    }
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "Goals: fleet <= 10 us per value on one thread: {:.3} us, {}; per-device / expand: {:.2e} paired \
         ({:.2e} from the medians); per-device <= 2x fleet and <= 20 us: {:.3}x, {:.3} us, {}",
        fleet_best * 1e6,
        verdict(fleet_best <= 10e-6),
        paired_unpacked,
        glwe_per_device / expand_median,
        glwe_per_device / fleet_batched_median,
        glwe_per_device * 1e6,
        verdict(glwe_per_device <= 2.0 * fleet_batched_median && glwe_per_device <= 20e-6)
    );
    println!(
        "Goal: public key <= 1.5x fleet: {:.3}x, {}",
        public_key_median / fleet_batched_median,
        verdict(public_key_median <= 1.5 * fleet_batched_median)
    );
}

criterion_group! {
    name = benches;
    // Command-line flags (`--warm-up-time`, `--measurement-time`) override these.
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    targets = intake_bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
