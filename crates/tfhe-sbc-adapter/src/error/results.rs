//! [`ResultsError`]: what can go wrong reading the JetStream service's results store back (the stream of
//! announcements and the bucket of stored frames), a store the reader does not trust: NATS holds what the
//! workers wrote and whatever else a client of NATS wrote there.

use super::intake::IntakeError;
use core::fmt;

/// Why a committed message could not be read back from the results store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultsError {
    /// The results stream or bucket could not be read (the text says what was being done and NATS's
    /// reason).
    Store(String),
    /// An announcement on the results stream does not decode, or names chunks its stored frames are not
    /// (another writer on the results subjects).
    BadAnnouncement,
    /// An announcement names a device the reader's key set does not hold: its id.
    UnknownDevice(u64),
    /// An announced message's frame is not in the results bucket (deleted, or the bucket's limits dropped
    /// it): its key.
    MissingStoredFrame(String),
    /// A stored frame's binding does not verify ([`crate::results::open_stored_frame`]): no worker of this
    /// service stored it as the frame its device's ledger admitted (written into the bucket by someone
    /// else, or by a build before bindings): its key.
    UnboundStoredFrame(String),
    /// A stored frame failed the intake's verification again: it was changed in the store, or the reader's
    /// key set is not the workers'. The intake's error.
    StoredFrameRejected(IntakeError),
}

impl fmt::Display for ResultsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Store(what) => write!(f, "results store: {what}"),
            Self::BadAnnouncement => {
                f.write_str("an announcement on the results stream does not decode or does not name its stored frames")
            }
            Self::UnknownDevice(id) => write!(f, "an announcement names device {id}, which this key set does not hold"),
            Self::MissingStoredFrame(key) => write!(f, "the announced frame {key} is not in the results bucket"),
            Self::UnboundStoredFrame(key) => write!(
                f,
                "the stored frame {key} is not bound by the service as the frame its ledger admitted (written \
                 into the results bucket by something other than a worker)"
            ),
            Self::StoredFrameRejected(e) => write!(
                f,
                "a stored frame does not verify ({e}): the store was changed, or the reader's key set is not the \
                 workers'"
            ),
        }
    }
}

impl std::error::Error for ResultsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::StoredFrameRejected(e) => Some(e),
            Self::Store(_)
            | Self::BadAnnouncement
            | Self::UnknownDevice(_)
            | Self::MissingStoredFrame(_)
            | Self::UnboundStoredFrame(_) => None,
        }
    }
}
