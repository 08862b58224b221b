//! Log lines on standard error, by level: `-q` keeps errors, `-v` adds details.

use std::sync::atomic::{AtomicU8, Ordering};

/// How much the client says on standard error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Errors only.
    Error = 0,
    /// Connections, reconnects, dropped frames and the summary.
    Info = 1,
    /// Every message and acknowledgement.
    Debug = 2,
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);

/// Sets the level for the whole process.
pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// Whether lines of `level` are printed.
pub fn enabled(level: Level) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

/// Prints one line at `level`: `tfhe-sbc-client: <line>`.
pub fn line(level: Level, args: std::fmt::Arguments<'_>) {
    if enabled(level) {
        always(args);
    }
}

/// Prints `tfhe-sbc-client: <line>` whatever the level. A standard error that cannot be written (a closed
/// pipe, a full disk) loses the line and nothing else: the client's work and exit status do not depend on
/// its log (`eprintln!` would panic, exit status 101).
pub fn always(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "tfhe-sbc-client: {args}");
}

/// A line at [`Level::Info`].
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::log::line($crate::log::Level::Info, format_args!($($arg)*)) };
}

/// A line at [`Level::Debug`].
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => { $crate::log::line($crate::log::Level::Debug, format_args!($($arg)*)) };
}

/// A warning: printed at [`Level::Info`] and above, prefixed `warning:`.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => {
        $crate::log::line($crate::log::Level::Info, format_args!("warning: {}", format_args!($($arg)*)))
    };
}
