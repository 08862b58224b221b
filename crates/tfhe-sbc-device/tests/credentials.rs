//! The credential file: round trips in every mode, packed keys, and refusal of corrupted files.
#![allow(clippy::unwrap_used)]

mod common;

use tfhe_sbc_core::entities::{pack_secret_key, unpack_secret_key};
use tfhe_sbc_core::parameters::{DEFAULT_KS_PBS_GLWE_512_K3, GlweParameters, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::files::credentials::{KeyMode, credentials_file_bytes, decode_credentials, encode_credentials};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

fn secret_key_file(params: &GlweParameters, mode: KeyMode) -> (Vec<u8>, Vec<u8>) {
    let (n, k) = (params.polynomial_size().0, params.glwe_dimension().0);
    let key = common::secret_key(params, 1);
    let mut packed = vec![0u8; k * n / 8];
    pack_secret_key(key.as_bytes(), &mut packed).unwrap();
    let credentials = DeviceCredentials::new(0x1122_3344_5566_7788, 9, MacKey::from_bytes([0xAB; 32]));
    let mut file = vec![0u8; credentials_file_bytes(mode, params)];
    let len = encode_credentials(mode, params, &credentials, &packed, &mut file).unwrap();
    assert_eq!(len, file.len());
    (file, key.as_bytes().to_vec())
}

#[test]
fn secret_key_credentials_round_trip() {
    for (params, mode) in [
        (TFHE_LIB_GLWE_1024, KeyMode::FleetSecretKey),
        (TFHE_LIB_GLWE_1024, KeyMode::PerDeviceSecretKey),
        (DEFAULT_KS_PBS_GLWE_512_K3, KeyMode::FleetSecretKey),
    ] {
        let (file, key_bits) = secret_key_file(&params, mode);
        let decoded = decode_credentials(&file).unwrap();
        assert_eq!((decoded.mode, decoded.parameters), (mode, params));
        assert_eq!(decoded.credentials.device_id(), 0x1122_3344_5566_7788);
        assert_eq!(decoded.credentials.key_id(), 9);
        assert_eq!(decoded.credentials.mac_key().as_bytes(), &[0xAB; 32]);
        let mut bits = vec![0u8; key_bits.len()];
        unpack_secret_key(decoded.key_material, &mut bits).unwrap();
        assert_eq!(bits, key_bits);
    }
    // 1024 key bits pack into 128 bytes: the whole file is a 52-byte header, 128 bytes and a 16-byte check.
    assert_eq!(
        credentials_file_bytes(KeyMode::PerDeviceSecretKey, &TFHE_LIB_GLWE_1024),
        196
    );
}

#[test]
fn corrupted_or_truncated_files_are_refused() {
    let (file, _) = secret_key_file(&TFHE_LIB_GLWE_1024, KeyMode::PerDeviceSecretKey);
    for i in 0..file.len() {
        let mut bad = file.clone();
        bad[i] ^= 0x10;
        assert!(decode_credentials(&bad).is_err(), "byte {i}");
    }
    for len in [0, 4, 63, file.len() - 1] {
        assert!(decode_credentials(&file[..len]).is_err(), "length {len}");
    }
    let mut longer = file.clone();
    longer.push(0);
    assert!(decode_credentials(&longer).is_err());
}

#[test]
fn pack_and_unpack_are_inverse() {
    let bits: Vec<u8> = (0..1024).map(|i| ((i * 7 + i / 3) % 2) as u8).collect();
    let mut packed = [0u8; 128];
    pack_secret_key(&bits, &mut packed).unwrap();
    assert_eq!(packed[0] & 1, bits[0]);
    let mut back = vec![0u8; 1024];
    unpack_secret_key(&packed, &mut back).unwrap();
    assert_eq!(back, bits);
    assert!(pack_secret_key(&bits[..1000], &mut packed).is_err());
}
