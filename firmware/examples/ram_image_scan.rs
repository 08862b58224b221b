//! Scans a RAM image of the boolean known-answer firmware for every secret it held (the outside half of
//! `scripts/firmware-ram-image.sh`, which builds the firmware with `hold-for-ram-image`, runs it under
//! qemu-system-arm and saves its RAM through qemu's monitor after the run).
//!
//! Searched, at every byte offset of the image:
//!
//! * by 8-byte words (as `crates/tfhe-sbc-client/tests/memory_image.rs` does; a random word matches by chance
//!   with probability about `2^-64` per offset), and counted as 16-byte windows and whole copies: the
//!   CSPRNG's seed (`kat_inputs::RNG_SEED`, `K_0`), every later key `K_i` of its ratchet chain, every keyed
//!   chaining value and every ratchet block (replayed by the client test's independent BLAKE2s, the 32-bit
//!   firmware's XOF, `tests/common/ratchet_replay.rs`), the frame MAC key and its keyed BLAKE2b state, the packed secret key
//!   (the firmware reads it in place from flash), and the key's spectrum (the encryptor's live key);
//! * by longer windows, for the forms whose words are not random: the unpacked key (one byte per bit,
//!   64-byte windows), the plaintext message (`kat_inputs::MESSAGE`, 16-byte windows) and its encoding
//!   (one `u32` per bit, 256-byte windows). The message is the device's reading, which the encryption exists
//!   to hide: it counts as secret, and the firmware reads it from flash, so no copy of it belongs in RAM.
//!
//! Allowed: one whole copy of the live generator's chaining value and one of the key's spectrum, both inside
//! the static encryptor (the ELF's `ENCRYPTOR`); the chaining value must be the chain's `--live-link`-th (one
//! ratchet per encryption). Both are also the positive controls: the scan fails if either is not found
//! there. Any other hit is a dead secret, and the scan exits with status 1.
//!
//! ```sh
//! cargo run -p tfhe-sbc-firmware --example ram_image_scan -- IMAGE BASE SYMBOLS SP LIVE_LINK
//! ```
//! `IMAGE`: the RAM's bytes from `BASE` (hex); `SYMBOLS`: `llvm-nm -S -C --defined-only` of the ELF; `SP`: the
//! held firmware's stack pointer (hex, from the monitor's `info registers`); `LIVE_LINK`: how many ratchets
//! the generator made.

#[path = "../src/expected.rs"]
#[allow(dead_code)]
mod expected;
#[path = "../src/kat_inputs.rs"]
#[allow(dead_code)]
mod kat_inputs;
#[path = "../../crates/tfhe-sbc-client/tests/common/ratchet_replay.rs"]
#[allow(dead_code)] // The client test uses more of it.
mod ratchet_replay;

use expected::PACKED_KEY;
use kat_inputs::{KEY_SEED, MAC_KEY, MESSAGE, RNG_SEED};
use negacyclic_ntt::NttPlan32;
use rand_core::SeedableRng;
use ratchet_replay::{keyed_chaining_value, ratchet_chain32};
use std::collections::HashMap;
use std::process::ExitCode;
use tfhe_sbc_core::entities::{GlweSecretKey, pack_secret_key};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::frame::mac::MAC_PERSONALIZATION;
use tfhe_sbc_device::product::NegacyclicProductPlan;
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;

/// Ratchet links replayed past the live one (a firmware that ratcheted more than it should is found too).
const EXTRA_LINKS: usize = 8;

/// How a secret is searched.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Search {
    /// Every 8-byte word, at every offset.
    Words,
    /// Every window of this many bytes starting at a multiple of the element size (second field).
    Windows(usize, usize),
}

/// What the firmware may still hold of a secret.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holder {
    /// Nothing: any hit is a dead secret.
    Dead,
    /// The live generator's chaining value: one whole copy inside the encryptor.
    LiveGenerator,
    /// The live key's spectrum: one whole copy inside the encryptor.
    LiveKey,
}

struct Secret {
    name: String,
    bytes: Vec<u8>,
    search: Search,
    holder: Holder,
}

/// A symbol in RAM: address, size, name.
struct Symbol {
    address: u64,
    size: u64,
    name: String,
}

struct Image {
    base: u64,
    bytes: Vec<u8>,
    symbols: Vec<Symbol>,
    sp: u64,
    /// `[_stack_end, _stack_start)`.
    stack: (u64, u64),
    /// The static encryptor: address and size.
    encryptor: (u64, u64),
}

