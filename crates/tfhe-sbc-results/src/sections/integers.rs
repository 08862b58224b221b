//! Integers: device encryption and server intake per `FheUint8` in each key mode (fleet, per-device,
//! public key), against tfhe-rs's `FheUint8::encrypt` and `CompactCiphertextList`, and bytes per value.

use crate::axis::Unit;
use crate::peak;
use crate::plot::BarChart;
use crate::report::{Context, Section, table};
use crate::timing::{human, median_seconds};
use rand_core::SeedableRng;
use std::hint::black_box;
use tfhe::core_crypto::prelude::{CiphertextModulus, GlweCiphertext as TfheGlwe, GlweCiphertextOwned, GlweSize};
use tfhe::prelude::*;
use tfhe::safe_serialization::safe_serialized_size;
use tfhe::shortint::parameters::{
    PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
};
use tfhe::{ClientKey, CompactCiphertextList, CompactPublicKey, ConfigBuilder, FheUint8, FheUint8Id, Seed};
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig};
use tfhe_sbc_adapter::interop::glwe_ksk_spectra::GlweKskSpectra;
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
/// `u8` readings per frame.
pub const VALUES: usize = N / 4;
/// The key modes, as named on the page.
pub const MODES: [&str; 3] = ["fleet", "per-device", "public key"];

fn credentials(mode: &str) -> DeviceCredentials {
    let id = match mode {
        "fleet" => 0x10,
        "per-device" => 0x11,
        _ => 0x12,
    };
    DeviceCredentials::new(id, 1, MacKey::from_bytes([id as u8; 32]))
}

/// tfhe-rs's high-level keys (with its dedicated compact public-key parameters) and our three devices' keys.
pub struct IntegerKit {
    client_key: ClientKey,
    fleet_key: GlweSecretKeyOwned,
    device_key: GlweSecretKeyOwned,
    spectra: GlweKskSpectra<u64>,
    public_key_file: Vec<u8>,
    readings: Vec<u8>,
}

impl IntegerKit {
    /// The client key (no server key: extraction needs none), a per-device key-switching key, a public key.
    pub fn new() -> Result<Self, String> {
        let config = ConfigBuilder::default()
            .use_dedicated_compact_public_key_parameters((
                PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
                PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
            ))
            .build();
        let client_key = ClientKey::generate_with_seed(config, Seed(7));
        let e = |e: tfhe_sbc_adapter::interop::InteropError| e.to_string();
        let fleet_key = glwe_key_from_client_key(&client_key).map_err(e)?;
        let mut rng = Blake2bXof::from_seed([7; 32]);
        let device_key = GlweSecretKey::generate_binary(
            vec![0u8; N],
            MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe().polynomial_size(),
            &mut rng,
        )
        .map_err(|e| format!("{e:?}"))?;
        let spectra = IntegerDeviceKsk::generate(&device_key, &client_key, &mut rng)
            .map_err(e)?
            .spectra();
        let public_key_file = integer_public_key_from_client_key(&client_key, 1, &mut rng).map_err(e)?;
        let readings = (0..VALUES as u32).map(|i| (i * 151 + 17) as u8).collect();
        let kit = Self {
            client_key,
            fleet_key,
            device_key,
            spectra,
            public_key_file,
            readings,
        };
        // Every mode decrypts before anything is timed.
        for mode in MODES {
            let frames = kit.frames(mode, 1);
            let values = kit.convert(mode, &frames, false);
            if values.len() != VALUES {
                return Err(format!("{mode}: {} values out of a frame of {VALUES}", values.len()));
            }
            for (i, ct) in values.iter().enumerate().step_by(97) {
                let d: u8 = ct.decrypt(&kit.client_key);
                if d != kit.readings[i] {
                    return Err(format!("{mode}: reading {i} decrypted to {d}, not {}", kit.readings[i]));
                }
            }
        }
        Ok(kit)
    }

    fn encryptor(&self, mode: &str, seed: u8) -> Result<Box<dyn FrameEncryptor>, String> {
        let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128;
        let e = |e: tfhe_sbc_device::Error| format!("{e:?}");
        if mode == "public key" {
            let (header, body) = public_key_body(&self.public_key_file, 1).map_err(e)?;
            let mut enc = Box::new(IntegerPublicKeyEncryptor::<N>::EMPTY);
            enc.set_integer_public_key_le_bytes(&params, &header.seed, body)
                .map_err(e)?;
            enc.seed_from_bytes(&mut [seed; 32]);
            Ok(enc)
        } else {
            let key = if mode == "fleet" {
                &self.fleet_key
            } else {
                &self.device_key
            };
            let mut enc = Box::new(IntegerEncryptor::<N>::EMPTY);
            enc.set_key(&params, key).map_err(e)?;
            enc.seed_from_bytes(&mut [seed; 32]);
            Ok(enc)
        }
    }

