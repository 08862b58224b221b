//! Per-device keys end to end and the batched, parallel bridge (section 4).
//!
//! Two per-device devices and one fleet device are provisioned into one key store; their v2 seeded frames go
//! through the keyed intake (MAC, replay window, reassembly), extraction and each device's own key switch,
//! then tfhe-rs gates mix bits of all three. Plus: another device's key recovers nothing, a frame MAC'd as
//! device A but sent as device B is refused through the store, the store's file round-trips and refuses
//! corruption, the strategies agree bit for bit, and the bridge is `Send + Sync` with a working LRU.
#![cfg(feature = "tfhe")]
#![allow(clippy::unwrap_used)]

mod common;

use common::key_store::redigest;

use rand_core::{Rng, SeedableRng};
use std::num::NonZeroUsize;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::server_key::BinaryBooleanGates;
use tfhe::core_crypto::prelude::{
    CiphertextModulus, GlweCiphertext as TfheGlweCiphertext, PlaintextCount, PlaintextList,
    PolynomialSize as TfhePolynomialSize, decrypt_glwe_ciphertext,
};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::{IntakeConfig, Message};
use tfhe_sbc_adapter::interop::boolean_set::BooleanSet;
use tfhe_sbc_adapter::interop::{
    BooleanBridge, DeviceKsk, DeviceSecrets, InteropError, KeySwitchStrategy, provision_fleet_device,
    provision_per_device, tfhe_glwe_key,
};
use tfhe_sbc_adapter::key_store::{DeviceKeyMaterial, KEY_STORE_MAGIC, KeyMode, KeySetError, KeyStore, KeyedIntake};
use tfhe_sbc_core::entities::GlweCiphertextOwned;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

const A: u64 = 0xA;
const B: u64 = 0xB;
const C: u64 = 0xC;

/// One tfhe-rs key set for the whole file: server-key generation takes seconds.
fn fixture() -> &'static common::BooleanKeys {
    static KEYS: OnceLock<common::BooleanKeys> = OnceLock::new();
    common::boolean_keys(&KEYS, BooleanSet::TfheLib, [0x1B; 32])
}

/// Devices A and B (per-device keys) and C (fleet key), from fixed seeds, and the store the trusted party
/// writes for them.
fn provision(seed: u8) -> (DeviceSecrets, DeviceSecrets, DeviceSecrets, KeyStore) {
    let f = fixture();
    let mut rng = Blake2bXof::from_seed([seed; 32]);
    let t = Instant::now();
    let (a, record_a) = provision_per_device(&f.client_key, A, 100, &mut rng).unwrap();
    let (b, record_b) = provision_per_device(&f.client_key, B, 200, &mut rng).unwrap();
    println!(
        "2 per-device devices provisioned (GLWE key, MAC key, seeded KSK) in {:.1?}",
        t.elapsed()
    );
    let (c, record_c) = provision_fleet_device(&f.client_key, C, 1, &mut rng).unwrap();
    let mut store = KeyStore::new(&f.server_key);
    for record in [record_a, record_b, record_c] {
        store.insert(record).unwrap();
    }
    (a, b, c, store)
}

fn keyed_intake(store: KeyStore, capacity: usize) -> KeyedIntake<BooleanBridge> {
    let bridge =
        BooleanBridge::with_cache_capacity(&fixture().server_key, NonZeroUsize::new(capacity).unwrap()).unwrap();
    KeyedIntake::new(IntakeConfig::default(), store, bridge).unwrap()
}

/// Device side: one 128-byte message as one authenticated seeded frame under the device's own key.
fn device_frame(device: &DeviceSecrets, message: &[u8; 128], seed: u8, counter: &mut FrameCounter) -> Vec<u8> {
    let mut encryptor = Box::new(
        GlweEncryptor::<1024>::new(&TFHE_LIB_GLWE_1024, &device.key, Blake2bXof::from_seed([seed; 32])).unwrap(),
    );
    frame_with(&mut encryptor, &device.credentials, message, counter)
}

