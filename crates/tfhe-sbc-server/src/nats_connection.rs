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
mod error;
mod failure;
mod options;

use async_nats::{ConnectOptions, Event, ServerAddr};
use credentials::Authentication;
pub use error::NatsConnectError;
use failure::{Failure, classify, every_cause};
use options::DEFAULT_SUBSCRIPTION_CAPACITY;
pub use options::NatsConnection;
use std::time::Duration;
use tracing::{info, warn};

/// The subject prefix under which the service's connections receive their replies: `<prefix>.inbox`
/// (`tsbc.inbox` by default), inside the service's own subjects ([`NatsConnection::connect`]).
pub fn inbox_prefix(prefix: &str) -> String {
    format!("{prefix}.inbox")
}

impl NatsConnection {
    /// The options of one connection attempt: credentials, TLS, no retry of the first connection, then
    /// reconnection without limit, every server and client error logged.
    async fn options(
        &self,
        authentication: &Authentication,
        subscription_capacity: usize,
        inbox_prefix: &str,
    ) -> Result<ConnectOptions, NatsConnectError> {
        let mut options = ConnectOptions::new()
            .subscription_capacity(subscription_capacity)
            .custom_inbox_prefix(inbox_prefix)
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
    ///
    /// Every reply this connection waits for (JetStream's acknowledgements of publications, its API's
    /// answers, the messages a pull consumer delivers) comes to a subject under `inbox_prefix` (the
    /// service's `<prefix>.inbox`, [`inbox_prefix`]), not under NATS's shared `_INBOX.`: such a reply is
    /// not authenticated, so whoever may publish to the inbox can forge it (a PubAck for a frame never
    /// stored: "accepted", the frame lost). Users of other request-reply applications on the same NATS
    /// commonly may publish to `_INBOX.>`; no user may publish under the service's inbox
    /// (`docs/operations.md`).
    pub async fn connect(&self, urls: &str, inbox_prefix: &str) -> Result<async_nats::Client, NatsConnectError> {
        self.connect_with(urls, DEFAULT_SUBSCRIPTION_CAPACITY, inbox_prefix)
            .await
    }

    /// [`NatsConnection::connect`] with at most `subscription_capacity` messages waiting in each of the
    /// connection's subscriptions (beyond it NATS drops them for this client: a slow consumer).
    pub async fn connect_with(
        &self,
        urls: &str,
        subscription_capacity: usize,
        inbox_prefix: &str,
    ) -> Result<async_nats::Client, NatsConnectError> {
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
            let options = self
                .options(&authentication, subscription_capacity, inbox_prefix)
                .await?;
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
        Event::SlowConsumer(_) => slow_consumer(event),
        Event::ServerError(_) | Event::ClientError(_) => warn!("NATS connection: {event}"),
    }
}

/// A message NATS dropped for a full subscription (one event per message): logged at most once every 10 s,
/// with the count since, so that a flood on a subject cannot fill the disk with log lines.
fn slow_consumer(event: &Event) {
    static SINCE: std::sync::Mutex<(Option<std::time::Instant>, u64)> = std::sync::Mutex::new((None, 0));
    let mut since = SINCE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    since.1 += 1;
    if since.0.is_none_or(|at| at.elapsed() >= Duration::from_secs(10)) {
        warn!(
            dropped = since.1,
            "NATS connection: {event} (messages dropped for full subscriptions since the last such line)"
        );
        *since = (Some(std::time::Instant::now()), 0);
    }
}
