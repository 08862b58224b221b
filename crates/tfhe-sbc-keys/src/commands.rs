//! The three commands: `init` (boolean key sets) or `init_integer` (the integer key set), `issue`, `show`.
//! Each prints what it did to stdout and returns a typed [`Error`] on failure.

use crate::error::{Error, RESTORE};
use crate::files::{
    self, CLIENT_KEY_FILE, DEVICES_DIR, DirLock, KEY_STORE_FILE, PUBLIC_KEY_FILE, PUBLIC_MODE, SECRET_MODE,
    SERVER_KEY_FILE, credentials_path,
};
use crate::{KeySetParameters, parameters_name};
use indicatif::{ProgressBar, ProgressStyle};
use rand_core::Rng;
use std::path::Path;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::interop::big_key::{BooleanSet, generate_keys, glwe_key_from_client_key};
use tfhe_sbc_adapter::interop::integer::integer_server_key_fingerprint;
use tfhe_sbc_adapter::interop::integer::per_device::{
    integer_credentials_file, provision_integer_fleet_device, provision_integer_per_device,
};
use tfhe_sbc_adapter::interop::{
    PublicKeyDevice, provision_per_device, public_key_from_client_key, server_key_fingerprint,
};
use tfhe_sbc_adapter::key_set::client_key::{
    SecretClientKey, SecretIntegerClientKey, encode_client_key, encode_integer_client_key, read_client_key,
    read_integer_client_key,
};
use tfhe_sbc_adapter::key_set::envelope::{KeyFileEnvelope, KeyFileHeader, KeyKind};
use tfhe_sbc_adapter::key_set::key_store::{DeviceKeyMaterial, DeviceRecord, KeyMode, KeyStore};
use tfhe_sbc_adapter::key_set::server_key::{encode_integer_server_key, encode_server_key, read_server_key_envelope};
use tfhe_sbc_adapter::key_set::short_hex;
use tfhe_sbc_core::entities::GlweSecretKeyOwned;
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::parameters::{GlweParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128};
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::credentials::{
    credentials_file_bytes, decode_credentials, encode_credentials, key_material_bytes,
};
use tfhe_sbc_device::files::public_key::decode_public_key;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use zeroize::Zeroizing;

fn os_rng() -> Result<Blake2bXof, Error> {
    tfhe_sbc_device::csprng::seeding::from_os_entropy().map_err(|_| Error::Entropy)
}

fn provisioning(e: impl core::fmt::Display) -> Error {
    Error::Provisioning { message: e.to_string() }
}

fn check_dir(dir: &Path) -> Result<(), Error> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Error::Missing {
            path: dir.to_owned(),
            what: "key set directory",
        })
    }
}

fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    } else if bytes >= 1 << 10 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

fn describe(set: BooleanSet) -> String {
    format!(
        "{} ({}, set {}: k = {}, N = {}; {})",
        parameters_name(set),
        set.tfhe_name(),
        set.glwe_parameters().id().0,
        set.glwe_dimension(),
        set.polynomial_size(),
        if set.is_big_key() {
            "gates take extracted bits as they are"
        } else {
            "a key switch per bit at intake"
        }
    )
}

fn describe_key_set(parameters: KeySetParameters) -> String {
    match parameters {
        KeySetParameters::Boolean(set) => describe(set),
        KeySetParameters::Integer => {
            let glwe = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
            format!(
                "integer ({}, set {}: k = {}, N = {}, q = 2^64; FheUint8 .. FheUint64, 2-bit blocks; fleet blocks \
                 are extracted as they are, per-device blocks key-switched and bootstrapped once)",
                parameters.tfhe_name(),
                glwe.id().0,
                glwe.glwe_dimension().0,
                glwe.polynomial_size().0,
            )
        }
    }
}