impl Image {
    /// Where `address` is: a symbol, a stack frame (live or dead) or unused RAM.
    fn describe(&self, address: u64) -> String {
        if let Some(s) = self
            .symbols
            .iter()
            .find(|s| s.size > 0 && (s.address..s.address + s.size).contains(&address))
        {
            return format!("{} +{:#x}", short(&s.name), address - s.address);
        }
        if (self.stack.0..self.stack.1).contains(&address) {
            return if address < self.sp {
                format!("stack, {} B below sp (dead frame)", self.sp - address)
            } else {
                format!("stack, {} B above sp (live frame)", address - self.sp)
            };
        }
        "RAM outside the stack and the symbols".to_owned()
    }

    fn in_encryptor(&self, address: u64, len: usize) -> bool {
        address >= self.encryptor.0 && address + len as u64 <= self.encryptor.0 + self.encryptor.1
    }
}

/// The last two path segments of a demangled symbol.
fn short(name: &str) -> String {
    let parts: Vec<&str> = name.split("::").collect();
    parts[parts.len().saturating_sub(2)..].join("::")
}

/// One secret's hits: the image offsets of its words (or windows), and of its whole copies.
struct Hits {
    at: Vec<usize>,
    windows16: usize,
    whole: Vec<usize>,
}

fn search(image: &Image, secrets: &[Secret]) -> Vec<Hits> {
    let mut hits: Vec<Hits> = secrets
        .iter()
        .map(|_| Hits {
            at: Vec::new(),
            windows16: 0,
            whole: Vec::new(),
        })
        .collect();
    let bytes = &image.bytes;
    // Words.
    let mut index: HashMap<[u8; 8], Vec<(usize, usize)>> = HashMap::new();
    for (s, secret) in secrets.iter().enumerate() {
        if secret.search == Search::Words {
            for (w, word) in secret.bytes.chunks_exact(8).enumerate() {
                index.entry(core::array::from_fn(|i| word[i])).or_default().push((s, w));
            }
        }
    }
    for (offset, window) in bytes.windows(8).enumerate() {
        let word: [u8; 8] = core::array::from_fn(|i| window[i]);
        for &(s, w) in index.get(&word).map(Vec::as_slice).unwrap_or(&[]) {
            let secret = &secrets[s].bytes;
            // One hit per offset, even where a secret repeats a word (the KAT's seed is 32 equal bytes).
            if hits[s].at.last() != Some(&offset) {
                hits[s].at.push(offset);
            }
            let next = (w + 1) * 8;
            if next + 8 <= secret.len() && bytes.get(offset + 8..offset + 16) == Some(&secret[next..next + 8]) {
                hits[s].windows16 += 1;
            }
            if w == 0 && bytes.get(offset..offset + secret.len()) == Some(secret.as_slice()) {
                hits[s].whole.push(offset);
            }
        }
    }
    // Longer windows.
    for (s, secret) in secrets.iter().enumerate() {
        let Search::Windows(len, step) = secret.search else {
            continue;
        };
        let windows: std::collections::HashSet<&[u8]> = (0..=secret.bytes.len() - len)
            .step_by(step)
            .map(|i| &secret.bytes[i..i + len])
            .collect();
        for (offset, window) in bytes.windows(len).enumerate() {
            if windows.contains(window) {
                hits[s].at.push(offset);
                if bytes.get(offset..offset + secret.bytes.len()) == Some(secret.bytes.as_slice()) {
                    hits[s].whole.push(offset);
                }
            }
        }
    }
    hits
}

/// The search finds what it looks for: a copy of the image's last 64 KiB with the first window (or word) of
/// every secret written at an odd offset must give every secret a hit there.
fn self_check(image: &Image, secrets: &[Secret]) -> Result<(), String> {
    let tail = image.bytes.len().saturating_sub(64 * 1024);
    let mut planted = Image {
        base: image.base,
        bytes: image.bytes[tail..].to_vec(),
        symbols: Vec::new(),
        sp: image.sp,
        stack: image.stack,
        encryptor: image.encryptor,
    };
    let mut at = Vec::new();
    let mut offset = 1;
    for secret in secrets {
        let len = match secret.search {
            Search::Words => 8,
            Search::Windows(len, _) => len,
        };
        let window = secret.bytes.get(..len).ok_or("a secret shorter than its window")?;
        planted
            .bytes
            .get_mut(offset..offset + len)
            .ok_or("the image is too small for the self-check")?
            .copy_from_slice(window);
        at.push(offset);
        offset += len + 3;
    }
    for ((secret, hits), offset) in secrets.iter().zip(search(&planted, secrets)).zip(at) {
        if !hits.at.contains(&offset) {
            return Err(format!(
                "self-check: {} planted at +{offset} was not found",
                secret.name
            ));
        }
    }
    Ok(())
}

fn parse_hex(text: &str) -> Result<u64, String> {
    u64::from_str_radix(text.trim().trim_start_matches("0x"), 16).map_err(|e| format!("{text:?}: {e}"))
}

