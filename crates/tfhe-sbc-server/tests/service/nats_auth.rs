//! The JetStream roles authenticate to NATS the ways NATS deployments do, against a real nats-server on
//! loopback (`tests/common/nats_secure.rs`, never a mock): user and password, token, NKey user, and TLS with
//! a private certificate authority made in the test, the server verifying client certificates. Checked:
//!
//! * with the right credentials, the gateway role starts and a frame is acknowledged "accepted" (it went
//!   through JetStream and the devices' ledger under those credentials);
//! * with a wrong password or token, an unknown NKey, a CA that did not sign the server's certificate, no
//!   client certificate or one from another CA, the shipped binary exits non-zero within 10 s with one line
//!   naming the cause ("authorization violation", "unknown certificate authority", ...), not a JetStream
//!   timeout a minute later;
//! * credentials in a `--nats` URL are refused at start-up; an unreachable server is tried for
//!   `--nats-connect-patience` seconds, then named ("connection refused");
//! * the password never appears in the role's log, even at `RUST_LOG=debug`;
//! * a password from the environment is warned about at start-up (it stays readable in
//!   `/proc/<pid>/environ`, which the test reads, as root or the same user can) and `--help` says so;
//! * with two servers (`--nats a,b`), one refusing the credentials or the TLS handshake and one down, the
//!   one-line error names each server with its own cause.
//!
//! A `.creds` (JWT) file needs an operator and account setup (`nsc`), which this machine does not have:
//! `--nats-creds` is passed to async-nats's `credentials_file` and is not exercised here.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::process::RoleProcess;
use crate::common::service::{Meter, Server, integer_key_set, readings, send_until_acknowledged};
use crate::nats_secure::{Pki, ROLE_ACCOUNTS, SecureNats, nkey_user};
use futures_util::StreamExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::ack::AckStatus;

/// The integer key set all cases share (made once per run, under the test target's temporary directory).
fn keys() -> &'static Path {
    static KEYS: OnceLock<PathBuf> = OnceLock::new();
    KEYS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nats_auth_keys_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        integer_key_set(&dir, 0x1d00_00a7);
        dir
    })
}

/// A file in `dir` holding `secret` and a line break.
fn secret_file(dir: &Path, name: &str, secret: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{secret}\n")).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The gateway role on `url` with `extra` flags (and `env`): it must start, and a frame of meter 51 must be
/// acknowledged "accepted"; its log (at `log_level`) and the frame are returned.
fn gateway_accepts_a_frame(url: &str, extra: &[&str], env: &[(&str, &str)], log_level: &str) -> (String, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let mut args = vec!["--role", "gateway", "--nats-connect-patience", "5"];
    args.extend_from_slice(extra);
    // Server::start_with passes no environment: the variables are set for the shell prefix instead.
    let shell: String = std::iter::once(format!("RUST_LOG={log_level}"))
        .chain(env.iter().map(|(k, v)| format!("{k}='{v}'")))
        .map(|assignment| format!("export {assignment};"))
        .collect();
    let (server, address) = Server::start_with(
        keys(),
        url,
        &dir.path().join("address"),
        &args,
        Stdio::from(std::fs::File::create(&log).unwrap()),
        &shell,
    );
    let mut meter = Meter::new(keys(), 51, 0);
    let frame = meter.message(&readings(51, 0)).remove(0);
    let status = send_until_acknowledged(&address, &frame, meter.credentials.mac_key());
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status, AckStatus::Accepted, "the gateway's log:\n{text}");
    (text, frame)
}

/// The gateway role on `url` with `extra` flags (and `env`) must exit non-zero within 10 s; its last line
/// of standard error (the one-line error) is returned.
fn role_fails_fast(url: &str, extra: &[&str], env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", keys().to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(["--nats", url, "--role", "gateway"])
        .args(extra)
        .envs(env.iter().copied())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "still running after 10 s; its log:\n{}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success(), "exit {status}; log:\n{text}");
    let last = text.lines().last().unwrap_or("").to_owned();
    assert!(
        last.starts_with("tfhe-sbc-server: error: "),
        "the last line is not the error: {text}"
    );
    println!("exit {status} after {elapsed:.1?}: {last}");
    last
}

