//! `tfhe-sbc-client`: the device program for Linux boards (a Raspberry Pi). It reads sensor readings from
//! standard input, a file or a sensor command, encrypts them with the device's credential file from
//! provisioning (`tfhe-sbc-keys issue`), and sends authenticated v2 frames to a server over TCP,
//! reconnecting and resending until each frame is acknowledged. No tfhe-rs: only the device crate.
//!
//! ```text
//! tfhe-sbc-client --credentials devices/7.tsdc --server cloud.example:7700 --command "read-sensor" --interval 10s
//! ```
//!
//! * [`readings`]: lines of text to little-endian bytes, batched into messages;
//! * [`uplink`]: the queue of frames and the connection thread (acknowledgements, reconnects with backoff,
//!   resends; `tfhe_sbc_device::frame::ack`);
//! * the encryption, the credential file and the persisted frame counter are the device crate's
//!   (`tfhe_sbc_device::std_io`), so that any device program can use them.

pub mod log;
pub mod readings;
pub mod uplink;
