//! `init`: a new key set (tfhe-rs keys, the seeded public key, an empty key store; with `--compact-list`, the
//! compact public key) in a new directory.

use super::compact_list::{COMPACT_LIST_SETS, compact_list_config, compact_public_key_file};
use super::entropy::os_rng;
use super::report::{describe_key_set, size, spinner};
use crate::KeySetParameters;
use crate::error::Error;
use crate::error::provisioning;
use crate::files::{
    self, CLIENT_KEY_FILE, COMPACT_PUBLIC_KEY_FILE, DEVICES_DIR, DirLock, KEY_STORE_FILE, PUBLIC_KEY_FILE, PUBLIC_MODE,
    SECRET_MODE, SERVER_KEY_FILE,
};
use rand_core::Rng;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::interop::big_key::{BooleanSet, generate_keys};
use tfhe_sbc_adapter::interop::integer::integer_server_key_fingerprint;
use tfhe_sbc_adapter::interop::integer::public_key::integer_public_key_from_client_key;
use tfhe_sbc_adapter::interop::{public_key_from_client_key, server_key_fingerprint};
use tfhe_sbc_adapter::key_set::client_key::{
    SecretClientKey, SecretIntegerClientKey, encode_client_key, encode_integer_client_key,
};
use tfhe_sbc_adapter::key_set::envelope::{KeyFileEnvelope, KeyFileHeader, KeyKind};
use tfhe_sbc_adapter::key_set::key_store::KeyStore;
use tfhe_sbc_adapter::key_set::server_key::{encode_integer_server_key, encode_server_key};
use tfhe_sbc_adapter::key_set::short_hex;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use zeroize::Zeroizing;

/// `init --parameters integer`: a new integer key set in `dir` (created with mode 0700 if needed, refused if
/// it holds a key set already): tfhe-rs's high-level `ClientKey` and `ServerKey` of its default
/// `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` (seeded by tfhe-rs from the OS), the seeded public key
/// under the client key's GLWE key (`u64` body words, 16,443 bytes) and an empty key store bound to the
/// server key ([`integer_server_key_fingerprint`]). `key_id` is the key set's key id (random if `None`).
pub fn init_integer(dir: &Path, key_id: Option<u32>) -> Result<(), Error> {
    init_integer_set(dir, key_id, false)
}

/// `init --parameters integer --compact-list`: [`init_integer`], with tfhe-rs's keys built for compact lists
/// too (`ConfigBuilder::use_dedicated_compact_public_key_parameters` with
/// `PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` and its casting set
/// `PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`): the client key also holds the dedicated
/// compact private key, the server key the casting key, and `compact_public_key.tscp` (0644, 32,832 bytes)
/// holds tfhe-rs's `CompactPublicKey` as the raw `[a | b]` a device encrypts lists under
/// (`tfhe_sbc_device::files::compact_public_key`). The compute keys are the integer set's, so every other key
/// mode works on this key set as on any integer one.
pub fn init_compact_list(dir: &Path, key_id: Option<u32>) -> Result<(), Error> {
    init_integer_set(dir, key_id, true)
}

/// [`init_integer`], and [`init_compact_list`] if `compact_list`.
fn init_integer_set(dir: &Path, key_id: Option<u32>, compact_list: bool) -> Result<(), Error> {
    let parameters = KeySetParameters::Integer;
    let (_lock, mut rng, key_id) = prepare_init(dir, key_id)?;
    let (keys, key_generation) = generate(parameters, || {
        let config = if compact_list {
            compact_list_config()
        } else {
            tfhe::ConfigBuilder::default().build()
        };
        let client_key = SecretIntegerClientKey::checked(tfhe::ClientKey::generate(config))?;
        let server_key = client_key.get().generate_server_key();
        Ok((client_key, server_key))
    });
    let (client_key, server_key) = keys.map_err(|message| Error::Provisioning { message })?;

    let fingerprint = integer_server_key_fingerprint(&server_key).map_err(provisioning)?;
    let header = |kind| KeyFileEnvelope {
        kind,
        parameters,
        key_id,
        server_key_fingerprint: fingerprint,
    };
    let server_file = encode_integer_server_key(&server_key, &header(KeyKind::ServerKey))?;
    drop(server_key);
    let client_file = encode_integer_client_key(client_key.get(), &header(KeyKind::ClientKey))?;
    let public_key = integer_public_key_from_client_key(client_key.get(), key_id, &mut rng).map_err(provisioning)?;
    let compact_public_key = if compact_list {
        Some(compact_public_key_file(client_key.get(), key_id, fingerprint)?)
    } else {
        None
    };
    drop(client_key);
    write_key_set(
        dir,
        &header(KeyKind::ServerKey),
        key_generation,
        &NewFiles {
            server_key: &server_file,
            public_key: &public_key,
            compact_public_key: compact_public_key.as_deref(),
            client_key: &client_file,
        },
    )
}

/// `init`: a new key set in `dir` (created with mode 0700 if needed, refused if it holds a key set
/// already): the tfhe-rs client and server keys of `set` (seeded from the OS), the seeded public key and an
/// empty key store bound to the server key. `key_id` is the key set's key id (random if `None`).
pub fn init(dir: &Path, set: BooleanSet, key_id: Option<u32>) -> Result<(), Error> {
    let (_lock, mut rng, key_id) = prepare_init(dir, key_id)?;
    let ((client_key, server_key), key_generation) =
        generate(KeySetParameters::Boolean(set), || generate_keys(set, &mut rng));
    let client_key = SecretClientKey::new(client_key);

    let fingerprint = server_key_fingerprint(&server_key);
    let header = |kind| KeyFileHeader {
        kind,
        set,
        key_id,
        server_key_fingerprint: fingerprint,
    };
    let server_file = encode_server_key(&server_key, &header(KeyKind::ServerKey))?;
    drop(server_key);
    let client_file = encode_client_key(client_key.get(), &header(KeyKind::ClientKey))?;
    let public_key = public_key_from_client_key(set, client_key.get(), key_id, &mut rng).map_err(provisioning)?;
    drop(client_key);
    write_key_set(
        dir,
        &header(KeyKind::ServerKey).envelope(),
        key_generation,
        &NewFiles {
            server_key: &server_file,
            public_key: &public_key,
            compact_public_key: None,
            client_key: &client_file,
        },
    )
}

