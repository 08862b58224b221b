//! The network side (tokio): one task per connection. Frames arrive length-delimited (`u32` little-endian,
//! tokio-util's `LengthDelimitedCodec`); each goes to the intake thread, and its acknowledgement goes back
//! (`tfhe_sbc_device::frame::ack`, [`AckCodec`]) before the next frame of the connection is read, so
//! acknowledgements come in frame order.

use crate::pipeline::Job;
use bytes::BytesMut;
use futures_util::{SinkExt, StreamExt};
use std::io;
use std::net::SocketAddr;
use std::sync::mpsc;
use tfhe_sbc_adapter::stream::DEFAULT_MAX_FRAME_BYTES;
use tfhe_sbc_device::frame::ack::{ACK_BYTES, AckStatus};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio_util::codec::{Encoder, FramedRead, FramedWrite, LengthDelimitedCodec};
use tracing::{debug, info};

/// Writes acknowledgement records (already sealed).
pub struct AckCodec;

impl Encoder<[u8; ACK_BYTES]> for AckCodec {
    type Error = io::Error;

    fn encode(&mut self, record: [u8; ACK_BYTES], dst: &mut BytesMut) -> io::Result<()> {
        dst.extend_from_slice(&record);
        Ok(())
    }
}

/// The frame codec: a little-endian `u32` length, at most [`DEFAULT_MAX_FRAME_BYTES`].
pub fn frame_codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .little_endian()
        .length_field_length(4)
        .max_frame_length(DEFAULT_MAX_FRAME_BYTES)
        .new_codec()
}

/// Accepts connections for ever, one task each (accept errors back off, logged once a second at most).
pub async fn accept(listener: TcpListener, jobs: mpsc::Sender<Job>, drop_every: Option<u64>) {
    let mut log = crate::gateway::RateLimitedLog::default();
    loop {
        let (socket, peer) = crate::gateway::accept_with_backoff(&listener, &mut log).await;
        tokio::spawn(connection(socket, peer, jobs.clone(), drop_every));
    }
}

/// One device connection.
async fn connection(socket: TcpStream, peer: SocketAddr, jobs: mpsc::Sender<Job>, drop_every: Option<u64>) {
    info!(%peer, "device connected");
    let _ = socket.set_nodelay(true);
    let (read, write) = socket.into_split();
    let mut frames = FramedRead::new(read, frame_codec());
    let mut acks = FramedWrite::new(write, AckCodec);
    let mut received = 0u64;
    let reason = loop {
        let frame = match frames.next().await {
            Some(Ok(frame)) => frame.freeze(),
            Some(Err(e)) => break format!("unreadable stream: {e}"),
            None => break "closed by the device".to_owned(),
        };
        received += 1;
        let (reply, answer) = oneshot::channel();
        if jobs.send(Job { frame, reply }).is_err() {
            break "the intake stopped".to_owned();
        }
        let Ok((ack, record)) = answer.await else {
            break "the intake stopped".to_owned();
        };
        if drop_every.is_some_and(|n| received.is_multiple_of(n)) {
            break format!("fault injection: dropped after frame {received}, before its acknowledgement");
        }
        debug!(%peer, sequence = ack.sequence, status = ?ack.status, "acknowledged");
        if let Err(e) = acks.send(record).await {
            break format!("cannot acknowledge: {e}");
        }
        if ack.status == AckStatus::Malformed && ack.device_id == 0 {
            break "not a tfhe-sbc device".to_owned();
        }
    };
    info!(%peer, frames = received, "connection ended: {reason}");
}
