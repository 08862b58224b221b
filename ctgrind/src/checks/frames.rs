//! Framing: the frame MAC and the encryptors' frame paths (seeded, full, compact, integer, public key) as the
//! firmware and the clients run them, under secret MAC keys.

use super::inputs::{
    public_key, public_xof, secret_encryptor, secret_key, secret_mac_key, secret_message, secret_readings,
};
use super::outputs::{all_tainted, outcome, publish, publish_frame};
use super::sizes::{N, N64};
use crate::check::Outcome;
use crate::classified_rng::ClassifiedRng;
use crate::digest::Digest;
use crate::valgrind::{declassify, is_tainted};
use negacyclic_ntt::{NttPlan32, NttPlan64};
use rand_core::Rng;
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweCiphertext, pack_secret_key};
use tfhe_sbc_core::parameters::{MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::mac::DeviceCredentials;
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FULL_FRAME_BYTES_1024, FrameCounter, SEEDED_FRAME_BYTES_1024};
use tfhe_sbc_device::noise::DeviceNoise;

pub(super) fn frame_mac() -> Outcome {
    let key = secret_mac_key(50);
    let mut frame = [0u8; 600];
    public_xof(51).fill_bytes(&mut frame);
    let mut tag = key.tag(&frame);
    let mut digest = Digest::default();
    let taint = [publish(&mut tag, &mut digest)];
    outcome(&taint, &digest)
}

pub(super) fn seeded_frame() -> Outcome {
    let params = TFHE_LIB_GLWE_1024;
    let mut encryptor = secret_encryptor(15);
    let credentials = DeviceCredentials::new(7, 1, secret_mac_key(17));
    let mut counter = FrameCounter::new(1000);
    // Two chunks: a full one and a short last one.
    let message = [secret_message(18), secret_message(19)];
    let bytes = &message.as_flattened()[..N / 8 + 40];
    let mut digest = Digest::default();
    let mut taint = [None; 4];
    for (round, body_bits) in [32, params.compact_body_bits()].into_iter().enumerate() {
        encryptor.set_body_bits(body_bits).expect("a width the set allows");
        let outgoing = encryptor
            .begin_message(&mut counter, bytes.len())
            .expect("sequence numbers left");
        for (chunk, taint) in chunks(bytes, N / 8).zip(&mut taint[2 * round..]) {
            let mut body = [0u32; N];
            let mut frame = [0u8; SEEDED_FRAME_BYTES_1024];
            let len = encryptor
                .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut frame)
                .expect("a chunk of this message, a large enough buffer");
            declassify(&mut body);
            *taint = publish_frame(&mut frame, len, &mut digest);
        }
    }
    outcome(&taint, &digest)
}

/// The firmware's path, as a microcontroller runs it: an empty encryptor keyed in place from the packed key
/// of a credential file and seeded from a (secret) hardware RNG, frames encrypted straight into the frame
/// buffer, with the Cortex-M default product (`NttPlan32`) and with the hosts' default (the FFT).
pub(super) fn firmware_frame() -> Outcome {
    use tfhe_sbc_device::product::{DefaultProduct, NegacyclicProductPlan};

    fn run<P: NegacyclicProductPlan<N, Torus = u32>>(label: u8, digest: &mut Digest) -> Option<bool> {
        let params = TFHE_LIB_GLWE_1024;
        let key = secret_key::<N>(label);
        let mut packed = [0u8; N / 8];
        pack_secret_key(key.as_bytes(), &mut packed).expect("N bits into N / 8 bytes");
        let mut encryptor = Box::new(GlweEncryptor::<N, 1, P>::EMPTY);
        encryptor
            .set_packed_key(&params, &packed)
            .expect("TFHE_LIB_GLWE_1024, 128 bytes");
        declassify(&mut packed);
        let mut trng = ClassifiedRng(public_xof(label + 1));
        encryptor.seed(&mut trng).expect("an infallible RNG");
        let message = [secret_message(label + 3), secret_message(label + 4)];
        let bytes = &message.as_flattened()[..N / 8 + 17];
        // One byte of offset: the body's 4-aligned window is not where the body lands.
        let taint = seal_message(&mut *encryptor, &mut sender(9, label + 2), bytes, 1, digest);
        all_tainted(&taint)
    }

    let mut digest = Digest::default();
    let taint = [
        run::<NttPlan32>(70, &mut digest),
        run::<DefaultProduct>(75, &mut digest),
    ];
    outcome(&taint, &digest)
}