fn frame_with(
    encryptor: &mut GlweEncryptor<1024>,
    credentials: &DeviceCredentials,
    message: &[u8; 128],
    counter: &mut FrameCounter,
) -> Vec<u8> {
    let mut frames = common::sealed_frames(encryptor, credentials, counter, message);
    assert_eq!(frames.len(), 1);
    frames.remove(0)
}

fn receive(intake: &mut KeyedIntake<BooleanBridge>, frame: &[u8]) -> Message {
    intake.receive(frame, Instant::now()).unwrap().into_message().unwrap()
}

fn random_message(rng: &mut Blake2bXof) -> [u8; 128] {
    let mut bytes = [0u8; 128];
    rng.fill_bytes(&mut bytes);
    bytes
}

fn bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

/// The bits a GLWE key decrypts from `glwe` (tfhe-rs's decryption, boolean decoding: true below 2^31).
fn decrypt_bits_with(device_key: &DeviceSecrets, glwe: &GlweCiphertextOwned<u32>) -> Vec<bool> {
    let key = tfhe_glwe_key(&device_key.key);
    let tfhe_glwe = TfheGlweCiphertext::from_container(
        glwe.as_slice().to_vec(),
        TfhePolynomialSize(1024),
        CiphertextModulus::new_native(),
    );
    let mut plaintexts = PlaintextList::new(0u32, PlaintextCount(1024));
    decrypt_glwe_ciphertext(&key, &tfhe_glwe, &mut plaintexts);
    plaintexts.as_ref().iter().map(|&p| p < (1 << 31)).collect()
}

fn errors(decrypted: &[bool], message: &[u8]) -> usize {
    decrypted
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b != bit(message, i))
        .count()
}

#[test]
fn gates_on_bits_from_two_per_device_devices_and_a_fleet_device() {
    let f = fixture();
    let (a, b, c, store) = provision(1);
    let mut intake = keyed_intake(store, 2);
    let bridge = Arc::clone(intake.converter());
    assert_eq!(bridge.key_mode(A), Some(KeyMode::PerDeviceSecretKey));
    assert_eq!(bridge.key_mode(C), Some(KeyMode::FleetSecretKey));
    let mut rng = Blake2bXof::from_seed([9; 32]);
    let (ma, mb, mc) = (
        random_message(&mut rng),
        random_message(&mut rng),
        random_message(&mut rng),
    );
    let fa = receive(&mut intake, &device_frame(&a, &ma, 11, &mut FrameCounter::new(0)));
    let fb = receive(&mut intake, &device_frame(&b, &mb, 12, &mut FrameCounter::new(0)));
    let fc = receive(&mut intake, &device_frame(&c, &mc, 13, &mut FrameCounter::new(0)));
    let (ca, cb, cc) = (
        bridge.message_to_booleans(&fa).unwrap(),
        bridge.message_to_booleans(&fb).unwrap(),
        bridge.message_to_booleans(&fc).unwrap(),
    );
    // Every key-switched bit of every device decrypts under the tfhe-rs client key.
    for (switched, message, name) in [(&ca, &ma, "A"), (&cb, &mb, "B"), (&cc, &mc, "C")] {
        assert_eq!(switched.len(), 1024);
        let wrong = (0..1024)
            .filter(|&i| f.client_key.decrypt(&switched[i]) != bit(message, i))
            .count();
        assert_eq!(wrong, 0, "device {name}: key-switched bits that decrypt wrong");
    }
    // 64 bit triples x 4 gates = 256 gates, inputs from A (per-device), B (per-device) and C (fleet).
    const TRIPLES: usize = 64;
    let mut gates = 0;
    for i in 0..TRIPLES {
        let j = 8 * i + 3; // spread over the frame
        let (x, y, s) = (bit(&ma, j), bit(&mb, j), bit(&mc, j));
        let (cx, cy, cs) = (&ca[j], &cb[j], &cc[j]);
        let sk = &f.server_key;
        assert_eq!(f.client_key.decrypt(&sk.nand(cx, cy)), !(x && y), "bit {j}: NAND(A, B)");
        assert_eq!(f.client_key.decrypt(&sk.and(cy, cs)), y && s, "bit {j}: AND(B, C)");
        assert_eq!(f.client_key.decrypt(&sk.xor(cx, cs)), x ^ s, "bit {j}: XOR(A, C)");
        assert_eq!(
            f.client_key.decrypt(&sk.mux(cs, cx, cy)),
            if s { x } else { y },
            "bit {j}: MUX(C; A, B)"
        );
        gates += 4;
    }
    println!("{gates} tfhe-rs gates on bits of two per-device devices and one fleet device: all correct");
    assert!(gates >= 256);
    let stats = bridge.cache_stats();
    assert_eq!(
        (stats.misses, stats.entries),
        (2, 2),
        "one decompression per per-device key"
    );
}

