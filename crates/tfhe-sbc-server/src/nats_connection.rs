//! How the JetStream roles connect to NATS: the credentials NATS deployments use (a `.creds` file with the
//! user's JWT and NKey, an NKey seed, a user and password, a token) and TLS with a private certificate
//! authority and client certificates, as NATS defines them ("Securing NATS",
//! <https://docs.nats.io/running-a-nats-service/configuration/securing_nats>; `docs/operations.md`, "A
//! hardened deployment").
//!
//! Secrets come from files or the environment, never from the command line or the URL (a URL with
//! credentials is refused: async-nats would not send them and the server would answer "authorization
//! violation"). They are held in [`Zeroizing`] buffers, which [`Secret`]'s `Debug` redacts; async-nats keeps its
//! own copy of what it sends, which this crate cannot wipe.
//!
//! The first connection is made without async-nats's retry on initial connect, which retries every error
//! forever and hides it: a refused authorization, an authentication failure or a TLS error ends start-up
//! at once with a one-line error naming it; an unreachable server (connection refused, timed out, an
//! unresolved name) is tried again for `--nats-connect-patience` seconds. Once connected, the client
//! reconnects without limit and logs every server or client error it meets.

use async_nats::rustls;
use async_nats::{ConnectError, ConnectErrorKind, ConnectOptions, Event, ServerAddr};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tracing::{info, warn};
use zeroize::Zeroizing;

/// The environment variable a password may come from (with `--nats-user`, instead of a file).
pub const PASSWORD_ENV: &str = "TSBC_NATS_PASSWORD";
/// The environment variable a token may come from (instead of `--nats-token-file`).
pub const TOKEN_ENV: &str = "TSBC_NATS_TOKEN";

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
    /// TSBC_NATS_PASSWORD.
    #[arg(long, value_name = "NAME", requires = "nats", conflicts_with = "nats_token_file")]
    pub nats_user: Option<String>,
    /// With --nats-user: a file holding the user's password (one line).
    #[arg(long, value_name = "FILE", requires = "nats_user")]
    pub nats_password_file: Option<PathBuf>,
    /// With --nats: a file holding the NATS authentication token (or the environment variable
    /// TSBC_NATS_TOKEN).
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

/// A secret read from a file or the environment: wiped from memory when dropped, never printed.
pub struct Secret(Zeroizing<String>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl Secret {
    /// The secret in `path`, without its trailing line break; `flag` names it in errors.
    fn read(flag: &'static str, path: &Path) -> Result<Self, NatsConnectError> {
        let bytes = Zeroizing::new(std::fs::read(path).map_err(|source| NatsConnectError::ReadSecret {
            flag,
            path: path.to_owned(),
            source,
        })?);
        let text = std::str::from_utf8(&bytes).map_err(|_| NatsConnectError::BadSecret {
            flag,
            path: path.to_owned(),
            why: "it is not UTF-8 text",
        })?;
        let secret = text.trim_end_matches(['\n', '\r']);
        if secret.is_empty() || secret.contains(['\n', '\r']) {
            return Err(NatsConnectError::BadSecret {
                flag,
                path: path.to_owned(),
                why: "it must hold the secret on one line",
            });
        }
        Ok(Self(Zeroizing::new(secret.to_owned())))
    }

    /// The secret in the environment variable `name`, if set.
    fn from_env(name: &'static str) -> Result<Option<Self>, NatsConnectError> {
        match std::env::var(name) {
            Ok(value) if value.is_empty() => Err(NatsConnectError::EmptyEnv(name)),
            Ok(value) => Ok(Some(Self(Zeroizing::new(value)))),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(NatsConnectError::EmptyEnv(name)),
        }
    }

    /// A copy for async-nats (which holds its own; see the module's documentation).
    fn exposed(&self) -> String {
        self.0.as_str().to_owned()
    }
}

/// The one way this process authenticates, with its secret loaded.
#[derive(Debug)]
enum Authentication {
    /// No credentials (a server without authorization).
    Anonymous,
    /// A `.creds` file (read by async-nats).
    CredentialsFile(PathBuf),
    /// An NKey user's seed.
    NKey(Secret),
    /// A user and password.
    UserPassword(String, Secret),
    /// A token.
    Token(Secret),
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

/// What a failed connection attempt means for start-up.
enum Failure {
    /// Fatal: say this and stop.
    Fatal(String),
    /// The server may come up: say this and try again.
    Unreachable(String),
}

/// The TLS error inside a connection error, if there is one.
fn tls_error(error: &ConnectError) -> Option<&rustls::Error> {
    let source = std::error::Error::source(error)?;
    let io = source.downcast_ref::<std::io::Error>()?;
    io.get_ref()?.downcast_ref::<rustls::Error>()
}

/// A hint for a TLS error: what is usually wrong.
fn tls_hint(error: &rustls::Error) -> &'static str {
    use rustls::{AlertDescription, CertificateError};
    if let rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) = error {
        return "unknown certificate authority: the server's certificate is not signed by a CA this process \
                trusts (give the CA with --nats-tls-ca)";
    }
    if let rustls::Error::InvalidCertificate(_) = error {
        return "the server's certificate was refused (is it issued for the host in --nats, and still valid?)";
    }
    if let rustls::Error::AlertReceived(AlertDescription::CertificateRequired) = error {
        return "the server requires a client certificate (give --nats-tls-cert and --nats-tls-key)";
    }
    if let rustls::Error::AlertReceived(_) = error {
        return "the server refused the TLS handshake (is the client certificate signed by the CA the server \
                verifies with?)";
    }
    "TLS failed"
}

