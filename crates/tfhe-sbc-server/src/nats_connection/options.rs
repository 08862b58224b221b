//! How the roles authenticate to NATS and secure the connection: the command-line flags (clap), flattened
//! into the server's command line.

use std::path::PathBuf;

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

/// async-nats's own default: messages waiting in one subscription of a connection.
pub const DEFAULT_SUBSCRIPTION_CAPACITY: usize = 65_536;
