//! How the uplink behaves: the server, the device's id and MAC key, the outbox, and every bound (frames in
//! flight, sequence span, queue, backoff, timeouts, patience).

use super::outbox::Outbox;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tfhe_sbc_device::frame::mac::MacKey;

/// How the uplink behaves.
#[derive(Clone, Debug)]
pub struct UplinkConfig {
    /// The server, `host:port` (resolved again on every connection attempt).
    pub address: String,
    /// This device's id: acknowledgement records naming another device are ignored.
    pub device_id: u64,
    /// The device's MAC key, which acknowledgement records must verify under (wiped when the last copy of
    /// the `Arc` drops; its `Debug` is redacted).
    pub mac_key: Arc<MacKey>,
    /// Where unacknowledged frames are kept across crashes; `None`: in memory only.
    pub outbox: Option<Arc<Outbox>>,
    /// Frames sent and not yet acknowledged, at most. Keep it below the server's replay window (128).
    pub max_in_flight: usize,
    /// The most a frame's sequence number may be above the oldest unacknowledged frame's when it is sent.
    /// Keep it below the server's replay window (128), so that the oldest is still inside it when resent; 0
    /// counts as 1 (the oldest alone).
    pub max_sequence_span: u64,
    /// Frames queued (sent or not), at most, before [`Uplink::push`](super::Uplink::push) blocks.
    pub max_queued: usize,
    /// The first wait before reconnecting.
    pub initial_backoff: Duration,
    /// The longest wait before reconnecting.
    pub max_backoff: Duration,
    /// How long to wait for one connection attempt.
    pub connect_timeout: Duration,
    /// How long frames may wait for an acknowledgement on a connection before it counts as broken.
    pub ack_timeout: Duration,
    /// Stop with [`UplinkError::GaveUp`](super::UplinkError::GaveUp) when frames have waited this long
    /// with no acknowledgement at all (across reconnects); `None`: retry forever.
    pub give_up_after: Option<Duration>,
    /// The persisted counter file, named in [`UplinkError::CounterBehind`](super::UplinkError::CounterBehind).
    pub counter_file: Option<PathBuf>,
}

impl UplinkConfig {
    /// Defaults for `address`, `device_id` and its `mac_key`: no outbox, 32 in flight within a span of 64
    /// sequence numbers, 1024 queued, backoff from 100 ms to 30 s, 10 s per connection attempt, 30 s for
    /// acknowledgements, retry forever.
    pub fn new(address: impl Into<String>, device_id: u64, mac_key: Arc<MacKey>) -> Self {
        Self {
            address: address.into(),
            device_id,
            mac_key,
            outbox: None,
            max_in_flight: 32,
            max_sequence_span: 64,
            max_queued: 1024,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            ack_timeout: Duration::from_secs(30),
            give_up_after: None,
            counter_file: None,
        }
    }
}
