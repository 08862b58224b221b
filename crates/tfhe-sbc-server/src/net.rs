//! The single-process server's network side (tokio): the bounded listener ([`crate::listener`]: connection
//! caps, eviction of the longest-waiting connection, idle and frame timeouts), one task per connection.
//! Each frame goes to the intake thread, and its acknowledgement goes back (`tfhe_sbc_device::frame::ack`)
//! before the next frame of the connection is read, so acknowledgements come in frame order and each
//! connection has at most one frame in the intake's queue.

use crate::listener::{self, Connection, ListenerLimits};
use crate::pipeline::Job;
use std::collections::HashSet;
use std::sync::{Arc, mpsc};
use tfhe_sbc_device::frame::ack::{Ack, AckStatus};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tracing::{debug, info};

/// What the connections share.
#[derive(Clone)]
pub struct Intake {
    /// The intake thread's queue (one frame per connection at most: its capacity is the connection cap).
    pub jobs: mpsc::SyncSender<Job>,
    /// The registered devices: a frame of another is refused from its header, before its body is read.
    pub devices: Arc<HashSet<u64>>,
    /// Testing: close each connection after every Nth frame, before acknowledging it.
    pub drop_every: Option<u64>,
}

/// Accepts connections for ever within `limits`, one task each.
pub async fn accept(listener: TcpListener, limits: ListenerLimits, intake: Intake) {
    listener::serve(listener, limits, move |connection| {
        connection_task(connection, intake.clone())
    })
    .await;
}

/// One device connection.
async fn connection_task(mut connection: Connection, intake: Intake) {
    let peer = connection.peer;
    debug!(%peer, "connected");
    let check = |header: &tfhe_sbc_device::frame::FrameHeader| {
        if intake.devices.contains(&header.device_id) {
            Ok(())
        } else {
            Err(Ack::new(AckStatus::UnknownDevice, header.device_id, header.sequence))
        }
    };
    let mut received = 0u64;
    let reason = loop {
        let frame = match connection.next_frame(check).await {
            Ok(frame) => bytes::Bytes::from(frame),
            Err(ended) => break ended.to_string(),
        };
        received += 1;
        let (reply, answer) = oneshot::channel();
        match intake.jobs.try_send(Job { frame, reply }) {
            Ok(()) => {}
            // Not while each connection has one frame at most in a queue of the connection cap.
            Err(mpsc::TrySendError::Full(_)) => break "the intake's queue is full".to_owned(),
            Err(mpsc::TrySendError::Disconnected(_)) => break "the intake stopped".to_owned(),
        }
        let Ok((ack, record)) = answer.await else {
            break "the intake stopped".to_owned();
        };
        if intake.drop_every.is_some_and(|n| received.is_multiple_of(n)) {
            break format!("fault injection: dropped after frame {received}, before its acknowledgement");
        }
        debug!(%peer, sequence = ack.sequence, status = ?ack.status, "acknowledged");
        if let Err(ended) = connection.answer(&record).await {
            break format!("cannot acknowledge: {ended}");
        }
        if ack.status == AckStatus::Malformed && ack.device_id == 0 {
            break "not a tfhe-sbc device".to_owned();
        }
    };
    // Sockets that sent no frame (idle, or closed for a newer connection) are not worth a line each.
    if received > 0 {
        info!(%peer, frames = received, "connection ended: {reason}");
    } else {
        debug!(%peer, "connection ended without a frame: {reason}");
    }
}
