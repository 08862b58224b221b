//! The paper's Table 1: encrypting 256 to 8192 bits on the device, against tfhe-rs in the same run: time,
//! ciphertext bytes, peak heap; the paper's ratios beside ours. Energy is not measured here (no power meter):
//! instructions per encryption stand in for it (scripts/aarch64-count.sh, the Cortex-M4 model).

use crate::axis::Unit;
use crate::kit::BooleanKit;
use crate::peak;
use crate::report::{Context, Section, table};
use crate::timing::{human, kib, median_seconds};
use rand_core::SeedableRng;
use std::hint::black_box;
use tfhe::core_crypto::prelude as tfhe_core;
use tfhe_sbc_core::parameters::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::frame::{FrameKind, frame_bytes};

const N: usize = 1024;
/// The plaintext sizes of the paper's Table 1, in bits.
pub const SIZES: [usize; 4] = [256, 1024, 4096, 8192];

/// One row of the paper's Table 1: bits, TLWE ms, TRLWE ms, TFHE-SBC ms, TLWE KiB, TRLWE KiB, TLWE RAM
/// KiB, TRLWE RAM KiB, TFHE-SBC RAM KiB.
type PaperRow = (usize, f64, f64, f64, f64, f64, f64, f64, f64);

/// The paper's Table 1 (Raspberry Pi Zero 2 W, TFHEpp peers).
const PAPER: [PaperRow; 4] = [
    (256, 1922.6, 46.1, 3.1, 1024.0, 8.0, 1217.5, 332.2, 336.2),
    (1024, 7705.6, 46.1, 3.1, 4096.0, 8.0, 4297.7, 332.2, 336.2),
    (4096, 30781.2, 183.7, 12.9, 16384.0, 32.0, 16599.04, 356.2, 360.2),
    (8192, 61587.5, 370.8, 25.6, 32768.0, 64.0, 33003.5, 388.2, 392.2),
];

/// One method's figures for one plaintext size.
#[derive(Clone, Copy, Default)]
struct Cell {
    seconds: f64,
    heap: usize,
}

fn glwes(bits: usize) -> usize {
    bits.div_ceil(N)
}

/// Times `f` and measures its peak heap (one extra call under the counting allocator).
fn cell<R>(ctx: &Context, slow: bool, mut f: impl FnMut() -> R) -> Cell {
    let budget = if slow { ctx.budget.at_most(5) } else { ctx.budget };
    let seconds = median_seconds(budget, &mut f);
    let (_, heap) = peak::measure(|| black_box(f()));
    Cell { seconds, heap }
}

