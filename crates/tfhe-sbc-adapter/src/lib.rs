//! The server side of tfhe-sbc: what a Rust cloud service links to receive device frames and compute on
//! them with tfhe-rs.
//!
//! The path, by name:
//! 1. [`stream::FrameReader`]: length-delimited frames off a socket, with a size limit.
//! 2. [`intake::Intake`]: authenticated intake of wire-format v2 frames (the tfhe-sbc wire format). Magic and
//!    version, the fixed header with every field validated ([`intake::parse_frame`]), the device's MAC key
//!    from the [`registry::DeviceRegistry`], the MAC checked before anything is expanded or allocated, a
//!    per-device replay window, and the [`reassembly`] of multi-chunk messages, with limits.
//!    Typed [`IntakeError`]s throughout; seeded masks are regenerated bit for bit.
//! 3. [`extraction`]: sample extraction of one, all, or lazily chosen coefficients (and a rayon batch).
//! 4. `interop` (feature `tfhe`): tfhe-rs keys for the trusted party, the seeded per-device
//!    key-switching key (`interop::SeededKsk`), and one `interop::Converter` face with three converters:
//!    `BooleanBridge` (small-key boolean set: a key switch per bit, in parallel batches), `BigKeyBridge`
//!    (128-bit boolean sets: extraction only) and `IntegerBridge` (`FheUint` readings); one error type,
//!    `interop::InteropError`.
//! 5. [`ack`]: the acknowledgement a server sends for each frame (idempotent for resends), from the intake's
//!    answer.
//! 6. `key_set` (feature `tfhe`): the cloud's files of a key set, among them `key_set::key_store`, what
//!    the cloud holds per device (key id, key mode, MAC key, seeded key-switching key) and its file format.
//! 7. `keyed_intake` (feature `tfhe`): `keyed_intake::KeyedIntake<C>`, the intake and any converter fed
//!    from one key store.
//!
//! # Example
//! ```
//! use rand_core::SeedableRng;
//! use std::time::Instant;
//! use tfhe_sbc_adapter::extraction::extract_lwe_sample;
//! use tfhe_sbc_adapter::intake::{Intake, IntakeConfig};
//! use tfhe_sbc_adapter::registry::DeviceRegistry;
//! use tfhe_sbc_core::entities::{GlweSecretKey, LweCiphertext};
//! use tfhe_sbc_core::encoding::decode_bool;
//! use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
//! use tfhe_sbc_device::encrypt::decryption::decrypt_lwe_phase;
//! use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
//! use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
//! use tfhe_sbc_device::frame::message::chunks;
//! use tfhe_sbc_device::frame::{FrameCounter, SEEDED_FRAME_BYTES_1024};
//! use tfhe_sbc_device::csprng::xof::Blake2bXof;
//!
//! // Provisioning: a device id, a key id and a random MAC key, known to the device and the server.
//! let mac_key = [0x42; 32]; // `MacKey::generate(&mut rng)` in practice
//! let credentials = DeviceCredentials::new(17, 1, MacKey::from_bytes(mac_key));
//! let mut registry = DeviceRegistry::new();
//! registry.register(DeviceCredentials::new(17, 1, MacKey::from_bytes(mac_key))).unwrap();
//!
//! // Device side.
//! let params = TFHE_LIB_GLWE_1024;
//! let key = GlweSecretKey::generate_binary(vec![0u8; 1024], params.polynomial_size(), &mut Blake2bXof::from_seed([1; 32])).unwrap();
//! let mut encryptor = Box::new(GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([2; 32])).unwrap());
//! let mut counter = FrameCounter::new(0); // restored from flash in practice
//! let message = [0b1010_0101u8];
//! let outgoing = encryptor.begin_message(&mut counter, message.len()).unwrap();
//! let chunk = chunks(&message, 128).next().unwrap();
//! let mut body = [0u32; 1024];
//! let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
//! let len = encryptor.encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut frame).unwrap();
//!
//! // Server side: authenticate, de-duplicate, regenerate the mask, extract bit 2 as an LWE ciphertext.
//! let mut intake = Intake::new(IntakeConfig::default(), registry);
//! let received = intake.receive(&frame[..len], Instant::now()).unwrap().into_message().unwrap();
//! let mut lwe = vec![0u32; 1025];
//! extract_lwe_sample(&received.frames[0].ciphertext, 2, &mut lwe);
//! // The same bytes again are a replay.
//! assert!(intake.receive(&frame[..len], Instant::now()).is_err());
//!
//! // Trusted party: bit 2 of 0b1010_0101 is 1.
//! let phase = decrypt_lwe_phase(&key, &LweCiphertext::from_container(&lwe[..]).unwrap()).unwrap();
//! assert!(decode_bool(phase));
//! ```

pub mod ack;
pub mod commit;
mod error;
pub mod extraction;
#[cfg(feature = "test-utils")]
pub mod fuzzing;
pub mod intake;
#[cfg(feature = "tfhe")]
pub mod interop;
#[cfg(feature = "tfhe")]
pub mod key_set;
#[cfg(feature = "tfhe")]
pub mod keyed_intake;
pub mod registry;
pub mod replay;
#[cfg(feature = "test-utils")]
pub mod repository;
pub mod results;
pub mod stream;

pub use error::{IntakeError, MessageField, ResultsError};
pub use intake::reassembly;

/// The key store and the keyed intakes under the path they had before [`key_set`] and [`keyed_intake`]
/// were split: [`key_set::key_store`]'s items and [`keyed_intake::KeyedIntake`] /
/// [`keyed_intake::IntegerKeyedIntake`].
#[cfg(feature = "tfhe")]
pub mod key_store {
    pub use crate::key_set::key_store::*;
    pub use crate::keyed_intake::{IntegerKeyedIntake, KeyedIntake};
}
