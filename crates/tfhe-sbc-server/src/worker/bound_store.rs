//! Storing a committed frame in the results bucket, bound as the frame its device's ledger admitted
//! ([`seal_stored_frame`]): created if the name is free; if a value is there already, the frame goes on
//! only when that value is nothing bound (junk, a purge) or this very frame (a redelivery). Another bound
//! frame under the name means the ledger admitted this one although the number was admitted before: the
//! devices bucket was deleted or rolled back by something other than the service. This frame is then
//! never stored (the caller dead-letters it) and the alarm `tsbc_ledger_rollback_total` counts it, so a
//! clone's refused frame published again cannot take the place of the one the device was answered for.

use super::{Retry, Worker};
use async_nats::jetstream::kv::CreateErrorKind;
use tfhe_sbc_adapter::results::{open_stored_frame, seal_stored_frame};

impl Worker {
    /// Stores `frame` of `device_id` under `name`; `Ok(Some(reason))` when another bound frame is there
    /// (the frame must be dead-lettered with that reason).
    pub(super) async fn store_bound(&self, name: &str, device_id: u64, frame: &[u8]) -> Result<Option<String>, Retry> {
        let key = self.mac_key(device_id)?;
        let value: bytes::Bytes = seal_stored_frame(key, device_id, frame)
            .ok_or_else(|| format!("{name}: too short to be a frame"))?
            .into();
        match self.handles.results.create(name, value.clone()).await {
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == CreateErrorKind::AlreadyExists => {}
            Err(e) => return Err(Retry::Transient(format!("cannot store {name}: {e}"))),
        }
        let existing = self.stored_value(name).await?;
        match existing.as_deref().and_then(|v| open_stored_frame(key, device_id, v)) {
            Some(stored) if stored == frame => Ok(None),
            Some(_) => {
                metrics::counter!("tsbc_ledger_rollback_total").increment(1);
                crate::log_rate::warn_limited!(
                    device = device_id,
                    "{name} holds another frame the service stored: the device's ledger admitted a number it had \
                     admitted before (the devices bucket deleted or rolled back by something other than this \
                     service?); this frame is not stored"
                );
                Ok(Some(format!(
                    "never acknowledged: another frame is stored under {name} (the device's ledger was deleted or \
                     rolled back)"
                )))
            }
            None => {
                self.handles
                    .results
                    .put(name, value)
                    .await
                    .map_err(|e| Retry::Transient(format!("cannot store {name}: {e}")))?;
                Ok(None)
            }
        }
    }

    /// Whether `frame` of `device_id` is the frame bound under `name`.
    pub(super) async fn is_stored(&self, name: &str, device_id: u64, frame: &[u8]) -> Result<bool, Retry> {
        let key = self.mac_key(device_id)?;
        let value = self.stored_value(name).await?;
        Ok(value.as_deref().and_then(|v| open_stored_frame(key, device_id, v)) == Some(frame))
    }

    /// The value under `name` in the results bucket, as stored (bound or not).
    async fn stored_value(&self, name: &str) -> Result<Option<bytes::Bytes>, Retry> {
        self.handles
            .results
            .get(name)
            .await
            .map_err(|e| Retry::Transient(format!("cannot read {name}: {e}")))
    }
}
