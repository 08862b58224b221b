//! Log lines that a client of NATS or of the listener can cause one per message (junk frames, replays, a
//! full stream): each such line is written at most [`LINES_PER_WINDOW`] times per [`WINDOW`] per call site,
//! the next one written says how many were left out (`suppressed`), and the metrics count every event. A
//! flood then grows the log by a few lines a second at most (an independent attack wrote 13,941 lines for
//! 20,000 junk messages, and 1,024 a second for a full dead-letter stream, before this).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The window over which a call site's lines are counted.
pub const WINDOW: Duration = Duration::from_secs(10);
/// The lines a call site writes per window.
pub const LINES_PER_WINDOW: u32 = 5;

/// One call site's budget (a `static`, see [`warn_limited`]).
#[derive(Debug)]
pub struct LogRate {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    window: Option<Instant>,
    lines: u32,
    suppressed: u64,
}

impl LogRate {
    /// A budget with nothing written yet.
    pub const fn new() -> Self {
        Self {
            state: Mutex::new(State {
                window: None,
                lines: 0,
                suppressed: 0,
            }),
        }
    }

    /// `Some(left out since the last line written)` if a line may be written at `now`; `None` if it is
    /// left out (and counted).
    pub fn admit(&self, now: Instant) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.window.is_none_or(|start| now.duration_since(start) >= WINDOW) {
            state.window = Some(now);
            state.lines = 0;
        }
        if state.lines < LINES_PER_WINDOW {
            state.lines += 1;
            Some(std::mem::take(&mut state.suppressed))
        } else {
            state.suppressed += 1;
            None
        }
    }
}

impl Default for LogRate {
    fn default() -> Self {
        Self::new()
    }
}

/// `tracing::warn!` with this call site's [`LogRate`]: the same arguments, plus a `suppressed` field.
macro_rules! warn_limited {
    ($($arg:tt)+) => {{
        static RATE: $crate::log_rate::LogRate = $crate::log_rate::LogRate::new();
        if let Some(suppressed) = RATE.admit(::std::time::Instant::now()) {
            ::tracing::warn!(suppressed, $($arg)+);
        }
    }};
}

/// `tracing::info!` with this call site's [`LogRate`], as [`warn_limited`].
macro_rules! info_limited {
    ($($arg:tt)+) => {{
        static RATE: $crate::log_rate::LogRate = $crate::log_rate::LogRate::new();
        if let Some(suppressed) = RATE.admit(::std::time::Instant::now()) {
            ::tracing::info!(suppressed, $($arg)+);
        }
    }};
}

pub(crate) use {info_limited, warn_limited};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_site_writes_a_few_lines_per_window_and_counts_the_rest() {
        let rate = LogRate::new();
        let start = Instant::now();
        for _ in 0..LINES_PER_WINDOW {
            assert_eq!(rate.admit(start), Some(0));
        }
        for _ in 0..1000 {
            assert_eq!(rate.admit(start + Duration::from_secs(1)), None);
        }
        assert_eq!(
            rate.admit(start + WINDOW),
            Some(1000),
            "the next window's first line counts the rest"
        );
        assert_eq!(rate.admit(start + WINDOW), Some(0));
    }
}