/// The files of a key set that `init` refuses to overwrite.
fn in_the_way(dir: &Path) -> Option<std::path::PathBuf> {
    [
        CLIENT_KEY_FILE,
        SERVER_KEY_FILE,
        PUBLIC_KEY_FILE,
        KEY_STORE_FILE,
        DEVICES_DIR,
    ]
    .iter()
    .map(|name| dir.join(name))
    .find(|path| path.exists())
}

/// Creates `dir` (mode 0700) and takes its lock, unless it holds (part of) a key set already.
fn prepare_init(dir: &Path) -> Result<DirLock, Error> {
    if let Some(path) = in_the_way(dir) {
        return Err(Error::AlreadyInitialized { path });
    }
    files::create_dir(dir)?;
    let lock = DirLock::acquire(dir)?;
    if let Some(path) = in_the_way(dir) {
        return Err(Error::AlreadyInitialized { path });
    }
    Ok(lock)
}

fn spinner(message: String) -> ProgressBar {
    let spinner = ProgressBar::new_spinner();
    spinner.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    spinner.set_message(message);
    spinner.enable_steady_tick(Duration::from_millis(100));
    spinner
}

/// A file `init` writes: its name, bytes, mode, and who it is for.
type Written<'a> = (&'static str, &'a [u8], u32, &'static str);

