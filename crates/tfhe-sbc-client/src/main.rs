//! `tfhe-sbc-client`: sensor readings in, encrypted frames out. See the library documentation and `--help`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use tfhe_sbc_client::cli::{Cli, Mode};
use tfhe_sbc_client::readings::{Batcher, Format, parse_line};
use tfhe_sbc_client::sources::{LineSink, Source, SourceError};
use tfhe_sbc_client::uplink::{Outbox, Recovered, Uplink, UplinkConfig, UplinkStats};
use tfhe_sbc_client::{info, log, warn};
use tfhe_sbc_device::files::credentials::{Credentials, KeyMode};
use tfhe_sbc_device::frame::ReadingFormat;
use tfhe_sbc_device::frame::mac::MacKey;
use tfhe_sbc_device::std_io::{CredentialsFile, MessageEncryptor, PersistentCounter, scrub_stack_deep};

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

impl From<SourceError> for Failure {
    fn from(e: SourceError) -> Self {
        match e {
            SourceError::Open(message) => Self::Setup(message),
            SourceError::Read(message) => Self::Runtime(message),
        }
    }
}

/// The command line, or exit status 2 with clap's error in one line saying what to fix (its text before the
/// usage: the message, the missing arguments, a tip); `--help` and `--version` print as usual.
fn parse_command_line<P: clap::Parser>() -> P {
    match P::try_parse() {
        Ok(parsed) => parsed,
        Err(e) if e.use_stderr() => {
            let text = e.to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("{} (see --help)", message.join(" "));
            std::process::exit(2)
        }
        Err(e) => e.exit(),
    }
}

fn main() -> ExitCode {
    let cli: Cli = parse_command_line();
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
            log::always(format_args!("error: {message}"));
            ExitCode::from(2)
        }
        Err(Failure::Runtime(message)) => {
            log::always(format_args!("error: {message}"));
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
    /// What every message's header says its bytes are (`--format`), so the trusted party reads them back as
    /// the readings they were.
    reading_format: ReadingFormat,
    messages: u64,
    readings: u64,
}

impl Device {
    /// Encrypts `message` and hands its frames to the uplink. The secret work (the credentials decoded with
    /// the MAC key, the encryption) runs in [`Self::seal`], never inlined; the stack it used is scrubbed
    /// afterwards, so no copy of the MAC key or of the generator's state stays in a dead frame.
    fn send(&mut self, message: &[u8], readings: u64) -> Result<(), Failure> {
        let sent = self.seal(message, readings);
        scrub_stack_deep();
        sent
    }

