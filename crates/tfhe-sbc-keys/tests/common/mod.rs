//! Helpers shared by the test files: make a key set, run the binary, check its errors, build devices from
//! credential files.
#![allow(dead_code, clippy::unwrap_used)]

use rand_core::SeedableRng;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;
use tempfile::TempDir;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::client_key::ClientKey;
use tfhe_sbc_adapter::intake::{Message, Received};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::std_io::MessageEncryptor;

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

/// A key set made by the binary for a whole test file, in a temporary directory's `keys/`.
pub struct KeySet {
    root: TempDir,
    /// What `init` printed.
    pub init_output: String,
    /// What each `issue` printed, in order.
    pub issue_outputs: Vec<String>,
}

impl KeySet {
    /// Runs `init --dir <DIR>` with `init_args`, then `issue --dir <DIR> --device-id <ID> --mode <MODE>` for
    /// each of `devices`, printing how long each step took.
    pub fn new(init_args: &[&str], devices: &[(u64, &str)]) -> Self {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("keys");
        let d = s(&dir);
        let t = Instant::now();
        let init_output = run_ok(&[&["init", "--dir", d][..], init_args].concat());
        eprintln!("init {}: {:.1} s", init_args.join(" "), t.elapsed().as_secs_f64());
        let t = Instant::now();
        let issue_outputs = devices
            .iter()
            .map(|(id, mode)| run_ok(&["issue", "--dir", d, "--device-id", &id.to_string(), "--mode", mode]))
            .collect();
        eprintln!("{} issues: {:.1} s", devices.len(), t.elapsed().as_secs_f64());
        Self {
            root,
            init_output,
            issue_outputs,
        }
    }

    /// The key set of `init_args` and `devices` ([`Self::new`]), made once for the whole test binary.
    pub fn shared(init_args: &[&str], devices: &[(u64, &str)]) -> &'static Self {
        static KEY_SET: std::sync::OnceLock<KeySet> = std::sync::OnceLock::new();
        KEY_SET.get_or_init(|| Self::new(init_args, devices))
    }

    /// The key set's directory.
    pub fn dir(&self) -> PathBuf {
        self.root.path().join("keys")
    }
}

/// `path` as a command-line argument.
pub fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A copy of the key set in `from`, in a new temporary directory, to damage: the two tfhe-rs key files are
/// symbolic links (tens of MB, only read), everything else is copied (the public keys if the set has them).
pub fn scratch_copy(from: &Path) -> TempDir {
    let to = tempfile::tempdir().unwrap();
    for name in ["client_key.bin", "server_key.bin"] {
        std::os::unix::fs::symlink(from.join(name), to.path().join(name)).unwrap();
    }
    for name in ["public_key.tspk", "compact_public_key.tscp", "key_store.bin"] {
        if from.join(name).exists() {
            std::fs::copy(from.join(name), to.path().join(name)).unwrap();
        }
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
/// as its mode says (seeded frames with its secret key, or public-key frames), its CSPRNG seeded from `seed`.
pub fn device_frames(credentials_file: &[u8], message: &[u8], seed: u8) -> Vec<Vec<u8>> {
    let file = decode_credentials(credentials_file).unwrap();
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    let mut encryptor = MessageEncryptor::new(&file, &mut rng).unwrap();
    let outgoing = FrameCounter::from_boot_counter(0)
        .begin_message(message.len(), encryptor.chunk_bytes())
        .unwrap();
    let frames = encryptor
        .encrypt_message(&file.credentials, &outgoing, message)
        .unwrap();
    frames.into_iter().map(|frame| frame.bytes).collect()
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
