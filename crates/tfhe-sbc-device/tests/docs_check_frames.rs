//! Frames for `scripts/docs-check/` (ignored, run by hand): an empty message and a non-empty one, each as
//! one compact-list frame (kind 3) of the compact-list device whose files `TSBC_DOCS_CHECK_DEVICE` names
//! (`<key set>/devices/<ID>`, without extension: its `.tsdc` and `.tscp`), written into the directory
//! `TSBC_DOCS_CHECK_OUT` as `<name>.frame`, 400 one-reading messages as `u8-1-x400.stream`, and a bare list of
//! 5 bools as `bool-5.list`. The check script decodes them from `docs/` alone; the client
//! cannot send an empty message (it has no reading to send), so this is the one way to get that frame from
//! the device's code.
#![cfg(feature = "std")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand_core::SeedableRng;
use tfhe_sbc_device::encrypt::compact_list::{CompactListEncryptor, compact_list_bytes};
use tfhe_sbc_device::files::credentials::decode_credentials;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::std_io::MessageEncryptor;

#[test]
#[ignore = "writes frames for scripts/docs-check/check.py: TSBC_DOCS_CHECK_DEVICE=<dir>/devices/<ID> TSBC_DOCS_CHECK_OUT=<dir>"]
fn write_compact_list_frames() {
    let device = std::env::var("TSBC_DOCS_CHECK_DEVICE").expect("TSBC_DOCS_CHECK_DEVICE=<key set>/devices/<ID>");
    let out = std::env::var("TSBC_DOCS_CHECK_OUT").expect("TSBC_DOCS_CHECK_OUT=<directory>");
    let file = std::fs::read(format!("{device}.tsdc")).unwrap();
    let key = std::fs::read(format!("{device}.tscp")).unwrap();
    let credentials = decode_credentials(&file).unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
    let mut counter = FrameCounter::new(1_000);
    let messages: [(&str, u32, Vec<u8>); 3] = [
        ("empty-u8", 8, Vec::new()),
        ("u8-5", 8, vec![0, 1, 2, 0x7f, 0xff]),
        (
            "u32-3",
            32,
            [0u32, 0xdead_beef, u32::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
    ];
    for (name, bits, message) in messages {
        let mut encryptor = MessageEncryptor::compact_list(&credentials, &key, bits, &mut rng).unwrap();
        let outgoing = counter.begin_message(message.len(), encryptor.chunk_bytes()).unwrap();
        let frames = encryptor
            .encrypt_message(&credentials.credentials, &outgoing, &message)
            .unwrap();
        assert_eq!(frames.len(), 1, "{name}");
        std::fs::write(format!("{out}/{name}.frame"), &frames[0].bytes).unwrap();
    }
    // 400 messages of one u8 reading each, as on the stream (u32 little-endian length, then the frame): each
    // list its own bin, so its own `r` and `e1`, for the noise's variance over them.
    let mut stream = Vec::new();
    for i in 0..400u32 {
        let message = [(i % 256) as u8];
        let mut encryptor = MessageEncryptor::compact_list(&credentials, &key, 8, &mut rng).unwrap();
        let outgoing = counter.begin_message(1, encryptor.chunk_bytes()).unwrap();
        let frames = encryptor
            .encrypt_message(&credentials.credentials, &outgoing, &message)
            .unwrap();
        stream.extend_from_slice(&(frames[0].bytes.len() as u32).to_le_bytes());
        stream.extend_from_slice(&frames[0].bytes);
    }
    std::fs::write(format!("{out}/u8-1-x400.stream"), &stream).unwrap();
    // A bare list of 5 bools (frames carry only 8, 16 and 32-bit readings): 8 info bytes per value.
    let bools = [true, false, false, true, true];
    let mut encryptor = CompactListEncryptor::EMPTY;
    encryptor.set_public_key_le_bytes(&key[48..48 + 32_768]).unwrap();
    encryptor.seed(&mut rng).unwrap();
    let mut list = vec![0u8; compact_list_bytes::<bool>(bools.len())];
    let len = encryptor.encrypt_list(&bools, &mut list).unwrap();
    assert_eq!(len, list.len());
    std::fs::write(format!("{out}/bool-5.list"), &list).unwrap();
}