#[test]
fn another_devices_key_recovers_nothing() {
    let f = fixture();
    let (a, b, c, store) = provision(2);
    let mut intake = keyed_intake(store, 2);
    let mut rng = Blake2bXof::from_seed([10; 32]);
    let mb = random_message(&mut rng);
    let fb = receive(&mut intake, &device_frame(&b, &mb, 21, &mut FrameCounter::new(0)));
    let glwe = &fb.frames[0].ciphertext;
    // 1024 bits; a key unrelated to the ciphertext gives independent coin flips: 512 +- 16 errors. The bounds
    // 40% and 60% (410 and 614) are 6.4 standard deviations away.
    let (low, high) = (1024 * 40 / 100, 1024 * 60 / 100);
    let own = errors(&decrypt_bits_with(&b, glwe), &mb);
    assert_eq!(own, 0, "B's own key");
    let with_a = errors(&decrypt_bits_with(&a, glwe), &mb);
    let with_fleet = errors(&decrypt_bits_with(&c, glwe), &mb);
    println!("B's frame: {own} errors with B's key, {with_a} with A's key, {with_fleet} with the fleet key (of 1024)");
    for (wrong, whose) in [(with_a, "A's key"), (with_fleet, "the fleet key")] {
        assert!((low..=high).contains(&wrong), "{whose}: {wrong} errors of 1024");
    }
    // The cloud's path too: B's bits key-switched with A's key-switching key decrypt to noise under the
    // client key (the key id is A's, as if B's frame were attributed to A).
    let bridge = intake.converter();
    let big: Vec<_> = (0..1024).map(|i| BooleanBridge::extract(glwe, i)).collect();
    let as_a = bridge.key_switch_batch(A, 100, &big).unwrap();
    let wrong = (0..1024)
        .filter(|&i| f.client_key.decrypt(&as_a[i]) != bit(&mb, i))
        .count();
    println!("B's bits key-switched with A's key: {wrong} errors of 1024");
    assert!(
        (low..=high).contains(&wrong),
        "A's key switch on B's bits: {wrong} errors"
    );
}

