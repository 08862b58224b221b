//! A memory image of the running client holds no secret it no longer needs: the shipped binary
//! (`CARGO_BIN_EXE_tfhe-sbc-client`, debug under `cargo test`, release under `cargo test --release`) runs in
//! every credential kind the device crate can make without tfhe-rs (boolean and integer, fleet, per-device
//! and public key, and the compact list), seeded from the OS through an `LD_PRELOAD` shim of `getrandom(3)`
//! that reads `/dev/urandom` and logs the bytes it handed out. After a few frames are acknowledged the client
//! is stopped (`SIGSTOP`) and every writable mapping of it (the heap, the main stack and every thread's
//! stack) is read from `/proc/<pid>/mem` and searched, at every byte offset, for each 8-byte word of:
//!
//! * every 32-byte value the shim returned (the CSPRNG's seed from the OS);
//! * every key of the generator's ratchet chain replayed from that seed (`K_0` = seed,
//!   `K_{i+1}` = the first half of block `2^64 - 1` under `K_i`, `docs/xof.md`), its whole ratchet block and
//!   its keyed chaining value (BLAKE2b's state after the key block, computed here by an independent BLAKE2b
//!   compression that is checked against the device crate's reference blocks);
//! * the MAC key and its keyed BLAKE2b states (frame MAC and acknowledgement domains);
//! * the device's packed secret key (secret-key kinds).
//!
//! Words (not only 16-byte windows) are counted, so scattered spilled registers are found too; a random
//! 8-byte word matches by chance with probability about `2^-64` per offset. The only hits allowed are the
//! live holders: the generator's current chaining value inside the encryptor (exactly one 64-byte copy, off
//! every stack, and it must be the chain's `frames`-th value, which proves the replay follows the live
//! generator), the credential file's own bytes (the client keeps the file to authenticate its frames) and
//! the one `MacKey` the uplink shares; none of them on any stack.
//!
//! The test fails if the shim saw no 32-byte `getrandom` call (the interception would be broken).
//! Linux x86_64 only (`/proc`, `LD_PRELOAD`, a C compiler `cc`).
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]
#![allow(clippy::unwrap_used)]

use rand_core::{Rng, SeedableRng};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::ack::{ack_for, seal_ack};
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::parameters::{GlweParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128, ParameterSetId, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::compact_public_key::{
    COMPACT_PUBLIC_KEY_FILE_BYTES, CompactKeyBinding, encode_compact_public_key_file,
};
use tfhe_sbc_device::files::credentials::{KeyMode, credentials_file_bytes, encode_credentials};
use tfhe_sbc_device::files::public_key::{encode_public_key, public_key_file_bytes_for};
use tfhe_sbc_device::frame::ack::ACK_PERSONALIZATION;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MAC_PERSONALIZATION, MacKey};
use tfhe_sbc_device::std_io::write_ack;

const DEVICE: u64 = 41;
const KEY_ID: u32 = 0x0123_4567;

// ---------------------------------------------------------------------------------------------------------
// An independent BLAKE2b compression (RFC 7693), for the keyed chaining values, and the ratchet chain's
// replay (shared with the firmware's RAM-image scanner).

mod common;
use common::ratchet_replay::{Link, bytes_le, compress, keyed_chaining_value, ratchet_chain, stream_block, words_le};

/// The replay is the device's stream: blocks computed from the chaining value here are the reference blocks
/// of `Blake2bXof::block`, including the ratchet block.
#[test]
fn the_chain_replay_matches_the_device_stream() {
    let seed: [u8; 32] = core::array::from_fn(|i| (i * 29 + 3) as u8);
    let chain = ratchet_chain(&seed, 3);
    for link in &chain {
        for index in [0, 1, 7, u64::MAX] {
            let mut reference = [0u8; 64];
            Blake2bXof::block(&link.key, index, &mut reference);
            assert_eq!(stream_block(&link.chaining_value, index), reference);
        }
    }
    // And the keyed state of a MAC key gives the MAC's tags (16-byte digest, one final block).
    let mac = MacKey::from_bytes([0x37; 32]);
    let cv = keyed_chaining_value(mac.as_bytes(), 16, MAC_PERSONALIZATION);
    let message = b"sixteen byte msg";
    let mut m = [0u64; 16];
    m[..2].copy_from_slice(&words_le(message));
    let h: [u64; 8] = words_le(&cv).try_into().unwrap();
    assert_eq!(bytes_le(&compress(&h, &m, 128 + 16, true))[..16], mac.tag(message));
}

