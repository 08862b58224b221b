//! `tfhe-sbc-client`: sensor readings in, encrypted frames out. See the library documentation and `--help`.

use clap::Parser;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use tfhe_sbc_client::readings::{Batcher, Format, parse_line};
use tfhe_sbc_client::uplink::{Uplink, UplinkConfig};
use tfhe_sbc_client::{info, log, warn};
use tfhe_sbc_device::std_io::{CredentialsFile, MessageEncryptor, PersistentCounter};

/// Encrypts sensor readings with a device credential file and sends them to a tfhe-sbc server.
///
/// Readings come from standard input (default), --input FILE, or --command: one or more values per line
/// (--format), grouped --batch readings per message. Each message is encrypted (N bits per frame, or with an
/// integer credential file N / 4 bytes of little-endian u8/u16/u32 readings as tfhe-rs FheUint radix blocks)
/// and sent as authenticated v2 frames; frames are kept until the server acknowledges them and sent again after a
/// reconnect.
#[derive(Parser, Debug)]
#[command(name = "tfhe-sbc-client", version)]
struct Cli {
    /// The device's credential file (devices/<ID>.tsdc from `tfhe-sbc-keys issue`).
    #[arg(long, value_name = "FILE")]
    credentials: PathBuf,
    /// The server, host:port.
    #[arg(long, value_name = "HOST:PORT")]
    server: String,
    /// Read readings from this file ("-": standard input, the default).
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    input: Option<PathBuf>,
    /// Read readings from the standard output of this shell command (run by `sh -c`).
    #[arg(long, value_name = "COMMAND")]
    command: Option<String>,
    /// Run --command every INTERVAL (e.g. 10s, 500ms, 5m), one run's lines per message batch; without it
    /// the command runs once and its lines stream in.
    #[arg(long, value_name = "INTERVAL", requires = "command", value_parser = parse_duration)]
    interval: Option<Duration>,
    /// Stop after this many runs of --command (with --interval).
    #[arg(long, value_name = "N", requires = "interval")]
    runs: Option<u64>,
    /// How each value is written into the message (little-endian).
    #[arg(long, value_enum, default_value_t = Format::U8)]
    format: Format,
    /// Readings per message (a message of N/8 bytes or less is one frame).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=65536))]
    batch: u64,
    /// Skip lines that do not parse (with a warning) instead of stopping.
    #[arg(long)]
    skip_bad_lines: bool,
    /// The persisted frame counter (default: the credential file's path with extension .counter).
    #[arg(long, value_name = "FILE")]
    counter_file: Option<PathBuf>,
    /// Sequence numbers reserved per counter-file write.
    #[arg(long, default_value_t = PersistentCounter::DEFAULT_BLOCK, value_parser = clap::value_parser!(u64).range(1..))]
    counter_block: u64,
    /// The most chunks (frames) per message: the server's limit (its default is 16).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    max_chunks: u32,
    /// Frames sent and not yet acknowledged, at most (below the server's replay window of 128).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=100))]
    max_in_flight: u64,
    /// Frames held for sending, at most; reading pauses while the queue is full.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(16..))]
    max_queued: u64,
    /// The longest wait between reconnection attempts.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    max_backoff: Duration,
    /// Stop with an error when frames have waited this long for an acknowledgement (default: retry forever).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    give_up_after: Option<Duration>,
    /// Send the full body of every ciphertext (32-bit words, 64-bit on the integer set) instead of its top
    /// bits (by default secret-key frames carry the set's compact body, e.g. 11 bits: 1,503 instead of 4,191
    /// bytes per frame; public-key frames always carry the full body).
    #[arg(long)]
    full_body: bool,
    /// Print every message and acknowledgement.
    #[arg(short, long, conflicts_with = "quiet")]
    verbose: bool,
    /// Print errors only.
    #[arg(short, long)]
    quiet: bool,
}

