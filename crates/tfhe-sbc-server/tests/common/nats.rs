//! A real nats-server with JetStream on loopback for the tests (never a mock): the pinned binary from
//! `TSBC_NATS_SERVER` (scripts/nats-server.sh installs it; scripts/test-all.sh exports it) or `nats-server`
//! on the PATH. Its store fsyncs before every acknowledgement (`sync_interval: always`), as in production.
//! Killed (SIGKILL) on drop; [`NatsServer::restart`] starts it again on the same port and store.
//! [`NatsServer::cluster`] starts a JetStream cluster of several such nodes, routed to each other.

use super::process::ChildSlot;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One nats-server process.
pub struct NatsServer {
    child: ChildSlot,
    port: u16,
    config: PathBuf,
    _dir: tempfile::TempDir,
}

fn binary() -> String {
    std::env::var("TSBC_NATS_SERVER").unwrap_or_else(|_| "nats-server".to_owned())
}

impl NatsServer {
    /// Starts a single-node JetStream server on a free loopback port.
    pub fn start() -> Self {
        Self::start_with(free_port(), "")
    }

    /// Starts a JetStream cluster of `nodes` servers on loopback, each routed to every other: streams and
    /// buckets with `nodes` replicas survive the loss of any minority of them.
    pub fn cluster(nodes: usize) -> Vec<Self> {
        let routes: Vec<u16> = (0..nodes).map(|_| free_port()).collect();
        let all_routes: Vec<String> = routes.iter().map(|p| format!("nats://127.0.0.1:{p}")).collect();
        let mut servers: Vec<Self> = routes
            .iter()
            .enumerate()
            .map(|(i, route)| {
                let others: Vec<&str> = (0..nodes).filter(|&j| j != i).map(|j| all_routes[j].as_str()).collect();
                Self::configured(
                    free_port(),
                    &format!(
                        "server_name: n{i}\ncluster {{\n  name: tsbc\n  listen: 127.0.0.1:{route}\n  routes: [{}]\n}}\n",
                        others.join(", ")
                    ),
                )
            })
            .collect();
        for server in &mut servers {
            server.spawn();
        }
        servers
    }

    fn start_with(port: u16, extra: &str) -> Self {
        let mut server = Self::configured(port, extra);
        server.spawn();
        server
    }

    /// The server's configuration file (JetStream with its own store, fsync before every acknowledgement,
    /// then `extra`), not started. `max_file_store` is set: JetStream reserves every stream's `max_bytes`
    /// (3 GiB for the service) against it, and its default (75 % of the disk's free space) refuses the
    /// streams on a nearly full disk although the tests write a few MB.
    fn configured(port: u16, extra: &str) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let config = dir.path().join("nats.conf");
        std::fs::write(
            &config,
            format!(
                "listen: 127.0.0.1:{port}\njetstream {{\n  store_dir: \"{}\"\n  sync_interval: always\n  \
                 max_file_store: 64GB\n}}\n{extra}",
                dir.path().join("store").display()
            ),
        )
        .unwrap();
        Self {
            child: ChildSlot::default(),
            port,
            config,
            _dir: dir,
        }
    }

    fn spawn(&mut self) {
        let child = Command::new(binary())
            .arg("-c")
            .arg(&self.config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {} ({e}): install the pinned nats-server with `bash scripts/nats-server.sh` and \
                     set TSBC_NATS_SERVER to the path it prints",
                    binary()
                )
            });
        self.child.set(child);
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen within 15 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The client URL.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        self.child.kill();
    }

    /// SIGSTOP: the node keeps its sockets open and answers nothing (a stalled or partitioned node).
    #[allow(dead_code)]
    pub fn pause(&mut self) {
        self.child.signal("-STOP");
    }

    /// SIGCONT after [`NatsServer::pause`].
    #[allow(dead_code)]
    pub fn resume(&mut self) {
        self.child.signal("-CONT");
    }

    /// Killed, then started again on the same port and store.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }
}

/// A free loopback port (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
