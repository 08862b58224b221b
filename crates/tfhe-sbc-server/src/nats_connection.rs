//! How the JetStream roles connect to NATS: the credentials NATS deployments use (a `.creds` file with the
//! user's JWT and NKey, an NKey seed, a user and password, a token) and TLS with a private certificate
//! authority and client certificates, as NATS defines them ("Securing NATS",
//! <https://docs.nats.io/running-a-nats-service/configuration/securing_nats>; `docs/operations.md`, "A
//! hardened deployment").
//!
//! * [`credentials`]: where the secrets come from (files, or the environment, which stays readable in
//!   `/proc/<pid>/environ`), never from the command line or the URL (a URL with credentials is refused:
//!   async-nats would not send them and the server would answer "authorization violation"); async-nats
//!   keeps its own copy of what it sends, which this crate cannot wipe;
//! * [`failure`]: what a failed connection means, every server's cause named.
//!
//! The first connection is made without async-nats's retry on initial connect, which retries every error
//! forever and hides it: a refused authorization, an authentication failure or a TLS error ends start-up
//! at once with a one-line error naming it; an unreachable server (connection refused, timed out, an
//! unresolved name) is tried again for `--nats-connect-patience` seconds. Once connected, the client
//! reconnects without limit and logs every server or client error it meets.

mod credentials;
mod failure;

use async_nats::{ConnectOptions, Event, ServerAddr};
use credentials::{Authentication, PASSWORD_ENV, TOKEN_ENV};
use failure::{Failure, classify, every_cause};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;
use tracing::{info, warn};

/// How the roles authenticate to NATS and secure the connection (flattened into the command line).
#[derive(clap::Args, Debug, Clone)]
pub struct NatsConnection {
    /// With --nats: a NATS credentials file (`.creds`, the user's JWT and NKey seed, as `nsc` writes it).
    #[arg(long, value_name = "FILE", requires = "nats", conflicts_with_all = ["nats_nkey", "nats_user", "nats_token_file"])]
    pub nats_creds: Option<PathBuf>,
    /// With --nats: a file holding the NKey seed (`SU...`) of this role's NATS user (never the seed itself on
    /// the command line).
    #[arg(long, value_name = "FILE", requires = "nats", conflicts_with_all = ["nats_user", "nats_token_file"])]
    pub nats_nkey: Option<PathBuf>,
    /// With --nats: the NATS user name; its password from --nats-password-file or the environment variable
    /// TSBC_NATS_PASSWORD (prefer the file: a variable stays readable in /proc/PID/environ by this user
    /// and root while the process runs).
    #[arg(long, value_name = "NAME", requires = "nats", conflicts_with = "nats_token_file")]
    pub nats_user: Option<String>,
    /// With --nats-user: a file holding the user's password (one line).
    #[arg(long, value_name = "FILE", requires = "nats_user")]
    pub nats_password_file: Option<PathBuf>,
    /// With --nats: a file holding the NATS authentication token (or the environment variable
    /// TSBC_NATS_TOKEN, which stays readable in /proc/PID/environ while the process runs: prefer the
    /// file).
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub nats_token_file: Option<PathBuf>,
    /// With --nats: the certificate authority (PEM) that signed the NATS servers' certificates (a private
    /// CA); without it, the system's roots are used.
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub nats_tls_ca: Option<PathBuf>,
    /// With --nats: this role's client certificate (PEM), for servers that verify clients (`verify: true`).
    #[arg(long, value_name = "FILE", requires_all = ["nats", "nats_tls_key"])]
    pub nats_tls_cert: Option<PathBuf>,
    /// With --nats-tls-cert: the client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "nats_tls_cert")]
    pub nats_tls_key: Option<PathBuf>,
    /// With --nats: refuse to talk to a server without TLS (also implied by `tls://` URLs, --nats-tls-ca and
    /// --nats-tls-cert).
    #[arg(long, requires = "nats")]
    pub nats_tls_required: bool,
    /// With --nats: seconds to keep trying to reach an unreachable NATS server at start-up (connection
    /// refused, timed out) before exiting; authentication and TLS errors end start-up at once.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, requires = "nats")]
    pub nats_connect_patience: u64,
}

/// Why the roles could not connect to NATS.
#[derive(Debug)]
pub enum NatsConnectError {
    /// A `--nats` URL carries a user, password or token.
    CredentialsInUrl(String),
    /// A `--nats` URL that does not parse.
    BadUrl(String, std::io::Error),
    /// A secret file that cannot be read.
    ReadSecret {
        /// The flag that named it.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A secret file whose content is not a secret of the expected form.
    BadSecret {
        /// The flag that named it.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: &'static str,
    },
    /// An environment variable that is set but empty or not Unicode.
    EmptyEnv(&'static str),
    /// `--nats-user` without a password.
    MissingPassword,
    /// The token variable is set next to another way of authenticating.
    AmbiguousToken,
    /// The server refused the credentials, or TLS failed: no retry can help.
    Refused {
        /// The URL(s).
        urls: String,
        /// What failed, in words, with a hint.
        cause: String,
    },
    /// The server stayed unreachable for the whole patience.
    Unreachable {
        /// The URL(s).
        urls: String,
        /// The last error.
        cause: String,
        /// How long it was tried.
        patience: Duration,
    },
}

impl fmt::Display for NatsConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CredentialsInUrl(url) => write!(
                f,
                "--nats {url}: credentials in a NATS URL are not used (async-nats does not send them); give \
                 them with --nats-user and --nats-password-file (or --nats-token-file, --nats-nkey, --nats-creds)"
            ),
            Self::BadUrl(url, e) => write!(f, "--nats {url}: {e}"),
            Self::ReadSecret { flag, path, source } => write!(f, "cannot read {flag} {}: {source}", path.display()),
            Self::BadSecret { flag, path, why } => write!(f, "{flag} {}: {why}", path.display()),
            Self::EmptyEnv(name) => write!(f, "the environment variable {name} is set but empty or not UTF-8"),
            Self::MissingPassword => write!(
                f,
                "--nats-user needs a password: give --nats-password-file FILE or set {PASSWORD_ENV}"
            ),
            Self::AmbiguousToken => write!(
                f,
                "{TOKEN_ENV} is set and another NATS credential is given: use one way of authenticating"
            ),
            Self::Refused { urls, cause } => write!(f, "cannot connect to NATS at {urls}: {cause}"),
            Self::Unreachable { urls, cause, patience } => write!(
                f,
                "cannot connect to NATS at {urls}: {cause} (tried for {} s: is nats-server running and listening \
                 there?)",
                patience.as_secs()
            ),
        }
    }
}

