//! The command line: the arguments of `tfhe-sbc-client` and their `--help` text.

// The doc comments below are `--help` text, shown as written: `<FILE>` there is a placeholder, not HTML.
#![allow(rustdoc::invalid_html_tags)]

use crate::readings::Format;
use std::path::PathBuf;
use std::time::Duration;
use tfhe_sbc_device::std_io::PersistentCounter;

/// Encrypts sensor readings with a device credential file and sends them to a tfhe-sbc server.
///
/// Readings come from standard input (default), --input FILE, or --command: one or more values per line
/// (--format), grouped --batch readings per message. Each message is encrypted (N bits per frame, or with an
/// integer credential file N / 4 bytes of little-endian readings, any --format but hex, as tfhe-rs FheUint
/// radix blocks of the format's width)
/// and sent as authenticated v2 frames. Every frame is written to an outbox beside the counter file
/// (<counter file>.outbox/) before it is sent, and kept there and in memory until the server acknowledges it
/// with a record that verifies under the device's MAC key; unacknowledged frames are sent again after a
/// reconnect, and after a crash at the next start, before any new reading. Acknowledgement records that do not
/// verify are ignored (with a warning). Run one client per credential file: a second one on the same counter
/// file stops at once.
#[derive(clap::Parser, Debug)]
#[command(name = "tfhe-sbc-client", version, after_help = EXIT_STATUS)]
pub struct Cli {
    /// The device's credential file (devices/<ID>.tsdc from `tfhe-sbc-keys issue`).
    #[arg(long, value_name = "FILE")]
    pub credentials: PathBuf,
    /// The server, host:port (an IPv6 address in brackets: `[::1]:7000`).
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_host_port)]
    pub server: String,
    /// Read readings from this file ("-": standard input, the default).
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    pub input: Option<PathBuf>,
    /// Read readings from the standard output of this shell command (run by `sh -c`).
    #[arg(long, value_name = "COMMAND")]
    pub command: Option<String>,
    /// Run --command every INTERVAL (e.g. 10s, 500ms, 5m), one run's lines per message batch; without it
    /// the command runs once and its lines stream in.
    #[arg(long, value_name = "INTERVAL", requires = "command", value_parser = duration_at_least("--interval", MIN_INTERVAL))]
    pub interval: Option<Duration>,
    /// Stop after this many runs of --command (with --interval; at least 1).
    #[arg(long, value_name = "N", requires = "interval", value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: Option<u64>,
    /// How readings are encrypted: `glwe`, the credential file's own mode (GLWE frames of bits or integer
    /// radix blocks), or `tfhe-compact-list`: each message's --format readings (any but hex; an i16 or f32
    /// reading as its 16 or 32 bits) as tfhe-rs's own CompactCiphertextList under the key set's compact public
    /// key (--compact-public-key), one list per 1,024 reading bytes, sent inside authenticated frames; for
    /// devices made with `tfhe-sbc-keys issue --mode compact-list`.
    #[arg(long, value_enum, default_value_t = Mode::Glwe)]
    pub mode: Mode,
    /// The compact public key of --mode tfhe-compact-list (default: the credential file's path with extension
    /// .tscp, as `tfhe-sbc-keys issue --mode compact-list` writes it). Refused with --mode glwe.
    #[arg(long, value_name = "FILE")]
    pub compact_public_key: Option<PathBuf>,
    /// How each value is written into the message (little-endian); every frame's header says so, so the
    /// trusted party reads the readings back as this type (hex: plain bytes).
    #[arg(long, value_enum, default_value_t = Format::U8)]
    pub format: Format,
    /// Readings per message (a message of N/8 bytes or less is one frame).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub batch: u64,
    /// Skip lines that do not parse (with a warning) instead of stopping.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// The persisted frame counter (default: the credential file's path with extension .counter). Its lock
    /// (<FILE>.lock) and the outbox of unacknowledged frames (<FILE>.outbox/) sit beside it.
    #[arg(long, value_name = "FILE")]
    pub counter_file: Option<PathBuf>,
    /// Sequence numbers reserved per counter-file write.
    #[arg(long, default_value_t = PersistentCounter::DEFAULT_BLOCK, value_parser = clap::value_parser!(u64).range(1..))]
    pub counter_block: u64,
    /// The most chunks (frames) per message: the server's limit (its default is 16).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_chunks: u32,
    /// Frames sent and not yet acknowledged, at most (below the server's replay window of 128).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub max_in_flight: u64,
    /// A frame is sent only while its sequence number is less than this far above the oldest frame not yet
    /// acknowledged (below the server's replay window of 128): a lost or forged acknowledgement then costs a
    /// resend after --ack-timeout, never a frame refused as too old.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=127))]
    pub max_sequence_span: u64,
    /// Frames held for sending (and in the outbox), at most; reading pauses while the queue is full.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(16..))]
    pub max_queued: u64,
    /// The longest wait between reconnection attempts (at least 10ms: no reconnection loop without a pause).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration_at_least("--max-backoff", MIN_BACKOFF))]
    pub max_backoff: Duration,
    /// Reconnect and send again when frames sent on a connection have had no acknowledgement that verifies for
    /// this long (at least 100ms: an acknowledgement needs a round trip).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration_at_least("--ack-timeout", MIN_ACK_TIMEOUT))]
    pub ack_timeout: Duration,
    /// Stop with an error when frames have waited this long for an acknowledgement (default: retry forever).
    #[arg(long, value_name = "DURATION", value_parser = duration_at_least("--give-up-after", MIN_ACK_TIMEOUT))]
    pub give_up_after: Option<Duration>,
    /// Send the full body of every ciphertext (32-bit words, 64-bit on the integer set) instead of its top
    /// bits (by default secret-key frames carry the set's compact body, e.g. 11 bits: 1,503 instead of 4,191
    /// bytes per frame; public-key frames always carry the full body).
    #[arg(long)]
    pub full_body: bool,
    /// Print every message and acknowledgement.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Print errors only.
    #[arg(short, long)]
    pub quiet: bool,
}

