//! `tfhe-sbc-client`: the device program for Linux boards (a Raspberry Pi). It reads sensor readings from
//! standard input, a file or a sensor command, encrypts them with the device's credential file from
//! provisioning (`tfhe-sbc-keys issue`), and sends authenticated v2 frames to a server over TCP,
//! reconnecting and resending until each frame is acknowledged by a record that verifies under the device's
//! MAC key. A message the server lost (expired) is reported as lost, and the exit status says so. No
//! tfhe-rs: only the device crate.
//!
//! ```text
//! tfhe-sbc-client --credentials devices/7.tsdc --server cloud.example:7700 --command "read-sensor" --interval 10s
//! ```
//!
//! * [`cli`]: the command line and its `--help` (with the exit status);
//! * [`sources`]: where the lines come from (standard input, a file, a sensor command);
//! * [`readings`]: lines of text to little-endian bytes, batched into messages;
//! * [`uplink`]: the queue of frames, its outbox on disk (unacknowledged frames survive a crash and go out
//!   again at the next start) and the connection thread (authenticated acknowledgements: a record that does
//!   not verify under the device's MAC key changes nothing; reconnects with backoff, resends;
//!   `tfhe_sbc_device::frame::ack`);
//! * the encryption, the credential file and the persisted frame counter are the device crate's
//!   (`tfhe_sbc_device::std_io`), so that any device program can use them.

pub mod cli;
pub mod log;
pub mod readings;
pub mod sources;
pub mod uplink;