/// Asserts that `line` names `cause`.
fn names(line: &str, cause: &str) {
    assert!(line.contains(cause), "expected {cause:?} in: {line}");
}

const USERS: &str = "authorization {\n  users: [\n    { user: gateway, password: \"pw-of-the-gateway\" }\n  ]\n}";

#[test]
fn user_and_password_from_a_file_is_accepted_and_never_logged() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let nats = SecureNats::start(USERS);
    let dir = tempfile::tempdir().unwrap();
    let password = secret_file(dir.path(), "password", "pw-of-the-gateway");
    let (log, _) = gateway_accepts_a_frame(
        &nats.url(),
        &["--nats-user", "gateway", "--nats-password-file", &password],
        &[],
        "debug",
    );
    assert!(log.contains("connected to NATS"), "{log}");
    assert!(!log.contains("pw-of-the-gateway"), "the password is in the log:\n{log}");
}

#[test]
fn a_wrong_password_ends_start_up_with_authorization_violation() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let nats = SecureNats::start(USERS);
    let line = role_fails_fast(
        &nats.url(),
        &["--nats-user", "gateway"],
        &[("TSBC_NATS_PASSWORD", "not-the-password")],
    );
    names(&line, "authorization violation");
    assert!(!line.contains("not-the-password"));
}

#[test]
fn a_password_from_the_environment_is_accepted() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let nats = SecureNats::start(USERS);
    gateway_accepts_a_frame(
        &nats.url(),
        &["--nats-user", "gateway"],
        &[("TSBC_NATS_PASSWORD", "pw-of-the-gateway")],
        "warn",
    );
}

#[test]
fn credentials_in_the_url_are_refused_at_start_up() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let nats = SecureNats::start(USERS);
    let url = nats.url().replace("nats://", "nats://gateway:pw-of-the-gateway@");
    let line = role_fails_fast(&url, &[], &[]);
    names(&line, "--nats-user and --nats-password-file");
    assert!(!line.contains("pw-of-the-gateway"), "the password is echoed: {line}");
}

const TOKEN: &str = "authorization {\n  token: \"token-of-the-service\"\n}";

#[test]
fn a_token_from_a_file_is_accepted() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let nats = SecureNats::start(TOKEN);
    let dir = tempfile::tempdir().unwrap();
    let token = secret_file(dir.path(), "token", "token-of-the-service");
    gateway_accepts_a_frame(&nats.url(), &["--nats-token-file", &token], &[], "warn");
}

#[test]
fn a_wrong_token_ends_start_up_with_authorization_violation() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let nats = SecureNats::start(TOKEN);
    let line = role_fails_fast(&nats.url(), &[], &[("TSBC_NATS_TOKEN", "a-guess")]);
    names(&line, "authorization violation");
}

#[test]
fn an_nkey_user_is_accepted_and_an_unknown_nkey_is_refused() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let (seed, public) = nkey_user();
    let nats = SecureNats::start(&format!(
        "authorization {{\n  users: [\n    {{ nkey: {public} }}\n  ]\n}}"
    ));
    let dir = tempfile::tempdir().unwrap();
    let seed_file = secret_file(dir.path(), "gateway.nk", &seed);
    let (log, _) = gateway_accepts_a_frame(&nats.url(), &["--nats-nkey", &seed_file], &[], "debug");
    assert!(!log.contains(&seed), "the seed is in the log");
    let (stranger, _) = nkey_user();
    let stranger_file = secret_file(dir.path(), "stranger.nk", &stranger);
    let line = role_fails_fast(&nats.url(), &["--nats-nkey", &stranger_file], &[]);
    names(&line, "authorization violation");
}