/// A duration: a number with an optional unit, ms, s (the default), m or h.
fn parse_duration(text: &str) -> Result<Duration, String> {
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

/// A failure: exit code 2 for the set-up (files, arguments), 1 for what happened while running.
enum Failure {
    Setup(String),
    Runtime(String),
}

fn setup(e: impl std::fmt::Display) -> Failure {
    Failure::Setup(e.to_string())
}

fn runtime(e: impl std::fmt::Display) -> Failure {
    Failure::Runtime(e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    log::set_level(if cli.quiet {
        log::Level::Error
    } else if cli.verbose {
        log::Level::Debug
    } else {
        log::Level::Info
    });
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Setup(message)) => {
            eprintln!("tfhe-sbc-client: error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(message)) => {
            eprintln!("tfhe-sbc-client: error: {message}");
            ExitCode::from(1)
        }
    }
}

/// The device: credentials, encryptor, counter and uplink, fed one message at a time.
struct Device {
    file: CredentialsFile,
    encryptor: MessageEncryptor,
    counter: PersistentCounter,
    uplink: Uplink,
    max_message_bytes: usize,
    messages: u64,
    readings: u64,
}

impl Device {
    fn send(&mut self, message: &[u8], readings: u64) -> Result<(), Failure> {
        if message.len() > self.max_message_bytes {
            return Err(setup(format!(
                "a message of {} bytes is more than {} frames hold ({} bytes): lower --batch, or raise --max-chunks \
                 together with the server's limit",
                message.len(),
                self.max_message_bytes / self.encryptor.chunk_bytes(),
                self.max_message_bytes
            )));
        }
        let credentials = self.file.decode().map_err(setup)?;
        let outgoing = self
            .counter
            .begin_message(message.len(), self.encryptor.chunk_bytes())
            .map_err(setup)?;
        let frames = self
            .encryptor
            .encrypt_message(&credentials.credentials, &outgoing, message)
            .map_err(|e| runtime(format!("encryption failed: {e}")))?;
        tfhe_sbc_client::debug!(
            "message {} ({} bytes, {readings} readings): frames {}..={}",
            outgoing.message_id(),
            message.len(),
            outgoing.first_sequence(),
            outgoing.first_sequence() + u64::from(outgoing.chunk_count()) - 1
        );
        self.uplink.push(frames).map_err(runtime)?;
        self.messages += 1;
        self.readings += readings;
        Ok(())
    }
}

/// Parses lines into readings and batches them into messages for the device.
struct Lines<'a> {
    device: &'a mut Device,
    format: Format,
    batcher: Batcher,
    batch_readings: u64,
    skip_bad_lines: bool,
    readings: Vec<Vec<u8>>,
}

impl Lines<'_> {
    fn line(&mut self, line: &str, origin: &str, number: usize) -> Result<(), Failure> {
        self.readings.clear();
        if let Err(e) = parse_line(line, self.format, &mut self.readings) {
            if self.skip_bad_lines {
                warn!("line {number} of {origin}: {e}; skipped");
                return Ok(());
            }
            return Err(runtime(format!(
                "line {number} of {origin}: {e}: fix the input, choose another --format, or pass --skip-bad-lines"
            )));
        }
        for reading in std::mem::take(&mut self.readings) {
            self.batch_readings += 1;
            if let Some(message) = self.batcher.push(&reading) {
                let n = std::mem::take(&mut self.batch_readings);
                self.device.send(&message, n)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Failure> {
        if let Some(message) = self.batcher.flush() {
            let n = std::mem::take(&mut self.batch_readings);
            self.device.send(&message, n)?;
        }
        Ok(())
    }

    fn read_all(&mut self, reader: impl BufRead, origin: &str) -> Result<(), Failure> {
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| runtime(format!("cannot read {origin}: {e}")))?;
            self.line(&line, origin, i + 1)?;
        }
        self.flush()
    }
}

fn counter_path(cli: &Cli) -> PathBuf {
    cli.counter_file
        .clone()
        .unwrap_or_else(|| cli.credentials.with_extension("counter"))
}

