//! The fuzz devices: two secret-key devices and one public-key device with fixed ids and MAC keys, their
//! credentials, and the intake configuration with small limits that the fuzzer reaches.

use crate::intake::IntakeConfig;
use std::time::Duration;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

/// The first fuzz device's id.
pub const FUZZ_DEVICE_ID: u64 = 0xF0;
/// The second fuzz device's id.
pub const FUZZ_DEVICE_ID_2: u64 = 0xF1;
/// Both fuzz devices' key id.
pub const FUZZ_KEY_ID: u32 = 7;
/// The first fuzz device's MAC key.
pub const FUZZ_MAC_KEY: [u8; 32] = [0x5A; 32];
/// The second fuzz device's MAC key.
pub const FUZZ_MAC_KEY_2: [u8; 32] = [0xA5; 32];
/// The public-key fuzz device's id.
pub const FUZZ_PUBLIC_KEY_DEVICE_ID: u64 = 0xF2;
/// The public-key fuzz device's MAC key.
pub const FUZZ_PUBLIC_KEY_MAC_KEY: [u8; 32] = [0x3C; 32];
/// The fuzz configuration's message age limit, in seconds.
pub const FUZZ_MAX_AGE_SECS: u64 = 3;

/// The fuzz configuration: small limits, so that the fuzzer reaches them.
pub fn fuzz_config(allow_full_frames: bool) -> IntakeConfig {
    IntakeConfig {
        allow_full_frames,
        max_chunks_per_message: 8,
        max_open_messages_per_device: 2,
        max_open_messages: 3,
        max_message_age: Duration::from_secs(FUZZ_MAX_AGE_SECS),
    }
}

/// The fuzz devices' credentials.
pub fn fuzz_credentials() -> [DeviceCredentials; 2] {
    [
        DeviceCredentials::new(FUZZ_DEVICE_ID, FUZZ_KEY_ID, MacKey::from_bytes(FUZZ_MAC_KEY)),
        DeviceCredentials::new(FUZZ_DEVICE_ID_2, FUZZ_KEY_ID, MacKey::from_bytes(FUZZ_MAC_KEY_2)),
    ]
}

/// The public-key fuzz device's credentials.
pub fn fuzz_public_key_credentials() -> DeviceCredentials {
    DeviceCredentials::new(
        FUZZ_PUBLIC_KEY_DEVICE_ID,
        FUZZ_KEY_ID,
        MacKey::from_bytes(FUZZ_PUBLIC_KEY_MAC_KEY),
    )
}

/// Whether `device_id` is one of the fuzz devices.
pub fn is_fuzz_device(device_id: u64) -> bool {
    [FUZZ_DEVICE_ID, FUZZ_DEVICE_ID_2, FUZZ_PUBLIC_KEY_DEVICE_ID].contains(&device_id)
}
