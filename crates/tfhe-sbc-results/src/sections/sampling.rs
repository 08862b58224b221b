//! The paper's Tables 6 and 7: the CSPRNG and the noise samplers, and the polynomial product (key spectrum
//! reused vs computed on the fly; FFT vs NTT vs naive), at N = 1024.

use crate::axis::Unit;
use crate::peak;
use crate::plot::BarChart;
use crate::report::{Context, Section, table};
use crate::timing::{human, kib, median_seconds};
use blake2::Digest;
use negacyclic_fft::Plan;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::hint::black_box;
use std::io::Read;
use tfhe_sbc_core::gaussian::{NormalSampler, Polar, Ziggurat};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_core::tuniform::TUniform;
use tfhe_sbc_device::csprng::xof::Blake2bXof;

const N: usize = 1024;
const STREAM: usize = 64 * 1024;

/// The paper's Table 6 (ms per encryption's sampling, RAM KiB): (sampling, CSPRNG, ms, KiB).
const PAPER_6: [(&str, &str, f64, f64); 6] = [
    ("uniform", "/dev/urandom", 7.71, 192.1),
    ("uniform", "BLAKE2", 0.92, 196.2),
    ("Gaussian, polar", "/dev/urandom", 38.26, 192.1),
    ("Gaussian, Ziggurat", "/dev/urandom", 15.36, 192.2),
    ("Gaussian, polar", "BLAKE2", 4.98, 196.2),
    ("Gaussian, Ziggurat", "BLAKE2", 1.98, 196.2),
];

/// The blake2 crate as a stream: BLAKE2b-512 of (key, block counter), 64 bytes per call.
struct Blake2Counter {
    key: [u8; 32],
    counter: u64,
}

impl Blake2Counter {
    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(64) {
            let mut h = blake2::Blake2b512::new();
            h.update(self.key);
            h.update(self.counter.to_le_bytes());
            self.counter += 1;
            let block = h.finalize();
            chunk.copy_from_slice(&block[..chunk.len()]);
        }
    }
}

struct Row {
    group: &'static str,
    name: String,
    seconds: f64,
    heap: usize,
}

fn measure<R>(ctx: &Context, group: &'static str, name: &str, mut f: impl FnMut() -> R) -> Row {
    let seconds = median_seconds(ctx.budget, &mut f);
    let (_, heap) = peak::measure(|| black_box(f()));
    Row {
        group,
        name: name.into(),
        seconds,
        heap,
    }
}

/// Runs the Table 6 and 7 measurements.
pub fn run(ctx: &Context) -> Section {
    ctx.step("Tables 6 and 7: CSPRNGs, samplers, products");
    let mut rows = Vec::new();
    let mut buffer = vec![0u8; STREAM];
    let mut xof = Blake2bXof::from_seed([4; 32]);
    rows.push(measure(ctx, "CSPRNG, 64 KiB", "BLAKE2b XOF (ours)", || {
        xof.fill_bytes(&mut buffer)
    }));
    let mut chacha = ChaCha20Rng::seed_from_u64(4);
    rows.push(measure(ctx, "CSPRNG, 64 KiB", "ChaCha20 (rand_chacha)", || {
        chacha.fill_bytes(&mut buffer)
    }));
    let mut b2 = Blake2Counter {
        key: [4; 32],
        counter: 0,
    };
    rows.push(measure(
        ctx,
        "CSPRNG, 64 KiB",
        "BLAKE2b-512 per block (blake2 crate)",
        || b2.fill(&mut buffer),
    ));
    if let Ok(mut urandom) = std::fs::File::open("/dev/urandom") {
        rows.push(measure(
            ctx,
            "CSPRNG, 64 KiB",
            "/dev/urandom, 4 KiB reads (the paper's baseline)",
            || {
                for chunk in buffer.chunks_mut(4096) {
                    if urandom.read_exact(chunk).is_err() {
                        break;
                    }
                }
            },
        ));
    }

    let params = TFHE_LIB_GLWE_1024;
    let sigma_q = params.noise_std_dev_scaled();
    let mut out = vec![0u32; N];
    if let Ok(tuniform) = TUniform::new(8) {
        rows.push(measure(
            ctx,
            "noise, 1024 samples",
            "TUniform(8), XOF (ours, constant time)",
            || tuniform.add_noise_torus(&mut xof, &mut out),
        ));
        rows.push(measure(ctx, "noise, 1024 samples", "TUniform(8), ChaCha20", || {
            tuniform.add_noise_torus(&mut chacha, &mut out)
        }));
    }
    rows.push(measure(ctx, "noise, 1024 samples", "Ziggurat, XOF", || {
        Ziggurat.add_noise_torus(&mut xof, sigma_q, &mut out)
    }));
    rows.push(measure(ctx, "noise, 1024 samples", "Ziggurat, ChaCha20", || {
        Ziggurat.add_noise_torus(&mut chacha, sigma_q, &mut out)
    }));
    let mut polar = Polar::new();
    rows.push(measure(ctx, "noise, 1024 samples", "polar, XOF", || {
        polar.add_noise_torus(&mut xof, sigma_q, &mut out)
    }));
    rows.push(measure(ctx, "noise, 1024 samples", "polar, ChaCha20", || {
        polar.add_noise_torus(&mut chacha, sigma_q, &mut out)
    }));

    // Table 7: one product a * s of a uniform mask and the binary key.
    let key: Vec<u8> = (0..N).map(|i| (i % 3 == 0) as u8).collect();
    let mask: Vec<u32> = (0..N).map(|_| xof.next_u32()).collect();
    if let Ok(plan) = Plan::new(N) {
        let mut key_spectrum = vec![0.0; N];
        plan.forward(&key, &mut key_spectrum);
        let mut scratch = vec![0.0; N];
        rows.push(measure(ctx, "product a * s", "FFT, key spectrum reused (ours)", || {
            plan.forward(black_box(&mask), &mut scratch);
            plan.mul_assign(&mut scratch, &key_spectrum);
            plan.inverse_wrapping(&mut scratch, &mut out);
        }));
        let mut fresh = vec![0.0; N];
        rows.push(measure(ctx, "product a * s", "FFT, key spectrum on the fly", || {
            plan.forward(black_box(&key), &mut fresh);
            plan.forward(black_box(&mask), &mut scratch);
            plan.mul_assign(&mut scratch, &fresh);
            plan.inverse_wrapping(&mut scratch, &mut out);
        }));
    }
    let ntt = negacyclic_ntt::NttPlan32::new::<N>();
    let mut ntt_key = vec![[0u32; 2]; N];
    ntt.forward(&key, &mut ntt_key);
    let mut spectrum = vec![[0u32; 2]; N];
    rows.push(measure(
        ctx,
        "product a * s",
        "NTT, key spectrum reused (ours, Cortex-M)",
        || {
            ntt.forward(black_box(&mask), &mut spectrum);
            ntt.mul_assign(&mut spectrum, &ntt_key);
            ntt.inverse_wrapping(&mut spectrum, &mut out);
        },
    ));
    let mut fresh = vec![[0u32; 2]; N];
    rows.push(measure(ctx, "product a * s", "NTT, key spectrum on the fly", || {
        ntt.forward(black_box(&key), &mut fresh);
        ntt.forward(black_box(&mask), &mut spectrum);
        ntt.mul_assign(&mut spectrum, &fresh);
        ntt.inverse_wrapping(&mut spectrum, &mut out);
    }));
    let key32: Vec<u32> = key.iter().map(|&b| u32::from(b)).collect();
    rows.push(measure(ctx, "product a * s", "naive schoolbook", || {
        negacyclic_fft::naive::negacyclic_product_wrapping_into(black_box(&mask), &key32, &mut out)
    }));
    render(ctx, &rows)
}

