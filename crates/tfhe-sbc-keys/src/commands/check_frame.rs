//! `check-frame`: a firmware developer's host check of one frame against a key set. The frame goes through
//! the adapter's intake built from the key set's key store, as the server's does (`Intake::verify`: format,
//! device, key id, frame kind of the device's mode, MAC; no replay window: one frame is checked on its own);
//! a refusal is the intake's typed reason ([`Error::FrameRefused`]). An authenticated frame of a `tfhe-lib`
//! key set is then decrypted as the server and the tests do: the adapter's `KeyedIntake` with the
//! `BooleanBridge` of the key set's server key turns its bits into tfhe-rs boolean ciphertexts (the device's
//! key switch in per-device mode), which the trusted party's client key decrypts.

use super::dev_credential::UNSAFE_DEV;
use super::key_files::{load_client_key, load_key_store};
use crate::KeySetParameters;
use crate::error::{Error, provisioning};
use crate::files::SERVER_KEY_FILE;
use crate::files::check_dir;
use std::path::Path;
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::BooleanBridge;
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_adapter::key_set::development::is_development_record;
use tfhe_sbc_adapter::key_set::server_key::{read_server_key, read_server_key_envelope};
use tfhe_sbc_adapter::key_store::KeyedIntake;
use tfhe_sbc_device::frame::FrameKind;

/// `check-frame`: authenticates `frame` with the key set of `dir` (full-mask frames only if
/// `allow_full_frames`, as the server's `IntakeConfig`), prints its header and, on a `tfhe-lib` key set, the
/// message bytes it carries, decrypted with the client key. A refused frame is [`Error::FrameRefused`].
pub fn check_frame(dir: &Path, frame: &[u8], allow_full_frames: bool) -> Result<(), Error> {
    check_dir(dir)?;
    let server = read_server_key_envelope(&dir.join(SERVER_KEY_FILE))?;
    let config = IntakeConfig {
        allow_full_frames,
        ..IntakeConfig::default()
    };
    let store = load_key_store(dir, &server)?;
    {
        let parsed = load_key_store(dir, &server)?
            .into_intake(config.clone())
            .verify(frame)
            .map_err(|reason| Error::FrameRefused {
                bytes: frame.len(),
                reason,
            })?;
        let record = store.get(parsed.header.device_id).ok_or(Error::FrameRefused {
            bytes: frame.len(),
            reason: tfhe_sbc_adapter::IntakeError::UnknownDevice(parsed.header.device_id),
        })?;
        let h = &parsed.header;
        println!(
            "frame: {} bytes, authenticated by {} (MAC, key id, frame kind of the device's mode)",
            frame.len(),
            dir.join(crate::files::KEY_STORE_FILE).display()
        );
        println!(
            "  device {} ({} mode{}), key id {:#010x}",
            h.device_id,
            record.mode().name(),
            if is_development_record(record) {
                format!(", {UNSAFE_DEV}: its keys are public")
            } else {
                String::new()
            },
            h.key_id
        );
        println!(
            "  kind {}, parameter set {}, body bits {}",
            kind_name(parsed.kind),
            h.parameter_set,
            h.body_bits
        );
        println!(
            "  sequence {}, message {}, chunk {} of {}, message length {} bytes",
            h.sequence, h.message_id, h.chunk_index, h.chunk_count, h.message_length
        );
    }
    match server.parameters {
        KeySetParameters::Boolean(BooleanSet::TfheLib) => {
            let client_key = load_client_key(dir, &server)?;
            let (_, server_key) = read_server_key(&dir.join(SERVER_KEY_FILE))?;
            let bridge = BooleanBridge::new(&server_key).map_err(provisioning)?;
            let keyed = KeyedIntake::new(config, store, bridge).map_err(provisioning)?;
            let frame = keyed
                .intake()
                .verify_frame(frame)
                .map_err(|reason| Error::FrameRefused {
                    bytes: frame.len(),
                    reason,
                })?;
            let bits = keyed
                .converter()
                .frames_to_booleans(
                    frame.header.device_id,
                    frame.header.key_id,
                    std::slice::from_ref(&frame),
                )
                .map_err(provisioning)?;
            let mut bytes = vec![0u8; frame.chunk_message_bytes()];
            for (i, bit) in bits.iter().enumerate() {
                if client_key.get().decrypt(bit) {
                    bytes[i / 8] |= 1 << (i % 8);
                }
            }
            let start = frame.header.chunk_index as usize * (frame.parameters.polynomial_size().0 / 8);
            println!(
                "decrypted with {}: message bytes {start}..{} ({} bytes)",
                dir.join(crate::files::CLIENT_KEY_FILE).display(),
                start + bytes.len(),
                bytes.len()
            );
            for line in bytes.chunks(32) {
                println!("  {}", line.iter().map(|b| format!("{b:02x}")).collect::<String>());
            }
        }
        KeySetParameters::Boolean(BooleanSet::DefaultKsPbs | BooleanSet::ErrorProb2m165KsPbs)
        | KeySetParameters::Integer => {
            println!(
                "not decrypted: check-frame decrypts frames of tfhe-lib key sets; this one is {}",
                server.parameters.name()
            );
        }
    }
    Ok(())
}

/// A frame kind as the wire-format document names it.
fn kind_name(kind: FrameKind) -> &'static str {
    match kind {
        FrameKind::Seeded => "seeded (secret key, mask seed)",
        FrameKind::Full => "full (secret key, full mask)",
        FrameKind::PublicKey => "public-key",
        FrameKind::CompactList => "compact list (tfhe-rs CompactCiphertextList)",
    }
}
