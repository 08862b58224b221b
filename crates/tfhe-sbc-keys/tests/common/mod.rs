//! Helpers shared by the test files: run the binary, check its errors, build devices from credential files.
#![allow(dead_code, clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::client_key::ClientKey;
use tfhe_sbc_adapter::intake::{Message, Received};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::entities::unpack_secret_key;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::files::credentials::{Credentials, KeyMode, decode_credentials};
use tfhe_sbc_device::files::public_key::decode_public_key;
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, FrameKind, frame_bytes};

/// Runs `tfhe-sbc-keys` with `args`.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-keys"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs `tfhe-sbc-keys` with `args` and checks that it succeeded; returns its stdout.
pub fn run_ok(args: &[&str]) -> String {
    let output = run(args);
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Checks that `output` is a failure with exit code 2, nothing on stdout, and exactly one line on stderr,
/// `error: ...`, that contains every one of `needles`. Returns the line.
pub fn assert_error(output: &Output, needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "exit code; stderr: {stderr}");
    assert!(
        output.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line of error, got: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for needle in needles {
        assert!(lines[0].contains(needle), "{needle:?} not in: {stderr}");
    }
    lines[0].to_owned()
}

/// The permission bits of `path`.
pub fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A copy of the key set in `from`, in a new temporary directory, to damage: the two tfhe-rs key files are
/// symbolic links (tens of MB, only read), everything else is copied.
pub fn scratch_copy(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    for name in ["client_key.bin", "server_key.bin"] {
        std::os::unix::fs::symlink(from.join(name), to.path().join(name)).unwrap();
    }
    for name in ["public_key.tspk", "key_store.bin"] {
        std::fs::copy(from.join(name), to.path().join(name)).unwrap();
    }
    std::fs::create_dir(to.path().join("devices")).unwrap();
    for entry in std::fs::read_dir(from.join("devices")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.path().join("devices").join(entry.file_name())).unwrap();
    }
    to
}

/// The credential file of `device_id` in `dir`.
pub fn credentials_path(dir: &Path, device_id: u64) -> PathBuf {
    dir.join("devices").join(format!("{device_id}.tsdc"))
}

/// What a device built from its credential file sends: the frames of `message` (one message), encrypted
/// as its mode says (seeded frames with its secret key, or public-key frames).
pub fn device_frames<const N: usize, const K: usize>(
    credentials_file: &[u8],
    message: &[u8],
    seed: u8,
) -> Vec<Vec<u8>> {
    let Credentials {
        mode,
        parameters,
        credentials,
        key_material,
    } = decode_credentials(credentials_file).unwrap();
    let rng = <Blake2bXof as rand_core::SeedableRng>::from_seed([seed; 32]);
    let mut counter = FrameCounter::from_boot_counter(0);
    let mut body = [0u32; N];
    let mut frames = Vec::new();
    match mode {
        KeyMode::PublicKey => {
            let mut pk_body = vec![0u32; N];
            let header = decode_public_key(key_material, &mut pk_body).unwrap();
            assert_eq!(header.key_id, credentials.key_id());
            let mut encryptor =
                Box::new(PublicKeyEncryptor::<N, K>::new(&parameters, &header.seed, &pk_body, rng).unwrap());
            let outgoing = counter.begin_message(message.len(), N / 8).unwrap();
            let mut mask = vec![0u32; K * N];
            let mut out = vec![0u8; frame_bytes(FrameKind::PublicKey, K, N, 32, 32)];
            for chunk in chunks(message, N / 8) {
                let len = encryptor
                    .encrypt_public_key_frame(&credentials, &outgoing, &chunk, &mut mask, &mut body, &mut out)
                    .unwrap();
                frames.push(out[..len].to_vec());
            }
        }
        _ => {
            let mut bits = vec![0u8; K * N];
            unpack_secret_key(key_material, &mut bits).unwrap();
            let key = GlweSecretKey::from_container(bits, PolynomialSize(N)).unwrap();
            let mut encryptor = Box::new(GlweEncryptor::<N, K>::new(&parameters, &key, rng).unwrap());
            let outgoing = encryptor.begin_message(&mut counter, message.len()).unwrap();
            let mut out = vec![0u8; frame_bytes(FrameKind::Seeded, K, N, 32, 32)];
            for chunk in chunks(message, N / 8) {
                let len = encryptor
                    .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut out)
                    .unwrap();
                frames.push(out[..len].to_vec());
            }
        }
    }
    frames
}

/// Feeds `frames` to `receive` until the message completes.
pub fn receive_message<E: std::fmt::Debug>(
    frames: &[Vec<u8>],
    mut receive: impl FnMut(&[u8], Instant) -> Result<Received, E>,
) -> Message {
    let mut complete = None;
    for frame in frames {
        assert!(complete.is_none(), "frames after the message completed");
        complete = receive(frame, Instant::now()).unwrap().into_message();
    }
    complete.expect("the message completes")
}

/// Checks that `bits` decrypt under `client_key` to the bits of `message`, least-significant bit first.
pub fn assert_decrypts(client_key: &ClientKey, bits: &[Ciphertext], message: &[u8]) {
    assert_eq!(bits.len(), 8 * message.len());
    for (i, bit) in bits.iter().enumerate() {
        let expected = (message[i / 8] >> (i % 8)) & 1 == 1;
        assert_eq!(client_key.decrypt(bit), expected, "bit {i}");
    }
}