/// What `error` means: the causes NATS and TLS name, with a hint.
fn classify(error: &ConnectError) -> Failure {
    match error.kind() {
        ConnectErrorKind::AuthorizationViolation => Failure::Fatal(format!(
            "authorization violation: the server refused this role's credentials (check --nats-user and its \
             password, --nats-token-file, --nats-nkey or --nats-creds) [{error}]"
        )),
        ConnectErrorKind::Authentication => Failure::Fatal(format!(
            "authentication failed: the NKey seed or .creds file cannot sign the server's nonce [{error}]"
        )),
        ConnectErrorKind::Tls => Failure::Fatal(format!(
            "TLS configuration error (--nats-tls-ca, --nats-tls-cert, --nats-tls-key) [{error}]"
        )),
        ConnectErrorKind::ServerParse => Failure::Fatal(format!("{error}")),
        ConnectErrorKind::MaxReconnects => Failure::Fatal(format!("{error}")),
        ConnectErrorKind::Io => match tls_error(error) {
            Some(tls) => Failure::Fatal(format!("TLS handshake failed: {tls}: {}", tls_hint(tls))),
            None => {
                let refused = std::error::Error::source(error)
                    .and_then(|s| s.downcast_ref::<std::io::Error>())
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
                if refused {
                    Failure::Unreachable("connection refused".to_owned())
                } else {
                    Failure::Unreachable(format!("{error}"))
                }
            }
        },
        ConnectErrorKind::TimedOut | ConnectErrorKind::Dns => Failure::Unreachable(format!("{error}")),
    }
}

impl NatsConnection {
    /// The one way of authenticating the flags and environment give, its secret read.
    fn authentication(&self) -> Result<Authentication, NatsConnectError> {
        let env_token = Secret::from_env(TOKEN_ENV)?;
        let others = self.nats_creds.is_some() || self.nats_nkey.is_some() || self.nats_user.is_some();
        if env_token.is_some() && (others || self.nats_token_file.is_some()) {
            return Err(NatsConnectError::AmbiguousToken);
        }
        if let Some(path) = &self.nats_creds {
            return Ok(Authentication::CredentialsFile(path.clone()));
        }
        if let Some(path) = &self.nats_nkey {
            let seed = Secret::read("--nats-nkey", path)?;
            if !seed.0.starts_with("SU") {
                return Err(NatsConnectError::BadSecret {
                    flag: "--nats-nkey",
                    path: path.clone(),
                    why: "it must hold an NKey user seed (SU...)",
                });
            }
            return Ok(Authentication::NKey(seed));
        }
        if let Some(user) = &self.nats_user {
            let password = match &self.nats_password_file {
                Some(path) => Secret::read("--nats-password-file", path)?,
                None => Secret::from_env(PASSWORD_ENV)?.ok_or(NatsConnectError::MissingPassword)?,
            };
            return Ok(Authentication::UserPassword(user.clone(), password));
        }
        if let Some(path) = &self.nats_token_file {
            return Ok(Authentication::Token(Secret::read("--nats-token-file", path)?));
        }
        Ok(env_token.map_or(Authentication::Anonymous, Authentication::Token))
    }

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
        let mut addresses = Vec::new();
        for url in urls.split(',').map(str::trim) {
            // A URL that does not parse is named without what may be credentials (anything before an '@').
            let named = match url.rsplit_once('@') {
                Some((_, host)) => format!("***@{host}"),
                None => url.to_owned(),
            };
            let address: ServerAddr = url.parse().map_err(|e| NatsConnectError::BadUrl(named, e))?;
            if address.username().is_some() || address.password().is_some() {
                return Err(NatsConnectError::CredentialsInUrl(format!(
                    "{}://***@{}:{}",
                    address.scheme(),
                    address.host(),
                    address.port()
                )));
            }
            addresses.push(address);
        }
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
            match classify(&error) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_never_printed() {
        let secret = Secret(Zeroizing::new("hunter2".to_owned()));
        assert!(!format!("{secret:?}").contains("hunter2"));
        let auth = Authentication::UserPassword("svc".to_owned(), secret);
        assert!(!format!("{auth:?}").contains("hunter2"));
    }

    #[test]
    fn a_secret_file_holds_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("password");
        std::fs::write(&path, "pw one\n").unwrap();
        assert_eq!(
            Secret::read("--nats-password-file", &path).unwrap().0.as_str(),
            "pw one"
        );
        std::fs::write(&path, "pw\ntwo\n").unwrap();
        assert!(Secret::read("--nats-password-file", &path).is_err());
        std::fs::write(&path, "\n").unwrap();
        assert!(Secret::read("--nats-password-file", &path).is_err());
    }
}
