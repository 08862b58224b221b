//! The two mask XOFs of seeded frames (wire ids 2 and 3, `tfhe_sbc_device::csprng::construction`): a device
//! encrypting with either is extracted and decrypted by the intake, which expands the mask with the XOF the
//! header names; a frame whose id is changed is refused by the MAC (the header is authenticated), and even
//! re-tagged by the device's own key it does not decrypt to the message; any other id is refused.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Device, header_of, intake, reframe, sealed_frames};
use rand_core::SeedableRng;
use std::time::Instant;
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::{Blake2bCounter, Blake2sCounter, KeyedXof, XofConstruction};
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::product::DefaultProduct;

const MESSAGE: &[u8] = b"a reading from a 32-bit device, and one more chunk's worth of bytes: \
    the quick brown fox jumps over the lazy dog, twice over, to fill the second frame...";

/// The seeded frames of `message` from `device`'s key and credentials through an encryptor of the XOF
/// construction `X`.
fn frames_with<X: XofConstruction>(device: &mut Device, rng_seed: u8, message: &[u8]) -> Vec<Vec<u8>> {
    let mut encryptor = Box::new(
        GlweEncryptor::<1024, 1, DefaultProduct, X>::new(
            &TFHE_LIB_GLWE_1024,
            &device.key,
            KeyedXof::<X>::from_seed([rng_seed; 32]),
        )
        .unwrap(),
    );
    assert_eq!(encryptor.mask_xof_id(), X::MASK_XOF_ID);
    sealed_frames(&mut *encryptor, &device.credentials, &mut device.counter, message)
}

#[test]
fn frames_of_either_mask_xof_decrypt_and_a_changed_id_does_not() {
    let mut device = Device::new(7, 70);
    let key = device.mac_key();
    let v2 = frames_with::<Blake2bCounter>(&mut device, 1, MESSAGE);
    let v3 = frames_with::<Blake2sCounter>(&mut device, 1, MESSAGE);
    assert!(MESSAGE.len() > 128 && v2.len() == 2 && v3.len() == 2);
    assert!(v2.iter().all(|f| header_of(f).xof_id == 2));
    assert!(v3.iter().all(|f| header_of(f).xof_id == 3));

    let mut intake = intake(IntakeConfig::default(), &[&device]);
    let now = Instant::now();
    for frames in [&v2, &v3] {
        let message = common::receive_message(&mut intake, frames, now);
        assert_eq!(device.decrypt_message(&message), MESSAGE);
    }

    // The other id with the device's tag: the header is authenticated, the MAC refuses it.
    for (frame, other) in [(&v2[0], 3u8), (&v3[0], 2u8)] {
        let mut changed = frame.clone();
        let mut header = header_of(frame);
        header.xof_id = other;
        header.write(&mut changed).unwrap();
        assert_eq!(
            intake.receive(&changed, now).unwrap_err(),
            IntakeError::BadMac { device_id: 70 },
            "id changed to {other}"
        );
    }

    // The other id re-tagged with the device's own key (a device that lies about its XOF): accepted, but the
    // mask expanded is not the one encrypted under, and the chunk decrypts to noise.
    let short = &MESSAGE[..128];
    let v3_as_2 = reframe(&frames_with::<Blake2sCounter>(&mut device, 2, short)[0], &key, |h| {
        h.xof_id = 2
    });
    let v2_as_3 = reframe(&frames_with::<Blake2bCounter>(&mut device, 3, short)[0], &key, |h| {
        h.xof_id = 3
    });
    for lying in [v3_as_2, v2_as_3] {
        let message = intake.receive(&lying, now).unwrap().into_message().unwrap();
        let decrypted = device.decrypt_message(&message);
        let matching = decrypted.iter().zip(short).filter(|(a, b)| a == b).count();
        assert!(
            matching < 16,
            "{matching} of 128 bytes decrypted right under the wrong XOF"
        );
    }

    // No other id expands a seeded mask.
    let fresh = frames_with::<Blake2sCounter>(&mut device, 4, short);
    for id in [0u8, 1, 4, 255] {
        assert_eq!(
            intake
                .receive(&reframe(&fresh[0], &key, |h| h.xof_id = id), now)
                .unwrap_err(),
            IntakeError::UnsupportedXof(id),
            "id {id}"
        );
    }
}