/// Runs the Table 1 measurements.
pub fn run(ctx: &Context, kit: &BooleanKit) -> Section {
    let params = TFHE_LIB_GLWE_1024;
    let key = crate::common::secret_key();
    let message = [0xA5u8; N / 8];
    // tfhe-rs: the same key, the paper's Gaussian noise, its default CSPRNG.
    let mut seeder = tfhe_core::new_seeder();
    let seeder = seeder.as_mut();
    let tfhe_key = tfhe_core::GlweSecretKey::from_container(
        key.as_bytes().iter().map(|&b| u32::from(b)).collect::<Vec<u32>>(),
        tfhe_core::PolynomialSize(N),
    );
    let lwe_key = tfhe_key.as_lwe_secret_key();
    let noise = tfhe_core::DynamicDistribution::<u32>::new_gaussian_from_std_dev(tfhe_core::StandardDev(
        params.noise_std_dev(),
    ));
    let native = tfhe_core::CiphertextModulus::new_native();
    let plaintexts = tfhe_core::PlaintextList::new(1u32 << 29, tfhe_core::PlaintextCount(N));
    let int_params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
    let int_key = tfhe_sbc_core::entities::GlweSecretKey::generate_binary(
        vec![0u8; 2048],
        int_params.glwe().polynomial_size(),
        &mut Blake2bXof::from_seed([9; 32]),
    );
    let readings = [0x5Au8; 512];

    let mut rows = Vec::new();
    for &bits in &SIZES {
        ctx.step(&format!("Table 1: {bits} bits"));
        let g = glwes(bits);
        let tlwe = cell(ctx, true, || {
            let mut generator =
                tfhe_core::EncryptionRandomGenerator::<tfhe_core::DefaultRandomGenerator>::new(seeder.seed(), seeder);
            let mut list = tfhe_core::LweCiphertextList::new(
                0u32,
                tfhe_core::LweSize(N + 1),
                tfhe_core::LweCiphertextCount(bits),
                native,
            );
            // One TLWE per bit: tfhe-rs's list encryption draws each ciphertext's own mask and noise.
            let bit_plaintexts = tfhe_core::PlaintextList::new(1u32 << 29, tfhe_core::PlaintextCount(bits));
            tfhe_core::encrypt_lwe_ciphertext_list(&lwe_key, &mut list, &bit_plaintexts, noise, &mut generator);
            list
        });
        let glwe = cell(ctx, false, || {
            let mut generator =
                tfhe_core::EncryptionRandomGenerator::<tfhe_core::DefaultRandomGenerator>::new(seeder.seed(), seeder);
            (0..g)
                .map(|_| {
                    let mut ct = tfhe_core::GlweCiphertext::new(
                        0u32,
                        tfhe_core::GlweSize(2),
                        tfhe_core::PolynomialSize(N),
                        native,
                    );
                    tfhe_core::encrypt_glwe_ciphertext(&tfhe_key, &mut ct, &plaintexts, noise, &mut generator);
                    ct
                })
                .collect::<Vec<_>>()
        });
        let secret = cell(ctx, false, || {
            let mut encryptor = crate::common::encryptor(tfhe_sbc_device::noise::NoiseSampling::ConstantTime, 2);
            let mut out = vec![([0u8; 32], vec![0u32; N]); g];
            for (seed, body) in &mut out {
                *seed = encryptor
                    .encrypt_seeded_glwe_ciphertext(&message, body)
                    .unwrap_or([0; 32]);
            }
            out
        });
        let public = cell(ctx, false, || {
            let rng = Blake2bXof::from_seed([3; 32]);
            // Boxed, as the secret-key encryptor is: its state counts as heap in both.
            let Ok(mut encryptor) =
                PublicKeyEncryptor::<N, 1>::new(&params, &kit.public_key.0, &kit.public_key.1, rng).map(Box::new)
            else {
                return Vec::new();
            };
            let encryptor = &mut *encryptor;
            (0..g)
                .map(|_| {
                    let (mut mask, mut body) = (vec![0u32; N], vec![0u32; N]);
                    let ok = encryptor
                        .encrypt_glwe_ciphertext(&message, &mut mask, &mut body)
                        .is_ok();
                    (mask, body, ok)
                })
                .collect::<Vec<_>>()
        });
        let integer = int_key.as_ref().ok().map(|int_key| {
            cell(ctx, false, || {
                let mut encryptor = Box::new(IntegerEncryptor::<2048>::EMPTY);
                let ok = encryptor.set_key(&int_params, int_key).is_ok();
                encryptor.seed_from_bytes(&mut [4; 32]);
                let mut body = vec![0u64; 2048 * bits.div_ceil(4096)];
                for chunk in body.chunks_mut(2048) {
                    black_box(encryptor.encrypt_u8(&readings[..(bits / 8).min(512)], chunk).is_ok());
                }
                (body, ok)
            })
        });
        // Bytes on the wire.
        let tlwe_bytes = bits * (N + 1) * 4;
        let full_bytes = g * 2 * N * 4;
        let seeded_bytes = g * frame_bytes(FrameKind::Seeded, 1, N, 32, 32);
        let compact_bits = params.compact_body_bits();
        let compact_bytes = g * frame_bytes(FrameKind::Seeded, 1, N, 32, compact_bits);
        let int_frame = bits.div_ceil(4096) * IntegerEncryptor::<2048>::SEEDED_FRAME_BYTES;
        rows.push((
            bits,
            tlwe,
            glwe,
            secret,
            public,
            integer,
            [tlwe_bytes, full_bytes, seeded_bytes, compact_bytes, int_frame],
        ));
    }
    render(ctx, &rows, compact_bits_text(params.compact_body_bits()))
}

fn compact_bits_text(bits: u32) -> String {
    format!("compact body: the top {bits} of each body coefficient's 32 bits")
}

type Row = (usize, Cell, Cell, Cell, Cell, Option<Cell>, [usize; 5]);

