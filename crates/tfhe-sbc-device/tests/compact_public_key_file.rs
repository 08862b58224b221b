//! The compact public-key file (`files::compact_public_key`): arbitrary bytes never panic the decoder, every
//! one-byte change or truncation of a valid file is refused, and the decoded key feeds the compact-list
//! encryptor in place.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use tfhe_sbc_core::parameters::ParameterSetId;
use tfhe_sbc_device::encrypt::compact_list::{CompactListEncryptor, compact_list_bytes};
use tfhe_sbc_device::files::compact_public_key::{
    COMPACT_PUBLIC_KEY_FILE_BYTES, COMPACT_PUBLIC_KEY_MAGIC, CompactKeyBinding, CompactKeyFileError,
    decode_compact_public_key_file, encode_compact_public_key_file,
};

const BINDING: CompactKeyBinding = CompactKeyBinding {
    key_set_parameters: ParameterSetId(4),
    key_id: 0x0c0f_fee0,
    server_key_fingerprint: [0x5a; 32],
};

/// A valid file around pseudo-random (uniform-looking) key words.
fn valid_file() -> Vec<u8> {
    let mut x = 0x1234_5678_9abc_def0u64;
    let key: Vec<u64> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    let mut file = vec![0u8; COMPACT_PUBLIC_KEY_FILE_BYTES];
    assert_eq!(
        encode_compact_public_key_file(&BINDING, &key, &mut file).unwrap(),
        file.len()
    );
    file
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary bytes of any length, with or without the magic in front: an error, never a panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), magic in any::<bool>()) {
        let mut input = if magic { COMPACT_PUBLIC_KEY_MAGIC.to_vec() } else { Vec::new() };
        input.extend_from_slice(&bytes);
        prop_assert!(decode_compact_public_key_file(&input).is_err());
    }

    /// Arbitrary bytes of exactly the file's length behind a valid header: the check refuses them.
    #[test]
    fn arbitrary_bodies_of_the_right_length_are_refused(seed in any::<u64>()) {
        let mut file = valid_file();
        let mut x = seed | 1;
        for b in file[48..].iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        prop_assert_eq!(decode_compact_public_key_file(&file), Err(CompactKeyFileError::CheckFailed));
    }

    /// Any one byte changed anywhere, or any truncation or extension: refused, never a panic.
    #[test]
    fn every_change_is_refused(at in 0..COMPACT_PUBLIC_KEY_FILE_BYTES, flip in 1..=255u8, cut in 0..COMPACT_PUBLIC_KEY_FILE_BYTES) {
        let file = valid_file();
        let mut changed = file.clone();
        changed[at] ^= flip;
        prop_assert!(decode_compact_public_key_file(&changed).is_err());
        prop_assert!(decode_compact_public_key_file(&file[..cut]).is_err());
        let mut longer = file.clone();
        longer.push(flip);
        prop_assert!(decode_compact_public_key_file(&longer).is_err());
    }
}

#[test]
fn decoded_key_feeds_the_encryptor_and_other_key_sets_are_refused() {
    let file = valid_file();
    let decoded = decode_compact_public_key_file(&file).unwrap();
    assert_eq!(decoded.binding, BINDING);
    let key = decoded
        .for_key_set(BINDING.key_id, Some(&BINDING.server_key_fingerprint))
        .unwrap();
    // Borrowed in place: the key's bytes are the file's.
    assert_eq!(key.as_ptr(), file[48..].as_ptr());
    let mut encryptor = CompactListEncryptor::EMPTY;
    encryptor.set_public_key_le_bytes(key).unwrap();
    encryptor.seed_from_bytes(&mut [3; 32]);
    let mut list = vec![0u8; compact_list_bytes::<u16>(3)];
    assert_eq!(encryptor.encrypt_list(&[1u16, 2, 3], &mut list).unwrap(), list.len());

    let refused = decoded.for_key_set(BINDING.key_id ^ 1, None).unwrap_err();
    assert_eq!(
        refused,
        CompactKeyFileError::OtherKeySet {
            expected_key_id: BINDING.key_id ^ 1,
            found_key_id: BINDING.key_id
        }
    );
    assert!(refused.to_string().contains("another server key"), "{refused}");
    assert!(decoded.for_key_set(BINDING.key_id, Some(&[0; 32])).is_err());
}
