//! `show`: the key set and its devices, every file checked, no secret printed.

use super::compact_list::load_compact_public_key;
use super::credentials::check_credentials_file;
use super::dev_credential::{UNSAFE_DEV, dev_credentials_path};
use super::key_files::{load_key_store, load_public_key};
use super::report::{describe_key_set, size};
use crate::KeySetParameters;
use crate::error::Error;
use crate::files::check_dir;
use crate::files::{
    self, CLIENT_KEY_FILE, COMPACT_PUBLIC_KEY_FILE, DEVICES_DIR, KEY_STORE_FILE, PUBLIC_KEY_FILE, PUBLIC_MODE,
    SECRET_MODE, SERVER_KEY_FILE, compact_public_key_path, credentials_path,
};
use std::path::Path;
use tfhe_sbc_adapter::key_set::development::is_development_record;
use tfhe_sbc_adapter::key_set::key_store::KeyMode;
use tfhe_sbc_adapter::key_set::server_key::read_server_key_envelope;
use tfhe_sbc_adapter::key_set::short_hex;

/// `show`: the key set of `dir` and its devices. Reads the server key's envelope, the public key, the key
/// store and the credential files still in `devices/` (each must agree with its record); prints no secret,
/// and never reads the client key (only its file's mode). Prints nothing unless every check passes.
pub fn show(dir: &Path) -> Result<(), Error> {
    check_dir(dir)?;
    let server = read_server_key_envelope(&dir.join(SERVER_KEY_FILE))?;
    let store = load_key_store(dir, &server)?;
    // An integer key set made before the integer set had public keys has none until its first public-key
    // device; every other key set has one.
    let has_public_key = server.parameters != KeySetParameters::Integer
        || dir.join(PUBLIC_KEY_FILE).exists()
        || store.iter().any(|r| r.mode() == KeyMode::PublicKey);
    let public_key = if has_public_key {
        Some(load_public_key(dir, server.parameters, server.key_id)?)
    } else {
        None
    };
    // A key set made with --compact-list: its compact public key, checked against the key set.
    let compact_public_key = if dir.join(COMPACT_PUBLIC_KEY_FILE).exists() {
        Some(load_compact_public_key(dir, &server)?)
    } else {
        None
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
    let mut dev_warnings = Vec::new();
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
        (COMPACT_PUBLIC_KEY_FILE, PUBLIC_MODE),
        (KEY_STORE_FILE, SECRET_MODE),
    ] {
        if (name == PUBLIC_KEY_FILE && public_key.is_none())
            || (name == COMPACT_PUBLIC_KEY_FILE && compact_public_key.is_none())
        {
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
        let dev = is_development_record(record);
        let path = match dev_credentials_path(dir, record.device_id()) {
            dev_path if dev && dev_path.exists() => dev_path,
            _ => credentials_path(dir, record.device_id()),
        };
        let mut file = match files::mode_of(&path) {
            Some(mode) => {
                check_credentials_file(&path, record, server.parameters, public_key.as_deref())?;
                check_mode(&path, mode, SECRET_MODE);
                format!(
                    "{DEVICES_DIR}/{} ({mode:04o})",
                    path.file_name().unwrap_or_default().to_string_lossy()
                )
            }
            None => format!("not in {DEVICES_DIR}/ (delivered?)"),
        };
        if dev {
            file.push_str(&format!(", {UNSAFE_DEV}: its keys are public"));
            dev_warnings.push(format!(
                "device {} is a development device ({UNSAFE_DEV}, issue --unsafe-dev-credential): anyone can \
                 decrypt and forge its frames; never deploy this key store with it",
                record.device_id()
            ));
        }
        let compact_path = compact_public_key_path(dir, record.device_id());
        if compact_path.exists() {
            let bytes = files::read(&compact_path, "compact public key")?;
            if compact_public_key.as_deref() != Some(&bytes[..]) {
                return Err(Error::Mismatch {
                    message: format!(
                        "{} is not the key set's {COMPACT_PUBLIC_KEY_FILE}: delete it, or issue the device again \
                         under a new --device-id",
                        compact_path.display()
                    ),
                });
            }
            file.push_str(&format!(" + {}.tscp, compact list", record.device_id()));
        }
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
            let known = [".tsdc", ".tscp", ".UNSAFE-DEV.tsdc", ".UNSAFE-DEV.seed"]
                .iter()
                .any(|suffix| {
                    name.strip_suffix(suffix)
                        .and_then(|id| id.parse::<u64>().ok())
                        .is_some_and(|id| store.get(id).is_some() && name == format!("{id}{suffix}"))
                });
            if !known {
                let fix = if super::journal::is_device_file(&name) {
                    format!("`tfhe-sbc-keys repair --dir {}` removes it", dir.display())
                } else {
                    "delete it".to_owned()
                };
                warnings.push(format!(
                    "{} is not a file of a device in the key store: {fix}",
                    entry.path().display()
                ));
            }
        }
    }
    if dir.join(super::journal::JOURNAL_FILE).exists() {
        warnings.push(format!(
            "{} exists: an issue was interrupted; `tfhe-sbc-keys repair --dir {}` (or the next issue) finishes or \
             rolls it back",
            dir.join(super::journal::JOURNAL_FILE).display(),
            dir.display()
        ));
    }
    for line in out {
        println!("{line}");
    }
    for warning in dev_warnings.into_iter().chain(warnings) {
        eprintln!("warning: {warning}");
    }
    Ok(())
}
