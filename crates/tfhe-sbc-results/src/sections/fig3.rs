//! The paper's Fig. 3: server-side conversion time and peak heap against the plaintext size (1 to 64
//! GLWE ciphertexts of 1024 bits), on one thread and on all cores: sample extraction alone, and the whole
//! intake of each key mode (fleet, per-device, public key) for booleans (MAC, reassembly, extraction, key
//! switch into tfhe-rs's boolean key) and for integers (`FheUint8` readings, 4096 bits per ciphertext).

use crate::axis::Unit;
use crate::kit::BooleanKit;
use crate::peak;
use crate::plot::{LineChart, Series};
use crate::report::{Context, Section, table};
use crate::sections::integers::IntegerKit;
use crate::timing::{human, kib, median};
use rand_core::SeedableRng;
use std::num::NonZeroUsize;
use std::time::Instant;
use tfhe_sbc_adapter::extraction::{extract_all_lwe_samples, extract_all_lwe_samples_par};
use tfhe_sbc_adapter::intake::{IntakeConfig, Received};
use tfhe_sbc_adapter::interop::BooleanBridge;
use tfhe_sbc_adapter::key_store::{KeyStore, KeyedIntake};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};

const N: usize = 1024;

/// One curve: its name and (ciphertexts, seconds, heap bytes) points.
struct Curve {
    name: String,
    all_cores: bool,
    points: Vec<(usize, f64, usize)>,
}

impl Curve {
    /// An empty curve of `what` on `threads` threads (more than one: all cores).
    fn new(what: &str, threads: usize) -> Self {
        Self {
            name: format!("{what}, {}", threads_label(threads)),
            all_cores: threads > 1,
            points: Vec::new(),
        }
    }
}

/// Samples `op` (its input made by `input` outside the timing) `samples` times: median seconds, peak heap.
fn sample<I, R>(samples: usize, mut input: impl FnMut() -> I, mut op: impl FnMut(I) -> R) -> (f64, usize) {
    let mut times = Vec::new();
    let mut heap = 0;
    for _ in 0..samples.max(1) {
        let i = input();
        let t = Instant::now();
        let (out, h) = peak::measure(|| op(i));
        times.push(t.elapsed().as_secs_f64());
        drop(out);
        heap = heap.max(h);
    }
    (median(&mut times), heap)
}

/// A boolean device of one key mode that seals `n * 128` bytes into `n` frames per call.
enum Device {
    Secret(Box<GlweEncryptor<N>>, tfhe_sbc_device::frame::mac::DeviceCredentials),
    Public(
        Box<PublicKeyEncryptor<N, 1>>,
        tfhe_sbc_device::frame::mac::DeviceCredentials,
    ),
}

impl Device {
    fn frames(&mut self, counter: &mut FrameCounter, n: usize) -> Vec<Vec<u8>> {
        let message = vec![0xA5u8; n * N / 8];
        let mut out = Vec::new();
        let mut body = [0u32; N];
        match self {
            Self::Secret(encryptor, credentials) => {
                let Ok(outgoing) = encryptor.begin_message(counter, message.len()) else {
                    return out;
                };
                let mut buf = vec![0u8; frame_bytes(FrameKind::Seeded, 1, N, 32, 32)];
                for chunk in chunks(&message, N / 8) {
                    if let Ok(len) = encryptor.encrypt_seeded_frame(credentials, &outgoing, &chunk, &mut body, &mut buf)
                    {
                        out.push(buf[..len].to_vec());
                    }
                }
            }
            Self::Public(encryptor, credentials) => {
                let Ok(outgoing) = counter.begin_message(message.len(), N / 8) else {
                    return out;
                };
                let mut buf = vec![0u8; frame_bytes(FrameKind::PublicKey, 1, N, 32, 32)];
                let mut mask = [0u32; N];
                for chunk in chunks(&message, N / 8) {
                    if let Ok(len) = encryptor.encrypt_public_key_frame(
                        credentials,
                        &outgoing,
                        &chunk,
                        &mut mask,
                        &mut body,
                        &mut buf,
                    ) {
                        out.push(buf[..len].to_vec());
                    }
                }
            }
        }
        out
    }
}

