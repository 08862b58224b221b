//! A device's credential file and key store record: made by `issue`, checked against each other by `show`.

use crate::KeySetParameters;
use crate::error::Error;
use crate::error::provisioning;
use crate::files;
use std::path::Path;
use tfhe_sbc_adapter::interop::credentials_and_record;
use tfhe_sbc_adapter::key_set::key_store::{DeviceKeyMaterial, DeviceRecord, KeyMode};
use tfhe_sbc_core::parameters::GlweParameters;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::mac::DeviceCredentials;

/// Fresh credentials for device `device_id` and its key store record (`material`, parameter set `params`):
/// the adapter's [`credentials_and_record`], its refusal as a provisioning error.
pub(super) fn new_device(
    device_id: u64,
    key_id: u32,
    params: &GlweParameters,
    material: DeviceKeyMaterial,
    rng: &mut Blake2bXof,
) -> Result<(DeviceCredentials, DeviceRecord), Error> {
    credentials_and_record(device_id, key_id, params.id(), material, rng).map_err(provisioning)
}

/// Checks device `record`'s credential file at `path`: it decodes, and says what the key store says (mode,
/// parameter set, device id, key id, MAC key; for a public-key device, the key set's public key).
pub(super) fn check_credentials_file(
    path: &Path,
    record: &DeviceRecord,
    parameters: KeySetParameters,
    public_key: Option<&[u8]>,
) -> Result<(), Error> {
    const FIX: &str = "restore it from a backup, or issue the device again under a new --device-id";
    let bad = |problem: String| Error::bad_file(path, problem, FIX);
    let bytes = files::read(path, "device credential file")?;
    let decoded = decode_credentials(&bytes).map_err(|e| match e {
        tfhe_sbc_device::Error::WrongLength { expected, found } if found < expected => bad(format!(
            "the credential file is truncated ({found} of {expected} bytes)"
        )),
        e @ (tfhe_sbc_device::Error::Core(_)
        | tfhe_sbc_device::Error::PolynomialSizeMismatch { .. }
        | tfhe_sbc_device::Error::UnsupportedGlweDimension(_)
        | tfhe_sbc_device::Error::MessageTooLong { .. }
        | tfhe_sbc_device::Error::WrongLength { .. }
        | tfhe_sbc_device::Error::BufferTooSmall
        | tfhe_sbc_device::Error::MessageTooLarge
        | tfhe_sbc_device::Error::Entropy
        | tfhe_sbc_device::Error::RngFailed
        | tfhe_sbc_device::Error::KeyNotSet
        | tfhe_sbc_device::Error::NotSeeded
        | tfhe_sbc_device::Error::ZigguratNeedsGaussianSet
        | tfhe_sbc_device::Error::NoiseOutOfRange
        | tfhe_sbc_device::Error::SequenceExhausted
        | tfhe_sbc_device::Error::BadKeyFile
        | tfhe_sbc_device::Error::ChunkNotInMessage { .. }
        | tfhe_sbc_device::Error::DegeneratePublicKey(_)
        | tfhe_sbc_device::Error::PublicKeyOfAnotherKeySet { .. }
        | tfhe_sbc_device::Error::UnsupportedReadingWidth(_)
        | tfhe_sbc_device::Error::PartialReading { .. }) => bad(format!("not a valid credential file ({e})")),
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
