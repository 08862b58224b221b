//! A server process of a role (`tfhe-sbc-server --nats ... --role R`) that a test kills (SIGKILL), starts
//! again with the same arguments, and finally interrupts (SIGINT) to read the counts it prints on exit.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process, killed (SIGKILL) on demand and on drop.
#[derive(Default)]
pub struct ChildSlot(Option<Child>);

impl ChildSlot {
    /// Holds `child` (a previous one must have been killed).
    pub fn set(&mut self, child: Child) {
        self.0 = Some(child);
    }

    /// The child, no longer held.
    pub fn take(&mut self) -> Option<Child> {
        self.0.take()
    }

    /// Sends `signal` (as `kill` spells it, e.g. `-STOP`) to the child, if any.
    pub fn signal(&self, signal: &str) {
        if let Some(child) = &self.0 {
            let _ = Command::new("kill").arg(signal).arg(child.id().to_string()).status();
        }
    }

    /// SIGKILL, as a crash, and reaped.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for ChildSlot {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One role process; killed on drop.
pub struct RoleProcess {
    /// Its name in the test's output.
    pub name: String,
    args: Vec<String>,
    child: ChildSlot,
    /// Its stdout and stderr, appended across restarts.
    pub log: PathBuf,
    address_file: Option<PathBuf>,
}

impl RoleProcess {
    /// Starts `tfhe-sbc-server` with `args`; with `address_file`, passes `--address-file` and waits for the
    /// address (a gateway).
    pub fn start(name: &str, args: Vec<String>, log: PathBuf, address_file: Option<PathBuf>) -> Self {
        let mut process = Self {
            name: name.to_owned(),
            args,
            child: ChildSlot::default(),
            log,
            address_file,
        };
        process.spawn();
        process
    }

    fn spawn(&mut self) {
        let log = OpenOptions::new().create(true).append(true).open(&self.log).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"));
        command.args(&self.args);
        if let Some(path) = &self.address_file {
            let _ = std::fs::remove_file(path);
            command.arg("--address-file").arg(path);
        }
        let child = command
            .env("RUST_LOG", "warn")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        self.child.set(child);
    }

    /// The address a gateway listens on (waits up to 90 s for it).
    pub fn address(&self) -> String {
        let path = self.address_file.as_ref().expect("a gateway");
        wait_for_address(path, Duration::from_secs(90), || {
            format!(
                "{}: {}",
                self.name,
                std::fs::read_to_string(&self.log).unwrap_or_default()
            )
        })
    }

    /// Fails the test, with the end of the process's log, if it exited by itself (a role must run until it
    /// is killed or interrupted: a worker that gave up at start-up would leave the other to do its work,
    /// unnoticed).
    pub fn assert_running(&mut self) {
        if let Some(child) = self.child.0.as_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            panic!(
                "{} exited by itself ({status}); the end of its log:\n{}",
                self.name,
                lines[lines.len().saturating_sub(20)..].join("\n")
            );
        }
    }

    /// SIGKILL, as a crash.
    pub fn kill(&mut self) {
        self.child.kill();
    }

    /// Its process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.0.as_ref().map(Child::id)
    }

    /// SIGSTOP: the process holds its connections and its frames but does nothing (a stalled machine).
    pub fn pause(&mut self) {
        self.child.signal("-STOP");
    }

    /// SIGCONT after [`RoleProcess::pause`].
    pub fn resume(&mut self) {
        self.child.signal("-CONT");
    }

    /// Started again with the same arguments (a gateway gets a new port: read [`RoleProcess::address`]).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Its exit status once it exited by itself, waiting at most `limit` (then killed: `None`).
    #[allow(dead_code)]
    pub fn wait_for_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take()?;
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// SIGINT, and the process's summary line (`gateway: ...; worker: ...`) once it exited (at most 20 s).
    pub fn interrupt(&mut self) -> String {
        let Some(mut child) = self.child.take() else {
            return String::new();
        };
        let _ = Command::new("kill").arg("-INT").arg(child.id().to_string()).status();
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines()
            .rfind(|line| line.starts_with("gateway: "))
            .unwrap_or("")
            .to_owned()
    }
}

/// The address a process started with `--address-file path` writes there, waited for at most `limit`; if
/// none comes, the test fails with `context()` (e.g. the process's log).
pub fn wait_for_address(path: &Path, limit: Duration, context: impl Fn() -> String) -> String {
    let started = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_owned();
        }
        assert!(started.elapsed() < limit, "no address within {limit:?}: {}", context());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The single-process server on the key set `keys`, listening on a free loopback port written to
/// `address_file`, with the demo client key (it logs what it decrypts) and `extra` arguments; its standard
/// error (the log, `RUST_LOG=info`) piped.
#[allow(dead_code)]
pub fn demo_server(keys: &Path, address_file: &Path, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", keys.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(["--address-file", address_file.to_str().unwrap()])
        .args(["--demo-client-key", keys.join("client_key.bin").to_str().unwrap()])
        .args(extra)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}
