//! Where readings come from: standard input, a file, or a sensor command run by `sh -c`, once with its
//! lines streamed, or every interval with one run's lines at a time. Each source hands its lines to a
//! [`LineSink`] (the client's parser and batcher) and says when a group of lines ends.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::warn;

/// What takes the lines of a source.
pub trait LineSink {
    /// What stops the reading (a source's own failures become one through `From`).
    type Error: From<SourceError>;
    /// One line; `origin` names where it came from (e.g. "standard input"), `number` counts from 1.
    fn line(&mut self, line: &str, origin: &str, number: usize) -> Result<(), Self::Error>;
    /// A group of lines ended (the input, or one run of the command): what is batched goes out.
    fn flush(&mut self) -> Result<(), Self::Error>;
}

/// Why a source failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceError {
    /// It could not be opened or started (a set-up problem).
    Open(String),
    /// Reading it failed.
    Read(String),
}

/// A source of readings.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// Standard input.
    Stdin,
    /// A file.
    File(&'a Path),
    /// A command run once, its lines read as they come.
    Streaming(&'a str),
    /// A command run every `interval` (start to start), `runs` times or forever.
    Periodic {
        /// The command.
        command: &'a str,
        /// From one start to the next.
        interval: Duration,
        /// How many runs; `None`: forever.
        runs: Option<u64>,
    },
}

impl Source<'_> {
    /// Reads every line into `sink`, flushing after each group, until the source ends.
    pub fn read_into<S: LineSink>(self, sink: &mut S) -> Result<(), S::Error> {
        match self {
            Self::Stdin => read_all(sink, io::stdin().lock(), "standard input"),
            Self::File(path) => {
                let file =
                    File::open(path).map_err(|e| SourceError::Open(format!("cannot read {}: {e}", path.display())))?;
                read_all(sink, BufReader::new(file), &path.display().to_string())
            }
            Self::Streaming(command) => streaming(sink, command),
            Self::Periodic {
                command,
                interval,
                runs,
            } => periodic(sink, command, interval, runs),
        }
    }
}

fn read_all<S: LineSink>(sink: &mut S, reader: impl BufRead, origin: &str) -> Result<(), S::Error> {
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| SourceError::Read(format!("cannot read {origin}: {e}")))?;
        sink.line(&line, origin, i + 1)?;
    }
    sink.flush()
}

fn sh(command: &str) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(command).stdin(Stdio::null()).stderr(Stdio::inherit());
    sh
}

fn cannot_run(e: io::Error) -> SourceError {
    SourceError::Open(format!("cannot run the sensor command with sh: {e}"))
}

/// Runs the sensor command once and streams its lines.
fn streaming<S: LineSink>(sink: &mut S, command: &str) -> Result<(), S::Error> {
    let mut child = sh(command).stdout(Stdio::piped()).spawn().map_err(cannot_run)?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| SourceError::Read("the sensor command has no standard output".into()))?;
    let result = read_all(sink, BufReader::new(stdout), "the sensor command's output");
    let status = child.wait().map_err(|e| SourceError::Read(e.to_string()))?;
    result?;
    if !status.success() {
        warn!("the sensor command ended with {status}");
    }
    Ok(())
}

/// Runs the sensor command every `interval` (start to start), one run's readings at a time.
fn periodic<S: LineSink>(sink: &mut S, command: &str, interval: Duration, runs: Option<u64>) -> Result<(), S::Error> {
    let mut run = 0u64;
    let mut next = Instant::now();
    loop {
        run += 1;
        let output = sh(command).output().map_err(cannot_run)?;
        if output.status.success() {
            let text = String::from_utf8_lossy(&output.stdout);
            let origin = format!("run {run} of the sensor command");
            for (i, line) in text.lines().enumerate() {
                sink.line(line, &origin, i + 1)?;
            }
            sink.flush()?;
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
