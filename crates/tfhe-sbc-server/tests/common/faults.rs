//! The faults `tests/cluster.rs` injects into the real engine (`TSBC_CLUSTER_FAULT`), and the means: a
//! network partition of one nats-server node from its peers (iptables rules on the loopback routes,
//! removed on drop), the leader of a stream (JetStream's stream info), and a full disk (a node's tmpfs
//! store filled, then emptied).

use crate::common::nats::{NatsServer, run_checked};
use std::process::Command;
use std::str::FromStr;
use std::time::Duration;

/// One fault scenario of the cluster test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A worker and a gateway killed (SIGKILL) and started again, both workers stalled (SIGSTOP), a NATS
    /// node killed and started again: the default run.
    Kills,
    /// Both worker processes stalled (SIGSTOP), then resumed.
    Stall,
    /// The node leading `TSBC_FRAMES` cut from its peers' routes (its clients still reach it), then healed.
    Partition,
    /// The node leading `TSBC_FRAMES` killed (SIGKILL) and started again.
    Leader,
    /// All three nodes killed at once (SIGKILL) and started again.
    AllNodes,
    /// The disk of the node leading `TSBC_FRAMES` full (its tmpfs store filled), then freed.
    StoreFull,
}

impl Fault {
    /// Every fault, as `TSBC_CLUSTER_FAULT` spells it.
    pub const ALL: [(&'static str, Fault); 6] = [
        ("kills", Fault::Kills),
        ("stall", Fault::Stall),
        ("partition", Fault::Partition),
        ("leader", Fault::Leader),
        ("all-nodes", Fault::AllNodes),
        ("store-full", Fault::StoreFull),
    ];

    /// Its name in `TSBC_CLUSTER_FAULT`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Kills => "kills",
            Fault::Stall => "stall",
            Fault::Partition => "partition",
            Fault::Leader => "leader",
            Fault::AllNodes => "all-nodes",
            Fault::StoreFull => "store-full",
        }
    }

    /// Whether it needs root (iptables, mount).
    pub fn needs_root(self) -> bool {
        match self {
            Fault::Partition | Fault::StoreFull => true,
            Fault::Kills | Fault::Stall | Fault::Leader | Fault::AllNodes => false,
        }
    }
}

/// A `TSBC_CLUSTER_FAULT` value that names no fault.
#[derive(Debug)]
pub struct UnknownFault(pub String);

impl std::fmt::Display for UnknownFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = Fault::ALL.iter().map(|(n, _)| *n).collect();
        write!(f, "no fault {:?}: one of {}", self.0, names.join(", "))
    }
}

impl FromStr for Fault {
    type Err = UnknownFault;

    fn from_str(name: &str) -> Result<Self, UnknownFault> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, fault)| fault)
            .ok_or_else(|| UnknownFault(name.to_owned()))
    }
}

/// The environment variable `name` parsed, or `default` when unset; a value that does not parse fails
/// the test (a typo must not silently run another scenario).
pub fn env_or<T: FromStr>(name: &str, default: T) -> T
where
    T::Err: std::fmt::Display,
{
    match std::env::var(name) {
        Ok(value) => value.parse().unwrap_or_else(|e| panic!("{name}={value}: {e}")),
        Err(std::env::VarError::NotPresent) => default,
        Err(e) => panic!("{name}: {e}"),
    }
}