pub(super) fn full_frame() -> Outcome {
    let mut encryptor = secret_encryptor(12);
    let credentials = DeviceCredentials::new(8, 1, secret_mac_key(14));
    let mut counter = FrameCounter::new(0);
    let message = secret_message(14);
    let outgoing = encryptor
        .begin_message(&mut counter, message.len())
        .expect("sequence numbers left");
    let chunk = chunks(&message, N / 8).next().expect("one chunk");
    let mut ciphertext =
        GlweCiphertext::<u32, _>::from_container([0u32; 2 * N], PolynomialSize(N)).expect("k = 1, N = 1024");
    let mut frame = [0u8; FULL_FRAME_BYTES_1024];
    let len = encryptor
        .encrypt_full_frame(&credentials, &outgoing, &chunk, &mut ciphertext, &mut frame)
        .expect("a chunk of this message, a large enough buffer");
    let (mask, body) = ciphertext.mask_and_body_mut();
    let (mask_taint, body_taint) = (is_tainted(mask), is_tainted(body));
    declassify(mask);
    declassify(body);
    let mut digest = Digest::default();
    let taint = [mask_taint, body_taint, publish_frame(&mut frame, len, &mut digest)];
    outcome(&taint, &digest)
}

/// The integer firmware's path (`firmware/src/integer_run.rs`): an empty encryptor keyed in place from the
/// packed key of a credential file and seeded from a (secret) hardware RNG, secret readings encrypted
/// straight into the frame buffer (its 8-aligned body window) and authenticated under a secret MAC key; then
/// the same message again with the set's compact body (the body rounded and packed in place).
pub(super) fn integer_frame() -> Outcome {
    type Encryptor = IntegerEncryptor<N64, NttPlan64>;
    let key = secret_key::<N64>(110);
    let mut packed = [0u8; N64 / 8];
    pack_secret_key(key.as_bytes(), &mut packed).expect("N bits into N / 8 bytes");
    let mut encryptor = Box::new(Encryptor::EMPTY);
    encryptor
        .set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &packed)
        .expect("the integer set, 256 bytes");
    declassify(&mut packed);
    encryptor
        .seed(&mut ClassifiedRng(public_xof(111)))
        .expect("an infallible RNG");
    let mut sender = sender(10, 112);
    // A full chunk of 512 readings and a short one of 100.
    let readings = secret_readings::<{ Encryptor::MESSAGE_BYTES + 100 }>(113);
    let mut digest = Digest::default();
    // Three bytes of offset: the body's 8-aligned window is not where the body lands.
    let mut taint = seal_message(&mut *encryptor, &mut sender, &readings, 3, &mut digest);
    // The same message again with the set's compact body.
    let compact = encryptor.compact_body_bits();
    encryptor.set_body_bits(compact).expect("the set's compact width");
    taint.extend(seal_message(&mut *encryptor, &mut sender, &readings, 3, &mut digest));
    outcome(&taint, &digest)
}

/// The integer public-key firmware path (`firmware/`, feature `integer-public-key`): the public key (public,
/// from a public key and public randomness) read in place from its file's little-endian bytes, the encryptor
/// seeded from a secret RNG, secret readings sealed into public-key frames under a secret MAC key.
pub(super) fn integer_public_key_frame() -> Outcome {
    type Encryptor = IntegerPublicKeyEncryptor<N64, NttPlan64>;
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let plan = <NttPlan64 as NegacyclicProductPlan<N64>>::PLAN;
    let noise =
        DeviceNoise::for_tuniform_parameters(&MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe()).expect("the integer set");
    let (pk_seed, pk_body) = public_key(&plan, &noise, 130);
    let pk_le: Vec<u8> = pk_body.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut encryptor = Box::new(Encryptor::EMPTY);
    encryptor
        .set_integer_public_key_le_bytes(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &pk_seed, &pk_le)
        .expect("the integer set, a real public key");
    encryptor
        .seed(&mut ClassifiedRng(public_xof(132)))
        .expect("an infallible RNG");
    let readings = secret_readings::<{ Encryptor::READING_BYTES + 100 }>(134);
    let mut digest = Digest::default();
    let taint = seal_message(&mut *encryptor, &mut sender(11, 133), &readings, 3, &mut digest);
    outcome(&taint, &digest)
}

/// Seals `message` through the [`FrameEncryptor`] trait as the next message of `sender` (its credentials and
/// frame counter), each frame `offset` bytes into its buffer (so that a payload's aligned window is not where
/// the payload lands), digests the declassified frames and returns each frame's taint.
fn seal_message(
    encryptor: &mut dyn FrameEncryptor,
    sender: &mut (DeviceCredentials, FrameCounter),
    message: &[u8],
    offset: usize,
    digest: &mut Digest,
) -> Vec<Option<bool>> {
    let (credentials, counter) = sender;
    let outgoing = encryptor
        .begin_message(counter, message.len())
        .expect("sequence numbers left");
    let mut buffer = vec![0u8; encryptor.frame_buffer_len() + offset];
    let frame = &mut buffer[offset..];
    chunks(message, encryptor.chunk_bytes())
        .map(|chunk| {
            let len = encryptor
                .encrypt_frame_into(credentials, &outgoing, &chunk, frame)
                .expect("a chunk of this message, a large enough buffer");
            publish_frame(frame, len, digest)
        })
        .collect()
}

/// A device's sender: the credentials of device `device` under its secret MAC key `mac_label`, and a fresh
/// frame counter.
fn sender(device: u64, mac_label: u8) -> (DeviceCredentials, FrameCounter) {
    (
        DeviceCredentials::new(device, 1, secret_mac_key(mac_label)),
        FrameCounter::new(0),
    )
}
