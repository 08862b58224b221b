//! The adapter's error types that more than one module returns, below every module that returns them:
//! [`IntakeError`] (bytes from a device), [`ResultsError`] (the JetStream service's results store, read
//! back) and, with feature `tfhe`, [`KeySetError`] (key-set files and key store records, re-exported as
//! `key_set::KeySetError`).

mod intake;
#[cfg(feature = "tfhe")]
pub(crate) mod key_set;
mod results;

pub use intake::{IntakeError, MessageField};
#[cfg(feature = "tfhe")]
pub use key_set::KeySetError;
pub use results::ResultsError;
