//! The trusted party's provisioning tool (`tfhe-sbc-keys`): makes a tfhe-rs key set, issues device
//! credentials and writes the adapter's key store.
//!
//! ```text
//! tfhe-sbc-keys init  --dir keys --parameters tfhe-lib
//! tfhe-sbc-keys issue --dir keys --device-id 7 --mode per-device
//! tfhe-sbc-keys show  --dir keys
//!
//! tfhe-sbc-keys init  --dir ints --parameters integer
//! tfhe-sbc-keys issue --dir ints --device-id 8 --mode per-device
//! tfhe-sbc-keys issue --dir ints --device-id 9 --mode public-key
//!
//! tfhe-sbc-keys init  --dir lists --parameters integer --compact-list
//! tfhe-sbc-keys issue --dir lists --device-id 10 --mode compact-list
//! ```
//!
//! * [`commands::init`]: the tfhe-rs `ClientKey` and `ServerKey` (every secret seeded from the OS), the
//!   seeded public key (`tfhe_sbc_device::public_key`) and an empty key store
//!   (`tfhe_sbc_adapter::key_set::key_store`) bound to the server key. With `--parameters integer`
//!   ([`commands::init_integer`]): tfhe-rs's high-level `ClientKey` and `ServerKey` of its default
//!   `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` (`FheUint8` .. `FheUint64`), the seeded public key under
//!   the client key's GLWE key (`u64` body words) and an empty key store bound to that server key.
//!   With `--compact-list` ([`commands::init_compact_list`]): the same keys built with tfhe-rs's dedicated
//!   compact public-key parameters (`PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`; the server key holds
//!   the casting key) and `compact_public_key.tscp`, tfhe-rs's `CompactPublicKey` as the raw `[a | b]` a
//!   device encrypts `CompactCiphertextList`s under (`tfhe_sbc_device::files::compact_public_key`).
//! * [`commands::issue`]: one device in one key mode (fleet, per-device, public key): its credential file
//!   (`tfhe_sbc_device::files::credentials`: device id, key id, MAC key, and its own secret key, the client
//!   key's GLWE key or the key set's public key) and its record in the key store. Every set takes fleet and
//!   public-key devices, one code path for both kinds of set; per-device keys on every set.
//!   [`commands::issue_compact_list_devices`] (`--mode compact-list`): the compact public-key file and
//!   public-key credentials.
//!   `issue --count N` is crash-consistent: an intent journal, the key store as the commit point, and a
//!   recovery that finishes or rolls back an interrupted pass (`issue` runs it first; [`commands::repair`]).
//!   [`commands::issue_dev_devices`] (`--unsafe-dev-credential`): firmware development credentials, UNSAFE
//!   FOR PRODUCTION (their keys are derived from the id by a public XOF).
//! * [`commands::show`]: the key set and its devices, no secret.
//! * [`commands::check_frame`]: one frame through the key set's intake, and what it decrypts to.
//!
//! The files' formats (the tfhe-rs key files' envelope, the key store), names and modes, and the atomic
//! writer are the adapter's key-set module (`tfhe_sbc_adapter::key_set`), which the server reads them with;
//! [`files`] adds the directories and the directory lock. Every failure is one line of [`error::Error`].

pub mod commands;
pub mod error;
pub mod files;

pub use tfhe_sbc_adapter::key_set::{KeyMode, KeySetParameters, parameters_name};
