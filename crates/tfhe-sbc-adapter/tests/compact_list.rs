//! tfhe-rs 1.8.2 itself reads the device's compact lists: `safe_deserialize_conformant` (packed lists only,
//! the default since tfhe 1.5), `expand` with the casting key into the compute set
//! `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`, `FheUint*::decrypt` / `FheBool::decrypt`. The raw public
//! key `[a | b]` is the one of a tfhe-rs `CompactPublicKey` (its `LweCompactPublicKey` container). No code
//! of the adapter is involved: an unmodified tfhe-rs server reads these bytes.
//!
//! * [`tfhe_rs_expands_and_decrypts_device_lists`]: lists of 1, 64, 512 and 2,048 values (u8, u16, u32,
//!   bool; edge values 0 and MAX), both device forms, 0 errors: 2,756 values, 4,957 blocks, each a PBS in
//!   `expand`. `COMPACT_LIST_VALUES=10000` adds lists of 2,048 u8 (two bins each) and of 32 u32 until that
//!   many values are checked (it prints the figures; `docs/compact-list.md` has a run's).
//! * [`header_and_trailer_match_tfhe_rs_own_lists`]: every byte but the random words equals the list
//!   tfhe-rs's own builder serializes for the same shape (`build_packed`, same key), sizes included.
//! * [`tfhe_rs_refuses_crafted_nonconformant_lists`]: the same bytes with degree 3 (unpacked) or 7 are read
//!   by `safe_deserialize` but refused by `safe_deserialize_conformant`.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;
use std::time::Instant;
use tfhe::conformance::ListSizeConstraint;
use tfhe::prelude::*;
use tfhe::safe_serialization::{safe_deserialize, safe_deserialize_conformant, safe_serialize};
use tfhe::shortint::parameters::PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
use tfhe::{
    ClientKey, CompactCiphertextList, CompactCiphertextListConformanceParams, CompactPublicKey, FheBool, FheUint8,
    FheUint16, FheUint32, ServerKey, set_server_key,
};
use tfhe_sbc_device::compact_list::{
    CompactReading, ListLayout, PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 as DEVICE_PKE,
};
use tfhe_sbc_device::encrypt::compact_list::{CompactListEncryptor, CompactListNttEncryptor, compact_list_bytes};

/// The largest list the server accepts here.
const MAX_VALUES: usize = 4096;
/// Deserialization limit: the largest list of [`MAX_VALUES`] u32 is about 0.6 MB.
const SIZE_LIMIT: u64 = 1 << 24;

struct Keys {
    client: ClientKey,
    server: ServerKey,
    public: CompactPublicKey,
    /// `[a | b]`: the public key's `LweCompactPublicKey` container, as a device holds it in flash.
    raw: Vec<u64>,
}

fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| {
        let config = tfhe_sbc_adapter::interop::integer::compact_list::compact_list_config();
        let client = ClientKey::generate(config);
        let server = ServerKey::new(&client);
        let public = CompactPublicKey::new(&client);
        let (integer, _tag) = public.clone().into_raw_parts();
        let (lwe_key, _params) = integer.into_raw_parts().into_raw_parts();
        let raw = lwe_key.into_container();
        assert_eq!(raw.len(), 2 * 2048);
        Keys {
            client,
            server,
            public,
            raw,
        }
    })
}

fn conformance() -> CompactCiphertextListConformanceParams {
    CompactCiphertextListConformanceParams::from_parameters_and_size_constraint(
        PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
        ListSizeConstraint::try_size_in_range(1, MAX_VALUES).unwrap(),
    )
}

/// A device's list of `readings`: streaming form unless `ntt`.
fn device_list<T: CompactReading>(readings: &[T], seed: u8, ntt: bool) -> Vec<u8> {
    let mut list = vec![0u8; compact_list_bytes::<T>(readings.len())];
    let written = if ntt {
        let mut encryptor = Box::new(CompactListNttEncryptor::<negacyclic_ntt::NttPlan64>::EMPTY);
        encryptor.set_public_key(&keys().raw).unwrap();
        encryptor.seed_from_bytes(&mut [seed; 32]);
        encryptor.encrypt_list(readings, &mut list).unwrap()
    } else {
        let mut encryptor = CompactListEncryptor::EMPTY;
        encryptor.set_public_key(&keys().raw).unwrap();
        encryptor.seed_from_bytes(&mut [seed; 32]);
        encryptor.encrypt_list(readings, &mut list).unwrap()
    };
    assert_eq!(written, list.len());
    list
}

