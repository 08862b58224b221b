//! The public outputs of the checks: whether secrets reached them, then declassified and digested.

use crate::check::Outcome;
use crate::digest::{Digest, Word};
use crate::valgrind::{declassify, is_tainted};

/// `Some(true)` when every output was tainted, `None` when not under valgrind.
pub(crate) fn all_tainted(outputs: &[Option<bool>]) -> Option<bool> {
    outputs.iter().try_fold(true, |acc, t| t.map(|t| acc && t))
}

/// The outcome of a check whose outputs had the taints `taint` and went into `digest`.
pub(crate) fn outcome(taint: &[Option<bool>], digest: &Digest) -> Outcome {
    Outcome {
        tainted: all_tainted(taint),
        digest: digest.finish(),
    }
}

/// A public output: whether `words` carried secret bits, then declassified and absorbed by `digest`.
pub(crate) fn publish<W: Word>(words: &mut [W], digest: &mut Digest) -> Option<bool> {
    let tainted = is_tainted(words);
    declassify(words);
    digest.update_words(words);
    tainted
}

/// A frame of `len` bytes at the start of `buffer`: whether it carried secret bits, then the whole buffer
/// declassified and the frame absorbed by `digest`.
pub(crate) fn publish_frame(buffer: &mut [u8], len: usize, digest: &mut Digest) -> Option<bool> {
    let tainted = is_tainted(&buffer[..len]);
    declassify(buffer);
    digest.update(&buffer[..len]);
    tainted
}