fn render(ctx: &Context, rows: &[Row], compact_note: String) -> Section {
    let mut md = String::new();
    md.push_str(
        "Encryption of the plaintext on this machine (`TFHE_LIB_GLWE_1024`: q = 2^32, N = 1024, k = 1). Time is the \
         median wall time; heap is the peak heap of the whole encryption (encryptor or random generator set up, \
         output buffers, encryption; the secret key made beforehand; our encryptors boxed), measured with a \
         counting allocator: heap only, so the binary and the stack are left out, unlike the paper's process RAM \
         (which is why the paper's RAM ratios are smaller). \
         tfhe-rs 1.8.2 stands in for the paper's TFHEpp: `encrypt_lwe_ciphertext` once per bit (TLWE, the \
         GLWE key read as an LWE key of n = 1024) and `encrypt_glwe_ciphertext` (TRLWE), both with Gaussian \
         noise and tfhe-rs's default CSPRNG. Ours: `GlweEncryptor` seeded (secret key), `PublicKeyEncryptor` \
         (public key, full mask), `IntegerEncryptor<2048>` (512 `u8` readings per ciphertext, 4096 bits).\n\n",
    );
    let header = [
        "bits",
        "TLWE per bit (tfhe-rs)",
        "GLWE (tfhe-rs)",
        "ours, secret key",
        "ours, public key",
        "ours, integer",
        "TLWE / ours",
        "GLWE / ours",
    ];
    // One table per quantity: the five encryptions' cells and the ratios of the per-bit and GLWE peers to
    // ours (secret key).
    let cells = |cell: fn(&Cell) -> String, value: fn(&Cell) -> f64, ratio: [usize; 2]| -> Vec<Vec<String>> {
        rows.iter()
            .map(|(bits, tlwe, glwe, secret, public, integer, _)| {
                vec![
                    bits.to_string(),
                    cell(tlwe),
                    cell(glwe),
                    cell(secret),
                    cell(public),
                    integer.map_or("-".into(), |c| cell(&c)),
                    format!("{:.*}x", ratio[0], value(tlwe) / value(secret)),
                    format!("{:.*}x", ratio[1], value(glwe) / value(secret)),
                ]
            })
            .collect()
    };
    let time_rows = cells(|c| human(c.seconds), |c| c.seconds, [0, 1]);
    md.push_str("**Encryption time** (this machine)\n\n");
    md.push_str(&table(&header, &time_rows));
    let heap_rows = cells(|c| kib(c.heap), |c| c.heap.max(1) as f64, [1, 2]);
    md.push_str("\n**Peak heap of the encryption** (counting allocator)\n\n");
    md.push_str(&table(&header, &heap_rows));
    let byte_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|(bits, .., b)| {
            vec![
                bits.to_string(),
                kib(b[0]),
                kib(b[1]),
                kib(b[2]),
                kib(b[3]),
                kib(b[4]),
                format!("{:.0}x", b[0] as f64 / b[1] as f64),
                format!("{:.0}x", b[0] as f64 / b[3] as f64),
            ]
        })
        .collect();
    md.push_str(&format!(
        "\n**Ciphertext bytes** (v2 frames include the header and the MAC; {compact_note})\n\n"
    ));
    md.push_str(&table(
        &[
            "bits",
            "TLWE (n = 1024)",
            "full GLWE",
            "seeded frame",
            "compact-body frame",
            "integer frame",
            "TLWE / GLWE",
            "TLWE / compact",
        ],
        &byte_rows,
    ));
    let paper_rows: Vec<Vec<String>> = PAPER
        .iter()
        .map(|p| {
            vec![
                p.0.to_string(),
                format!("{} ms", p.1),
                format!("{} ms", p.2),
                format!("{} ms", p.3),
                format!("{:.0}x / {:.1}x", p.1 / p.3, p.2 / p.3),
                format!("{} / {} KiB", p.4, p.5),
                format!("{:.0}x", p.4 / p.5),
                format!("{} / {} / {} KiB", p.6, p.7, p.8),
            ]
        })
        .collect();
    md.push_str(
        "\n**The paper's Table 1** (printed values: Raspberry Pi Zero 2 W, TFHEpp peers; the paper's claims: \"15 to \
         2486 times faster\", \"512 times\" less communication, \"up to 12.8 times\" less memory)\n\n",
    );
    md.push_str(&table(
        &[
            "bits",
            "TLWE",
            "TRLWE",
            "TFHE-SBC",
            "TLWE / ours, TRLWE / ours",
            "ciphertext TLWE / TRLWE",
            "ratio",
            "RAM TLWE / TRLWE / TFHE-SBC",
        ],
        &paper_rows,
    ));
    let range = |f: &dyn Fn(&Row) -> f64| {
        let v: Vec<f64> = rows.iter().map(f).collect();
        (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(0.0, f64::max),
        )
    };
    let (t0, t1) = range(&|r| r.1.seconds / r.3.seconds);
    let (g0, g1) = range(&|r| r.2.seconds / r.3.seconds);
    let (h0, h1) = range(&|r| r.1.heap as f64 / r.3.heap.max(1) as f64);
    md.push_str(&format!(
        "\n**This run's ratios** (the paper's in parentheses): ours (secret key) is {t0:.0} to {t1:.0} times faster \
         than per-bit TLWE and {g0:.1} to {g1:.1} times faster than tfhe-rs's GLWE encryption (15 to 2486; \
         about 15 against TRLWE); a full GLWE is 512 times smaller than the TLWE of the same bits from 1024 bits \
         on, and a compact-body frame about 2800 times (512); the heap is {h0:.0} to {h1:.0} times smaller \
         than per-bit TLWE's (process RAM 3.6 to 84.1 times).\n"
    ));
    md.push_str(
        "\n**Energy: not measured.** The paper measured it with a USB power meter on the Pi; this run has none. \
         Instructions per encryption stand in for it (energy scales with them on one core): see the \
         microcontroller section below (Cortex-M4 model under qemu-system-arm) and the aarch64 count there.\n",
    );
    let mut chart = crate::plot::LineChart {
        title: "Table 1: encryption time vs plaintext size",
        x: ("plaintext size", Unit::Bits),
        y: ("encryption time", Unit::Seconds),
        series: Vec::new(),
    };
    let names = [
        "TLWE per bit (tfhe-rs)",
        "GLWE (tfhe-rs)",
        "ours, secret key",
        "ours, public key",
        "ours, integer",
    ];
    for (i, name) in names.iter().enumerate() {
        let points = rows
            .iter()
            .filter_map(|r| {
                let c = match i {
                    0 => Some(r.1),
                    1 => Some(r.2),
                    2 => Some(r.3),
                    3 => Some(r.4),
                    _ => r.5,
                }?;
                Some((r.0 as f64, c.seconds))
            })
            .collect();
        chart.series.push(crate::plot::Series {
            name: (*name).into(),
            points,
            dashed: false,
        });
    }
    let paper = [
        ("paper: TLWE (TFHEpp, Pi Zero 2 W)", 1usize),
        ("paper: TRLWE (TFHEpp)", 2),
        ("paper: TFHE-SBC", 3),
    ];
    for (name, col) in paper {
        // The paper prints milliseconds.
        let points = PAPER
            .iter()
            .map(|p| (p.0 as f64, [p.1, p.2, p.3][col - 1] * 1e-3))
            .collect();
        chart.series.push(crate::plot::Series {
            name: name.into(),
            points,
            dashed: true,
        });
    }
    let (s0, s1) = range(&|r| r.3.seconds);
    let (p0, p1) = range(&|r| r.1.seconds);
    let caption = format!(
        "the per-bit TLWE line (tfhe-rs) climbs with the plaintext, from {} to {} here, while ours (secret key) \
         stays between {} and {}: one GLWE ciphertext holds 1024 bits, so ours grows only by whole ciphertexts. \
         The vertical gap between the two is the table's \"TLWE / ours\" ratio (the axis is logarithmic). The \
         dashed lines are the paper's Pi Zero 2 W figures, slower throughout (another machine), with the same \
         ordering.",
        Unit::Seconds.text(p0),
        Unit::Seconds.text(p1),
        Unit::Seconds.text(s0),
        Unit::Seconds.text(s1),
    );
    let mut section = Section::new("1. Client-side encryption (the paper's Table 1)", md);
    section.plot(ctx, "table1-time.svg", caption, |path, stamp| chart.write(path, stamp));
    section
}