/// What tfhe-rs decrypts a value of the expanded list as, by the reading's type.
trait Decrypted: CompactReading + PartialEq + std::fmt::Debug {
    fn from_expanded(expanded: &tfhe::CompactCiphertextListExpander, index: usize, key: &ClientKey) -> Self;
}

macro_rules! decrypted {
    ($($t:ty => $fhe:ty),*) => {
        $(impl Decrypted for $t {
            fn from_expanded(expanded: &tfhe::CompactCiphertextListExpander, index: usize, key: &ClientKey) -> Self {
                let value: $fhe = expanded.get(index).unwrap().unwrap();
                value.decrypt(key)
            }
        })*
    };
}
decrypted!(u8 => FheUint8, u16 => FheUint16, u32 => FheUint32, bool => FheBool);

/// tfhe-rs reads, expands and decrypts `list`; returns the number of values that differ from `readings`.
fn tfhe_errors<T: Decrypted>(list: &[u8], readings: &[T]) -> usize {
    let keys = keys();
    set_server_key(keys.server.clone());
    let parsed: CompactCiphertextList = safe_deserialize_conformant(list, SIZE_LIMIT, &conformance()).unwrap();
    assert_eq!(parsed.len(), readings.len());
    let expanded = parsed.expand().unwrap();
    readings
        .iter()
        .enumerate()
        .filter(|&(i, &reading)| T::from_expanded(&expanded, i, &keys.client) != reading)
        .count()
}

/// `count` pseudo-random readings with 0 and MAX first.
fn readings<T: CompactReading>(count: usize, seed: u64, from: impl Fn(u64) -> T, max: T) -> Vec<T> {
    let mut x = seed;
    let mut values: Vec<T> = [from(0), max].into_iter().take(count).collect();
    while values.len() < count {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        values.push(from(x >> 29));
    }
    values
}

fn u8s(count: usize, seed: u64) -> Vec<u8> {
    readings(count, seed, |x| x as u8, u8::MAX)
}
fn u16s(count: usize, seed: u64) -> Vec<u16> {
    readings(count, seed, |x| x as u16, u16::MAX)
}
fn u32s(count: usize, seed: u64) -> Vec<u32> {
    readings(count, seed, |x| x as u32, u32::MAX)
}
fn bools(count: usize, seed: u64) -> Vec<bool> {
    readings(count, seed, |x| x & 1 == 1, true)
}