#[test]
fn a_frame_maced_as_a_but_sent_as_b_is_rejected_through_the_store() {
    let (a, b, _, store) = provision(3);
    let mut intake = keyed_intake(store, 1);
    let message = [0x5A; 128];
    // Device A's key and MAC key, but the header names device B (with B's key id).
    let forged = DeviceCredentials::new(B, 200, MacKey::from_slice(a.credentials.mac_key().as_bytes()).unwrap());
    let mut encryptor =
        Box::new(GlweEncryptor::<1024>::new(&TFHE_LIB_GLWE_1024, &a.key, Blake2bXof::from_seed([31; 32])).unwrap());
    let frame = frame_with(&mut encryptor, &forged, &message, &mut FrameCounter::new(0));
    assert_eq!(
        intake.receive(&frame, Instant::now()).unwrap_err(),
        IntakeError::BadMac { device_id: B }
    );
    // A's key id under B's id: wrong key id, before the MAC.
    let forged = DeviceCredentials::new(B, 100, MacKey::from_slice(a.credentials.mac_key().as_bytes()).unwrap());
    let frame = frame_with(&mut encryptor, &forged, &message, &mut FrameCounter::new(1));
    assert!(matches!(
        intake.receive(&frame, Instant::now()).unwrap_err(),
        IntakeError::WrongKeyId {
            device_id: B,
            expected: 200,
            found: 100
        }
    ));
    // A device the store does not know.
    let stranger = DeviceCredentials::new(
        0xD,
        100,
        MacKey::from_slice(a.credentials.mac_key().as_bytes()).unwrap(),
    );
    let frame = frame_with(&mut encryptor, &stranger, &message, &mut FrameCounter::new(2));
    assert_eq!(
        intake.receive(&frame, Instant::now()).unwrap_err(),
        IntakeError::UnknownDevice(0xD)
    );
    // B's genuine frame passes; the bridge refuses a key id that is not the device's.
    let genuine = receive(&mut intake, &device_frame(&b, &message, 32, &mut FrameCounter::new(0)));
    let bridge = intake.converter();
    assert_eq!(
        bridge.frames_to_booleans(B, 100, &genuine.frames).unwrap_err(),
        InteropError::FrameOfAnotherDevice {
            device_id: B,
            found_device_id: B,
            found_key_id: 200
        },
        "frames whose header names another key id"
    );
    assert_eq!(
        bridge.frames_to_booleans(A, 100, &genuine.frames).unwrap_err(),
        InteropError::FrameOfAnotherDevice {
            device_id: A,
            found_device_id: B,
            found_key_id: 200
        },
        "B's frames handed over as A's"
    );
    assert_eq!(
        bridge.key_switch_batch(B, 100, &[]).unwrap_err(),
        InteropError::WrongKeyId {
            device_id: B,
            expected: 200,
            found: 100
        }
    );
    assert_eq!(
        bridge.key_switch_batch(0xD, 1, &[]).unwrap_err(),
        InteropError::UnknownDevice(0xD)
    );
}

