//! What a failed connection to NATS means, in words: the causes NATS and TLS name (an authorization
//! violation, a failed NKey signature, an unknown certificate authority, a refused client certificate, a
//! refused connection), each with a hint, and whether start-up should stop or try again.
//!
//! With several servers (`--nats a,b,c`), async-nats tries them in a random order, returns at once on an
//! authorization or authentication error, and otherwise keeps only the last error: a TLS failure of one
//! server would be reported as another's refused connection, and retried as if the cluster were down.
//! [`every_cause`] tries each server alone and names every one's cause, the fatal ones first.

use super::credentials::Authentication;
use super::error::NatsConnectError;
use super::options::{DEFAULT_SUBSCRIPTION_CAPACITY, NatsConnection};
use async_nats::rustls;
use async_nats::{ConnectError, ConnectErrorKind, ServerAddr};

/// What a failed connection attempt means for start-up.
pub(super) enum Failure {
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
pub(super) fn classify(error: &ConnectError) -> Failure {
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

/// The cause of each of `servers` (`(address, name)`), each tried alone with this process's options: fatal
/// if any server's is (every server named, the fatal ones first), else unreachable (every server named); a
/// server that answers now counts as unreachable (the next attempt connects).
pub(super) async fn every_cause(
    connection: &NatsConnection,
    authentication: &Authentication,
    servers: &[(ServerAddr, String)],
) -> Result<Failure, NatsConnectError> {
    let mut fatal = Vec::new();
    let mut unreachable = Vec::new();
    for (address, name) in servers {
        let options = connection
            // A probe that makes no request: the inbox it would receive replies on does not matter.
            .options(authentication, DEFAULT_SUBSCRIPTION_CAPACITY, "_INBOX")
            .await?;
        match options.connect(address.clone()).await {
            Ok(client) => {
                drop(client);
                unreachable.push(format!("{name}: reachable now"));
            }
            Err(error) => match classify(&error) {
                Failure::Fatal(cause) => fatal.push(format!("{name}: {cause}")),
                Failure::Unreachable(cause) => unreachable.push(format!("{name}: {cause}")),
            },
        }
    }
    Ok(if fatal.is_empty() {
        Failure::Unreachable(unreachable.join("; "))
    } else {
        fatal.extend(unreachable);
        Failure::Fatal(fatal.join("; "))
    })
}