    /// `n` frames of 512 readings each (one message) from the `mode` device.
    pub fn frames(&self, mode: &str, n: usize) -> Vec<Vec<u8>> {
        let Ok(mut enc) = self.encryptor(mode, 3) else {
            return Vec::new();
        };
        let message: Vec<u8> = self.readings.iter().copied().cycle().take(n * VALUES).collect();
        let Ok(outgoing) = enc.begin_message(&mut FrameCounter::new(0), message.len()) else {
            return Vec::new();
        };
        let mut buf = vec![0u8; enc.frame_buffer_len()];
        let mut frames = Vec::new();
        for chunk in chunks(&message, enc.chunk_bytes()) {
            if let Ok(len) = enc.encrypt_frame_into(&credentials(mode), &outgoing, &chunk, &mut buf) {
                frames.push(buf[..len].to_vec());
            }
        }
        frames
    }

    fn convert(&self, mode: &str, frames: &[Vec<u8>], par: bool) -> Vec<FheUint8> {
        let mut registry = DeviceRegistry::new();
        let registered = if mode == "public key" {
            registry.register_public_key(credentials(mode))
        } else {
            registry.register(credentials(mode))
        };
        if registered.is_err() {
            return Vec::new();
        }
        let mut intake = Intake::new(IntakeConfig::default(), registry);
        let extractor = IntegerExtractor::new();
        let mut out = Vec::new();
        for frame in frames {
            let Ok(opened) = intake.receive_integer(frame) else {
                continue;
            };
            let switched;
            let ct = if mode == "per-device" {
                let native = CiphertextModulus::new_native();
                let tp = tfhe::core_crypto::prelude::PolynomialSize(N);
                let input = TfheGlwe::from_container(opened.ciphertext.as_slice(), tp, native);
                let mut output = GlweCiphertextOwned::new(0u64, GlweSize(2), tp, native);
                if self.spectra.keyswitch(&input, &mut output.as_mut_view()).is_err() {
                    continue;
                }
                let Ok(c) = GlweCiphertext::from_container(output.into_container(), PolynomialSize(N)) else {
                    continue;
                };
                switched = c;
                &switched
            } else {
                &opened.ciphertext
            };
            let values = if par {
                extractor.extract_readings_par::<FheUint8Id, _>(ct, 0, VALUES)
            } else {
                extractor.extract_readings::<FheUint8Id, _>(ct, 0, VALUES)
            };
            out.extend(values.unwrap_or_default());
        }
        out
    }

    /// The intake of `frames` from the `mode` device into `FheUint8` values (rayon when `par`): the count.
    pub fn intake(&self, mode: &str, frames: &[Vec<u8>], par: bool) -> usize {
        self.convert(mode, frames, par).len()
    }
}