impl std::error::Error for NatsConnectError {}

impl NatsConnection {
    /// The options of one connection attempt: credentials, TLS, no retry of the first connection, then
    /// reconnection without limit, every server and client error logged.
    async fn options(&self, authentication: &Authentication) -> Result<ConnectOptions, NatsConnectError> {
        let mut options = ConnectOptions::new()
            .connection_timeout(Duration::from_secs(5))
            .max_reconnects(None)
            .event_callback(|event| async move { log_event(&event) });
        options = match authentication {
            Authentication::Anonymous => options,
            Authentication::CredentialsFile(path) => {
                options
                    .credentials_file(path)
                    .await
                    .map_err(|e| NatsConnectError::BadSecret {
                        flag: "--nats-creds",
                        path: path.clone(),
                        why: if e.kind() == std::io::ErrorKind::NotFound {
                            "no such file"
                        } else {
                            "it is not a readable NATS credentials file (a user JWT and NKey seed)"
                        },
                    })?
            }
            Authentication::NKey(seed) => options.nkey(seed.exposed()),
            Authentication::UserPassword(user, password) => options.user_and_password(user.clone(), password.exposed()),
            Authentication::Token(token) => options.token(token.exposed()),
        };
        if let Some(ca) = &self.nats_tls_ca {
            options = options.add_root_certificates(ca.clone());
        }
        if let (Some(cert), Some(key)) = (&self.nats_tls_cert, &self.nats_tls_key) {
            options = options.add_client_certificate(cert.clone(), key.clone());
        }
        // A CA or a client certificate means TLS is wanted: required, so that a peer on the path cannot
        // answer in plain text and receive the credentials.
        let tls = self.nats_tls_required || self.nats_tls_ca.is_some() || self.nats_tls_cert.is_some();
        Ok(options.require_tls(tls))
    }

    /// Connects to the NATS server(s) `urls` (comma-separated): fails at once, with the cause named, on a
    /// refused authorization, an authentication or a TLS error; tries an unreachable server again for
    /// `--nats-connect-patience` seconds.
    pub async fn connect(&self, urls: &str) -> Result<async_nats::Client, NatsConnectError> {
        let mut servers = Vec::new();
        for url in urls.split(',').map(str::trim) {
            // A URL that does not parse is named without what may be credentials (anything before an '@').
            let named = match url.rsplit_once('@') {
                Some((_, host)) => format!("***@{host}"),
                None => url.to_owned(),
            };
            let address: ServerAddr = url.parse().map_err(|e| NatsConnectError::BadUrl(named.clone(), e))?;
            if address.username().is_some() || address.password().is_some() {
                return Err(NatsConnectError::CredentialsInUrl(format!(
                    "{}://***@{}:{}",
                    address.scheme(),
                    address.host(),
                    address.port()
                )));
            }
            servers.push((address, named));
        }
        let addresses: Vec<ServerAddr> = servers.iter().map(|(address, _)| address.clone()).collect();
        let authentication = self.authentication()?;
        let patience = Duration::from_secs(self.nats_connect_patience);
        let deadline = tokio::time::Instant::now() + patience;
        let mut pause = Duration::from_millis(250);
        loop {
            let options = self.options(&authentication).await?;
            let error = match options.connect(addresses.clone()).await {
                Ok(client) => {
                    info!("connected to NATS at {urls}");
                    return Ok(client);
                }
                Err(error) => error,
            };
            let failure = match servers.as_slice() {
                [_] => classify(&error),
                _ => every_cause(self, &authentication, &servers).await?,
            };
            match failure {
                Failure::Fatal(cause) => {
                    return Err(NatsConnectError::Refused {
                        urls: urls.to_owned(),
                        cause,
                    });
                }
                Failure::Unreachable(cause) if tokio::time::Instant::now() < deadline => {
                    let wait = pause.min(deadline - tokio::time::Instant::now());
                    warn!("NATS at {urls} unreachable ({cause}); trying again in {wait:?}");
                    tokio::time::sleep(wait).await;
                    pause = (pause * 2).min(Duration::from_secs(4));
                }
                Failure::Unreachable(cause) => {
                    return Err(NatsConnectError::Unreachable {
                        urls: urls.to_owned(),
                        cause,
                        patience,
                    });
                }
            }
        }
    }
}

/// Logs a connection event: errors and disconnections as warnings (a refused permission shows here as a
/// server error naming the subject), the rest as information.
fn log_event(event: &Event) {
    match event {
        Event::Connected => info!("NATS connection: {event}"),
        Event::Disconnected | Event::LameDuckMode | Event::Draining | Event::Closed => {
            warn!("NATS connection: {event}")
        }
        Event::SlowConsumer(_) | Event::ServerError(_) | Event::ClientError(_) => warn!("NATS connection: {event}"),
    }
}