fn render(ctx: &Context, rows: &[Row]) -> Section {
    let mut md = String::from(
        "Time is the median per call on this machine; heap is the peak heap of one call (the buffers are made \
         beforehand: every one of these runs in caller memory). State sizes: our XOF ",
    );
    md.push_str(&format!(
        "{} B, ChaCha20Rng {} B.\n\n",
        size_of::<Blake2bXof>(),
        size_of::<ChaCha20Rng>()
    ));
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let extra = if r.group.starts_with("CSPRNG") {
                format!("{:.0} MiB/s", STREAM as f64 / r.seconds / 1048576.0)
            } else {
                String::new()
            };
            vec![r.group.into(), r.name.clone(), human(r.seconds), extra, kib(r.heap)]
        })
        .collect();
    md.push_str(&table(&["what", "how", "time", "throughput", "heap"], &table_rows));
    md.push_str(
        "\n**The paper's Table 6** (printed values, Pi Zero 2 W, sampling for one encryption; RAM is the process's)\n\n",
    );
    let paper: Vec<Vec<String>> = PAPER_6
        .iter()
        .map(|p| vec![p.0.into(), p.1.into(), format!("{} ms", p.2), format!("{} KiB", p.3)])
        .collect();
    md.push_str(&table(&["sampling", "CSPRNG", "time", "RAM"], &paper));
    md.push_str(
        "\n**The paper's Table 7** (printed): PolyMul on the fly 0.103 ms FFT + 0.0086 ms product + 0.0611 ms \
         IFFT; reuse 0.065 ms FFT + the same (28 % less); RAM 314.6 KiB both.\n",
    );
    let mut section = Section::new("3. CSPRNG, noise and product (the paper's Tables 6 and 7)", md);
    for (group, file, title, caption) in [
        (
            "CSPRNG, 64 KiB",
            "table6-csprng.svg",
            "Table 6: CSPRNG, time per 64 KiB",
            "our BLAKE2b XOF (the device's CSPRNG) against ChaCha20 and the other generators, each filling the \
             same 64 KiB: the shorter the bar, the faster; the paper's baseline is /dev/urandom.",
        ),
        (
            "noise, 1024 samples",
            "table6-noise.svg",
            "Table 6: noise sampler, time per 1024 samples",
            "our constant-time TUniform(8) sampler against the Gaussian samplers (Ziggurat, polar) the paper \
             and tfhe-rs use, each with our XOF and with ChaCha20: TUniform needs a few random bits per sample \
             and no floating point.",
        ),
        (
            "product a * s",
            "table7-product.svg",
            "Table 7: negacyclic product, N = 1024",
            "reusing the key's spectrum (ours) against transforming it on every call, for the FFT (servers, \
             the Pi) and the NTT (Cortex-M, no floating point); the naive schoolbook product is the scale: \
             every transform is far below it (the table gives the times).",
        ),
    ] {
        let chart = BarChart {
            title,
            value: ("time per call", Unit::Seconds),
            bars: rows
                .iter()
                .filter(|r| r.group == group)
                .map(|r| {
                    let family = if r.name.contains("ours") {
                        "ours"
                    } else {
                        "peers and variants"
                    };
                    (family.to_string(), r.name.clone(), r.seconds)
                })
                .collect(),
        };
        section.bars(ctx, file, caption.to_string(), &chart);
    }
    section
}