/// The BLAKE2s chain replay (what the firmware's RAM-image scanner searches on 32-bit targets) is the device
/// crate's BLAKE2s generator: its blocks, and the key a ratchet moves to.
#[test]
fn the_blake2s_chain_replay_matches_the_device_stream() {
    use tfhe_sbc_device::csprng::xof::Blake2sXof;
    let seed: [u8; 32] = core::array::from_fn(|i| (i * 31 + 5) as u8);
    let chain = common::ratchet_replay::ratchet_chain32(&seed, 3);
    let mut xof = Blake2sXof::from_seed(seed);
    for link in &chain {
        for index in [0, 1, 7, u64::MAX] {
            let mut reference = [0u8; 32];
            Blake2sXof::block(&link.key, index, &mut reference);
            assert_eq!(
                common::ratchet_replay::stream_block32(&link.chaining_value, index),
                reference
            );
        }
        let mut first = [0u8; 32];
        xof.fill_bytes(&mut first);
        assert_eq!(first, common::ratchet_replay::stream_block32(&link.chaining_value, 0));
        xof.ratchet();
    }
}

// ---------------------------------------------------------------------------------------------------------
// The getrandom shim.

const SHIM: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

/* getrandom(3) from /dev/urandom, and a log line "<len> <hex>" of what it returned. */
ssize_t getrandom(void *buf, size_t len, unsigned int flags) {
    (void)flags;
    if (len == 0) return 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r <= 0) { close(fd); return -1; }
        got += (size_t)r;
    }
    close(fd);
    const char *path = getenv("TSBC_GETRANDOM_LOG");
    if (path) {
        int log = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (log >= 0) {
            static const char hex[] = "0123456789abcdef";
            char head[24];
            int n = 0;
            size_t l = len;
            char digits[24];
            int d = 0;
            do { digits[d++] = (char)('0' + l % 10); l /= 10; } while (l > 0);
            while (d > 0) head[n++] = digits[--d];
            head[n++] = ' ';
            (void)write(log, head, (size_t)n);
            for (size_t i = 0; i < len; i++) {
                unsigned char b = ((const unsigned char *)buf)[i];
                char pair[2] = { hex[b >> 4], hex[b & 15] };
                (void)write(log, pair, 2);
            }
            (void)write(log, "\n", 1);
            close(log);
        }
    }
    return (ssize_t)len;
}
"#;

fn build_shim(dir: &Path) -> PathBuf {
    let source = dir.join("getrandom_shim.c");
    let library = dir.join("getrandom_shim.so");
    std::fs::write(&source, SHIM).unwrap();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .expect("a C compiler (`cc`) builds the getrandom shim");
    assert!(status.success(), "cc failed on the getrandom shim");
    library
}