/// How readings are encrypted (`--mode`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The credential file's own mode: GLWE frames.
    Glwe,
    /// tfhe-rs's own CompactCiphertextList, in authenticated frames.
    TfheCompactList,
}

impl Mode {
    /// Whether the mode encrypts under the key set's compact public key (`--compact-public-key`).
    pub fn takes_compact_public_key(self) -> bool {
        match self {
            Self::Glwe => false,
            Self::TfheCompactList => true,
        }
    }
}

/// The exit status, under `--help`.
pub const EXIT_STATUS: &str = "Exit status: 0 when every frame was acknowledged by the server; 1 when frames \
were lost (their message expired at the server before it was complete, or a frame sent again was refused as too \
old: the summary line counts them, e.g. \"58 frames accepted, 2 lost (2 expired at the server, ...)\"), or the \
server refused the device for good, or it stayed unreachable for --give-up-after, or the input is bad; 2 for a \
set-up error (arguments, the credential file, the counter file or its outbox, or another client already running \
on this counter file).";

/// A duration: a number with an optional unit, ms, s (the default), m or h.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    match number.parse::<f64>() {
        Ok(value) if (value * scale).is_finite() && value * scale <= 1e9 => Ok(Duration::from_secs_f64(value * scale)),
        _ => Err(format!("{text:?} is not a duration (for example 500ms, 10s, 5m)")),
    }
}

/// The shortest --interval: a sensor command run back to back would flood the uplink.
const MIN_INTERVAL: Duration = Duration::from_millis(1);
/// The shortest --max-backoff: 0 made a reconnection loop without a pause (and a flood of log lines).
const MIN_BACKOFF: Duration = Duration::from_millis(10);
/// The shortest --ack-timeout: 0 gave up on every connection before any answer could arrive.
const MIN_ACK_TIMEOUT: Duration = Duration::from_millis(100);

/// A [`parse_duration`] that refuses durations below `min`, naming `flag` and the minimum.
fn duration_at_least(flag: &'static str, min: Duration) -> impl Fn(&str) -> Result<Duration, String> + Clone {
    move |text| {
        let duration = parse_duration(text)?;
        if duration < min {
            return Err(format!("{flag} {text}: use {} ms or more", min.as_millis()));
        }
        Ok(duration)
    }
}

/// `HOST:PORT` with a host and a port number (1-65535): an address without a port would be retried for
/// ever instead of refused.
fn parse_host_port(text: &str) -> Result<String, String> {
    if text.is_empty() || text.chars().any(char::is_whitespace) {
        return Err(format!("'{text}' is not HOST:PORT: no spaces, e.g. 127.0.0.1:7000"));
    }
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(format!("'{text}' has no port: write HOST:PORT, e.g. {text}:7000"));
    };
    let bracketed = host.starts_with('[') && host.ends_with(']') && host.len() > 2;
    if host.is_empty() || ((host.contains(':') || host.starts_with('[')) && !bracketed) {
        return Err(format!(
            "'{text}' is not HOST:PORT (an IPv6 address goes in brackets: [::1]:7000)"
        ));
    }
    let digits = !port.is_empty() && !port.starts_with('0') && port.bytes().all(|b| b.is_ascii_digit());
    match port.parse::<u16>() {
        Ok(0) | Err(_) => Err(format!("'{port}' in '{text}' is not a port number (1-65535)")),
        Ok(_) if !digits => Err(format!(
            "'{port}' in '{text}' is not a port number: write it in plain digits"
        )),
        Ok(_) => Ok(text.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_host_port;

    #[test]
    fn a_server_address_needs_a_host_and_a_port() {
        for good in ["127.0.0.1:7000", "localhost:1", "[::1]:65535", "gateway.example:7000"] {
            assert_eq!(parse_host_port(good).as_deref(), Ok(good));
        }
        for bad in [
            "",
            " 127.0.0.1:7000",
            "127.0.0.1 :7000",
            "host:+80",
            "host:080",
            "127.0.0.1",
            "localhost",
            ":7000",
            "host:",
            "host:0",
            "host:70000",
            "::1:7000",
            "[]:7000",
        ] {
            assert!(parse_host_port(bad).is_err(), "{bad}");
        }
    }
}