fn run(cli: &Cli) -> Result<(), Failure> {
    let file = CredentialsFile::read(&cli.credentials).map_err(setup)?;
    if !file.is_private() {
        warn!(
            "{} is readable by other users: it holds the device's secrets; chmod 600 it",
            cli.credentials.display()
        );
    }
    let credentials = file.decode().map_err(setup)?;
    let device_id = credentials.credentials.device_id();
    if credentials.parameters.torus_bits() == 64 && !matches!(cli.format, Format::U8 | Format::U16 | Format::U32) {
        return Err(setup(format!(
            "{}: an integer credential file (parameter set {}) encrypts unsigned readings for tfhe-rs FheUint8/16/32: \
             use --format u8, u16 or u32",
            cli.credentials.display(),
            credentials.parameters.id().0
        )));
    }
    // Built in place on the heap and seeded in place from the OS: no copy of its secret state anywhere.
    let mut encryptor = MessageEncryptor::from_os_entropy(&credentials).map_err(|e| {
        setup(format!(
            "{}: cannot build the encryptor: {e}",
            cli.credentials.display()
        ))
    })?;
    if !cli.full_body {
        encryptor.use_compact_body();
    }
    let chunk_bytes = encryptor.chunk_bytes();
    drop(credentials);
    if let Some(size) = cli.format.bytes() {
        let batch_bytes = cli.batch.saturating_mul(size as u64);
        let limit = u64::from(cli.max_chunks) * chunk_bytes as u64;
        if batch_bytes > limit {
            return Err(setup(format!(
                "--batch {} of {size}-byte readings is {batch_bytes} bytes, more than a message of --max-chunks {} \
                 frames holds ({limit} bytes): use --batch {} or less",
                cli.batch,
                cli.max_chunks,
                limit / size as u64
            )));
        }
    }
    let counter_file = counter_path(cli);
    let counter = PersistentCounter::open(&counter_file, cli.counter_block).map_err(setup)?;
    let mut config = UplinkConfig::new(cli.server.clone(), device_id);
    config.max_in_flight = cli.max_in_flight as usize;
    config.max_queued = cli.max_queued as usize;
    config.max_backoff = cli.max_backoff;
    config.give_up_after = cli.give_up_after;
    config.counter_file = Some(counter_file.clone());
    info!(
        "device {device_id}: {} mode, parameter set {}, {}-byte frames ({}-bit body) of {chunk_bytes} message \
         bytes, next sequence {} ({}), server {}",
        encryptor.mode().name(),
        encryptor.parameters().id().0,
        encryptor.frame_bytes(),
        encryptor.body_bits(),
        counter.next_sequence(),
        counter_file.display(),
        cli.server
    );
    let mut device = Device {
        file,
        encryptor,
        counter,
        uplink: Uplink::start(config),
        max_message_bytes: cli.max_chunks as usize * chunk_bytes,
        messages: 0,
        readings: 0,
    };
    let started = Instant::now();
    let mut lines = Lines {
        device: &mut device,
        format: cli.format,
        batcher: Batcher::new(cli.batch as usize),
        batch_readings: 0,
        skip_bad_lines: cli.skip_bad_lines,
        readings: Vec::new(),
    };
    match (&cli.command, cli.interval, &cli.input) {
        (Some(command), Some(interval), _) => periodic(&mut lines, command, interval, cli.runs)?,
        (Some(command), None, _) => streaming(&mut lines, command)?,
        (None, _, Some(path)) if path != Path::new("-") => {
            let file = File::open(path).map_err(|e| setup(format!("cannot read {}: {e}", path.display())))?;
            lines.read_all(BufReader::new(file), &path.display().to_string())?;
        }
        (None, _, _) => lines.read_all(io::stdin().lock(), "standard input")?,
    }
    let (messages, readings) = (device.messages, device.readings);
    let pending = device.uplink.pending();
    if pending > 0 {
        info!("input done; waiting for the acknowledgement of {pending} frames");
    }
    let stats = device.uplink.finish().map_err(runtime)?;
    info!(
        "sent {readings} readings in {messages} messages ({} frames, {} bytes on the wire) in {:.2?}: {} accepted, {} \
         already accepted (resent after a reconnect), {} dropped; {} connections, {} resends",
        stats.frames,
        stats.bytes_sent,
        started.elapsed(),
        stats.accepted,
        stats.duplicates,
        stats.dropped,
        stats.connections,
        stats.resent
    );
    if stats.dropped > 0 {
        return Err(runtime(format!(
            "{} frames were dropped by the server (their messages expired before they were complete)",
            stats.dropped
        )));
    }
    Ok(())
}

fn sh(command: &str) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(command).stdin(Stdio::null()).stderr(Stdio::inherit());
    sh
}

/// Runs the sensor command once and streams its lines.
fn streaming(lines: &mut Lines<'_>, command: &str) -> Result<(), Failure> {
    let mut child = sh(command)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| setup(format!("cannot run the sensor command with sh: {e}")))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| runtime("the sensor command has no standard output"))?;
    let result = lines.read_all(BufReader::new(stdout), "the sensor command's output");
    let status = child.wait().map_err(runtime)?;
    result?;
    if !status.success() {
        warn!("the sensor command ended with {status}");
    }
    Ok(())
}

/// Runs the sensor command every `interval` (start to start), one run's readings at a time.
fn periodic(lines: &mut Lines<'_>, command: &str, interval: Duration, runs: Option<u64>) -> Result<(), Failure> {
    let mut run = 0u64;
    let mut next = Instant::now();
    loop {
        run += 1;
        let output = sh(command)
            .output()
            .map_err(|e| setup(format!("cannot run the sensor command with sh: {e}")))?;
        if output.status.success() {
            let text = String::from_utf8_lossy(&output.stdout);
            let origin = format!("run {run} of the sensor command");
            for (i, line) in text.lines().enumerate() {
                lines.line(line, &origin, i + 1)?;
            }
            lines.flush()?;
        } else {
            warn!(
                "run {run} of the sensor command failed ({}): its output is skipped",
                output.status
            );
        }
        if runs.is_some_and(|limit| run >= limit) {
            return Ok(());
        }
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
}