/// The files of a key set that `init` refuses to overwrite.
fn in_the_way(dir: &Path) -> Option<PathBuf> {
    [
        CLIENT_KEY_FILE,
        SERVER_KEY_FILE,
        PUBLIC_KEY_FILE,
        COMPACT_PUBLIC_KEY_FILE,
        KEY_STORE_FILE,
        DEVICES_DIR,
    ]
    .iter()
    .map(|name| dir.join(name))
    .find(|path| path.exists())
}

/// The key set's own `.gitignore`: everything in it.
const GITIGNORE: &[u8] = b"# A tfhe-sbc key set (tfhe-sbc-keys init): secret keys. Never commit it.\n*\n";

/// Creates `dir` (mode 0700) and takes its lock, unless it holds (part of) a key set already; then draws
/// the CSPRNG and the key set's key id (`key_id`, or random).
fn prepare_init(dir: &Path, key_id: Option<u32>) -> Result<(DirLock, Blake2bXof, u32), Error> {
    if let Some(path) = in_the_way(dir) {
        return Err(Error::AlreadyInitialized { path });
    }
    files::create_dir(dir)?;
    let lock = DirLock::acquire(dir)?;
    if let Some(path) = in_the_way(dir) {
        return Err(Error::AlreadyInitialized { path });
    }
    // The whole key set is ignored by git, whatever the directory's name and wherever it is: it holds the
    // key that decrypts everything and every device's MAC key, one `git add .` from a commit otherwise.
    files::write_atomic(&dir.join(".gitignore"), GITIGNORE, 0o600)?;
    let mut rng = os_rng()?;
    let key_id = key_id.unwrap_or_else(|| rng.next_u32());
    Ok((lock, rng, key_id))
}

/// Runs the tfhe-rs key generation `keys` of `parameters` under a spinner; returns the keys and the time it
/// took.
fn generate<T>(parameters: KeySetParameters, keys: impl FnOnce() -> T) -> (T, Duration) {
    let spinner = spinner(format!("generating the tfhe-rs keys ({})", parameters.tfhe_name()));
    let started = Instant::now();
    let keys = keys();
    spinner.finish_and_clear();
    (keys, started.elapsed())
}

/// The encoded key files `init` writes besides the key store.
struct NewFiles<'a> {
    /// `server_key.bin`.
    server_key: &'a [u8],
    /// `public_key.tspk`.
    public_key: &'a [u8],
    /// `compact_public_key.tscp`, if the key set takes compact lists.
    compact_public_key: Option<&'a [u8]>,
    /// `client_key.bin`, wiped by its owner.
    client_key: &'a Zeroizing<Vec<u8>>,
}

/// Writes the key set's files (atomically, with their modes: the new files, an empty key store bound to
/// `server`'s fingerprint) and `devices/`, and prints the summary.
fn write_key_set(
    dir: &Path,
    server: &KeyFileEnvelope,
    key_generation: Duration,
    new: &NewFiles<'_>,
) -> Result<(), Error> {
    let store = KeyStore::with_fingerprint(server.server_key_fingerprint).encode();
    // Each file: its name, bytes, mode, and who it is for.
    let mut written = vec![
        (
            SERVER_KEY_FILE,
            new.server_key,
            PUBLIC_MODE,
            "the cloud (adapter): computes, decrypts nothing",
        ),
        (PUBLIC_KEY_FILE, new.public_key, PUBLIC_MODE, "public-key devices"),
        (
            KEY_STORE_FILE,
            &store[..],
            SECRET_MODE,
            "the cloud (adapter): MAC keys, no devices yet",
        ),
        (
            CLIENT_KEY_FILE,
            &new.client_key[..],
            SECRET_MODE,
            "the trusted party only: decrypts everything",
        ),
    ];
    if let Some(compact) = new.compact_public_key {
        written.insert(
            2,
            (
                COMPACT_PUBLIC_KEY_FILE,
                compact,
                PUBLIC_MODE,
                "compact-list devices: tfhe-rs's compact public key [a | b]",
            ),
        );
    }

    files::create_dir(&dir.join(DEVICES_DIR))?;
    for (name, bytes, mode, _) in &written {
        files::write_atomic(&dir.join(name), bytes, *mode)?;
    }
    println!("new key set in {}", dir.display());
    println!("  parameters      {}", describe_key_set(server.parameters));
    println!("  key id          {:#010x}", server.key_id);
    println!(
        "  server key      fingerprint {}",
        short_hex(&server.server_key_fingerprint)
    );
    if new.compact_public_key.is_some() {
        println!("  compact lists   {COMPACT_LIST_SETS} (the casting key is in the server key)");
    }
    println!("  key generation  {:.2?}", key_generation);
    for (name, bytes, mode, who) in &written {
        println!("  {name:<23} {mode:04o}  {:>10}  {who}", size(bytes.len()));
    }
    println!(
        "next: tfhe-sbc-keys issue --dir {} --device-id <ID> --mode <MODE>",
        dir.display()
    );
    Ok(())
}