/// Every buffer the shim handed out.
fn shim_log(path: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|line| {
            let (len, hex) = line.split_once(' ').unwrap();
            let bytes: Vec<u8> = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            assert_eq!(bytes.len(), len.parse::<usize>().unwrap());
            bytes
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------------------
// The credential kinds.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    BooleanFleet,
    BooleanPerDevice,
    BooleanPublicKey,
    IntegerFleet,
    IntegerPerDevice,
    IntegerPublicKey,
    CompactList,
}

const KINDS: [Kind; 7] = [
    Kind::BooleanFleet,
    Kind::BooleanPerDevice,
    Kind::BooleanPublicKey,
    Kind::IntegerFleet,
    Kind::IntegerPerDevice,
    Kind::IntegerPublicKey,
    Kind::CompactList,
];

/// A device's files in a fresh directory, and the secrets the test knows of.
struct Device {
    dir: tempfile::TempDir,
    args: Vec<String>,
    mac_key: [u8; 32],
    packed_key: Option<Vec<u8>>,
}

fn provision(kind: Kind) -> Device {
    let mut rng = Blake2bXof::seed_from_u64(0x6d65_6d6f_7279 ^ kind as u64);
    let mut mac_key = [0u8; 32];
    rng.fill_bytes(&mut mac_key);
    let (mode, params): (KeyMode, GlweParameters) = match kind {
        Kind::BooleanFleet => (KeyMode::FleetSecretKey, TFHE_LIB_GLWE_1024),
        Kind::BooleanPerDevice => (KeyMode::PerDeviceSecretKey, TFHE_LIB_GLWE_1024),
        Kind::BooleanPublicKey => (KeyMode::PublicKey, TFHE_LIB_GLWE_1024),
        Kind::IntegerFleet => (KeyMode::FleetSecretKey, MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe()),
        Kind::IntegerPerDevice => (KeyMode::PerDeviceSecretKey, MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe()),
        Kind::IntegerPublicKey | Kind::CompactList => (KeyMode::PublicKey, MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe()),
    };
    let n = params.polynomial_size().0 * params.glwe_dimension().0;
    let dir = tempfile::tempdir().unwrap();
    let mut packed_key = None;
    let material = if mode == KeyMode::PublicKey {
        // Only the shape matters to the device: a mask seed and uniform body words.
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let mut file = vec![0u8; public_key_file_bytes_for(&params)];
        if params.torus_bits() == 64 {
            let body: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            encode_public_key(params.id(), KEY_ID, &seed, &body, &mut file).unwrap();
        } else {
            let body: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            encode_public_key(params.id(), KEY_ID, &seed, &body, &mut file).unwrap();
        }
        file
    } else {
        let bits: Vec<u8> = (0..n).map(|_| (rng.next_u32() & 1) as u8).collect();
        let mut packed = vec![0u8; n / 8];
        pack_secret_key(&bits, &mut packed).unwrap();
        packed_key = Some(packed.clone());
        packed
    };
    let credentials = DeviceCredentials::new(DEVICE, KEY_ID, MacKey::from_bytes(mac_key));
    let mut file = vec![0u8; credentials_file_bytes(mode, &params)];
    let len = encode_credentials(mode, &params, &credentials, &material, &mut file).unwrap();
    let path = dir.path().join("41.tsdc");
    std::fs::write(&path, &file[..len]).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let mut args: Vec<String> = vec!["--credentials".into(), path.display().to_string()];
    args.extend(["--format", "u16", "--batch", "64"].map(String::from));
    if kind == Kind::CompactList {
        let key: Vec<u64> = (0..4096).map(|_| rng.next_u64()).collect();
        let binding = CompactKeyBinding {
            key_set_parameters: ParameterSetId(4),
            key_id: KEY_ID,
            server_key_fingerprint: [0x5a; 32],
        };
        let mut tscp = vec![0u8; COMPACT_PUBLIC_KEY_FILE_BYTES];
        encode_compact_public_key_file(&binding, &key, &mut tscp).unwrap();
        let tscp_path = dir.path().join("41.tscp");
        std::fs::write(&tscp_path, &tscp).unwrap();
        args.extend([
            "--mode".into(),
            "tfhe-compact-list".into(),
            "--compact-public-key".into(),
        ]);
        args.push(tscp_path.display().to_string());
    }
    Device {
        dir,
        args,
        mac_key,
        packed_key,
    }
}

/// A loopback server that acknowledges every frame it reads (sealed under `mac_key`); counts the frames.
fn ack_server(mac_key: [u8; 32]) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let frames = Arc::new(AtomicUsize::new(0));
    let counted = frames.clone();
    std::thread::spawn(move || {
        let key = MacKey::from_bytes(mac_key);
        for socket in listener.incoming() {
            let Ok(socket) = socket else { return };
            let mut writer = socket.try_clone().unwrap();
            let mut reader = FrameReader::new(socket);
            while let Ok(Some(frame)) = reader.next_frame() {
                let ack = ack_for(frame, &Ok::<(), IntakeError>(()));
                let record = seal_ack(frame, &ack, Some(&key));
                counted.fetch_add(1, Ordering::SeqCst);
                if write_ack(&mut writer, &record).is_err() {
                    break;
                }
            }
        }
    });
    (address, frames)
}

// ---------------------------------------------------------------------------------------------------------
// The memory image.

/// A writable mapping's bytes, its address and what it is.
struct Region {
    start: u64,
    /// The stack pointer of the thread whose stack this is.
    sp: Option<u64>,
    label: String,
    bytes: Vec<u8>,
}