#[test]
fn key_store_file_round_trips_and_refuses_corruption() {
    let (_, _, _, store) = provision(4);
    let file = store.encode();
    let back = KeyStore::decode(&file).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(back.server_key_fingerprint(), store.server_key_fingerprint());
    for (x, y) in store.iter().zip(back.iter()) {
        assert_eq!(x.device_id(), y.device_id());
        assert_eq!(x.key_id(), y.key_id());
        assert_eq!(x.mode(), y.mode());
        assert_eq!(
            x.credentials().mac_key().as_bytes(),
            y.credentials().mac_key().as_bytes()
        );
        match (x.key(), y.key()) {
            (DeviceKeyMaterial::PerDevice(p), DeviceKeyMaterial::PerDevice(q)) => {
                assert_eq!(p.mask_seed(), q.mask_seed());
                assert_eq!(p.bodies(), q.bodies());
            }
            (DeviceKeyMaterial::Fleet, DeviceKeyMaterial::Fleet) => {}
            _ => panic!("modes differ"),
        }
    }
    assert_eq!(&back.encode()[..], &file[..], "encoding is deterministic");
    let ksk_bytes = match store.get(A).unwrap().key() {
        DeviceKeyMaterial::PerDevice(ksk) => ksk.stored_bytes(),
        DeviceKeyMaterial::Fleet
        | DeviceKeyMaterial::PublicKey
        | DeviceKeyMaterial::IntegerPerDevice(_)
        | DeviceKeyMaterial::BigKeyPerDevice(_) => unreachable!("A is a per-device device"),
    };
    println!(
        "key store of 2 per-device + 1 fleet devices: {} bytes; per-device key {} bytes stored, {} bytes \
         decompressed ({:.1}x)",
        file.len(),
        ksk_bytes,
        DeviceKsk::decompressed_bytes(),
        DeviceKsk::decompressed_bytes() as f64 / ksk_bytes as f64
    );
    assert_eq!(ksk_bytes, 1024 * 8 * 4 + 16);
    assert_eq!(DeviceKsk::decompressed_bytes(), 1024 * 8 * 631 * 4);

    // Any flipped bit is caught (a sample of positions over every region of the file).
    for position in (0..file.len()).step_by(997).chain([0, 8, 9, 10, file.len() - 1]) {
        let mut bad = file.to_vec();
        bad[position] ^= 0x10;
        assert!(KeyStore::decode(&bad).is_err(), "flip at {position} accepted");
    }
    for len in [0, 5, 8, 40, file.len() / 2, file.len() - 1] {
        assert!(KeyStore::decode(&file[..len]).is_err(), "truncated to {len} accepted");
    }
    let mut bad = file.to_vec();
    bad[0] = b'X';
    assert!(matches!(KeyStore::decode(&bad).unwrap_err(), KeySetError::BadMagic));
    let mut bad = file.to_vec();
    bad[KEY_STORE_MAGIC.len()] = 3;
    assert!(matches!(
        KeyStore::decode(&bad).unwrap_err(),
        KeySetError::UnsupportedVersion(3)
    ));
    let mut bad = file.to_vec();
    bad[20] ^= 1;
    assert!(matches!(
        KeyStore::decode(&bad).unwrap_err(),
        KeySetError::DigestMismatch
    ));
    // Behind a valid digest: trailing bytes, another parameter set, an unknown mode, a wrong length.
    let body_end = file.len() - 32;
    let mut trailing = file[..body_end].to_vec();
    trailing.extend_from_slice(&[0, 0, 0]);
    trailing.extend_from_slice(&[0; 32]);
    assert!(matches!(
        KeyStore::decode(&redigest(trailing)).unwrap_err(),
        KeySetError::TrailingBytes(3)
    ));
    // Record A starts after the prefix (9), fingerprint (1 + 32), device count (1): device id (1), key id
    // (1), parameter set (1), MAC key (1 + 32), then the mode byte.
    let set_at = 9 + 33 + 1 + 1 + 1;
    assert_eq!(file[set_at], 1);
    let mut other_set = file.to_vec();
    other_set[set_at] = 7; // parameter_set varint: 1 -> 7
    assert!(matches!(
        KeyStore::decode(&redigest(other_set)).unwrap_err(),
        KeySetError::UnknownParameterSet {
            device_id: A,
            parameter_set: 7
        }
    ));
    let mode_at = set_at + 1 + 33;
    assert_eq!(file[mode_at], KeyMode::PerDeviceSecretKey.to_u8());
    let mut unknown_mode = file.to_vec();
    unknown_mode[mode_at] = 9;
    assert!(matches!(
        KeyStore::decode(&redigest(unknown_mode)).unwrap_err(),
        KeySetError::UnknownKeyMode { device_id: A, mode: 9 }
    ));
    let mut as_fleet = file.to_vec();
    as_fleet[mode_at] = KeyMode::FleetSecretKey.to_u8();
    assert!(matches!(
        KeyStore::decode(&redigest(as_fleet)).unwrap_err(),
        KeySetError::KeyMaterialMismatch {
            device_id: A,
            mode: KeyMode::FleetSecretKey
        }
    ));
    let mut short_mac = file.to_vec();
    short_mac[mode_at - 33] = 31; // MAC key length 32 -> 31: the rest no longer parses as a record
    assert!(KeyStore::decode(&redigest(short_mac)).is_err());

    // A store made for another server key is refused by the bridge.
    let mut stranger = KeyStore::with_fingerprint([7; 32]);
    stranger
        .insert(KeyStore::decode(&file).unwrap().remove(C).unwrap())
        .unwrap();
    let bridge = BooleanBridge::new(&fixture().server_key).unwrap();
    assert_eq!(
        KeyedIntake::new(IntakeConfig::default(), stranger, bridge).unwrap_err(),
        InteropError::ServerKeyMismatch
    );
}