#[test]
fn tls_with_a_private_ca_and_a_client_certificate_is_accepted() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let pki = Pki::new();
    let nats = SecureNats::start(&pki.server_block());
    gateway_accepts_a_frame(
        &nats.url(),
        &[
            "--nats-tls-required",
            "--nats-tls-ca",
            &pki.arg("ca.pem"),
            "--nats-tls-cert",
            &pki.arg("client.pem"),
            "--nats-tls-key",
            &pki.arg("client-key.pem"),
        ],
        &[],
        "warn",
    );
}

#[test]
fn a_server_certificate_from_an_unknown_ca_ends_start_up() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let pki = Pki::new();
    let nats = SecureNats::start(&pki.server_block());
    let line = role_fails_fast(
        &nats.url(),
        &[
            "--nats-tls-ca",
            &pki.arg("stranger-ca.pem"),
            "--nats-tls-cert",
            &pki.arg("client.pem"),
            "--nats-tls-key",
            &pki.arg("client-key.pem"),
        ],
        &[],
    );
    names(&line, "unknown certificate authority");
}

#[test]
fn no_client_certificate_ends_start_up() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let pki = Pki::new();
    let nats = SecureNats::start(&pki.server_block());
    let line = role_fails_fast(&nats.url(), &["--nats-tls-ca", &pki.arg("ca.pem")], &[]);
    names(&line, "client certificate");
}

#[test]
fn a_client_certificate_from_another_ca_ends_start_up() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let pki = Pki::new();
    let nats = SecureNats::start(&pki.server_block());
    let line = role_fails_fast(
        &nats.url(),
        &[
            "--nats-tls-ca",
            &pki.arg("ca.pem"),
            "--nats-tls-cert",
            &pki.arg("stranger-client.pem"),
            "--nats-tls-key",
            &pki.arg("stranger-client-key.pem"),
        ],
        &[],
    );
    names(&line, "TLS handshake failed");
}

#[test]
fn an_unreachable_server_is_named_after_the_patience() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let mut nats = SecureNats::start(USERS);
    let url = nats.url();
    nats.kill();
    let started = Instant::now();
    let line = role_fails_fast(&url, &["--nats-connect-patience", "3"], &[]);
    names(&line, "connection refused");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "gave up before its patience"
    );
}

