//! Accepting connections without a hot loop or a flood of log lines: accept errors (out of file descriptors)
//! back off from 10 ms to 1 s, and their warnings are logged once a second at most, with a count of the
//! lines not logged. The bounded listener ([`crate::listener`]) accepts every device connection through it.

use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tracing::warn;

/// Logs one line per second at most, counting what it did not log.
#[derive(Default)]
pub struct RateLimitedLog {
    last: Option<Instant>,
    suppressed: u64,
}

/// The next connection of `listener`; accept errors (out of file descriptors) back off from 10 ms to 1 s
/// and are logged through `log`, so that they never turn into a hot loop or a flood of log lines.
pub async fn accept_with_backoff(
    listener: &TcpListener,
    log: &mut RateLimitedLog,
) -> (TcpStream, std::net::SocketAddr) {
    let mut backoff = Duration::from_millis(10);
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(e) => {
                log.warn(format_args!(
                    "accept failed: {e}; retrying in {} ms",
                    backoff.as_millis()
                ));
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}

impl RateLimitedLog {
    /// Logs `message` as a warning unless a line was logged less than a second ago.
    pub fn warn(&mut self, message: impl std::fmt::Display) {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < Duration::from_secs(1))
        {
            self.suppressed += 1;
            return;
        }
        warn!("{message} ({} similar lines not logged)", self.suppressed);
        self.last = Some(now);
        self.suppressed = 0;
    }
}
