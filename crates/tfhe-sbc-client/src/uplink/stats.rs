//! What the uplink did: frames queued, acknowledged, resent and lost, bytes sent, connections made.

/// What the uplink did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UplinkStats {
    /// Frames queued by [`Uplink::push`](super::Uplink::push).
    pub frames: u64,
    /// Frames a previous run left in the outbox, queued by [`Uplink::resume`](super::Uplink::resume).
    pub recovered: u64,
    /// Frames the server accepted when they arrived.
    pub accepted: u64,
    /// Frames the server had accepted before (resends after a lost connection).
    pub duplicates: u64,
    /// Frames lost because the server dropped their message before it was complete (expired): those still
    /// queued when the server said so.
    pub expired: u64,
    /// Messages the server dropped as expired before they were complete.
    pub expired_messages: u64,
    /// Frames acknowledged in this run (counted in [`UplinkStats::accepted`] or
    /// [`UplinkStats::duplicates`]) whose message later expired at the server: lost with it.
    pub expired_acknowledged: u64,
    /// Messages lost because one of their frames was refused as too old when sent again.
    pub too_old_messages: u64,
    /// Frames lost because the server refused them as too old when they were sent again (it may have taken
    /// them before a restart of its own, or lost them: it cannot say which).
    pub too_old: u64,
    /// Acknowledgement records ignored: they did not decode or verify, or named nothing waiting.
    pub ignored: u64,
    /// Frame transmissions after the first (resends).
    pub resent: u64,
    /// Bytes written to sockets, length prefixes and resends included.
    pub bytes_sent: u64,
    /// Connections made.
    pub connections: u64,
}

impl UplinkStats {
    /// Frames the server acknowledged (accepted now or before) whose message did not expire afterwards.
    pub fn delivered(&self) -> u64 {
        (self.accepted + self.duplicates).saturating_sub(self.expired_acknowledged)
    }

    /// Frames lost: their messages expired at the server (those acknowledged before included), or they were
    /// too old when sent again.
    pub fn lost(&self) -> u64 {
        self.expired + self.expired_acknowledged + self.too_old
    }

    /// Messages lost: expired at the server, or with a frame too old when sent again.
    pub fn lost_messages(&self) -> u64 {
        self.expired_messages + self.too_old_messages
    }
}