/// `llvm-nm -S -C --defined-only` lines: "address [size] type name".
fn read_symbols(path: &str) -> Result<Vec<Symbol>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut symbols = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.splitn(4, ' ').collect();
        let (address, size, name) = match fields.as_slice() {
            [a, s, _, n] if s.len() > 1 => (a, parse_hex(s)?, *n),
            [a, _, n] => (a, 0, *n),
            [a, _, _, n] => (a, 0, *n),
            _ => continue,
        };
        // Without the hash suffix (`::h` and 16 hex digits) and a trailing " (.0)".
        let name = name.split(' ').next().unwrap_or(name);
        let name = match name.rsplit_once("::h") {
            Some((path, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => path,
            _ => name,
        };
        symbols.push(Symbol {
            address: parse_hex(address)?,
            size,
            name: name.to_owned(),
        });
    }
    Ok(symbols)
}

fn symbol<'a>(symbols: &'a [Symbol], what: &str) -> Result<&'a Symbol, String> {
    symbols
        .iter()
        .find(|s| s.name == what || s.name.ends_with(&format!("::{what}")))
        .ok_or_else(|| format!("no symbol {what} in the ELF"))
}

/// Every secret the firmware held, with what it may still hold.
fn secrets(live_link: usize) -> Result<Vec<Secret>, String> {
    let mut out = Vec::new();
    let dead_words = |name: String, bytes: &[u8]| Secret {
        name,
        bytes: bytes.to_vec(),
        search: Search::Words,
        holder: Holder::Dead,
    };
    out.push(dead_words("CSPRNG seed (RNG_SEED, K_0)".into(), &RNG_SEED));
    // The firmware targets are 32-bit: their generator is the BLAKE2s one (`DeviceConstruction`).
    for (i, link) in ratchet_chain32(&RNG_SEED, live_link + EXTRA_LINKS)
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            out.push(dead_words(format!("ratchet key K_{i}"), &link.key));
        }
        let mut cv = dead_words(format!("chaining value {i}"), &link.chaining_value);
        if i == live_link {
            cv.holder = Holder::LiveGenerator;
        }
        out.push(cv);
        out.push(dead_words(format!("ratchet block {i}"), &link.ratchet_block));
    }
    out.push(dead_words("MAC key (MAC_KEY)".into(), &MAC_KEY));
    out.push(dead_words(
        "MAC key's keyed state (frame)".into(),
        &keyed_chaining_value(&MAC_KEY, 16, MAC_PERSONALIZATION),
    ));
    out.push(dead_words("packed secret key".into(), &PACKED_KEY));
    // The key, as build.rs draws it; its packing must be the firmware's.
    let params = TFHE_LIB_GLWE_1024;
    let key = GlweSecretKey::generate_binary(
        [0u8; 1024],
        params.polynomial_size(),
        &mut Blake2bXof::from_seed(KEY_SEED),
    )
    .map_err(|e| format!("the KAT key: {e:?}"))?;
    let mut packed = [0u8; 128];
    pack_secret_key(key.as_bytes(), &mut packed).map_err(|e| format!("packing the key: {e:?}"))?;
    if packed != PACKED_KEY {
        return Err("the KAT key drawn here is not the firmware's PACKED_KEY".into());
    }
    let mut spectrum = vec![[0u32; 2]; 1024];
    compute_glwe_key_spectrum(&<NttPlan32 as NegacyclicProductPlan<1024>>::PLAN, &key, &mut spectrum)
        .map_err(|e| format!("the key's spectrum: {e:?}"))?;
    out.push(Secret {
        name: "key spectrum (NttPlan32)".into(),
        bytes: spectrum.iter().flatten().flat_map(|w| w.to_le_bytes()).collect(),
        search: Search::Words,
        holder: Holder::LiveKey,
    });
    out.push(Secret {
        name: "unpacked key (u8 per bit)".into(),
        bytes: key.as_bytes().to_vec(),
        search: Search::Windows(64, 1),
        holder: Holder::Dead,
    });
    out.push(Secret {
        name: "plaintext MESSAGE".into(),
        bytes: MESSAGE.to_vec(),
        search: Search::Windows(16, 1),
        holder: Holder::Dead,
    });
    // `encode_bits`: bit 1 -> 1/8, bit 0 -> -1/8 of the 32-bit torus.
    let encoded: Vec<u8> = (0..1024)
        .map(|i| {
            if MESSAGE[i / 8] >> (i % 8) & 1 == 1 {
                1u32 << 29
            } else {
                7u32 << 29
            }
        })
        .flat_map(u32::to_le_bytes)
        .collect();
    out.push(Secret {
        name: "encoded MESSAGE (u32 per bit)".into(),
        bytes: encoded,
        search: Search::Windows(256, 4),
        holder: Holder::Dead,
    });
    Ok(out)
}