/// Every writable mapping of the stopped process `pid`; stacks are labelled with their thread.
fn memory_image(pid: u32) -> Vec<Region> {
    // Each thread's stack pointer (`/proc/<pid>/task/<tid>/syscall`: "... sp pc").
    let mut stack_pointers = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let task = task.unwrap().path();
        let name = std::fs::read_to_string(task.join("comm"))
            .unwrap_or_default()
            .trim()
            .to_owned();
        let tid = task.file_name().unwrap().to_string_lossy().into_owned();
        let syscall = std::fs::read_to_string(task.join("syscall")).unwrap_or_default();
        let fields: Vec<&str> = syscall.split_whitespace().collect();
        if fields.len() >= 3 {
            let sp = u64::from_str_radix(fields[fields.len() - 2].trim_start_matches("0x"), 16).unwrap_or(0);
            stack_pointers.push((sp, format!("stack of thread {tid} ({name})")));
        }
    }
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mut mem = std::fs::File::open(format!("/proc/{pid}/mem")).unwrap();
    let mut regions = Vec::new();
    for line in maps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (range, perms) = (fields[0], fields[1]);
        if !perms.starts_with("rw") {
            continue;
        }
        let (start, end) = range.split_once('-').unwrap();
        let start = u64::from_str_radix(start, 16).unwrap();
        let end = u64::from_str_radix(end, 16).unwrap();
        let mut label = fields.get(5).map_or("anonymous".to_owned(), |s| (*s).to_owned());
        let mut sp = None;
        if let Some((at, thread)) = stack_pointers.iter().find(|(at, _)| (start..end).contains(at)) {
            label = thread.clone();
            sp = Some(*at);
        }
        let mut bytes = vec![0u8; (end - start) as usize];
        mem.seek(SeekFrom::Start(start)).unwrap();
        if mem.read_exact(&mut bytes).is_err() {
            // [vvar] and the like; nothing of the program's is in them.
            continue;
        }
        regions.push(Region {
            start,
            sp,
            label,
            bytes,
        });
    }
    assert!(
        regions
            .iter()
            .filter(|r| r.label.starts_with("stack of thread"))
            .count()
            >= 2,
        "the main thread's and the uplink's stacks were found"
    );
    regions
}

/// A secret value the process held at some point.
struct Secret {
    name: String,
    bytes: Vec<u8>,
}

/// Where one secret was found: per region, the offsets of its 8-byte words.
#[derive(Default)]
struct Found {
    /// (region index, offset in the region, word index in the secret)
    words: Vec<(usize, usize, usize)>,
}

fn search(regions: &[Region], secrets: &[Secret]) -> Vec<Found> {
    let mut index: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
    for (s, secret) in secrets.iter().enumerate() {
        for (w, word) in secret.bytes.chunks_exact(8).enumerate() {
            let word = u64::from_le_bytes(word.try_into().unwrap());
            index.entry(word).or_default().push((s, w));
        }
    }
    let mut found: Vec<Found> = secrets.iter().map(|_| Found::default()).collect();
    for (r, region) in regions.iter().enumerate() {
        for (offset, window) in region.bytes.windows(8).enumerate() {
            let word = u64::from_le_bytes(window.try_into().unwrap());
            if let Some(hits) = index.get(&word) {
                for &(s, w) in hits {
                    found[s].words.push((r, offset, w));
                }
            }
        }
    }
    found
}

/// How many 16-byte windows of `secret` (two consecutive words, in order) start at the word hits.
fn windows16(regions: &[Region], secret: &Secret, found: &Found) -> usize {
    found
        .words
        .iter()
        .filter(|&&(r, offset, w)| {
            let next = (w + 1) * 8;
            next + 8 <= secret.bytes.len()
                && region_bytes(regions, r, offset + 8, 8).is_some_and(|b| b == &secret.bytes[next..next + 8])
        })
        .count()
}

fn region_bytes(regions: &[Region], r: usize, offset: usize, len: usize) -> Option<&[u8]> {
    regions[r].bytes.get(offset..offset + len)
}