/// Writes the key set's files (atomically, with their modes) and `devices/`, and prints the summary.
fn write_key_set(
    dir: &Path,
    parameters: KeySetParameters,
    key_id: u32,
    fingerprint: &[u8; 32],
    key_generation: Duration,
    written: &[Written<'_>],
) -> Result<(), Error> {
    files::create_dir(&dir.join(DEVICES_DIR))?;
    for (name, bytes, mode, _) in written {
        files::write_atomic(&dir.join(name), bytes, *mode)?;
    }
    println!("new key set in {}", dir.display());
    println!("  parameters      {}", describe_key_set(parameters));
    println!("  key id          {key_id:#010x}");
    println!("  server key      fingerprint {}", short_hex(fingerprint));
    println!("  key generation  {:.2?}", key_generation);
    for (name, bytes, mode, who) in written {
        println!("  {name:<16} {mode:04o}  {:>10}  {who}", size(bytes.len()));
    }
    println!(
        "next: tfhe-sbc-keys issue --dir {} --device-id <ID> --mode <MODE>",
        dir.display()
    );
    Ok(())
}

/// `init --parameters integer`: a new integer key set in `dir` (created with mode 0700 if needed, refused if
/// it holds a key set already): tfhe-rs's high-level `ClientKey` and `ServerKey` of its default
/// `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` (seeded by tfhe-rs from the OS), and an empty key store
/// bound to the server key ([`integer_server_key_fingerprint`]). No public key: integer devices are fleet
/// or per-device. `key_id` is the key set's key id (random if `None`).
pub fn init_integer(dir: &Path, key_id: Option<u32>) -> Result<(), Error> {
    let _lock = prepare_init(dir)?;
    let mut rng = os_rng()?;
    let key_id = key_id.unwrap_or_else(|| rng.next_u32());
    let parameters = KeySetParameters::Integer;
    let spinner = spinner(format!("generating the tfhe-rs keys ({})", parameters.tfhe_name()));
    let started = Instant::now();
    let client_key = tfhe::ClientKey::generate(tfhe::ConfigBuilder::default().build());
    let client_key = SecretIntegerClientKey::checked(client_key).map_err(|message| Error::Provisioning { message })?;
    let server_key = client_key.get().generate_server_key();
    spinner.finish_and_clear();
    let key_generation = started.elapsed();

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
    drop(client_key);
    let store = KeyStore::with_fingerprint(fingerprint).encode();
    write_key_set(
        dir,
        parameters,
        key_id,
        &fingerprint,
        key_generation,
        &[
            (
                SERVER_KEY_FILE,
                &server_file[..],
                PUBLIC_MODE,
                "the cloud (adapter): computes, decrypts nothing",
            ),
            (
                KEY_STORE_FILE,
                &store[..],
                SECRET_MODE,
                "the cloud (adapter): MAC keys, no devices yet",
            ),
            (
                CLIENT_KEY_FILE,
                &client_file[..],
                SECRET_MODE,
                "the trusted party only: decrypts everything",
            ),
        ],
    )
}

/// `init`: a new key set in `dir` (created with mode 0700 if needed, refused if it holds a key set
/// already): the tfhe-rs client and server keys of `set` (seeded from the OS), the seeded public key and an
/// empty key store bound to the server key. `key_id` is the key set's key id (random if `None`).
pub fn init(dir: &Path, set: BooleanSet, key_id: Option<u32>) -> Result<(), Error> {
    let _lock = prepare_init(dir)?;
    let mut rng = os_rng()?;
    let key_id = key_id.unwrap_or_else(|| rng.next_u32());

    let spinner = spinner(format!("generating the tfhe-rs keys ({})", set.tfhe_name()));
    let started = Instant::now();
    let (client_key, server_key) = generate_keys(set, &mut rng);
    let client_key = SecretClientKey::new(client_key);
    spinner.finish_and_clear();
    let key_generation = started.elapsed();

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
    let store = KeyStore::with_fingerprint(fingerprint).encode();
    write_key_set(
        dir,
        KeySetParameters::Boolean(set),
        key_id,
        &fingerprint,
        key_generation,
        &[
            (
                SERVER_KEY_FILE,
                &server_file[..],
                PUBLIC_MODE,
                "the cloud (adapter): computes, decrypts nothing",
            ),
            (PUBLIC_KEY_FILE, &public_key[..], PUBLIC_MODE, "public-key devices"),
            (
                KEY_STORE_FILE,
                &store[..],
                SECRET_MODE,
                "the cloud (adapter): MAC keys, no devices yet",
            ),
            (
                CLIENT_KEY_FILE,
                &client_file[..],
                SECRET_MODE,
                "the trusted party only: decrypts everything",
            ),
        ],
    )
}

/// Two copies of fresh credentials: the device's and the key store's. The key is copied from one `MacKey`
/// into the other directly, with no stray copy on the stack.
fn credential_pair(
    device_id: u64,
    key_id: u32,
    rng: &mut Blake2bXof,
) -> Result<(DeviceCredentials, DeviceCredentials), Error> {
    let mac_key = MacKey::generate(rng);
    let copy = MacKey::from_slice(mac_key.as_bytes()).map_err(provisioning)?;
    Ok((
        DeviceCredentials::new(device_id, key_id, mac_key),
        DeviceCredentials::new(device_id, key_id, copy),
    ))
}

/// A secret-key credential file: the packed key, wiped on drop.
fn secret_key_credentials(
    mode: KeyMode,
    params: &GlweParameters,
    credentials: &DeviceCredentials,
    key: &GlweSecretKeyOwned,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let mut packed = Zeroizing::new(vec![0u8; key_material_bytes(mode, params)]);
    pack_secret_key(key.as_bytes(), &mut packed).map_err(provisioning)?;
    let mut out = Zeroizing::new(vec![0u8; credentials_file_bytes(mode, params)]);
    let len = encode_credentials(mode, params, credentials, &packed, &mut out).map_err(provisioning)?;
    out.truncate(len);
    Ok(out)
}

/// The client key, checked against the server key's header: same key set.
fn load_client_key(dir: &Path, server: &KeyFileHeader) -> Result<SecretClientKey, Error> {
    let path = dir.join(CLIENT_KEY_FILE);
    let (client, key) = read_client_key(&path)?;
    if client.key_id != server.key_id
        || client.set != server.set
        || client.server_key_fingerprint != server.server_key_fingerprint
    {
        return Err(Error::Mismatch {
            message: format!(
                "{} (key id {:#010x}, {}) and {} (key id {:#010x}, {}) come from different init runs: put the \
                 client key and the server key of one key set in --dir",
                path.display(),
                client.key_id,
                parameters_name(client.set),
                dir.join(SERVER_KEY_FILE).display(),
                server.key_id,
                parameters_name(server.set),
            ),
        });
    }
    Ok(key)
}

/// The integer client key, checked against the server key's envelope: same key set.
fn load_integer_client_key(dir: &Path, server: &KeyFileEnvelope) -> Result<SecretIntegerClientKey, Error> {
    let path = dir.join(CLIENT_KEY_FILE);
    let (client, key) = read_integer_client_key(&path)?;
    if client.key_id != server.key_id || client.server_key_fingerprint != server.server_key_fingerprint {
        return Err(Error::Mismatch {
            message: format!(
                "{} (key id {:#010x}) and {} (key id {:#010x}) come from different init runs: put the client key \
                 and the server key of one key set in --dir",
                path.display(),
                client.key_id,
                dir.join(SERVER_KEY_FILE).display(),
                server.key_id,
            ),
        });
    }
    Ok(key)
}

/// The key store of `dir`, checked to be bound to `server`'s server key.
fn load_key_store(dir: &Path, server: &KeyFileEnvelope) -> Result<KeyStore, Error> {
    let path = dir.join(KEY_STORE_FILE);
    let store = KeyStore::read_file(&path)?;
    if store.server_key_fingerprint() != server.server_key_fingerprint {
        return Err(Error::Mismatch {
            message: format!(
                "key store {} is bound to another server key (fingerprint {}; {} is {}): run init again or point \
                 --dir at the directory whose server key it was made for",
                path.display(),
                short_hex(&store.server_key_fingerprint()),
                dir.join(SERVER_KEY_FILE).display(),
                short_hex(&server.server_key_fingerprint),
            ),
        });
    }
    Ok(store)
}

/// The public-key file of `dir`, checked to belong to `server`'s key set.
fn load_public_key(dir: &Path, server: &KeyFileHeader) -> Result<Vec<u8>, Error> {
    let path = dir.join(PUBLIC_KEY_FILE);
    let bytes = files::read(&path, "public key")?;
    let mut body = vec![0u32; server.set.polynomial_size()];
    let header = decode_public_key(&bytes, &mut body).map_err(|e| Error::BadFile {
        path: path.clone(),
        problem: format!("not a valid public-key file for {}: {e}", parameters_name(server.set)),
        fix: RESTORE,
    })?;
    if header.key_id != server.key_id || header.parameters.id() != server.set.glwe_parameters().id() {
        return Err(Error::Mismatch {
            message: format!(
                "{} (key id {:#010x}, parameter set {}) is not the public key of the key set in {} (key id \
                 {:#010x}, parameter set {}): put the public key of this key set in --dir",
                path.display(),
                header.key_id,
                header.parameters.id().0,
                dir.display(),
                server.key_id,
                server.set.glwe_parameters().id().0,
            ),
        });
    }
    Ok(bytes.to_vec())
}

/// `issue`: provisions device `device_id` in `mode`. Writes its credential file (`devices/<ID>.tsdc`, mode
/// 0600) and adds its record to the key store (rewritten atomically), with the key set's parameter set.
/// `key_id` defaults to the key set's; only per-device keys may take another (fleet and public-key devices
/// encrypt under the key set's key). An integer key set takes per-device and fleet devices.
pub fn issue(dir: &Path, device_id: u64, mode: KeyMode, key_id: Option<u32>) -> Result<(), Error> {
    check_dir(dir)?;
    let _lock = DirLock::acquire(dir)?;
    let server = read_server_key_envelope(&dir.join(SERVER_KEY_FILE))?;
    let parameters = server.parameters;
    let allowed = match (parameters, mode) {
        (KeySetParameters::Boolean(set), KeyMode::PerDeviceSecretKey) => set == BooleanSet::TfheLib,
        (KeySetParameters::Integer, KeyMode::PublicKey) => false,
        _ => true,
    };
    if !allowed {
        return Err(Error::ModeNotAllowed {
            mode: mode.name(),
            parameters: parameters.name(),
        });
    }
    let key_id = match key_id {
        None => server.key_id,
        Some(k) if k == server.key_id || mode == KeyMode::PerDeviceSecretKey => k,
        Some(k) => {
            return Err(Error::BadArgument {
                message: format!(
                    "--key-id {k:#010x} is not the key set's key id {:#010x}: {} devices encrypt under the key set's \
                     key, so their frames carry its id; omit --key-id",
                    server.key_id,
                    mode.name()
                ),
            });
        }
    };
    let mut store = load_key_store(dir, &server)?;
    let store_path = dir.join(KEY_STORE_FILE);
    if store.get(device_id).is_some() {
        return Err(Error::DuplicateDevice {
            device_id,
            path: store_path,
        });
    }
    let credentials_file_path = credentials_path(dir, device_id);
    if credentials_file_path.exists() {
        return Err(Error::OrphanCredentials {
            device_id,
            path: credentials_file_path,
        });
    }

    let mut rng = os_rng()?;
    let started = Instant::now();
    let (credentials_file, record) = match parameters {
        KeySetParameters::Boolean(set) => boolean_device(dir, &server, set, mode, device_id, key_id, &mut rng)?,
        KeySetParameters::Integer => integer_device(dir, &server, mode, device_id, key_id, &mut rng)?,
    };
    let stored = record.key().stored_bytes();
    let provisioning_time = started.elapsed();

    files::create_dir(&dir.join(DEVICES_DIR))?;
    files::write_atomic(&credentials_file_path, &credentials_file, SECRET_MODE)?;
    store.insert(record).map_err(|_| Error::DuplicateDevice {
        device_id,
        path: store_path.clone(),
    })?;
    let encoded = store.encode();
    if let Err(e) = files::write_atomic(&store_path, &encoded, SECRET_MODE) {
        let _ = std::fs::remove_file(&credentials_file_path);
        return Err(e);
    }

    println!(
        "device {device_id}: {} mode, key id {key_id:#010x}, parameter set {} ({:.2?})",
        mode.name(),
        parameters.name(),
        provisioning_time
    );
    println!(
        "  {}  {SECRET_MODE:04o}  {:>9}  to the device only: {} and its MAC key",
        credentials_file_path.display(),
        size(credentials_file.len()),
        match mode {
            KeyMode::PerDeviceSecretKey => "its own secret key",
            KeyMode::FleetSecretKey => "the client key's GLWE key (shared by the fleet)",
            KeyMode::PublicKey => "the public key (nothing that decrypts)",
            _ => "its key",
        }
    );
    println!(
        "  {}  {SECRET_MODE:04o}  {:>9}  to the cloud: {} device{}, {} of key material for this one",
        store_path.display(),
        size(encoded.len()),
        store.len(),
        if store.len() == 1 { "" } else { "s" },
        size(stored),
    );
    Ok(())
}

/// A device of a boolean key set: its credential file and its key store record.
fn boolean_device(
    dir: &Path,
    envelope: &KeyFileEnvelope,
    set: BooleanSet,
    mode: KeyMode,
    device_id: u64,
    key_id: u32,
    rng: &mut Blake2bXof,
) -> Result<(Zeroizing<Vec<u8>>, DeviceRecord), Error> {
    let server = KeyFileHeader {
        kind: envelope.kind,
        set,
        key_id: envelope.key_id,
        server_key_fingerprint: envelope.server_key_fingerprint,
    };
    let params = set.glwe_parameters();
    let with_set =
        |credentials, key| DeviceRecord::with_parameter_set(credentials, params.id(), key).map_err(provisioning);
    Ok(match mode {
        KeyMode::PerDeviceSecretKey => {
            let client_key = load_client_key(dir, &server)?;
            let (secrets, record) =
                provision_per_device(client_key.get(), device_id, key_id, rng).map_err(provisioning)?;
            let file =
                secret_key_credentials(KeyMode::PerDeviceSecretKey, &params, &secrets.credentials, &secrets.key)?;
            (file, record)
        }
        KeyMode::FleetSecretKey => {
            let client_key = load_client_key(dir, &server)?;
            let key = glwe_key_from_client_key(set, client_key.get()).map_err(provisioning)?;
            let (device, cloud) = credential_pair(device_id, key_id, rng)?;
            let file = secret_key_credentials(KeyMode::FleetSecretKey, &params, &device, &key)?;
            (file, with_set(cloud, DeviceKeyMaterial::Fleet)?)
        }
        KeyMode::PublicKey => {
            let public_key = load_public_key(dir, &server)?;
            let (credentials, cloud) = credential_pair(device_id, key_id, rng)?;
            let device = PublicKeyDevice {
                public_key,
                credentials,
            };
            let file = device.credentials_file().map_err(provisioning)?;
            (file, with_set(cloud, DeviceKeyMaterial::PublicKey)?)
        }
        other => {
            return Err(Error::BadArgument {
                message: format!("key mode {} is not one this build provisions", other.name()),
            });
        }
    })
}

/// A device of the integer key set (per-device or fleet): its credential file (parameter set 4, its key
/// packed in 256 bytes) and its key store record.
fn integer_device(
    dir: &Path,
    envelope: &KeyFileEnvelope,
    mode: KeyMode,
    device_id: u64,
    key_id: u32,
    rng: &mut Blake2bXof,
) -> Result<(Zeroizing<Vec<u8>>, DeviceRecord), Error> {
    let client_key = load_integer_client_key(dir, envelope)?;
    let (secrets, record, key_mode) = match mode {
        KeyMode::PerDeviceSecretKey => {
            let (secrets, record) =
                provision_integer_per_device(client_key.get(), device_id, key_id, rng).map_err(provisioning)?;
            (secrets, record, KeyMode::PerDeviceSecretKey)
        }
        KeyMode::FleetSecretKey => {
            let (secrets, record) =
                provision_integer_fleet_device(client_key.get(), device_id, key_id, rng).map_err(provisioning)?;
            (secrets, record, KeyMode::FleetSecretKey)
        }
        // Public key (no tfhe-sbc public key for the 64-bit set), or a mode this build does not know.
        _ => {
            return Err(Error::ModeNotAllowed {
                mode: mode.name(),
                parameters: KeySetParameters::Integer.name(),
            });
        }
    };
    let file = integer_credentials_file(key_mode, &secrets).map_err(provisioning)?;
    Ok((file, record))
}

/// `show`: the key set of `dir` and its devices. Reads the server key's envelope, the public key, the key
/// store and the credential files still in `devices/` (each must agree with its record); prints no secret,
/// and never reads the client key (only its file's mode). Prints nothing unless every check passes.
pub fn show(dir: &Path) -> Result<(), Error> {
    check_dir(dir)?;
    let server = read_server_key_envelope(&dir.join(SERVER_KEY_FILE))?;
    let store = load_key_store(dir, &server)?;
    let public_key = match server.parameters {
        KeySetParameters::Boolean(set) => Some(load_public_key(
            dir,
            &KeyFileHeader {
                kind: server.kind,
                set,
                key_id: server.key_id,
                server_key_fingerprint: server.server_key_fingerprint,
            },
        )?),
        KeySetParameters::Integer => None,
    };
    let mut out = vec![
        format!("key set in {}", dir.display()),
        format!("  parameters  {}", describe_key_set(server.parameters)),
        format!("  key id      {:#010x}", server.key_id),
        format!(
            "  server key  fingerprint {}",
            short_hex(&server.server_key_fingerprint)
        ),
    ];
    let mut warnings = Vec::new();
    let mut check_mode = |path: &Path, mode: u32, expected: u32| {
        if mode & 0o077 != 0 && expected == SECRET_MODE {
            warnings.push(format!(
                "{} is readable by others (mode {mode:04o}): chmod 600 it",
                path.display()
            ));
        }
    };
    for (name, expected) in [
        (CLIENT_KEY_FILE, SECRET_MODE),
        (SERVER_KEY_FILE, PUBLIC_MODE),
        (PUBLIC_KEY_FILE, PUBLIC_MODE),
        (KEY_STORE_FILE, SECRET_MODE),
    ] {
        if name == PUBLIC_KEY_FILE && public_key.is_none() {
            continue;
        }
        let path = dir.join(name);
        let len = std::fs::metadata(&path).map(|m| m.len()).ok();
        match (files::mode_of(&path), len) {
            (Some(mode), Some(len)) => {
                out.push(format!("  {name:<16} {mode:04o}  {:>9}", size(len as usize)));
                check_mode(&path, mode, expected);
            }
            _ => out.push(format!("  {name:<16} missing")),
        }
    }
    out.push(format!("  devices     {}", store.len()));
    if !store.is_empty() {
        out.push(format!(
            "  {:>20}  {:>10}  {:<10}  {:>10}  credential file",
            "device id", "key id", "mode", "stored key"
        ));
    }
    for record in store.iter() {
        let stored = record.key().stored_bytes();
        let path = credentials_path(dir, record.device_id());
        let file = match files::mode_of(&path) {
            Some(mode) => {
                check_credentials_file(&path, record, server.parameters, public_key.as_deref())?;
                check_mode(&path, mode, SECRET_MODE);
                format!("{DEVICES_DIR}/{}.tsdc ({mode:04o})", record.device_id())
            }
            None => format!("not in {DEVICES_DIR}/ (delivered?)"),
        };
        out.push(format!(
            "  {:>20}  {:#010x}  {:<10}  {:>10}  {file}",
            record.device_id(),
            record.key_id(),
            record.mode().name(),
            size(stored),
        ));
    }
    if let Ok(entries) = std::fs::read_dir(dir.join(DEVICES_DIR)) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let known = name
                .strip_suffix(".tsdc")
                .and_then(|id| id.parse::<u64>().ok())
                .is_some_and(|id| store.get(id).is_some() && name == format!("{id}.tsdc"));
            if !known {
                warnings.push(format!(
                    "{} is not the credential file of a device in the key store: delete it",
                    entry.path().display()
                ));
            }
        }
    }
    for line in out {
        println!("{line}");
    }
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    Ok(())
}