/// Untrusted key store bytes never panic the decoder: mutated files (digest recomputed, so that the parser
/// behind it is reached) and truncations all give a typed error or a store, never a panic. No tfhe-rs key
/// generation needed: a per-device key's shape is all the decoder checks.
#[test]
fn mutated_key_store_files_never_panic() {
    let mut store = KeyStore::with_fingerprint([3; 32]);
    let ksk = DeviceKsk::from_parts(
        0x0123_4567_89ab_cdef,
        (0..8192u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect(),
    )
    .unwrap();
    store
        .insert(tfhe_sbc_adapter::key_store::DeviceRecord::new(
            DeviceCredentials::new(1, 2, MacKey::from_bytes([4; 32])),
            DeviceKeyMaterial::PerDevice(ksk),
        ))
        .unwrap();
    store
        .insert(tfhe_sbc_adapter::key_store::DeviceRecord::new(
            DeviceCredentials::new(5, 6, MacKey::from_bytes([7; 32])),
            DeviceKeyMaterial::Fleet,
        ))
        .unwrap();
    let file = store.encode().to_vec();
    assert_eq!(KeyStore::decode(&file).unwrap().len(), 2);
    let mut rng = Blake2bXof::from_seed([15; 32]);
    let (mut accepted, mut refused) = (0, 0);
    for round in 0..3000 {
        let mut bad = file.clone();
        // Mutations near the start (header, records, lengths) are the interesting ones.
        let window = if round % 2 == 0 { 120 } else { bad.len() - 32 };
        for _ in 0..1 + rng.next_u32() % 3 {
            let at = rng.next_u32() as usize % window;
            bad[at] = rng.next_u32() as u8;
        }
        if round % 5 == 0 {
            let keep = 41 + rng.next_u32() as usize % (bad.len() - 41);
            bad.truncate(keep);
            bad.extend_from_slice(&[0; 32]);
        }
        match KeyStore::decode(&redigest(bad)) {
            Ok(_) => accepted += 1,
            Err(_) => refused += 1,
        }
    }
    println!("mutated key store files: {accepted} decoded, {refused} refused, none panicked");
    assert!(refused > 0);
}

#[test]
fn strategies_agree_bit_for_bit() {
    let f = fixture();
    let (a, _, c, store) = provision(5);
    let mut intake = keyed_intake(store, 1);
    let mut rng = Blake2bXof::from_seed([12; 32]);
    let message = random_message(&mut rng);
    let fa = receive(&mut intake, &device_frame(&a, &message, 51, &mut FrameCounter::new(0)));
    let fc = receive(&mut intake, &device_frame(&c, &message, 52, &mut FrameCounter::new(0)));
    let bridge = intake.converter();
    // 37 ciphertexts: two full blocks of 16 and a partial one.
    for (frame, device, key_id) in [(&fa, A, 100), (&fc, C, 1)] {
        let big: Vec<_> = (0..37)
            .map(|i| BooleanBridge::extract(&frame.frames[0].ciphertext, i))
            .collect();
        let words = |cts: Vec<Ciphertext>| -> Vec<Vec<u32>> {
            cts.into_iter()
                .map(|ct| match ct {
                    Ciphertext::Encrypted(lwe) => lwe.into_container(),
                    Ciphertext::Trivial(_) => panic!("trivial"),
                })
                .collect()
        };
        let serial = words(
            bridge
                .key_switch_batch_with(KeySwitchStrategy::Serial, device, key_id, &big)
                .unwrap(),
        );
        for strategy in [
            KeySwitchStrategy::ParIter,
            KeySwitchStrategy::ParKeyswitch,
            KeySwitchStrategy::Blocked,
        ] {
            let other = words(bridge.key_switch_batch_with(strategy, device, key_id, &big).unwrap());
            assert_eq!(other, serial, "{strategy:?} differs from the serial key switch");
        }
        if device == C {
            // The fleet path is the server key's, as `key_switch` does it.
            let one = words(vec![bridge.key_switch(&big[5])]);
            assert_eq!(one[0], serial[5]);
        }
        for (i, lwe) in serial.iter().enumerate() {
            let ct = Ciphertext::Encrypted(tfhe::core_crypto::prelude::LweCiphertext::from_container(
                lwe.clone(),
                CiphertextModulus::new_native(),
            ));
            assert_eq!(f.client_key.decrypt(&ct), bit(&message, i));
        }
    }
}

#[test]
fn the_bridge_is_shared_across_threads_and_its_cache_is_bounded() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<BooleanBridge>();
    assert_send_sync::<Arc<BooleanBridge>>();
    let f = fixture();
    let (a, b, _, store) = provision(6);
    // Capacity 1: A and B evict each other.
    let mut intake = keyed_intake(store, 1);
    let mut rng = Blake2bXof::from_seed([13; 32]);
    let (ma, mb) = (random_message(&mut rng), random_message(&mut rng));
    let fa = receive(&mut intake, &device_frame(&a, &ma, 61, &mut FrameCounter::new(0)));
    let fb = receive(&mut intake, &device_frame(&b, &mb, 62, &mut FrameCounter::new(0)));
    let few = |m: &Message| {
        let mut m = m.clone();
        m.message_length = 2; // 16 bits are enough here
        m.frames[0].header.message_length = 2;
        m
    };
    let (fa, fb) = (few(&fa), few(&fb));
    let bridge = Arc::clone(intake.converter());
    bridge.message_to_booleans(&fa).unwrap(); // miss
    bridge.message_to_booleans(&fa).unwrap(); // hit
    bridge.message_to_booleans(&fb).unwrap(); // miss, evicts A
    bridge.message_to_booleans(&fa).unwrap(); // miss again
    let stats = bridge.cache_stats();
    assert_eq!((stats.hits, stats.misses, stats.entries, stats.capacity), (1, 3, 1, 1));
    // Two threads share one bridge through an Arc, each converting its device's message.
    let results: Vec<(Vec<Ciphertext>, [u8; 128])> = std::thread::scope(|scope| {
        let handles: Vec<_> = [(fa, ma), (fb, mb)]
            .into_iter()
            .map(|(message, bits)| {
                let bridge = Arc::clone(&bridge);
                scope.spawn(move || (bridge.message_to_booleans(&message).unwrap(), bits))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (switched, bits) in results {
        assert_eq!(switched.len(), 16);
        for (i, ct) in switched.iter().enumerate() {
            assert_eq!(f.client_key.decrypt(ct), bit(&bits, i));
        }
    }
    assert!(bridge.cache_stats().entries <= 1);
    // Registering through the keyed intake reaches both halves; a duplicate reaches neither.
    let mut rng = Blake2bXof::from_seed([14; 32]);
    let (_, record) = provision_per_device(&f.client_key, 0xE, 5, &mut rng).unwrap();
    intake.register(record, 0).unwrap();
    assert!(bridge.contains(0xE));
    let (_, again) = provision_per_device(&f.client_key, 0xE, 6, &mut rng).unwrap();
    assert_eq!(
        intake.register(again, 0).unwrap_err(),
        InteropError::DuplicateDevice(0xE)
    );
    assert_eq!(bridge.key_mode(0xE), Some(KeyMode::PerDeviceSecretKey));
}
