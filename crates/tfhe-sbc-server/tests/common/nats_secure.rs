//! A real nats-server with JetStream on loopback that authenticates its clients (user and password, token,
//! NKey users) and speaks TLS with a private certificate authority made for the test, verifying client
//! certificates (`verify: true`): the configurations `docs/operations.md` ("A hardened deployment")
//! describes. Killed (SIGKILL) on drop; its log is kept for a failing test's message.

use crate::common::nats::free_port;
use crate::common::process::ChildSlot;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One nats-server process with an authorization or TLS block.
pub struct SecureNats {
    child: ChildSlot,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl SecureNats {
    /// Starts a JetStream server on a free loopback port whose configuration ends with `extra` (an
    /// `authorization { ... }` or `tls { ... }` block), fsync before every acknowledgement as in production.
    pub fn start(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let config = dir.path().join("nats.conf");
        std::fs::write(
            &config,
            format!(
                "listen: 127.0.0.1:{port}\njetstream {{\n  store_dir: \"{}\"\n  sync_interval: always\n  \
                 max_file_store: 64GB\n}}\n{extra}\n",
                dir.path().join("store").display()
            ),
        )
        .unwrap();
        let log = dir.path().join("nats.log");
        let binary = std::env::var("TSBC_NATS_SERVER").unwrap_or_else(|_| "nats-server".to_owned());
        let child = Command::new(&binary)
            .arg("-c")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary} ({e}): set TSBC_NATS_SERVER (scripts/nats-server.sh)"));
        let mut slot = ChildSlot::default();
        slot.set(child);
        let server = Self {
            child: slot,
            port,
            log,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nats-server did not listen within 15 s: {}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// The client URL (no credentials: they go in flags).
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// What the server logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        self.child.kill();
    }
}

/// A private certificate authority and what it signed, as PEM files in a directory: `ca.pem`, the server's
/// `server.pem`/`server-key.pem` for 127.0.0.1, a client's `client.pem`/`client-key.pem`; and a second,
/// unrelated authority `stranger-ca.pem` with a client certificate of its own (`stranger-client.pem`,
/// `stranger-client-key.pem`).
pub struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    /// Makes the two authorities and their certificates.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = authority("tsbc test CA");
        let stranger = authority("a stranger's CA");
        write_signed(dir.path(), "server", &ca, ExtendedKeyUsagePurpose::ServerAuth);
        write_signed(dir.path(), "client", &ca, ExtendedKeyUsagePurpose::ClientAuth);
        write_signed(
            dir.path(),
            "stranger-client",
            &stranger,
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.path().join("stranger-ca.pem"), stranger.pem()).unwrap();
        Self { dir }
    }

    /// A file of this PKI (`ca.pem`, `client.pem`, ...).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A file's path as a string for command lines.
    pub fn arg(&self, name: &str) -> String {
        self.file(name).to_str().unwrap().to_owned()
    }

    /// nats-server's `tls` block: this server's certificate, client certificates verified against the CA.
    pub fn server_block(&self) -> String {
        format!(
            "tls {{\n  cert_file: \"{}\"\n  key_file: \"{}\"\n  ca_file: \"{}\"\n  verify: true\n  timeout: 2\n}}",
            self.file("server.pem").display(),
            self.file("server-key.pem").display(),
            self.file("ca.pem").display()
        )
    }
}

/// A self-signed certificate authority named `name`.
fn authority(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

/// `<name>.pem` and `<name>-key.pem` in `dir`: a certificate for 127.0.0.1 signed by `issuer`, for `usage`.
fn write_signed(dir: &Path, name: &str, issuer: &CertifiedIssuer<'static, KeyPair>, usage: ExtendedKeyUsagePurpose) {
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, issuer).unwrap();
    std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
    std::fs::write(dir.join(format!("{name}-key.pem")), key.serialize_pem()).unwrap();
}

/// A new NKey user: its seed (`SU...`, for the role's `--nats-nkey` file) and public key (`U...`, for the
/// server's `authorization { users: [ { nkey: ... } ] }`).
pub fn nkey_user() -> (String, String) {
    let pair = nkeys::KeyPair::new_user();
    (pair.seed().unwrap(), pair.public_key())
}