/// Whether the test runs as root.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The `server_name` of the node leading `stream` (JetStream's stream info, `cluster.leader`), asked of
/// the cluster at `urls` for at most 30 s (a stream may be without a leader for a moment).
pub async fn stream_leader(urls: &[String], stream: &str) -> String {
    let client = async_nats::connect(urls.to_vec()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    for _ in 0..60 {
        if let Ok(mut handle) = js.get_stream(stream).await
            && let Ok(info) = handle.info().await
            && let Some(leader) = info.cluster.as_ref().and_then(|c| c.leader.clone())
        {
            return leader;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("{stream} has no leader after 30 s");
}

/// Which node each of `roles` (name, process id) is connected to, as `name->node`: the clients' ports
/// each node's monitoring endpoint (`/connz`) lists, matched to their processes with `ss`.
pub fn role_nodes(nats: &[NatsServer], roles: &[(String, u32)]) -> String {
    let mut found = Vec::new();
    for node in nats {
        let Some(body) = node.monitor("/connz?limit=1024") else {
            found.push(format!("{}: no answer", node.name));
            continue;
        };
        let ports = body.split("\"port\":").skip(1).filter_map(|rest| {
            let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u16>().ok()
        });
        for port in ports {
            let ss = Command::new("ss")
                .args(["-Htnp", "state", "established", &format!("( sport = :{port} )")])
                .output();
            let text = ss
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            for (name, pid) in roles {
                if text.contains(&format!("pid={pid},")) {
                    found.push(format!("{name}->{}", node.name));
                }
            }
        }
    }
    found.sort();
    found.join(" ")
}

/// The end of every rule [`Partition`] adds: a comment that names it (`scripts/cluster-faults.sh` removes
/// rules left by a test killed before its drop), and the verdict.
pub const RULE_END: [&str; 6] = ["-m", "comment", "--comment", "tsbc-cluster-test", "-j", "DROP"];

/// The rules that cut one node's routes on loopback; removed when dropped (also on a panic).
pub struct Partition {
    rules: Vec<Vec<String>>,
}

impl Partition {
    /// Cuts `nodes[index]` from the other nodes: packets to and from its route port, and those its user
    /// (`NatsServer::uid`) sends to the others' route ports. Its client port stays open.
    pub fn cut(nodes: &[NatsServer], index: usize) -> Self {
        let node = &nodes[index];
        let uid = node.uid.expect("a node started with its own user id").to_string();
        let own = node.route_port.to_string();
        let mut rules: Vec<Vec<String>> = vec![
            vec!["INPUT", "-i", "lo", "-p", "tcp", "--dport", &own],
            vec!["INPUT", "-i", "lo", "-p", "tcp", "--sport", &own],
        ]
        .into_iter()
        .map(|r| r.into_iter().map(str::to_owned).collect())
        .collect();
        for (j, other) in nodes.iter().enumerate() {
            if j != index {
                let port = other.route_port.to_string();
                let rule = [
                    "OUTPUT",
                    "-o",
                    "lo",
                    "-p",
                    "tcp",
                    "-m",
                    "owner",
                    "--uid-owner",
                    &uid,
                    "--dport",
                    &port,
                ];
                rules.push(rule.map(str::to_owned).to_vec());
            }
        }
        let mut partition = Self { rules: Vec::new() };
        for rule in rules {
            let mut add = vec!["-A".to_owned()];
            add.extend(rule.iter().cloned());
            add.extend(RULE_END.map(str::to_owned));
            run_checked("iptables", &add.iter().map(String::as_str).collect::<Vec<_>>());
            partition.rules.push(rule);
        }
        partition
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        for rule in self.rules.drain(..) {
            let mut delete = vec!["-D".to_owned()];
            delete.extend(rule);
            delete.extend(RULE_END.map(str::to_owned));
            let status = Command::new("iptables").args(&delete).status();
            if !status.is_ok_and(|s| s.success()) {
                eprintln!("could not remove the iptables rule {delete:?}: remove it by hand");
            }
        }
    }
}

/// A file that fills a node's tmpfs store; removed when dropped.
pub struct DiskFiller {
    path: std::path::PathBuf,
}

impl DiskFiller {
    /// Fills the store of `node` (started with a tmpfs store) to its last byte.
    pub fn fill(node: &NatsServer) -> Self {
        let store = node.store_dir();
        let path = store.join("filler");
        let free = Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(&store)
            .output()
            .unwrap();
        let free: u64 = String::from_utf8_lossy(&free.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .expect("df's free bytes");
        // Whatever fallocate leaves (its last block), a write of the rest fills it.
        let _ = Command::new("fallocate")
            .args(["-l", &free.to_string()])
            .arg(&path)
            .status();
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!("cat /dev/zero >> '{}' 2>/dev/null", path.display()))
            .status();
        Self { path }
    }
}

impl Drop for DiskFiller {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