fn boolean_curves(ctx: &Context, kit: &BooleanKit, sizes: &[usize], samples: usize) -> Result<Vec<Curve>, String> {
    let params = TFHE_LIB_GLWE_1024;
    let cores = ctx.stamp.cores;
    let mut curves = Vec::new();
    for threads in [1, cores] {
        let threads_nz = NonZeroUsize::new(threads).unwrap_or(NonZeroUsize::MIN);
        let bridge = BooleanBridge::new(&kit.server_key)
            .and_then(|b| b.with_thread_count(threads_nz))
            .map_err(|e| e.to_string())?;
        let store = KeyStore::decode(&kit.store).map_err(|e| format!("{e:?}"))?;
        let mut intake = KeyedIntake::new(IntakeConfig::default(), store, bridge).map_err(|e| e.to_string())?;
        let xof = |s: u8| Blake2bXof::from_seed([s; 32]);
        let secret = |key, s| {
            GlweEncryptor::<N>::new(&params, key, xof(s))
                .map(Box::new)
                .map_err(|e| format!("{e:?}"))
        };
        let public = PublicKeyEncryptor::<N, 1>::new(&params, &kit.public_key.0, &kit.public_key.1, xof(7))
            .map(Box::new)
            .map_err(|e| format!("{e:?}"))?;
        let copy = |c: &tfhe_sbc_device::frame::mac::DeviceCredentials| {
            tfhe_sbc_device::frame::mac::DeviceCredentials::new(
                c.device_id(),
                c.key_id(),
                tfhe_sbc_device::frame::mac::MacKey::from_bytes(*c.mac_key().as_bytes()),
            )
        };
        let devices = [
            (
                "fleet",
                Device::Secret(secret(&kit.fleet.key, 5)?, copy(&kit.fleet.credentials)),
            ),
            (
                "per-device",
                Device::Secret(secret(&kit.own.key, 6)?, copy(&kit.own.credentials)),
            ),
            ("public key", Device::Public(public, copy(&kit.public_key_credentials))),
        ];
        for (mode, mut device) in devices {
            let mut counter = FrameCounter::new(0);
            let mut curve = Curve::new(&format!("boolean {mode}"), threads);
            for &n in sizes {
                ctx.step(&format!("Fig. 3: boolean {mode}, {n} ciphertexts, {threads} thread(s)"));
                // Once untimed: per-device keys are decompressed into the cache (warm, as in service).
                let warm = device.frames(&mut counter, 1);
                let bits = convert_bits(&mut intake, &warm);
                // 0xA5 = bits 1,0,1,0,0,1,0,1 from the low bit: the conversion decrypts.
                let wrong = bits
                    .iter()
                    .enumerate()
                    .step_by(37)
                    .any(|(i, ct)| kit.client_key.decrypt(ct) != ((0xA5u8 >> (i % 8)) & 1 == 1));
                if bits.len() != N || wrong {
                    return Err(format!(
                        "boolean {mode}: the converted bits do not decrypt to the message"
                    ));
                }
                let samples = if n <= 4 { samples } else { 1 };
                let (s, h) = sample(
                    samples,
                    || device.frames(&mut counter, n),
                    |frames| convert(&mut intake, &frames),
                );
                curve.points.push((n * N, s, h));
            }
            curves.push(curve);
        }
    }
    Ok(curves)
}

fn threads_label(threads: usize) -> String {
    if threads == 1 {
        "1 thread".into()
    } else {
        format!("{threads} threads")
    }
}

/// Receives every frame and converts the completed message into tfhe-rs booleans.
fn convert_bits(
    intake: &mut KeyedIntake<BooleanBridge>,
    frames: &[Vec<u8>],
) -> Vec<tfhe::boolean::ciphertext::Ciphertext> {
    let mut bits = Vec::new();
    for f in frames {
        if let Ok(Received::Complete(message)) = intake.receive(f, Instant::now()) {
            bits.extend(intake.convert(&message).unwrap_or_default());
        }
    }
    bits
}

/// [`convert_bits`]'s count.
fn convert(intake: &mut KeyedIntake<BooleanBridge>, frames: &[Vec<u8>]) -> usize {
    convert_bits(intake, frames).len()
}

/// Runs the Fig. 3 measurements.
pub fn run(ctx: &Context, kit: &BooleanKit, integers: Option<&IntegerKit>) -> Section {
    // GLWE ciphertexts of 1024 bits (extraction, boolean intake) and integer frames of 4096 bits.
    let (sizes, intake_sizes, integer_frames, samples): (Vec<usize>, Vec<usize>, Vec<usize>, usize) = if ctx.quick {
        (vec![1, 2, 4], vec![1, 2], vec![1, 2], 1)
    } else {
        (
            vec![1, 2, 4, 8, 16, 32, 64],
            vec![1, 2, 4, 8, 16],
            vec![1, 2, 4, 8, 16],
            3,
        )
    };
    let mut curves = Vec::new();
    // Extraction alone: n GLWE ciphertexts into n * 1024 TLWE.
    for par in [false, true] {
        let mut curve = Curve::new("extraction only", if par { ctx.stamp.cores } else { 1 });
        for &n in &sizes {
            ctx.step(&format!("Fig. 3: extraction, {n} ciphertexts"));
            let cts: Vec<_> = (0..n)
                .filter_map(|s| {
                    let data: Vec<u32> = (0..2 * N as u32)
                        .map(|i| i.wrapping_mul(0x9E37_79B9).wrapping_add(s as u32))
                        .collect();
                    GlweCiphertext::from_container(data, PolynomialSize(N)).ok()
                })
                .collect();
            let (s, h) = sample(
                samples.max(3),
                || (),
                |()| {
                    let mut outs = vec![vec![0u32; N * (N + 1)]; cts.len()];
                    if par {
                        extract_all_lwe_samples_par(&cts, &mut outs);
                    } else {
                        for (ct, out) in cts.iter().zip(outs.iter_mut()) {
                            extract_all_lwe_samples(ct, out);
                        }
                    }
                    outs
                },
            );
            curve.points.push((n * N, s, h));
        }
        curves.push(curve);
    }
    let mut notes = String::new();
    match boolean_curves(ctx, kit, &intake_sizes, samples) {
        Ok(c) => curves.extend(c),
        Err(e) => notes.push_str(&format!("Boolean intake not measured: {e}.\n\n")),
    }
    if let Some(kit) = integers {
        for par in [false, true] {
            for mode in crate::sections::integers::MODES {
                let mut curve = Curve::new(&format!("integer {mode}"), if par { ctx.stamp.cores } else { 1 });
                for &frames in &integer_frames {
                    ctx.step(&format!("Fig. 3: integer {mode}, {frames} frames"));
                    let (s, h) = sample(samples, || kit.frames(mode, frames), |f| kit.intake(mode, &f, par));
                    curve.points.push((frames * 4 * N, s, h));
                }
                curves.push(curve);
            }
        }
    } else {
        notes.push_str("Integer intake not measured: no integer keys.\n\n");
    }
    render(ctx, &curves, notes)
}

