//! The gateway's look-up of the results bucket for a frame its ledger would admit although the frame is no
//! newer than the device's last one, or whose device has no ledger: only a value a worker bound
//! ([`open_stored_frame`]) is evidence, so NATS contents decide nothing by themselves.

use super::{Gateway, Refusal};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::commit::ChunkId;
use tfhe_sbc_adapter::results::{frame_key, open_stored_frame};

/// What the results bucket holds under a frame's name, as a worker bound it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StoredCopy {
    /// This very frame: committed before, "duplicate".
    This,
    /// Another frame under the same number: the ledger forgot an admitted number (rolled back or deleted),
    /// and the frame comes from a device whose counter went back: "too old".
    Another,
    /// Nothing bound.
    None,
}

/// "Too old" for a frame whose number another stored frame holds, above `highest` (the device's newest
/// number as far as the gateway knows).
fn another_frame(device_id: u64, chunk: ChunkId, highest: Option<u64>) -> Refusal {
    Refusal::Intake(IntakeError::TooOld {
        device_id,
        sequence: chunk.sequence,
        lowest_acceptable: highest
            .map_or(chunk.sequence, |h| h.max(chunk.sequence))
            .saturating_add(1),
    })
}

impl Gateway {
    /// The answer the results bucket decides for a frame [`Gateway::stored_copy`] looks up: `true` (this very
    /// frame is stored: "duplicate"), `false` (nothing bound: the ledger decides), or the refusal ("too old"
    /// for another bound frame, with the number after `highest`, the device's newest as far as the gateway
    /// knows; "busy" when the bucket cannot be read).
    pub(super) async fn stored_answer(
        &self,
        frame: &[u8],
        device_id: u64,
        chunk: ChunkId,
        highest: Option<u64>,
        no_ledger: bool,
    ) -> Result<bool, Refusal> {
        match self.stored_copy(frame, device_id, chunk, no_ledger).await? {
            StoredCopy::This => Ok(true),
            StoredCopy::Another => Err(another_frame(device_id, chunk, highest)),
            StoredCopy::None => Ok(false),
        }
    }

    /// A frame the ledger would admit although it is no newer than the device's last one, or whose device
    /// has no ledger at all (`no_ledger`: no entry, or one deleted or purged): the results bucket is asked
    /// which frame a worker stored under its name, if any ([`StoredCopy`]; only a bound value counts). A
    /// ledger admits each number once, so a stored frame the ledger does not know means the entry was
    /// deleted or an older one written back (NATS is reachable by others?): this very frame is a replay,
    /// answered "duplicate" (it is committed), never accepted again; another frame comes from a device whose
    /// counter went back (a clone), answered "too old", never stored in place of the committed one. The
    /// alarm `tsbc_ledger_rollback_total` counts both. Only frames sent out of order or a device's first
    /// frame pay this read. `Err`: the bucket cannot be read.
    async fn stored_copy(
        &self,
        frame: &[u8],
        device_id: u64,
        chunk: ChunkId,
        no_ledger: bool,
    ) -> Result<StoredCopy, Refusal> {
        let name = frame_key(device_id, chunk.first_sequence, chunk.chunk_index);
        match self.handles.results.get(&name).await {
            Ok(Some(stored)) => {
                // Bound by a worker (the frame a ledger admitted), not merely authentic: a value anyone put
                // there decides nothing.
                let copy = match open_stored_frame(self.mac_key(device_id)?, device_id, &stored) {
                    Some(bound) if bound == frame => StoredCopy::This,
                    Some(_) => StoredCopy::Another,
                    None => return Ok(StoredCopy::None),
                };
                metrics::counter!("tsbc_ledger_rollback_total").increment(1);
                crate::log_rate::warn_limited!(
                    device = device_id,
                    sequence = chunk.sequence,
                    "{} under a number the device's ledger does not hold ({}): the devices bucket was purged or \
                     rolled back by something other than this service; answered {}",
                    if copy == StoredCopy::This {
                        "a stored frame sent again"
                    } else {
                        "another frame stored"
                    },
                    if no_ledger { "no ledger entry" } else { "an older entry" },
                    if copy == StoredCopy::This {
                        "duplicate"
                    } else {
                        "too old"
                    }
                );
                Ok(copy)
            }
            Ok(None) => Ok(StoredCopy::None),
            Err(e) => {
                crate::log_rate::warn_limited!(device = device_id, "cannot read {name}, answering busy: {e}");
                Err(Refusal::Busy)
            }
        }
    }
}
