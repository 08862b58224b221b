//! Why a file of a key set was refused: [`KeySetError`] (defined with the crate's other shared errors, so
//! that the key store's records in `interop` return it too) and what to tell the operator to do.

pub(crate) use crate::error::key_set::bad;
pub use crate::error::key_set::{KeySetError, POINT_AT_INIT_DIR, RESTORE};
