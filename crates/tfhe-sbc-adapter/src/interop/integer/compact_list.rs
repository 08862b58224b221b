//! Compact-list devices: the tfhe-rs `CompactCiphertextList` an authenticated compact-list frame carries
//! (`tfhe_sbc_device::frame::compact_list`), handed to tfhe-rs as any tfhe-rs client's list would be:
//! `safe_deserialize_conformant` (packed lists of exactly the frame's readings, under
//! `PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`), then `expand_with_key` with the server key's
//! casting key (a key set made with `tfhe-sbc-keys init --parameters integer --compact-list`), then each
//! value as the `FheUint` of the frame's width. Nothing of ours decrypts or re-encrypts: the values are
//! tfhe-rs's own expansion (one key switch and one PBS per block).

use super::readings::FheUintReadings;
use crate::intake::CompactListFrame;
use crate::interop::error::InteropError;
use tfhe::conformance::ListSizeConstraint;
use tfhe::prelude::CiphertextList;
use tfhe::safe_serialization::safe_deserialize_conformant;
use tfhe::shortint::parameters::{
    PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
    PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
};
use tfhe::{
    CompactCiphertextList, CompactCiphertextListConformanceParams, CompactCiphertextListExpander, FheTypes, FheUint,
    FheUint8Id, FheUint16Id, FheUint32Id, FheUintId,
};

/// The high-level configuration of an integer key set that takes compact lists: the compute set
/// `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` (the integer set's, unchanged) with the dedicated compact
/// public-key set `PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` and its casting set
/// `PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`. A `ClientKey` of it holds the compact private
/// key, and `ServerKey::new` the casting key, so an unmodified tfhe-rs server `expand`s the lists with it.
pub fn compact_list_config() -> tfhe::Config {
    tfhe::ConfigBuilder::with_custom_parameters(PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128)
        .use_dedicated_compact_public_key_parameters((
            PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
            PARAM_KEYSWITCH_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
        ))
        .build()
}

/// The deserialization limit: a compact-list frame's list is at most 49,363 bytes (1,024 `u8`), checked
/// exactly by the intake; tfhe-rs's reader gets a little room for its own checks.
const SERIALIZED_LIMIT: u64 = 1 << 17;

/// The readings of an authenticated compact-list frame as tfhe-rs values of the frame's width, expanded
/// with `server_key`'s casting key. [`InteropError::CompactListRefused`] if tfhe-rs refuses the list (not
/// conformant, another count of values than the frame's readings, a value of another type) or cannot
/// expand it (a server key without the casting key).
pub fn expand_compact_list(
    server_key: &tfhe::ServerKey,
    frame: &CompactListFrame,
) -> Result<FheUintReadings, InteropError> {
    Ok(match frame.value_bits() {
        8 => FheUintReadings::U8(compact_list_readings::<FheUint8Id>(server_key, frame)?),
        16 => FheUintReadings::U16(compact_list_readings::<FheUint16Id>(server_key, frame)?),
        _ => FheUintReadings::U32(compact_list_readings::<FheUint32Id>(server_key, frame)?),
    })
}

/// [`expand_compact_list`] as `FheUint<Id>`: a frame of another width is refused.
pub fn compact_list_readings<Id: FheUintId>(
    server_key: &tfhe::ServerKey,
    frame: &CompactListFrame,
) -> Result<Vec<FheUint<Id>>, InteropError> {
    let device_id = frame.header.device_id;
    let refused = |reason: String| InteropError::CompactListRefused { device_id, reason };
    if FheUint::<Id>::num_bits() != frame.value_bits() as usize {
        return Err(refused(format!(
            "the frame carries {}-bit readings, not {}-bit ones",
            frame.value_bits(),
            FheUint::<Id>::num_bits()
        )));
    }
    let readings = frame.readings();
    let size = ListSizeConstraint::exact_size(readings);
    let conformance = CompactCiphertextListConformanceParams::from_parameters_and_size_constraint(
        PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
        size,
    );
    let list: CompactCiphertextList =
        safe_deserialize_conformant(frame.list.as_slice(), SERIALIZED_LIMIT, &conformance)
            .map_err(|e| refused(format!("tfhe-rs refused the list: {e}")))?;
    declared_values(&list, readings, frame.value_bits(), &refused)?;
    let expanded = list
        .expand_with_key(server_key)
        .map_err(|e| refused(format!("tfhe-rs could not expand the list (does the server key hold the casting key of a --compact-list key set?): {e}")))?;
    values::<Id>(&expanded, readings, &refused)
}

/// Checks, before the expansion, that `list` declares exactly `count` values, each a `bits`-bit unsigned
/// integer. Conformance bounds only the list's total size and block count: a list whose per-value block
/// counts were changed (6 and 2 blocks where a u8 has 4 and 4) passes it, and its expansion (a key switch
/// and a bootstrap per block, minutes for a full frame) would be spent before the value types are read.
fn declared_values(
    list: &CompactCiphertextList,
    count: usize,
    bits: u32,
    refused: &dyn Fn(String) -> InteropError,
) -> Result<(), InteropError> {
    let expected = match bits {
        8 => FheTypes::Uint8,
        16 => FheTypes::Uint16,
        32 => FheTypes::Uint32,
        other => return Err(refused(format!("{other}-bit readings are not a compact-list width"))),
    };
    if list.len() != count {
        return Err(refused(format!(
            "the list declares {} values, the frame {count} readings: refused before expansion",
            list.len()
        )));
    }
    match (0..count).find(|&i| list.get_kind_of(i) != Some(expected)) {
        Some(i) => Err(refused(format!(
            "value {i} is declared {:?}, not {expected:?}: refused before expansion",
            list.get_kind_of(i)
        ))),
        None => Ok(()),
    }
}

/// Every value of `expanded` as `FheUint<Id>`; a value of another type is refused.
fn values<Id: FheUintId>(
    expanded: &CompactCiphertextListExpander,
    count: usize,
    refused: &dyn Fn(String) -> InteropError,
) -> Result<Vec<FheUint<Id>>, InteropError> {
    (0..count)
        .map(|i| match expanded.get::<FheUint<Id>>(i) {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(refused(format!("the list has no value {i}"))),
            Err(e) => Err(refused(format!(
                "value {i} is not a {}-bit unsigned integer: {e}",
                FheUint::<Id>::num_bits()
            ))),
        })
        .collect()
}
