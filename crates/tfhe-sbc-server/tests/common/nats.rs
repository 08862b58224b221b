//! A real nats-server with JetStream on loopback for the tests (never a mock): the pinned binary from
//! `TSBC_NATS_SERVER` (scripts/nats-server.sh installs it; scripts/test-all.sh exports it) or `nats-server`
//! on the PATH. Its store fsyncs before every acknowledgement (`sync_interval: always`), as in production.
//! Killed (SIGKILL) on drop; [`NatsServer::restart`] starts it again on the same port and store.
//! [`NatsServer::cluster`] starts a JetStream cluster of several such nodes, routed to each other;
//! [`NatsServer::cluster_with`] also gives each node a monitoring port, a log file, optionally its own
//! user id (so that a firewall rule can match its outgoing routes) and its own small tmpfs store (so that
//! a test can fill its disk).

use super::process::ChildSlot;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One nats-server process.
pub struct NatsServer {
    child: ChildSlot,
    port: u16,
    config: PathBuf,
    /// The node's `server_name` in a cluster (`n0`, `n1`, ...), empty for a single server.
    pub name: String,
    /// The port its routes listen on in a cluster (0 for a single server).
    pub route_port: u16,
    /// Its monitoring port (`/jsz`, `/varz`), 0 when it has none.
    pub monitor_port: u16,
    /// The user id it runs as, when not the test's own.
    pub uid: Option<u32>,
    /// A tmpfs mounted on its store directory (unmounted on drop).
    tmpfs: Option<PathBuf>,
    _dir: tempfile::TempDir,
}

/// How [`NatsServer::cluster_with`] starts the nodes.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterOptions {
    /// Node `i` runs as user id `first_uid + i` (root only): an `iptables -m owner` rule then matches the
    /// routes it opens.
    pub first_uid: Option<u32>,
    /// Every node's store directory is a tmpfs of this many MiB (root only).
    pub tmpfs_store_mib: Option<u32>,
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
        Self::cluster_with(nodes, ClusterOptions::default())
    }

    /// [`NatsServer::cluster`] with `options`; every node also gets a monitoring port and a log file
    /// ([`NatsServer::log_lines`]).
    pub fn cluster_with(nodes: usize, options: ClusterOptions) -> Vec<Self> {
        let routes: Vec<u16> = (0..nodes).map(|_| free_port()).collect();
        let all_routes: Vec<String> = routes.iter().map(|p| format!("nats://127.0.0.1:{p}")).collect();
        let mut servers: Vec<Self> = routes
            .iter()
            .enumerate()
            .map(|(i, route)| {
                let others: Vec<&str> = (0..nodes).filter(|&j| j != i).map(|j| all_routes[j].as_str()).collect();
                let monitor = free_port();
                let mut server = Self::configured(
                    free_port(),
                    &format!(
                        "server_name: n{i}\nhttp: 127.0.0.1:{monitor}\ncluster {{\n  name: tsbc\n  listen: \
                         127.0.0.1:{route}\n  routes: [{}]\n}}\n",
                        others.join(", ")
                    ),
                );
                server.name = format!("n{i}");
                server.route_port = *route;
                server.monitor_port = monitor;
                server.with_options(options, i as u32);
                server
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
            name: String::new(),
            route_port: 0,
            monitor_port: 0,
            uid: None,
            tmpfs: None,
            _dir: dir,
        }
    }

    /// Applies `options` to node `index` (not started yet): its log file, its user id, its tmpfs store.
    fn with_options(&mut self, options: ClusterOptions, index: u32) {
        let dir = self._dir.path().to_owned();
        let mut config = std::fs::read_to_string(&self.config).unwrap();
        config.push_str(&format!("log_file: \"{}\"\n", dir.join("nats.log").display()));
        std::fs::write(&self.config, config).unwrap();
        let store = dir.join("store");
        if let Some(mib) = options.tmpfs_store_mib {
            std::fs::create_dir_all(&store).unwrap();
            let size = format!("size={mib}m");
            // The source name `tsbc-cluster-test` lets `scripts/cluster-faults.sh` find a mount left behind.
            run_checked(
                "mount",
                &["-t", "tmpfs", "-o", &size, "tsbc-cluster-test", store.to_str().unwrap()],
            );
            self.tmpfs = Some(store.clone());
        }
        if let Some(first) = options.first_uid {
            let uid = first + index;
            // The node writes its store and log as this user: its directory is its own.
            run_checked("chown", &["-R", &uid.to_string(), dir.to_str().unwrap()]);
            self.uid = Some(uid);
        }
    }

    fn spawn(&mut self) {
        let mut command = Command::new(binary());
        if let Some(uid) = self.uid {
            command.uid(uid).gid(uid);
        }
        let child = command
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

    /// Started again after [`NatsServer::kill`] (several nodes killed at once, then started together).
    pub fn start_again(&mut self) {
        self.spawn();
    }

    /// Its store directory.
    pub fn store_dir(&self) -> PathBuf {
        self._dir.path().join("store")
    }

    /// The lines of its log file (a node of [`NatsServer::cluster_with`]) that contain any of `words`.
    pub fn log_lines(&self, words: &[&str]) -> Vec<String> {
        let log = std::fs::read_to_string(self._dir.path().join("nats.log")).unwrap_or_default();
        log.lines()
            .filter(|line| words.iter().any(|w| line.contains(w)))
            .map(str::to_owned)
            .collect()
    }

    /// The body of `GET path` on its monitoring port (`/jsz`, `/varz`), `None` if it does not answer
    /// within 2 s.
    pub fn monitor(&self, path: &str) -> Option<String> {
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], self.monitor_port));
        let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        stream
            .write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
            .ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let (head, body) = response.split_once("\r\n\r\n")?;
        head.starts_with("HTTP/1.").then(|| body.to_owned())
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.child.kill();
        if let Some(store) = &self.tmpfs {
            let _ = Command::new("umount").arg("-l").arg(store).status();
        }
    }
}

/// Runs `program` with `args` and fails the test if it does not succeed.
pub fn run_checked(program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(status.success(), "{program} {}: {status}", args.join(" "));
}

/// A free loopback port (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
