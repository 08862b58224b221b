//! Why the JetStream roles could not connect to NATS, in words that say what to fix.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

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
    /// `--nats-user` without a password; the environment variable that could have given it.
    MissingPassword(&'static str),
    /// The token variable (named) is set next to another way of authenticating.
    AmbiguousToken(&'static str),
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
            Self::MissingPassword(password_env) => write!(
                f,
                "--nats-user needs a password: give --nats-password-file FILE or set {password_env}"
            ),
            Self::AmbiguousToken(token_env) => write!(
                f,
                "{token_env} is set and another NATS credential is given: use one way of authenticating"
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