/// The `accounts` block of `docs/operations.md` ("A hardened deployment"): one account `TSBC` with
/// JetStream, one user per role (`gateway`, `worker`, `reader`, password `pw-of-<role>`), each allowed only
/// the subjects its role uses (the topology of `src/jetstream.rs`; every role creates what is missing).
pub const ROLE_ACCOUNTS: &str = r#"accounts {
  TSBC {
    jetstream: enabled
    users: [
      { user: gateway, password: "pw-of-gateway", permissions: {
          publish: { allow: [
            "$JS.API.INFO",
            "$JS.API.STREAM.INFO.*",
            "$JS.API.STREAM.CREATE.TSBC_FRAMES", "$JS.API.STREAM.CREATE.TSBC_RESULTS",
            "$JS.API.STREAM.CREATE.TSBC_DEAD", "$JS.API.STREAM.UPDATE.TSBC_DEAD",
            "$JS.API.STREAM.CREATE.KV_tsbc-devices", "$JS.API.STREAM.CREATE.KV_tsbc-results",
            "$JS.API.DIRECT.GET.KV_tsbc-devices.>", "$JS.API.STREAM.MSG.GET.KV_tsbc-devices",
            "$KV.tsbc-devices.>",
            "$JS.API.DIRECT.GET.KV_tsbc-results.>", "$JS.API.STREAM.MSG.GET.KV_tsbc-results",
            "tsbc.frames.>", "tsbc.watermark.>"
          ] }
          subscribe: { allow: ["tsbc.inbox.>", "tsbc.watermark.>"] }
      } }
      { user: worker, password: "pw-of-worker", permissions: {
          publish: { allow: [
            "$JS.API.INFO",
            "$JS.API.STREAM.INFO.*",
            "$JS.API.STREAM.CREATE.TSBC_FRAMES", "$JS.API.STREAM.CREATE.TSBC_RESULTS",
            "$JS.API.STREAM.CREATE.TSBC_DEAD", "$JS.API.STREAM.UPDATE.TSBC_DEAD",
            "$JS.API.STREAM.CREATE.KV_tsbc-devices", "$JS.API.STREAM.CREATE.KV_tsbc-results",
            "$JS.API.CONSUMER.CREATE.TSBC_FRAMES.>", "$JS.API.CONSUMER.INFO.TSBC_FRAMES.workers",
            "$JS.API.CONSUMER.MSG.NEXT.TSBC_FRAMES.workers", "$JS.ACK.TSBC_FRAMES.workers.>",
            "$JS.API.CONSUMER.CREATE.KV_tsbc-devices", "$JS.API.CONSUMER.CREATE.KV_tsbc-devices.>",
            "$JS.API.CONSUMER.DELETE.KV_tsbc-devices.>",
            "$JS.FC.KV_tsbc-devices.>",
            "$JS.API.DIRECT.GET.KV_tsbc-devices.>", "$JS.API.STREAM.MSG.GET.KV_tsbc-devices",
            "$JS.API.DIRECT.GET.KV_tsbc-results.>", "$JS.API.STREAM.MSG.GET.KV_tsbc-results",
            "$KV.tsbc-devices.>", "$KV.tsbc-results.>",
            "tsbc.results.>", "tsbc.dead.>", "tsbc.watermark.>"
          ] }
          subscribe: { allow: ["tsbc.inbox.>", "tsbc.watermark.>"] }
      } }
      { user: reader, password: "pw-of-reader", permissions: {
          publish: { allow: [
            "$JS.API.INFO",
            "$JS.API.STREAM.INFO.TSBC_RESULTS", "$JS.API.STREAM.INFO.KV_tsbc-results",
            "$JS.API.CONSUMER.CREATE.TSBC_RESULTS", "$JS.API.CONSUMER.CREATE.TSBC_RESULTS.>",
            "$JS.API.CONSUMER.INFO.TSBC_RESULTS.*",
            "$JS.API.CONSUMER.MSG.NEXT.TSBC_RESULTS.*", "$JS.API.CONSUMER.DELETE.TSBC_RESULTS.*",
            "$JS.API.DIRECT.GET.KV_tsbc-results.>", "$JS.API.STREAM.MSG.GET.KV_tsbc-results"
          ] }
          subscribe: { allow: ["tsbc.inbox.>"] }
      } }
    ]
  }
}"#;