#[test]
fn least_permission_users_per_role_admit_commit_and_read_a_frame() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    // The documented users, and an observer with the rights an attack used against the shared inbox: it
    // may read the frames stream's subject and publish to `_INBOX.>` (as users of other request-reply
    // applications on the same NATS commonly may), which let it forge JetStream's PubAck to the gateway
    // while the roles' replies came to `_INBOX.` ("accepted" for a frame never stored).
    let accounts = ROLE_ACCOUNTS.replacen(
        "    users: [\n",
        "    users: [\n      { user: observer, password: \"pw-of-observer\", permissions: { publish: { allow: \
         [\"_INBOX.>\"] }, subscribe: { allow: [\"tsbc.frames.>\"] } } }\n",
        1,
    );
    assert_ne!(accounts, ROLE_ACCOUNTS);
    let nats = SecureNats::start(&accounts);
    let dir = tempfile::tempdir().unwrap();
    let runtime = common::service::runtime();
    let mut observed = runtime.block_on(async {
        let client = async_nats::ConnectOptions::with_user_and_password("observer".into(), "pw-of-observer".into())
            .connect(nats.url())
            .await
            .unwrap();
        client.subscribe("tsbc.frames.>").await.unwrap()
    });
    let worker_password = secret_file(dir.path(), "worker.pw", "pw-of-worker");
    let gateway_password = secret_file(dir.path(), "gateway.pw", "pw-of-gateway");
    // A dead-letter stream made by an earlier version (discard new), as a deployment upgraded under the
    // documented users has: full, it stopped every worker (an independent attack); the roles set it to
    // discard old, which the documented permissions must allow.
    let gateway_js = runtime.block_on(async {
        let client = async_nats::ConnectOptions::with_user_and_password("gateway".into(), "pw-of-gateway".into())
            .custom_inbox_prefix("tsbc.inbox")
            .connect(nats.url())
            .await
            .unwrap();
        let js = async_nats::jetstream::new(client);
        js.create_stream(async_nats::jetstream::stream::Config {
            name: "TSBC_DEAD".into(),
            subjects: vec!["tsbc.dead.>".into()],
            max_bytes: 1 << 20,
            discard: async_nats::jetstream::stream::DiscardPolicy::New,
            ..Default::default()
        })
        .await
        .unwrap();
        js
    });
    let args: Vec<String> = [
        "--keys",
        keys().to_str().unwrap(),
        "--nats",
        &nats.url(),
        "--role",
        "worker",
        "--nats-user",
        "worker",
        "--nats-password-file",
        &worker_password,
    ]
    .iter()
    .map(|a| (*a).to_owned())
    .collect();
    let mut worker = RoleProcess::start("worker", args, dir.path().join("worker.log"), None);
    let (gateway_log, frame) = gateway_accepts_a_frame(
        &nats.url(),
        &["--nats-user", "gateway", "--nats-password-file", &gateway_password],
        &[],
        "warn",
    );
    let discard = runtime.block_on(async {
        let mut dead = gateway_js.get_stream("TSBC_DEAD").await.unwrap();
        dead.info().await.unwrap().config.discard
    });
    assert_eq!(
        discard,
        async_nats::jetstream::stream::DiscardPolicy::Old,
        "the roles could not set the earlier dead-letter stream to drop its oldest letters"
    );
    // The gateway's publication, as the observer saw it: its PubAck is awaited under the service's inbox
    // (`tsbc.inbox.`), where no user may publish, not under `_INBOX.`, where the observer may.
    let published = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), observed.next()).await })
        .expect("the observer saw no frame within 10 s")
        .expect("the observer's subscription ended");
    let reply = published.reply.map(|r| r.to_string()).unwrap_or_default();
    assert!(
        reply.starts_with("tsbc.inbox."),
        "the gateway awaits its PubAck on {reply:?}, where a user with _INBOX.> rights can forge it"
    );
    // The reader's user: the announcement in TSBC_RESULTS and the stored frame in tsbc-results (replies
    // under the service's inbox, the only one its user may subscribe to).
    let stored = runtime.block_on(async {
        let client = async_nats::ConnectOptions::with_user_and_password("reader".into(), "pw-of-reader".into())
            .custom_inbox_prefix("tsbc.inbox")
            .connect(nats.url())
            .await
            .unwrap();
        let js = async_nats::jetstream::new(client);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let announced = match js.get_stream("TSBC_RESULTS").await {
                Ok(mut stream) => stream.info().await.map(|i| i.state.messages).unwrap_or(0),
                Err(_) => 0,
            };
            if announced == 1 {
                let results = js.get_key_value("tsbc-results").await.unwrap();
                break results.get("frames/51/0").await.unwrap();
            }
            worker.assert_running();
            assert!(
                Instant::now() < deadline,
                "no announcement within 30 s; server log:\n{}",
                nats.log()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    // The frame as sent, followed by the workers' 16-byte binding (tfhe_sbc_adapter::results::seal_stored_frame).
    assert_eq!(
        stored.as_deref().and_then(|v| v.strip_suffix(&v[frame.len()..])),
        Some(&frame[..]),
        "the stored frame differs from the one sent"
    );
    assert_eq!(stored.map(|v| v.len()), Some(frame.len() + 16));
    // A second gateway started now, with the gateway's user: the worker has device 51's mark, and must be
    // able to answer the new process's start-up sync through the documented permissions (an answer the
    // worker may not publish leaves the new gateway without the others' watermarks, so it takes a
    // rolled-back ledger as it finds it: an independent attack found the answers refused on `_INBOX.`).
    let second_log = dir.path().join("second-gateway.log");
    let second_args: Vec<String> = [
        "--keys",
        keys().to_str().unwrap(),
        "--nats",
        &nats.url(),
        "--role",
        "gateway",
        "--listen",
        "127.0.0.1:0",
        "--nats-user",
        "gateway",
        "--nats-password-file",
        &gateway_password,
    ]
    .iter()
    .map(|a| (*a).to_owned())
    .collect();
    let mut second = RoleProcess::start(
        "second gateway",
        second_args,
        second_log.clone(),
        Some(dir.path().join("second.address")),
    );
    second.address();
    second.interrupt();
    let second_gateway_log = std::fs::read_to_string(&second_log).unwrap();
    assert!(
        !second_gateway_log.contains("no other process of the service answered"),
        "the second gateway's watermark sync went unanswered under the documented permissions:\n{second_gateway_log}"
    );
    let summary = worker.interrupt();
    assert!(summary.contains("worker: 1 committed"), "{summary}");
    let worker_log = std::fs::read_to_string(dir.path().join("worker.log")).unwrap();
    for (name, log) in [
        ("worker", &worker_log),
        ("gateway", &gateway_log),
        ("second gateway", &second_gateway_log),
        ("nats-server", &nats.log()),
    ] {
        // nats-server logs "Publish Violation" / "Subscription Violation"; async-nats "permissions violation".
        assert!(
            !log.to_lowercase().contains("violation"),
            "{name} met a permissions violation:\n{log}"
        );
    }
}

#[test]
fn a_password_from_the_environment_is_warned_about_and_stays_in_proc_environ() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let nats = SecureNats::start(USERS);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let address_file = dir.path().join("address");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(["--keys", keys().to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(["--address-file", address_file.to_str().unwrap()])
        .args(["--nats", &nats.url(), "--role", "gateway", "--nats-user", "gateway"])
        .env("TSBC_NATS_PASSWORD", "pw-of-the-gateway")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !address_file.exists() && started.elapsed() < Duration::from_secs(60) && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let environ = std::fs::read(format!("/proc/{}/environ", child.id())).unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    let in_environ = environ
        .split(|&b| b == 0)
        .any(|entry| entry == b"TSBC_NATS_PASSWORD=pw-of-the-gateway");
    let warning = text.lines().find(|l| l.contains("TSBC_NATS_PASSWORD")).unwrap_or("");
    println!(
        "listening: {}; password in /proc/<pid>/environ: {in_environ}; warning: {warning}",
        address_file.exists()
    );
    assert!(address_file.exists(), "the gateway did not start: {text}");
    assert!(in_environ, "what docs/security.md says an environment secret exposes");
    assert!(
        warning.contains("/proc/") && warning.contains("--nats-password-file"),
        "no warning: {text}"
    );
    assert!(
        !text.contains("pw-of-the-gateway"),
        "the password is in the log:\n{text}"
    );
    let help = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert_eq!(help.matches("/proc/PID/environ").count(), 2, "--help: {help}");
}

#[test]
fn with_two_servers_the_error_names_each_ones_cause() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let refusing = SecureNats::start(USERS);
    let pki = Pki::new();
    let tls = SecureNats::start(&pki.server_block());
    // Killed after the others started, so that none of them takes its port.
    let mut down = SecureNats::start(USERS);
    down.kill();
    let (a, b) = (refusing.url(), down.url());
    let line = role_fails_fast(
        &format!("{a},{b}"),
        &["--nats-user", "gateway", "--nats-connect-patience", "3"],
        &[("TSBC_NATS_PASSWORD", "not-the-password")],
    );
    names(&line, &format!("{a}: authorization violation"));
    names(&line, &format!("{b}: connection refused"));

    // The TLS case: async-nats keeps only the last server's error, so a refused connection could hide
    // the unknown certificate authority.
    let a = tls.url();
    let line = role_fails_fast(
        &format!("{a},{b}"),
        &[
            "--nats-tls-ca",
            &pki.arg("stranger-ca.pem"),
            "--nats-tls-cert",
            &pki.arg("client.pem"),
            "--nats-tls-key",
            &pki.arg("client-key.pem"),
            "--nats-connect-patience",
            "3",
        ],
        &[],
    );
    names(&line, &format!("{a}: TLS handshake failed"));
    names(&line, "unknown certificate authority");
    names(&line, &format!("{b}: connection refused"));
}