fn run() -> Result<bool, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [image_path, base, symbols_path, sp, live_link] = args.as_slice() else {
        return Err("usage: ram_image_scan IMAGE BASE SYMBOLS SP LIVE_LINK".into());
    };
    let base = parse_hex(base)?;
    let bytes = std::fs::read(image_path).map_err(|e| format!("{image_path}: {e}"))?;
    let end = base + bytes.len() as u64;
    let symbols: Vec<Symbol> = read_symbols(symbols_path)?
        .into_iter()
        .filter(|s| (base..=end).contains(&s.address))
        .collect();
    let live_link: usize = live_link.parse().map_err(|e| format!("LIVE_LINK: {e}"))?;
    let encryptor = symbol(&symbols, "ENCRYPTOR")?;
    let image = Image {
        base,
        sp: parse_hex(sp)?,
        stack: (
            // cortex-m-rt's lowest stack address, or riscv-rt's.
            symbol(&symbols, "_stack_end")
                .or_else(|_| symbol(&symbols, "__estack"))?
                .address,
            symbol(&symbols, "_stack_start")?.address,
        ),
        encryptor: (encryptor.address, encryptor.size),
        bytes,
        symbols,
    };
    println!(
        "image: {} B of RAM from {:#x}; stack [{:#x}, {:#x}), sp {:#x}; ENCRYPTOR {:#x} ({} B)",
        image.bytes.len(),
        image.base,
        image.stack.0,
        image.stack.1,
        image.sp,
        image.encryptor.0,
        image.encryptor.1
    );
    let secrets = secrets(live_link)?;
    self_check(&image, &secrets)?;
    println!(
        "self-check: each of the {} secrets, written into a copy of the image, was found there",
        secrets.len()
    );
    let hits = search(&image, &secrets);
    let mut ok = true;
    println!(
        "{:<38} | {:>6} | {:>6} | {:>5} | {:<5} | where",
        "secret", "hits", "16-B", "whole", "dead"
    );
    for (secret, hit) in secrets.iter().zip(&hits) {
        let len = secret.bytes.len();
        // Hits inside the one allowed whole copy (live holders only).
        let allowed: Vec<usize> = match secret.holder {
            Holder::Dead => Vec::new(),
            Holder::LiveGenerator | Holder::LiveKey => hit
                .whole
                .iter()
                .copied()
                .filter(|&at| image.in_encryptor(image.base + at as u64, len))
                .take(1)
                .collect(),
        };
        let dead: Vec<usize> = hit
            .at
            .iter()
            .copied()
            .filter(|&at| !allowed.iter().any(|&a| at >= a && at < a + len))
            .collect();
        if secret.holder != Holder::Dead && allowed.is_empty() {
            println!(
                "FAIL positive control: {} not found whole inside ENCRYPTOR",
                secret.name
            );
            ok = false;
        }
        ok &= dead.is_empty();
        let mut places: Vec<String> = allowed
            .iter()
            .map(|&at| {
                format!(
                    "{:#x} ({}, live)",
                    image.base + at as u64,
                    image.describe(image.base + at as u64)
                )
            })
            .collect();
        places.extend(dead.iter().take(6).map(|&at| {
            format!(
                "{:#x} ({})",
                image.base + at as u64,
                image.describe(image.base + at as u64)
            )
        }));
        if dead.len() > 6 {
            places.push(format!("... {} more", dead.len() - 6));
        }
        println!(
            "{:<38} | {:>6} | {:>6} | {:>5} | {:<5} | {}",
            secret.name,
            hit.at.len(),
            hit.windows16,
            hit.whole.len(),
            dead.len(),
            places.join("; ")
        );
    }
    // The live generator must be the replay's `live_link`-th chaining value and no other one.
    let live: Vec<&str> = secrets
        .iter()
        .zip(&hits)
        .filter(|(s, h)| {
            s.name.starts_with("chaining value")
                && h.whole.iter().any(|&at| image.in_encryptor(image.base + at as u64, 64))
        })
        .map(|(s, _)| s.name.as_str())
        .collect();
    println!("live generator state inside ENCRYPTOR: {live:?} (expected: chaining value {live_link})");
    ok &= live == [format!("chaining value {live_link}").as_str()];
    Ok(ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => {
            println!(
                "ram-image scan: no dead secret; the live generator state and key spectrum were found in ENCRYPTOR"
            );
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("ram-image scan: FAILED (a dead secret in RAM, or a positive control not found)");
            ExitCode::FAILURE
        }
        Err(what) => {
            eprintln!("ram-image scan: error: {what}");
            ExitCode::from(2)
        }
    }
}