    #[inline(never)]
    fn seal(&mut self, message: &[u8], readings: u64) -> Result<(), Failure> {
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
            .map_err(setup)?
            .with_reading_format(self.reading_format)
            .map_err(|e| runtime(format!("--format {}: {e}", self.reading_format)))?;
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

impl LineSink for Lines<'_> {
    type Error = Failure;

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
}

fn counter_path(cli: &Cli) -> PathBuf {
    cli.counter_file
        .clone()
        .unwrap_or_else(|| cli.credentials.with_extension("counter"))
}

/// Reads the credential file, builds and seeds the encryptor in place, opens the counter and the outbox and
/// starts the uplink: the device, ready to send.
#[inline(never)]
fn start(cli: &Cli) -> Result<Device, Failure> {
    let file = CredentialsFile::read(&cli.credentials).map_err(setup)?;
    if !file.is_private() {
        warn!(
            "{} is readable by other users: it holds the device's secrets; chmod 600 it",
            cli.credentials.display()
        );
    }
    let credentials = file.decode().map_err(setup)?;
    let device_id = credentials.credentials.device_id();
    // The integer set: each reading becomes a tfhe-rs FheUint8/16/32 of its width (an `i16` or `f32` reading
    // as its 16 or 32 bits, which the server shows in the format the header states), so it needs a width.
    if credentials.parameters.torus_bits() == 64 && cli.format.bytes().is_none() {
        return Err(setup(format!(
            "{}: an integer credential file (parameter set {}) encrypts readings of a fixed width for tfhe-rs \
             FheUint8/16/32: use --format {FIXED_WIDTH_FORMATS}",
            cli.credentials.display(),
            credentials.parameters.id().0
        )));
    }
    // Built in place on the heap and seeded in place from the OS: no copy of its secret state anywhere.
    let encryptor = match cli.mode {
        Mode::Glwe => {
            let mut encryptor = MessageEncryptor::from_os_entropy(&credentials).map_err(|e| {
                setup(format!(
                    "{}: cannot build the encryptor: {e}",
                    cli.credentials.display()
                ))
            })?;
            if !cli.full_body {
                encryptor.use_compact_body();
            }
            encryptor
        }
        Mode::TfheCompactList => compact_list_encryptor(cli, &credentials)?,
    };
    let chunk_bytes = encryptor.chunk_bytes();
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
    // Locks the counter (a second client on this file stops here, touching nothing); only then the outbox.
    let counter_file = counter_path(cli);
    let counter = PersistentCounter::open(&counter_file, cli.counter_block).map_err(setup)?;
    let mac_key = Arc::new(MacKey::from_bytes(*credentials.credentials.mac_key().as_bytes()));
    drop(credentials);
    let outbox = Outbox::open(&Outbox::beside(&counter_file)).map_err(setup)?;
    let recovered = outbox.recover(device_id, &mac_key).map_err(setup)?;
    check_recovered(cli, &outbox, &counter, &recovered)?;
    let mut config = UplinkConfig::new(cli.server.clone(), device_id, mac_key);
    config.max_in_flight = cli.max_in_flight as usize;
    config.max_sequence_span = cli.max_sequence_span;
    config.max_queued = cli.max_queued as usize;
    config.max_backoff = cli.max_backoff;
    config.ack_timeout = cli.ack_timeout;
    config.give_up_after = cli.give_up_after;
    config.counter_file = Some(counter_file.clone());
    config.outbox = Some(Arc::new(outbox));
    info!(
        "device {device_id}: {} mode, parameter set {}, {}-byte frames ({}-bit body) of {chunk_bytes} message \
         bytes, next sequence {} ({}), server {}{}",
        encryptor.mode_name(),
        encryptor.parameters().id().0,
        encryptor.frame_bytes(),
        encryptor.body_bits(),
        counter.next_sequence(),
        counter_file.display(),
        cli.server,
        match recovered.len() {
            0 => String::new(),
            n => format!("; first the {n} unacknowledged frames a previous run left in its outbox"),
        }
    );
    let uplink = Uplink::start(config);
    uplink.resume(recovered).map_err(runtime)?;
    Ok(Device {
        file,
        encryptor,
        counter,
        uplink,
        max_message_bytes: cli.max_chunks as usize * chunk_bytes,
        reading_format: cli.format.reading_format(),
        messages: 0,
        readings: 0,
    })
}

fn run(cli: &Cli) -> Result<(), Failure> {
    if cli.compact_public_key.is_some() && !cli.mode.takes_compact_public_key() {
        return Err(Failure::Setup(
            "--compact-public-key is the key of --mode tfhe-compact-list: add that mode or drop the key".into(),
        ));
    }
    // An input file that cannot be read is refused before the counter file reserves a block of numbers.
    if cli.command.is_none()
        && let Some(path) = cli.input.as_deref().filter(|p| *p != Path::new("-"))
    {
        let readable = std::fs::metadata(path).and_then(|m| {
            if m.is_dir() {
                Err(std::io::Error::other("a directory, not a file of readings"))
            } else {
                std::fs::File::open(path).map(drop)
            }
        });
        readable.map_err(|e| Failure::Setup(format!("cannot read --input {}: {e}", path.display())))?;
    }
    // The credentials, the encryptor and the MAC key are handled in `start`, never inlined; the stack it
    // used is scrubbed before the client runs (the OS seed, the keyed generator and copies of the MAC key
    // were found there by a memory image of the running client: tests/memory_image.rs).
    let started_device = start(cli);
    scrub_stack_deep();
    let mut device = started_device?;
    let started = Instant::now();
    let mut lines = Lines {
        device: &mut device,
        format: cli.format,
        batcher: Batcher::new(cli.batch as usize),
        batch_readings: 0,
        skip_bad_lines: cli.skip_bad_lines,
        readings: Vec::new(),
    };
    let source = match (&cli.command, cli.interval, &cli.input) {
        (Some(command), Some(interval), _) => Source::Periodic {
            command,
            interval,
            runs: cli.runs,
        },
        (Some(command), None, _) => Source::Streaming(command),
        (None, _, Some(path)) if path != Path::new("-") => Source::File(path),
        (None, _, _) => Source::Stdin,
    };
    source.read_into(&mut lines)?;
    let (messages, readings) = (device.messages, device.readings);
    let pending = device.uplink.pending();
    if pending > 0 {
        info!("input done; waiting for the acknowledgement of {pending} frames");
    }
    let stats = device.uplink.finish().map_err(runtime)?;
    summary(&stats, readings, messages, started)
}

/// The formats whose readings have a width, which the integer set's FheUint8/16/32 need (all but hex).
const FIXED_WIDTH_FORMATS: &str = "u8, u16, u32, i8, i16, i32 or f32";

/// The compact-list encryptor of `--mode tfhe-compact-list`: a public-key device of the integer set, its
/// compact public key, readings of a fixed width (`u8` to `u32`, `i8` to `i32`, `f32`).
fn compact_list_encryptor(cli: &Cli, credentials: &Credentials<'_>) -> Result<MessageEncryptor, Failure> {
    if credentials.mode != KeyMode::PublicKey || credentials.parameters.torus_bits() != 64 {
        return Err(setup(format!(
            "{}: --mode tfhe-compact-list needs the credentials of a compact-list device (an integer key set's \
             public-key device, from `tfhe-sbc-keys issue --mode compact-list`); this file is a {} device of \
             parameter set {}",
            cli.credentials.display(),
            credentials.mode.name(),
            credentials.parameters.id().0
        )));
    }
    // Each reading is one list value of its width: an `i16` or `f32` reading is its 16 or 32 bits, the
    // header's reading format says how to read them back.
    let Some(value_bytes) = cli.format.bytes() else {
        return Err(setup(format!(
            "--mode tfhe-compact-list encrypts readings of a fixed width for tfhe-rs FheUint8/16/32, not --format \
             hex: use --format {FIXED_WIDTH_FORMATS}"
        )));
    };
    let value_bits = 8 * value_bytes as u32;
    let path = cli
        .compact_public_key
        .clone()
        .unwrap_or_else(|| cli.credentials.with_extension("tscp"));
    let key = std::fs::read(&path).map_err(|e| {
        setup(format!(
            "{}: cannot read the compact public key: {e}; give --compact-public-key the devices/<ID>.tscp file \
             of `tfhe-sbc-keys issue --mode compact-list`",
            path.display()
        ))
    })?;
    MessageEncryptor::compact_list_from_os_entropy(credentials, &key, value_bits)
        .map_err(|e| setup(format!("{}: {e}", path.display())))
}

/// Refuses an outbox that does not fit the queue or that the counter file has fallen behind (a restored
/// counter file would hand out its sequence numbers again).
fn check_recovered(
    cli: &Cli,
    outbox: &Outbox,
    counter: &PersistentCounter,
    recovered: &[Recovered],
) -> Result<(), Failure> {
    if recovered.len() as u64 > cli.max_queued {
        return Err(setup(format!(
            "the outbox {} holds {} unacknowledged frames, more than --max-queued {}: run with --max-queued {} or \
             more",
            outbox.dir().display(),
            recovered.len(),
            cli.max_queued,
            recovered.len()
        )));
    }
    if let Some(last) = recovered.last()
        && last.sequence >= counter.next_sequence()
    {
        return Err(setup(format!(
            "the outbox {} holds frame {} but the counter file {} starts at {}: the counter file went back; write {} \
             into it and start again",
            outbox.dir().display(),
            last.sequence,
            counter.path().display(),
            counter.next_sequence(),
            last.sequence + 1
        )));
    }
    Ok(())
}

/// The last line: what was delivered and what was lost; an error (exit status 1) if anything was lost.
fn summary(stats: &UplinkStats, readings: u64, messages: u64, started: Instant) -> Result<(), Failure> {
    let recovered = match stats.recovered {
        0 => String::new(),
        n => format!(" and {n} from the outbox"),
    };
    info!(
        "sent {readings} readings in {messages} messages ({} frames{recovered}, {} bytes on the wire) in {:.2?}: {} \
         frames accepted ({} of them already taken, resent after a reconnect), {} messages lost ({} frames, {} of \
         them acknowledged before their message expired; {} expired at the server, {} too old when sent again); {} \
         connections, {} resends, {} acknowledgement records ignored",
        stats.frames,
        stats.bytes_sent,
        started.elapsed(),
        stats.delivered(),
        stats.duplicates,
        stats.lost_messages(),
        stats.lost(),
        stats.expired_acknowledged,
        stats.expired + stats.expired_acknowledged,
        stats.too_old,
        stats.connections,
        stats.resent,
        stats.ignored
    );
    if stats.lost() > 0 {
        return Err(runtime(format!(
            "{} messages lost ({} frames), their readings are not at the server: {} messages ({} frames, {} of them \
             acknowledged before their message expired) because the server dropped them as expired before they \
             were complete (a slow or broken link), {} frames refused as too old when sent again (the server may \
             have taken them before it restarted)",
            stats.lost_messages(),
            stats.lost(),
            stats.expired_messages,
            stats.expired + stats.expired_acknowledged,
            stats.expired_acknowledged,
            stats.too_old
        )));
    }
    Ok(())
}
