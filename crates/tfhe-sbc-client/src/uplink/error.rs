//! Why the uplink stopped: the refusals and failures that sending again cannot fix, each saying what to do;
//! and what an acknowledgement record that did not verify claimed, as advice for the operator.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;
use tfhe_sbc_device::frame::ack::{Ack, AckStatus};

/// Why the uplink stopped: something sending again cannot fix. Each message says what to do. The refusals
/// come only from acknowledgement records that verified under the device's key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UplinkError {
    /// The server refused a frame for good.
    Refused {
        /// The server.
        address: String,
        /// Its answer.
        ack: Ack,
    },
    /// The server refused a new frame as too old: the counter restarted below what it has seen. The queued
    /// frames below `lowest_acceptable` can never be accepted and were dropped (and deleted from the outbox).
    CounterBehind {
        /// The server.
        address: String,
        /// The device.
        device_id: u64,
        /// The refused sequence number.
        sequence: u64,
        /// The lowest sequence number the server accepts.
        lowest_acceptable: u64,
        /// The counter file, if any.
        counter_file: Option<PathBuf>,
        /// Queued frames dropped because they are below `lowest_acceptable`.
        dropped: usize,
    },
    /// No acknowledgement for too long.
    GaveUp {
        /// The server.
        address: String,
        /// How long frames waited.
        waited: Duration,
        /// Frames not acknowledged.
        pending: usize,
        /// The last connection problem.
        last_problem: String,
        /// The outbox keeping the frames for the next start, if any.
        outbox: Option<PathBuf>,
    },
    /// A frame could not be written to the outbox (so it was not queued).
    Outbox(String),
    /// The uplink thread stopped unexpectedly.
    Stopped,
}

impl fmt::Display for UplinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused { address, ack } => {
                let (id, seq) = (ack.device_id, ack.sequence);
                match ack.status {
                    AckStatus::UnknownDevice => write!(
                        f,
                        "the server at {address} does not know device {id}: issue it with `tfhe-sbc-keys issue` and \
                         restart the server with the new key_store.bin, or give this client the device's own \
                         credential file"
                    ),
                    AckStatus::BadCredentials => write!(
                        f,
                        "the server at {address} refused device {id}'s frames (bad MAC or key id): the credential \
                         file and the server's key_store.bin come from different provisioning runs; use the pair \
                         from one key set"
                    ),
                    AckStatus::NotAllowed => write!(
                        f,
                        "the server at {address} does not take this frame kind or parameter set from device {id} \
                         (sequence {seq}): the credential file's key mode does not match the key store's record; \
                         issue the device again"
                    ),
                    AckStatus::Accepted
                    | AckStatus::Duplicate
                    | AckStatus::Busy
                    | AckStatus::TooOld
                    | AckStatus::Expired
                    | AckStatus::Malformed => write!(
                        f,
                        "the server at {address} could not read device {id}'s frame {seq} ({:?}): client and server \
                         must both speak wire format v2 with the same parameter sets; update the older one",
                        ack.status
                    ),
                }
            }
            Self::CounterBehind {
                address,
                device_id,
                sequence,
                lowest_acceptable,
                counter_file,
                dropped,
            } => {
                write!(
                    f,
                    "the server at {address} refused sequence {sequence} of device {device_id} as too old (it accepts \
                     {lowest_acceptable} and above): the frame counter went back"
                )?;
                match counter_file {
                    Some(path) => write!(f, "; write {lowest_acceptable} into {} and start again", path.display())?,
                    None => write!(f, "; start the counter at {lowest_acceptable} or above")?,
                }
                if *dropped > 0 {
                    write!(
                        f,
                        " ({dropped} frames sealed below it can never be accepted: their readings are lost)"
                    )?;
                }
                Ok(())
            }
            Self::GaveUp {
                address,
                waited,
                pending,
                last_problem,
                outbox,
            } => {
                write!(
                    f,
                    "no acknowledgement from {address} for {:.0?} with {pending} frames waiting (last problem: \
                     {last_problem}): is tfhe-sbc-server running there and reachable? (--give-up-after sets the wait)",
                    waited
                )?;
                if let Some(dir) = outbox {
                    write!(f, "; the frames stay in {} and go out at the next start", dir.display())?;
                }
                Ok(())
            }
            Self::Outbox(problem) => write!(
                f,
                "{problem}: the message was not queued; free space or fix the permissions there (frames already \
                 written stay and go out at the next start)"
            ),
            Self::Stopped => f.write_str("the uplink thread stopped unexpectedly"),
        }
    }
}

impl std::error::Error for UplinkError {}

/// What an acknowledgement record that did not verify claims, for a warning: the claim is advice (a forged
/// record may say anything; a server that could not authenticate a frame answers with an unauthenticated
/// record), so it says what to check, never what to change. No number from the record is repeated.
pub(super) fn unverified_claim(status: AckStatus, device_id: u64) -> String {
    match status {
        AckStatus::UnknownDevice => format!(
            "it says the server does not know device {device_id}: if so, issue it with `tfhe-sbc-keys issue` and \
             restart the server with the new key_store.bin, or give this client the device's own credential file"
        ),
        AckStatus::BadCredentials => format!(
            "it says device {device_id}'s frames do not verify at the server (bad MAC or key id): if so, the \
             credential file and the server's key_store.bin come from different provisioning runs; use the pair \
             from one key set"
        ),
        other @ (AckStatus::Accepted
        | AckStatus::Duplicate
        | AckStatus::Busy
        | AckStatus::TooOld
        | AckStatus::Expired
        | AckStatus::NotAllowed
        | AckStatus::Malformed) => format!("it claims {other:?}"),
    }
}
