//! A meter, the device side of the integer job: what it is given at provisioning, and how it encrypts its
//! readings through the one `FrameEncryptor` seam (the integer encryptor under its own or the fleet's key,
//! or the integer public-key encryptor) and sends the frames over TCP.

use super::N;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::stream::write_frame;
use tfhe_sbc_core::entities::GlweSecretKeyOwned;
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::files::public_key::public_key_body;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::mac::DeviceCredentials;
use tfhe_sbc_device::frame::message::chunks;

/// The key a meter is given at provisioning.
pub(super) enum MeterKey {
    /// Its own GLWE key or the client key's (fleet).
    Secret(GlweSecretKeyOwned),
    /// The key set's public-key file (shared by every public-key meter).
    Public(Arc<Vec<u8>>),
}

/// What a meter is given at provisioning: its key and its frame credentials.
pub(super) struct Provisioned {
    pub(super) key: MeterKey,
    pub(super) credentials: DeviceCredentials,
    pub(super) encryption_seed: [u8; 32],
}

/// What a meter reports after sending.
pub(super) struct Sent {
    pub(super) id: u64,
    pub(super) frames: usize,
    pub(super) frame_bytes: usize,
    pub(super) encryption: Duration,
}

/// One meter: encrypts its readings (little-endian bytes) as one message and sends its frames: seeded
/// integer frames with `body_bits`-bit bodies under a secret key, or public-key frames (full bodies).
pub(super) fn run_meter(meter: Provisioned, readings: &[u16], body_bits: u32, address: SocketAddr) -> Sent {
    let Provisioned {
        key,
        credentials,
        mut encryption_seed,
    } = meter;
    let mut encryptor: Box<dyn FrameEncryptor> = match key {
        MeterKey::Secret(key) => {
            let mut encryptor = Box::new(IntegerEncryptor::<N>::EMPTY);
            encryptor
                .set_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &key)
                .expect("a key of the set");
            drop(key);
            encryptor.set_body_bits(body_bits).expect("a width the set allows");
            encryptor.seed_from_bytes(&mut encryption_seed);
            encryptor
        }
        MeterKey::Public(file) => {
            // As from a credential file: the key set's public key, bound to the meter's key id.
            let (header, body) = public_key_body(&file, credentials.key_id()).expect("the key set's public key");
            let mut encryptor = Box::new(IntegerPublicKeyEncryptor::<N>::EMPTY);
            encryptor
                .set_integer_public_key_le_bytes(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &header.seed, body)
                .expect("a public key of the set");
            encryptor.seed_from_bytes(&mut encryption_seed);
            encryptor
        }
    };
    // Sequence numbers never repeat: firmware restores the counter from a persisted high-water mark or a
    // boot counter; this run is boot 0.
    let mut counter = FrameCounter::from_boot_counter(0);
    let bytes: Vec<u8> = readings.iter().flat_map(|r| r.to_le_bytes()).collect();
    let mut encrypt_message = |counter: &mut FrameCounter| -> Vec<Vec<u8>> {
        let message = encryptor.begin_message(counter, bytes.len()).expect("counter");
        chunks(&bytes, encryptor.chunk_bytes())
            .map(|chunk| {
                // A secret-key frame's full body is computed in the frame buffer before it is compacted.
                let mut out = vec![0u8; encryptor.frame_buffer_len()];
                let len = encryptor
                    .encrypt_frame_into(&credentials, &message, &chunk, &mut out)
                    .expect("encrypts");
                out.truncate(len);
                out
            })
            .collect()
    };
    // The time printed is warm: a first message (never sent; its sequence numbers are simply skipped, as
    // after a lost message) pays the first use of the buffers and caches, the second is timed and sent.
    drop(encrypt_message(&mut counter));
    let t = Instant::now();
    let frames = encrypt_message(&mut counter);
    let encryption = t.elapsed();
    let mut socket = TcpStream::connect(address).expect("adapter listening");
    for frame in &frames {
        write_frame(&mut socket, frame).expect("sent");
    }
    Sent {
        id: credentials.device_id(),
        frames: frames.len(),
        frame_bytes: frames.iter().map(Vec::len).sum(),
        encryption,
    }
}