/// Checks device `record`'s credential file at `path`: it decodes, and says what the key store says (mode,
/// parameter set, device id, key id, MAC key; for a public-key device, the key set's public key).
fn check_credentials_file(
    path: &Path,
    record: &DeviceRecord,
    parameters: KeySetParameters,
    public_key: Option<&[u8]>,
) -> Result<(), Error> {
    const FIX: &str = "restore it from a backup, or issue the device again under a new --device-id";
    let bad = |problem: String| Error::BadFile {
        path: path.to_owned(),
        problem,
        fix: FIX,
    };
    let bytes = files::read(path, "device credential file")?;
    let decoded = decode_credentials(&bytes).map_err(|e| match e {
        tfhe_sbc_device::Error::WrongLength { expected, found } if found < expected => bad(format!(
            "the credential file is truncated ({found} of {expected} bytes)"
        )),
        e => bad(format!("not a valid credential file ({e})")),
    })?;
    let credentials = &decoded.credentials;
    let agrees = decoded.mode == record.mode()
        && decoded.parameters.id() == parameters.id()
        && credentials.device_id() == record.device_id()
        && credentials.key_id() == record.key_id()
        && credentials.mac_key().as_bytes() == record.credentials().mac_key().as_bytes()
        && (decoded.mode != KeyMode::PublicKey || Some(decoded.key_material) == public_key);
    if agrees {
        Ok(())
    } else {
        Err(bad(format!(
            "the credential file does not match device {}'s record in the key store",
            record.device_id()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::size;

    #[test]
    fn sizes_read_well() {
        assert_eq!(size(212), "212 B");
        assert_eq!(size(32_784), "32.0 KiB");
        assert_eq!(size(3 << 20), "3.0 MiB");
    }
}