/// Runs the integer measurements (tfhe-rs's expand, which needs a server key, only in full mode).
pub fn run(ctx: &Context, kit: &IntegerKit) -> Section {
    ctx.step("Integers: encryption and intake per FheUint8");
    let per_value = |s: f64, n: usize| s / n as f64;
    let mut rows: Vec<(String, String, f64, f64)> = Vec::new();
    for mode in ["fleet", "public key"] {
        let frame_len = kit.frames(mode, 1).first().map_or(0, Vec::len);
        let s = median_seconds(ctx.budget, || kit.frames(mode, 1));
        let name = if mode == "fleet" {
            "ours, secret key (fleet or per-device), v2 frame"
        } else {
            "ours, public key, v2 frame"
        };
        rows.push((
            "device encryption".into(),
            name.into(),
            per_value(s, VALUES),
            frame_len as f64 / VALUES as f64,
        ));
    }
    let small = if ctx.quick { 16 } else { 64 };
    let fhe_size = safe_serialized_size(&FheUint8::encrypt(1u8, &kit.client_key)).unwrap_or(0) as f64;
    let s = median_seconds(ctx.budget, || {
        kit.readings[..small]
            .iter()
            .map(|&v| FheUint8::encrypt(v, &kit.client_key))
            .collect::<Vec<_>>()
    });
    rows.push((
        "device encryption".into(),
        "tfhe-rs FheUint8::encrypt (ClientKey)".into(),
        per_value(s, small),
        fhe_size,
    ));
    let (public_key, heap) = peak::measure(|| CompactPublicKey::new(&kit.client_key));
    tracing::info!("tfhe-rs CompactPublicKey: {heap} bytes of heap to make");
    for packed in [false, true] {
        let build = || {
            let mut b = CompactCiphertextList::builder(&public_key);
            b.extend(kit.readings.iter().copied());
            if packed { b.build_packed() } else { b.build() }
        };
        let list = build();
        let bytes = safe_serialized_size(&list).unwrap_or(0) as f64 / VALUES as f64;
        let s = median_seconds(ctx.budget.at_most(10), build);
        let name = if packed {
            "tfhe-rs CompactCiphertextList, packed"
        } else {
            "tfhe-rs CompactCiphertextList"
        };
        rows.push(("device encryption".into(), name.into(), per_value(s, VALUES), bytes));
        if !ctx.quick && packed {
            ctx.step("Integers: tfhe-rs server key for expand (slow)");
            tfhe::set_server_key(kit.client_key.generate_server_key());
            let few = 8;
            let mut b = CompactCiphertextList::builder(&public_key);
            b.extend(kit.readings[..few].iter().copied());
            let list = b.build_packed();
            let s = median_seconds(ctx.budget.at_most(5), || {
                list.expand()
                    .map(|e| (0..few).filter_map(|i| e.get::<FheUint8>(i).ok().flatten()).count())
                    .unwrap_or(0)
            });
            rows.push((
                "server intake".into(),
                "tfhe-rs CompactCiphertextList expand + cast, packed".into(),
                per_value(s, few),
                bytes,
            ));
        }
    }
    for mode in MODES {
        let s = crate::timing::median(
            &mut (0..if ctx.quick { 2 } else { 7 })
                .map(|_| {
                    let f = kit.frames(mode, 1);
                    let t = std::time::Instant::now();
                    black_box(kit.intake(mode, &f, false));
                    t.elapsed().as_secs_f64()
                })
                .collect::<Vec<_>>(),
        );
        let bytes = kit.frames(mode, 1).first().map_or(0, Vec::len) as f64 / VALUES as f64;
        rows.push((
            "server intake".into(),
            format!("ours, {mode}, 1 thread"),
            per_value(s, VALUES),
            bytes,
        ));
    }
    let mut md = String::from(
        "512 `u8` readings per frame (`IntegerEncryptor<2048>`, 4 two-bit blocks per value) under one tfhe-rs \
         1.8.2 `ClientKey` (high-level default parameters with the dedicated compact public-key parameters). \
         Time per `FheUint8`; bytes per value on the wire (our v2 frame) or serialized (tfhe-rs \
         `safe_serialize`). Intake: MAC, mask expansion, the per-device GLWE key switch where it applies, \
         extraction into `FheUint8`.",
    );
    if ctx.quick {
        md.push_str(" tfhe-rs's expand needs a server key: full run only.");
    }
    md.push_str("\n\n");
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| vec![r.0.clone(), r.1.clone(), human(r.2), format!("{:.1} B", r.3)])
        .collect();
    md.push_str(&table(
        &["side", "path", "time per FheUint8", "bytes per value"],
        &table_rows,
    ));
    let mut section = Section::new("5. Integers (FheUint8)", md);
    let time = BarChart {
        title: "Integers: time per FheUint8",
        value: ("time per value", Unit::Seconds),
        bars: rows.iter().map(|r| (r.0.clone(), r.1.clone(), r.2)).collect(),
    };
    let caption = "among the device-encryption bars, ours (secret key, public key) stay far below tfhe-rs's \
                   `FheUint8::encrypt` (a full LWE ciphertext per two-bit block) and on a par with or below \
                   its compact lists; the server-intake bars show what the conversion into `FheUint8` costs, \
                   where tfhe-rs's compact list pays for its expand and cast (full run only)."
        .to_string();
    section.bars(ctx, "integers-time.svg", caption, &time);
    // Bytes on the wire: the device side only, ours against tfhe-rs's.
    let family = |path: &str| if path.starts_with("ours") { "ours" } else { "tfhe-rs" }.to_string();
    let bytes = BarChart {
        title: "Integers: bytes per FheUint8",
        value: ("bytes per value", Unit::Bytes),
        bars: rows
            .iter()
            .filter(|r| r.0 == "device encryption")
            .map(|r| (family(&r.1), r.1.clone(), r.3))
            .collect(),
    };
    let caption = "ours sends tens of bytes per `u8` reading; tfhe-rs's `FheUint8` ciphertext is kilobytes, and \
                   only its compact lists (which the server must expand) come near ours."
        .to_string();
    section.bars(ctx, "integers-bytes.svg", caption, &bytes);
    section
}
