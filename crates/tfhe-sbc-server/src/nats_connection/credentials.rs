//! Where this process's NATS credentials come from: files (`--nats-password-file`, `--nats-token-file`,
//! `--nats-nkey`, `--nats-creds`) or the environment (`TSBC_NATS_PASSWORD`, `TSBC_NATS_TOKEN`), never the
//! command line or the URL; NATS's ways of authenticating ("Securing NATS",
//! <https://docs.nats.io/running-a-nats-service/configuration/securing_nats/auth_intro>).
//!
//! A secret read is held in a [`Zeroizing`] buffer that [`Secret`]'s `Debug` redacts. A secret given by the
//! environment also stays in the process's initial environment, readable in `/proc/<pid>/environ` by the same
//! user and root for the whole life of the process (the kernel keeps that copy; rewriting it is not
//! attempted): start-up warns when one is used, and the files are the way to prefer.

use super::error::NatsConnectError;
use super::options::NatsConnection;
use std::fmt;
use std::path::{Path, PathBuf};
use tracing::warn;
use zeroize::Zeroizing;

/// The environment variable a password may come from (with `--nats-user`, instead of a file).
pub const PASSWORD_ENV: &str = "TSBC_NATS_PASSWORD";
/// The environment variable a token may come from (instead of `--nats-token-file`).
pub const TOKEN_ENV: &str = "TSBC_NATS_TOKEN";

/// A secret read from a file or the environment: wiped from memory when dropped, never printed.
pub struct Secret(Zeroizing<String>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl Secret {
    /// The secret in `path`, without its trailing line break; `flag` names it in errors.
    pub(super) fn read(flag: &'static str, path: &Path) -> Result<Self, NatsConnectError> {
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
    pub(super) fn from_env(name: &'static str) -> Result<Option<Self>, NatsConnectError> {
        match std::env::var(name) {
            Ok(value) if value.is_empty() => Err(NatsConnectError::EmptyEnv(name)),
            Ok(value) => {
                warn!(
                    "the NATS secret comes from the environment variable {name}: it stays readable in \
                     /proc/{}/environ (by this user and root) while the process runs; prefer the file flag \
                     (--nats-password-file, --nats-token-file)",
                    std::process::id()
                );
                Ok(Some(Self(Zeroizing::new(value))))
            }
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(NatsConnectError::EmptyEnv(name)),
        }
    }

    /// A copy for async-nats (which holds its own; see the module's documentation).
    pub(super) fn exposed(&self) -> String {
        self.0.as_str().to_owned()
    }
}

/// The one way this process authenticates, with its secret loaded.
#[derive(Debug)]
pub(super) enum Authentication {
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

impl NatsConnection {
    /// The one way of authenticating the flags and environment give, its secret read.
    pub(super) fn authentication(&self) -> Result<Authentication, NatsConnectError> {
        let env_token = Secret::from_env(TOKEN_ENV)?;
        let others = self.nats_creds.is_some() || self.nats_nkey.is_some() || self.nats_user.is_some();
        if env_token.is_some() && (others || self.nats_token_file.is_some()) {
            return Err(NatsConnectError::AmbiguousToken(TOKEN_ENV));
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
                None => Secret::from_env(PASSWORD_ENV)?.ok_or(NatsConnectError::MissingPassword(PASSWORD_ENV))?,
            };
            return Ok(Authentication::UserPassword(user.clone(), password));
        }
        if let Some(path) = &self.nats_token_file {
            return Ok(Authentication::Token(Secret::read("--nats-token-file", path)?));
        }
        Ok(env_token.map_or(Authentication::Anonymous, Authentication::Token))
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