/// The addresses where the whole of `bytes` is, outside every stack.
fn whole_copies(regions: &[Region], bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (r, region) in regions.iter().enumerate() {
        if region.label.starts_with("stack of thread") {
            continue;
        }
        let mut from = 0;
        while let Some(at) = find(&region.bytes[from..], bytes) {
            out.push((r, from + at));
            from += at + 1;
        }
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

// ---------------------------------------------------------------------------------------------------------
// One run.

/// Runs the client in `kind`, stops it after `messages` messages were acknowledged, and returns how many
/// words of secrets it left outside their live holders.
fn run_kind(shim: &Path, kind: Kind) -> usize {
    let device = provision(kind);
    let (server, frames) = ack_server(device.mac_key);
    let log = device.dir.path().join("getrandom.log");
    let mut child: Child = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
        .args(&device.args)
        .args([
            "--server",
            &server.to_string(),
            "--max-backoff",
            "200ms",
            "--give-up-after",
            "120s",
        ])
        .env("LD_PRELOAD", shim)
        .env("TSBC_GETRANDOM_LOG", &log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Three messages of 64 u16 readings (128 bytes each), written at once; stdin stays open, so the client
    // keeps running.
    let messages = 3;
    let input: String = (0..64 * messages)
        .map(|i| format!("{}\n", (i * 7919) % 65_536))
        .collect();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Wait until the frames stop coming, then for their acknowledgements to be handled.
    let started = Instant::now();
    let mut last = (0, Instant::now());
    loop {
        let seen = frames.load(Ordering::SeqCst);
        if seen != last.0 {
            last = (seen, Instant::now());
        }
        if seen >= messages && last.1.elapsed() > Duration::from_millis(700) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{kind:?}: only {seen} frames arrived"
        );
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("{kind:?}: the client exited ({status}) before the image: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = frames.load(Ordering::SeqCst);

    // The image, of the stopped process.
    let stop = Command::new("kill").args(["-STOP", &pid.to_string()]).status().unwrap();
    assert!(stop.success());
    std::thread::sleep(Duration::from_millis(100));
    let regions = memory_image(pid);
    Command::new("kill").args(["-CONT", &pid.to_string()]).status().unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{kind:?}: {stderr}");

    // The secrets.
    let drawn = shim_log(&log);
    let seeds: Vec<[u8; 32]> = drawn
        .iter()
        .filter(|b| b.len() == 32)
        .map(|b| b.as_slice().try_into().unwrap())
        .collect();
    assert!(
        !seeds.is_empty(),
        "{kind:?}: the getrandom shim saw no 32-byte draw (calls: {:?}): the seed was not intercepted",
        drawn.iter().map(Vec::len).collect::<Vec<_>>()
    );
    // The device's seed is the draw whose ratchet chain reaches a chaining value held whole off the stacks
    // (the live generator); other draws (rand's thread generator behind the counter file's temporary names,
    // std's hash keys) are not the device's and are not searched.
    let links = sent + 8;
    let mut device_seeds: Vec<(usize, Vec<Link>)> = seeds
        .iter()
        .enumerate()
        .map(|(s, seed)| (s, ratchet_chain(seed, links)))
        .filter(|(_, chain)| {
            chain
                .iter()
                .any(|link| !whole_copies(&regions, &link.chaining_value).is_empty())
        })
        .collect();
    assert_eq!(
        device_seeds.len(),
        1,
        "{kind:?}: exactly one of the {} 32-byte draws seeds the live generator",
        seeds.len()
    );
    let (s, chain) = device_seeds.pop().unwrap();
    println!(
        "{kind:?}: getrandom calls of {:?} bytes; draw #{s} is the CSPRNG's seed",
        drawn.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let mut secrets = vec![Secret {
        name: "OS seed".into(),
        bytes: seeds[s].to_vec(),
    }];
    for (i, link) in chain.into_iter().enumerate() {
        if i > 0 {
            secrets.push(Secret {
                name: format!("ratchet key {i}"),
                bytes: link.key.to_vec(),
            });
        }
        secrets.push(Secret {
            name: format!("chaining value {i}"),
            bytes: link.chaining_value.to_vec(),
        });
        secrets.push(Secret {
            name: format!("ratchet block {i}"),
            bytes: link.ratchet_block.to_vec(),
        });
    }
    let mac = Secret {
        name: "MAC key".into(),
        bytes: device.mac_key.to_vec(),
    };
    secrets.push(mac);
    for (name, personalization) in [("frame", MAC_PERSONALIZATION), ("ack", ACK_PERSONALIZATION)] {
        secrets.push(Secret {
            name: format!("MAC key's keyed state ({name})"),
            bytes: keyed_chaining_value(&device.mac_key, 16, personalization).to_vec(),
        });
    }
    if let Some(packed) = &device.packed_key {
        secrets.push(Secret {
            name: "packed secret key".into(),
            bytes: packed.clone(),
        });
    }
    let found = search(&regions, &secrets);

    // The live holders. The generator's state: exactly one whole 64-byte copy of one chaining value, off the
    // stacks; it must be the state after `sent` ratchets.
    let mut allowed: Vec<(usize, usize, usize)> = Vec::new(); // (region, start, len)
    let live: Vec<(usize, Vec<(usize, usize)>)> = secrets
        .iter()
        .enumerate()
        .filter(|(_, s)| s.name.starts_with("chaining value"))
        .map(|(i, s)| (i, whole_copies(&regions, &s.bytes)))
        .filter(|(_, at)| !at.is_empty())
        .collect();
    assert_eq!(
        live.len(),
        1,
        "{kind:?}: exactly one chaining value is the live generator's: {:?}",
        live.iter().map(|(i, _)| &secrets[*i].name).collect::<Vec<_>>()
    );
    let (live_secret, live_at) = &live[0];
    assert_eq!(live_at.len(), 1, "{kind:?}: one copy of the live state");
    assert_eq!(
        secrets[*live_secret].name,
        format!("chaining value {sent}"),
        "{kind:?}: the live generator is the seed's chain after one ratchet per frame ({sent} frames)"
    );
    allowed.push((live_at[0].0, live_at[0].1, 64));
    // The credential file the client keeps (it holds the MAC key and the packed key), and the uplink's
    // `MacKey`: whole copies off the stacks.
    let file = std::fs::read(device.dir.path().join("41.tsdc")).unwrap();
    let file_copies = whole_copies(&regions, &file);
    assert_eq!(file_copies.len(), 1, "{kind:?}: one copy of the credential file");
    allowed.push((file_copies[0].0, file_copies[0].1, file.len()));
    let mac_outside_file: Vec<(usize, usize)> = whole_copies(&regions, &device.mac_key)
        .into_iter()
        .filter(|&(r, at)| !(r == file_copies[0].0 && (file_copies[0].1..file_copies[0].1 + file.len()).contains(&at)))
        .collect();
    assert!(
        mac_outside_file.len() <= 1,
        "{kind:?}: at most one MacKey besides the file"
    );
    for &(r, at) in &mac_outside_file {
        allowed.push((r, at, 32));
    }

    let mut left = 0;
    println!("{kind:?}: {sent} frames, image of {} writable mappings", regions.len());
    for (secret, found) in secrets.iter().zip(&found) {
        let stray: Vec<&(usize, usize, usize)> = found
            .words
            .iter()
            .filter(|&&(r, offset, _)| {
                !allowed
                    .iter()
                    .any(|&(ar, start, len)| ar == r && offset >= start && offset + 8 <= start + len)
            })
            .collect();
        if stray.is_empty() {
            continue;
        }
        let strays = Found {
            words: stray.iter().map(|&&w| w).collect(),
        };
        let windows = windows16(&regions, secret, &strays);
        left += stray.len();
        println!(
            "  {}: {} words ({windows} 16-byte windows) outside the live holders",
            secret.name,
            stray.len()
        );
        for &&(r, offset, w) in stray.iter().take(8) {
            let address = regions[r].start + offset as u64;
            let depth = match regions[r].sp {
                Some(sp) if address < sp => format!(", {} bytes below its sp (a dead frame)", sp - address),
                Some(sp) => format!(", {} bytes above its sp (a live frame)", address - sp),
                None => String::new(),
            };
            println!("    word {w} at {address:#x} in {}{depth}", regions[r].label);
        }
    }
    println!("{kind:?}: {left} words of secrets outside their live holders");
    left
}

#[test]
fn a_memory_image_of_the_running_client_holds_no_dead_secret() {
    let dir = tempfile::tempdir().unwrap();
    let shim = build_shim(dir.path());
    let mut results = Vec::new();
    for kind in KINDS {
        results.push((kind, run_kind(&shim, kind)));
    }
    println!(
        "hits per kind ({}):",
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
    for (kind, left) in &results {
        println!("  {kind:?}: {left}");
    }
    assert!(
        results.iter().all(|(_, left)| *left == 0),
        "secrets left in the memory image: {results:?}"
    );
}