fn render(ctx: &Context, curves: &[Curve], notes: String) -> Section {
    let mut md = String::from(
        "Plaintext size in bits: 1024 per boolean GLWE ciphertext (1 to 64 of them for extraction, 1 to 16 \
         through the whole intake in a full run), 4096 per integer frame (512 `u8` readings). Time: median wall time of the whole conversion (boolean: MAC, reassembly, \
         extraction and key switch into tfhe-rs `boolean` ciphertexts; per-device keys warm in the cache; \
         integer: MAC, mask expansion, per-device GLWE switch, extraction into `FheUint8`). Heap: the peak \
         heap of the conversion including its output (4 MiB of TLWE per 1024-bit ciphertext before the key \
         switch). The paper (Fig. 3): 1.0 ms single-threaded per 1024-bit TRLWE on its server, memory growing \
         linearly (4 MiB per TRLWE). Each conversion allocates its output afresh: once that exceeds what the \
         allocator keeps from earlier rounds (here from about 64 MiB), the kernel's first-touch page faults \
         show as a step in the time curves.\n\n",
    );
    md.push_str(&notes);
    let rows: Vec<Vec<String>> = curves
        .iter()
        .flat_map(|c| {
            c.points
                .iter()
                .map(move |p| vec![c.name.clone(), p.0.to_string(), human(p.1), kib(p.2)])
        })
        .collect();
    md.push_str(&table(&["conversion", "plaintext bits", "time", "peak heap"], &rows));
    let mut section = Section::new("2. Server-side conversion (the paper's Fig. 3)", md);
    let series = |f: &dyn Fn(&(usize, f64, usize)) -> f64, integer: bool| -> Vec<Series> {
        curves
            .iter()
            .filter(|c| c.name.starts_with("extraction") || c.name.starts_with("integer") == integer)
            .map(|c| Series {
                name: c.name.clone(),
                points: c.points.iter().map(|p| (p.0 as f64, f(p))).collect(),
                dashed: c.all_cores,
            })
            .collect()
    };
    for (integer, kind, suffix) in [(false, "booleans", ""), (true, "integers", "-integer")] {
        let time = LineChart {
            title: &format!("Fig. 3(a): conversion time vs plaintext size, {kind}"),
            x: ("plaintext size", Unit::Bits),
            y: ("conversion time", Unit::Seconds),
            series: series(&|p| p.1, integer),
        };
        let caption = format!(
            "each curve rises roughly in proportion to the plaintext: twice the bits, about twice the time. \
             Where a dashed curve ({cores} threads) lies below its solid one-thread curve, the conversion used \
             the other cores (at best {cores} times faster; on a loaded machine it may not be faster at all). \
             The gap between \"extraction only\" and the full {kind} conversions is the rest of the intake: \
             MAC, reassembly, key switch, conversion into tfhe-rs values. The paper's server: 1.0 ms per \
             1024-bit TRLWE, one thread.",
            cores = ctx.stamp.cores,
        );
        section.plot(ctx, &format!("fig3{suffix}-time.svg"), caption, |path, stamp| {
            time.write(path, stamp)
        });
        let memory = LineChart {
            title: &format!("Fig. 3(b): peak heap vs plaintext size, {kind}"),
            x: ("plaintext size", Unit::Bits),
            y: ("peak heap", Unit::Bytes),
            series: series(&|p| p.2 as f64, integer),
        };
        let caption = "the peak heap grows linearly with the plaintext, as in the paper's Fig. 3(b) (4 MiB per \
                       TRLWE): extraction alone holds 4 MiB of TLWE per 1024-bit ciphertext; more threads hold \
                       more ciphertexts in flight at once, so the dashed curves may lie above the solid ones."
            .to_string();
        section.plot(ctx, &format!("fig3{suffix}-memory.svg"), caption, |path, stamp| {
            memory.write(path, stamp)
        });
    }
    section
}