#[test]
fn tfhe_rs_expands_and_decrypts_device_lists() {
    let started = Instant::now();
    let (mut values, mut errors, mut lists) = (0usize, 0usize, 0usize);
    macro_rules! check {
        ($errors:expr, $count:expr) => {{
            errors += $errors;
            values += $count;
            lists += 1;
        }};
    }
    // Lists of 1, 64, 512 and 2,048 values; both forms; each type's 0 and MAX. Expansion is one PBS per
    // block (about 18 ms of CPU each on the test machine), so the big lists are of u8 and bool.
    check!(tfhe_errors(&device_list(&[u8::MAX], 1, false), &[u8::MAX]), 1);
    check!(tfhe_errors(&device_list(&[0u16], 2, true), &[0u16]), 1);
    check!(tfhe_errors(&device_list(&[u32::MAX], 3, false), &[u32::MAX]), 1);
    check!(tfhe_errors(&device_list(&[true], 4, true), &[true]), 1);
    let r = u16s(64, 5);
    check!(tfhe_errors(&device_list(&r, 5, false), &r), r.len());
    let r = u8s(64, 6);
    check!(tfhe_errors(&device_list(&r, 6, true), &r), r.len());
    let r = bools(64, 7);
    check!(tfhe_errors(&device_list(&r, 7, false), &r), r.len());
    let r = u8s(512, 8);
    check!(tfhe_errors(&device_list(&r, 8, false), &r), r.len());
    let r = bools(2048, 9);
    check!(tfhe_errors(&device_list(&r, 9, true), &r), r.len());

    // COMPACT_LIST_VALUES=10000: lists of 2,048 u8 (4,096 LWEs: two bins each) and of 32 u32, alternating
    // forms, until that many values are checked.
    let target: usize = std::env::var("COMPACT_LIST_VALUES").map_or(0, |v| v.parse().unwrap());
    let mut seed = 12;
    while values < target {
        let r = u8s(2048, u64::from(seed));
        check!(tfhe_errors(&device_list(&r, seed, seed % 2 == 0), &r), r.len());
        let r = u32s(32, u64::from(seed));
        check!(tfhe_errors(&device_list(&r, seed, seed % 2 == 1), &r), r.len());
        seed += 1;
    }
    println!(
        "tfhe-rs 1.8.2 expanded and decrypted {values} device values in {lists} lists, {errors} errors, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(errors, 0);
}

/// Our list and tfhe-rs's own for the same readings: equal lengths, and equal bytes outside the data words.
fn compare_with_tfhe_rs<T: CompactReading + tfhe::HlCompactable>(readings: &[T]) {
    let ours = device_list(readings, 20, false);
    let theirs = CompactCiphertextList::builder(&keys().public)
        .extend(readings.iter().copied())
        .build_packed();
    let mut bytes = Vec::new();
    safe_serialize(&theirs, &mut bytes, SIZE_LIMIT).unwrap();
    assert_eq!(ours.len(), bytes.len(), "{} values of {:?}", readings.len(), T::KIND);
    let layout = ListLayout::new(&DEVICE_PKE, T::KIND, readings.len()).unwrap();
    let header = ..tfhe_sbc_device::compact_list::format::DATA_OFFSET;
    assert_eq!(ours[header], bytes[header], "header, {:?}", T::KIND);
    let trailer = layout.trailer_offset()..;
    assert_eq!(ours[trailer.clone()], bytes[trailer], "trailer, {:?}", T::KIND);
}

#[test]
fn header_and_trailer_match_tfhe_rs_own_lists() {
    compare_with_tfhe_rs(&u8s(1, 1));
    compare_with_tfhe_rs(&u8s(512, 2));
    compare_with_tfhe_rs(&u8s(2048, 3));
    compare_with_tfhe_rs(&u16s(64, 4));
    compare_with_tfhe_rs(&u32s(3, 5));
    compare_with_tfhe_rs(&u32s(600, 6)); // three bins
    compare_with_tfhe_rs(&bools(5, 7)); // an odd number of blocks: the last LWE's high block is 0
    // 211 + 8 (2048 bins + LWEs) + 16 values, as tfhe-rs's own lists measure.
    assert_eq!(compact_list_bytes::<u8>(512), 32_979);
    assert_eq!(compact_list_bytes::<u8>(1024), 49_363);
}

#[test]
fn tfhe_rs_refuses_crafted_nonconformant_lists() {
    let readings = u8s(4, 30);
    let list = device_list(&readings, 30, false);
    let parsed: CompactCiphertextList =
        safe_deserialize_conformant(list.as_slice(), SIZE_LIMIT, &conformance()).unwrap();
    assert_eq!(parsed.len(), 4);

    let layout = ListLayout::new(&DEVICE_PKE, <u8 as CompactReading>::KIND, 4).unwrap();
    // Trailer: LWE size (12), count (12), modulus (28), then the degree: u32 version, u64 value.
    let degree_at = layout.trailer_offset() + 12 + 12 + 28 + 4;
    assert_eq!(list[degree_at..degree_at + 8], 15u64.to_le_bytes());
    for degree in [3u64, 7] {
        let mut crafted = list.clone();
        crafted[degree_at..degree_at + 8].copy_from_slice(&degree.to_le_bytes());
        // Well-formed bytes: the plain deserializer reads them ...
        let read: Result<CompactCiphertextList, _> = safe_deserialize(crafted.as_slice(), SIZE_LIMIT);
        assert!(read.is_ok(), "degree {degree}: {:?}", read.err());
        // ... and conformance refuses them: degree 3 is an unpacked list, 7 is neither form's degree.
        let refused: Result<CompactCiphertextList, _> =
            safe_deserialize_conformant(crafted.as_slice(), SIZE_LIMIT, &conformance());
        assert!(refused.is_err(), "degree {degree} accepted");
        let refused: Result<CompactCiphertextList, _> =
            safe_deserialize_conformant(crafted.as_slice(), SIZE_LIMIT, &conformance().allow_unpacked());
        assert!(refused.is_err(), "degree {degree} accepted with allow_unpacked");
    }
}
