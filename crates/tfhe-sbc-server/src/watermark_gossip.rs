//! The service's processes tell each other their ledger watermarks ([`crate::ledger_watermark`]), so that a
//! gateway or worker that never read a device's ledger - a second gateway, one added later, one restarted
//! without its `--watermark-file` - still refuses that ledger rolled back below what another process saw.
//!
//! A **mark** says "device `d`'s ledger was at least at generation `g` with highest number `h`, and its entry
//! at `g` had fingerprint `f`". Each process publishes the marks that moved every 100 ms, and all of them
//! every 10 s, on `<prefix>.watermark.marks`; every process merges what it hears into its watermarks (the
//! later of the two). A mark is only ever a lower bound, so an old one heard again changes nothing and
//! needs no freshness: what it needs is authenticity, since NATS is a store and a bus the service does not
//! trust (docs/security.md). Each mark carries a 16-byte tag under the device's MAC key, which every
//! gateway and worker holds (the key store's), over a domain, the device id and the mark:
//!
//! ```text
//! record (49 bytes): device id u64 LE | generation u64 LE | has a number u8 (0 or 1) | highest u64 LE |
//!                    fingerprint u64 LE (0: not known) |
//!                    tag (16 bytes): MAC of "TSWM watermark1\0" | the 33 bytes before it
//! message: 1 to 1,024 records, nothing else
//! ```
//!
//! **Start-up sync.** Before it serves, a process asks on `<prefix>.watermark.sync` with a reply subject of
//! its own, `<prefix>.watermark.reply.<token>`, and a request tagged under a device's MAC key (`anchor device id u64 LE | tag (16
//! bytes): MAC of "TSWS sync v1\0\0\0\0" | anchor id | the reply subject`), the devices taken in turn from
//! one drawn at random, again every 250 ms until the first answer bound to one of its requests (1 s at
//! most), then 200 ms more. Each running process answers such a request at once, in a task of its own, with
//! all its marks, to that reply subject only, each message followed by the request's anchor id (u64 LE) and
//! a tag under the anchor's key over `"TSWS answer v1\0\0" | anchor | reply length u64 LE | reply subject |
//! records`: marks sniffed earlier and sent by a client of NATS are merged (they only raise a watermark to
//! where a ledger was) but end no wait: each reply subject once, at most 5 a second per anchor device. A
//! request that does not authenticate, or names another reply subject, is dropped and counted
//! (`tsbc_watermark_sync_refused_total`). So a client of NATS can neither delay the answers to a new
//! process (an independent attack on the first version had them deferred with one empty request) nor
//! make the processes send their marks; a holder of one device's key uses up that device's answers only
//! (a second attack used up a single budget with one stolen key); and junk published to the new process's
//! reply subject is not an answer (the same attack had it stop waiting on one).
//!
//! A mark under a generation the hearer knows another fingerprint of is a fork (two chains of writes from
//! an entry written back, [`crate::ledger_watermark::Mark::fingerprint`]): both processes then refuse the
//! device and raise `tsbc_ledger_fork_total`.
//!
//! A record that does not verify under its device's key, or in a message that is not a whole number of
//! records, is dropped and counted (`tsbc_watermark_refused_total`, one warning at most every 10 s). A
//! record of a device this process does not serve (another key set, served by other processes of the
//! deployment) is skipped and counted apart (`tsbc_watermark_other_devices_total`), without a warning: a client of NATS can delay or drop marks but not raise a watermark, which would only make the
//! roles answer "busy". The exchange has a NATS connection of its own whose subscriptions hold at most 64
//! messages (a flood past that is dropped by NATS for this process, and the 10 s publications send lost
//! marks again).
//!
//! What it does not do: a process that starts while no process that saw a device's newer ledger runs (all
//! of them restarted without their files) has nothing to hear; a rollback written between a process's
//! write and the next 100 ms publication reaches the others' watermarks late (docs/security.md); and a
//! flood of marks on the bus can make NATS drop genuine ones for a while (until the next 10 s publication).

use crate::ledger_watermark::{LedgerWatermark, Mark};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::intake::Intake;
use tfhe_sbc_device::frame::mac::{MacKey, TAG_BYTES};
use tracing::{debug, warn};

/// How long a process starting up waits for a first answer to its sync request before it serves devices.
pub const SYNC_WAIT: Duration = Duration::from_secs(1);

/// How long it waits for the other processes' answers after the first one.
const SYNC_GRACE: Duration = Duration::from_millis(200);

/// Authenticated sync requests under one anchor device a process answers in one second at most (more are
/// dropped and counted).
const SYNC_ANSWERS_PER_SECOND: usize = 5;

/// Messages waiting in each of the exchange's subscriptions at most (beyond them NATS drops them for this
/// process, a slow consumer; [`FULL_EVERY`] sends them again): with NATS's 1 MiB payload limit, 64 MiB.
pub const SUBSCRIPTION_CAPACITY: usize = 64;

/// How often the marks that moved are published.
const PUBLISH_EVERY: Duration = Duration::from_millis(100);

/// How often all marks are published, whether they moved or not.
const FULL_EVERY: Duration = Duration::from_secs(10);

/// The domain of a sync request's tag.
const SYNC_DOMAIN: &[u8; 16] = b"TSWS sync v1\0\0\0\0";
/// The domain of the tag that binds an answer to the sync request it answers.
const ANSWER_DOMAIN: &[u8; 16] = b"TSWS answer v1\0\0";
/// What follows an answer's records: the anchor device of the request it answers (u64 LE) and a tag under
/// that device's key over [`ANSWER_DOMAIN`], the anchor, the request's reply subject and the records.
const ANSWER_TRAILER_BYTES: usize = 8 + TAG_BYTES;

/// The most records in one message (49 KiB: far below NATS's 1 MiB default payload limit).
pub const RECORDS_PER_MESSAGE: usize = 1024;

/// The domain of a mark's tag: no frame's ("TSBC"), ledger's ("TSLG"), stored frame's ("TSST") or
/// announcement's ("TSAN").
const MARK_DOMAIN: &[u8; 16] = b"TSWM watermark1\0";

/// The bytes of a record before its tag.
const BODY_BYTES: usize = 8 + 8 + 1 + 8 + 8;

/// One record: a mark and its tag.
pub const RECORD_BYTES: usize = BODY_BYTES + TAG_BYTES;

/// The subjects of one deployment (`prefix` as in [`crate::jetstream::Topology::prefix`]).
#[derive(Clone, Debug)]
pub struct Subjects {
    marks: String,
    sync: String,
    /// `<prefix>.watermark.reply.`: the start of every sync reply subject.
    reply: String,
}

impl Subjects {
    /// `<prefix>.watermark.marks`, `<prefix>.watermark.sync` and the reply subjects
    /// `<prefix>.watermark.reply.<token>`: all under `<prefix>.watermark.>`, the one subject tree a role's
    /// NATS user needs for the exchange (the answers do not go to `_INBOX.`, which least-permission users
    /// may not publish to, and must not: a PubAck is an answer on `_INBOX.`).
    pub fn new(prefix: &str) -> Self {
        Self {
            marks: format!("{prefix}.watermark.marks"),
            sync: format!("{prefix}.watermark.sync"),
            reply: format!("{prefix}.watermark.reply."),
        }
    }

    /// A fresh reply subject of this process: the reply prefix and one token (async-nats's unique inbox
    /// name, without its `_INBOX.`).
    fn new_reply(&self, client: &async_nats::Client) -> String {
        let inbox = client.new_inbox();
        let token = inbox.rsplit('.').next().unwrap_or(&inbox);
        format!("{}{token}", self.reply)
    }

    /// Whether `subject` is a sync reply subject: the reply prefix and one token, no wildcard or space
    /// (a stolen device key must not make the processes publish their marks anywhere else, or to many).
    fn is_reply(&self, subject: &str) -> bool {
        subject
            .strip_prefix(self.reply.as_str())
            .is_some_and(|token| !token.is_empty() && !token.contains(['.', '*', '>', ' ']))
    }
}

/// The 33 bytes a record's tag authenticates (after the domain).
fn body(device_id: u64, mark: Mark) -> [u8; BODY_BYTES] {
    let mut body = [0u8; BODY_BYTES];
    body[..8].copy_from_slice(&device_id.to_le_bytes());
    body[8..16].copy_from_slice(&mark.generation.to_le_bytes());
    body[16] = u8::from(mark.highest.is_some());
    body[17..25].copy_from_slice(&mark.highest.unwrap_or(0).to_le_bytes());
    body[25..].copy_from_slice(&mark.fingerprint.to_le_bytes());
    body
}

/// What a mark's tag authenticates: the domain and the record's body.
fn tagged_mark(body: &[u8; BODY_BYTES]) -> [u8; MARK_DOMAIN.len() + BODY_BYTES] {
    let mut message = [0u8; MARK_DOMAIN.len() + BODY_BYTES];
    message[..MARK_DOMAIN.len()].copy_from_slice(MARK_DOMAIN);
    message[MARK_DOMAIN.len()..].copy_from_slice(body);
    message
}

/// Appends the record of `device_id`'s `mark`, tagged under `key`, to `message`.
pub fn push_record(message: &mut Vec<u8>, key: &MacKey, device_id: u64, mark: Mark) {
    let body = body(device_id, mark);
    message.extend_from_slice(&body);
    message.extend_from_slice(&key.tag(&tagged_mark(&body)));
}

/// What [`open_records`] made of a message.
#[derive(Debug, PartialEq, Eq)]
pub struct Opened {
    /// The marks whose tags verify under their devices' keys.
    pub marks: Vec<(u64, Mark)>,
    /// Records of a device this process serves that do not verify (or a message that is not whole
    /// records): written by something other than the service.
    pub refused: usize,
    /// Well-formed records of devices this process does not serve (another key set of the deployment,
    /// served by other processes): none of its business, and no sign of an attack.
    pub other_devices: usize,
}

/// The marks of a `message` whose tags verify under their devices' keys (`key_of`: `None` for a device
/// the key store does not list). A message that is not 1 to [`RECORDS_PER_MESSAGE`] whole records is
/// refused whole.
pub fn open_records<'k>(message: &[u8], key_of: impl Fn(u64) -> Option<&'k MacKey>) -> Opened {
    let records = message.len() / RECORD_BYTES;
    if !message.len().is_multiple_of(RECORD_BYTES) || records == 0 || records > RECORDS_PER_MESSAGE {
        return Opened {
            marks: Vec::new(),
            refused: records.max(1),
            other_devices: 0,
        };
    }
    let mut marks = Vec::with_capacity(records);
    let mut refused = 0;
    let mut other_devices = 0;
    for record in message.chunks_exact(RECORD_BYTES) {
        let (body, tag) = record.split_at(BODY_BYTES);
        let body: &[u8; BODY_BYTES] = body.try_into().unwrap_or(&[0; BODY_BYTES]);
        let device_id = u64::from_le_bytes(body[..8].try_into().unwrap_or_default());
        let generation = u64::from_le_bytes(body[8..16].try_into().unwrap_or_default());
        let highest = u64::from_le_bytes(body[17..25].try_into().unwrap_or_default());
        let fingerprint = u64::from_le_bytes(body[25..].try_into().unwrap_or_default());
        let highest = match body[16] {
            0 if highest == 0 => Some(None),
            1 => Some(Some(highest)),
            _ => None,
        };
        let Some(key) = key_of(device_id) else {
            other_devices += 1;
            continue;
        };
        let verified = key.verify(&tagged_mark(body), tag);
        match highest {
            Some(highest) if verified => marks.push((
                device_id,
                Mark {
                    generation,
                    highest,
                    fingerprint,
                },
            )),
            _ => refused += 1,
        }
    }
    Opened {
        marks,
        refused,
        other_devices,
    }
}

/// One process's side of the exchange: the watermarks it publishes from and merges into (its gateway's and
/// its workers').
pub struct Gossip {
    client: async_nats::Client,
    subjects: Subjects,
    intake: Arc<Intake>,
    watermarks: Vec<Arc<LedgerWatermark>>,
}

impl Gossip {
    /// The exchange of `watermarks` on `client`, tags under `intake`'s device keys.
    pub fn new(
        client: async_nats::Client,
        subjects: Subjects,
        intake: Arc<Intake>,
        watermarks: Vec<Arc<LedgerWatermark>>,
    ) -> Self {
        Self {
            client,
            subjects,
            intake,
            watermarks,
        }
    }

    /// Subscribes, asks the running processes for their marks and merges their answers (the start-up sync,
    /// below), and returns the task that keeps exchanging them. The caller serves devices once this returns.
    ///
    /// The start-up sync (the module's documentation): requests every 250 ms until the first answer bound
    /// to one of them with marks that authenticate, for at most [`SYNC_WAIT`]; then the others are awaited [`SYNC_GRACE`]. No answer
    /// at all: the first process of a deployment, or the exchange is blocked (a warning says so).
    pub async fn start(self) -> Result<impl Future<Output = Result<(), String>>, String> {
        let failed = |what: &str, e: &dyn std::fmt::Display| format!("watermark exchange: cannot {what}: {e}");
        let marks = self
            .client
            .subscribe(self.subjects.marks.clone())
            .await
            .map_err(|e| failed("subscribe", &e))?;
        let syncs = self
            .client
            .subscribe(self.subjects.sync.clone())
            .await
            .map_err(|e| failed("subscribe", &e))?;
        // Requests are answered from now on, with the marks this process holds (its watermark file's), also
        // while it waits for its own answers: two processes starting together answer each other.
        let gossip = Arc::new(self);
        let answering = tokio::spawn(gossip.clone().answer_syncs(syncs));
        let mut devices: Vec<u64> = gossip.intake.device_ids().collect();
        devices.sort_unstable();
        if devices.is_empty() {
            return Ok(Self::run(gossip, marks, answering));
        }
        let inbox = gossip.subjects.new_reply(&gossip.client);
        let mut answers = gossip
            .client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| failed("subscribe", &e))?;
        let started = Instant::now();
        let mut answered: Option<Instant> = None;
        let mut refused = 0;
        let mut anchors: Vec<u64> = Vec::new();
        // The requests' anchors: the devices in turn from one drawn at random, so that whoever holds one
        // device's key (and uses up its answers) holds up one request of every `devices.len()` at most.
        let first = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), &inbox) as usize;
        for attempt in 0usize.. {
            if answered.is_none() {
                let anchor = devices[first.wrapping_add(attempt) % devices.len()];
                anchors.push(anchor);
                let request = gossip.sync_request(anchor, &inbox);
                gossip
                    .client
                    .publish_with_reply(gossip.subjects.sync.clone(), inbox.clone(), request.into())
                    .await
                    .map_err(|e| failed("publish", &e))?;
            }
            let until = match answered {
                Some(at) => at + SYNC_GRACE,
                None => (Instant::now() + Duration::from_millis(250)).min(started + SYNC_WAIT),
            };
            while let Ok(Some(answer)) = tokio::time::timeout_at(until.into(), answers.next()).await {
                // Only an answer bound to one of this process's requests, with marks that authenticate,
                // ends the wait: anyone can publish to the reply subject, and marks can be sniffed.
                let (merged, not, bound) = gossip.merge_answer(&answer.payload, &inbox, &anchors);
                refused += not;
                if bound && merged > 0 {
                    answered.get_or_insert_with(Instant::now);
                }
            }
            match answered {
                Some(_) => break,
                None if started.elapsed() >= SYNC_WAIT => {
                    warn!(
                        "watermark exchange: no other process of the service answered within {SYNC_WAIT:?}: the \
                         first process of this deployment, or the exchange is blocked (this role's NATS user \
                         must publish and subscribe to {}>); serving with only what this process saw",
                        gossip.subjects.sync.trim_end_matches("sync")
                    );
                    break;
                }
                None => {}
            }
        }
        if refused > 0 {
            warn!(
                refused,
                "watermark exchange: answers to the start-up sync held marks that do not authenticate"
            );
        }
        Ok(Self::run(gossip, marks, answering))
    }

    /// A start-up sync request answered to `reply`: device `anchor`'s id and a tag under its MAC key.
    fn sync_request(&self, anchor: u64, reply: &str) -> Vec<u8> {
        let mut request = anchor.to_le_bytes().to_vec();
        if let Some(key) = self.intake.mac_key(anchor) {
            request.extend_from_slice(&sync_tag(key, anchor, reply));
        }
        request
    }

    /// The anchor device of `request` (answered to `reply`) if it is a start-up sync request of a process
    /// of this service.
    fn sync_anchor(&self, request: &[u8], reply: &str) -> Option<u64> {
        let (anchor, tag) = request.split_first_chunk::<8>()?;
        let anchor = u64::from_le_bytes(*anchor);
        let key = self.intake.mac_key(anchor)?;
        key.verify(&tagged_sync(anchor, reply), tag).then_some(anchor)
    }

    /// The exchange: sync requests answered by a task of their own (a flood of marks to verify does not
    /// hold them up), marks merged and published by this one.
    async fn run(
        gossip: Arc<Self>,
        mut marks: async_nats::Subscriber,
        answering: tokio::task::JoinHandle<()>,
    ) -> Result<(), String> {
        let mut published: HashMap<u64, Mark> = HashMap::new();
        let mut every = tokio::time::interval(PUBLISH_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_full = Instant::now();
        let mut refusals = Refusals::default();
        loop {
            if answering.is_finished() {
                return Err("watermark exchange: the sync answers stopped".into());
            }
            tokio::select! {
                heard = marks.next() => {
                    let Some(heard) = heard else { return Err("watermark exchange: subscription ended".into()) };
                    refusals.add(gossip.merge(&heard.payload).1);
                }
                _ = every.tick() => {
                    if last_full.elapsed() >= FULL_EVERY {
                        // Marks a slow-consumer drop lost reach everyone again.
                        last_full = Instant::now();
                        published.clear();
                    }
                    gossip.publish_moved(&mut published).await;
                    refusals.report();
                }
            }
        }
    }

    /// Answers the start-up sync requests of other processes: to a sync reply subject only, tagged
    /// under a listed device's key ([`SyncAnswers`] decides how many).
    async fn answer_syncs(self: Arc<Self>, mut syncs: async_nats::Subscriber) {
        let mut answers = SyncAnswers::default();
        while let Some(asked) = syncs.next().await {
            let authentic = asked
                .reply
                .as_deref()
                .filter(|reply| self.subjects.is_reply(reply))
                .and_then(|reply| Some((reply, self.sync_anchor(&asked.payload, reply)?)));
            match authentic {
                Some((reply, anchor)) if answers.take(anchor, reply) => self.answer(reply, anchor).await,
                Some(_) => {}
                None => metrics::counter!("tsbc_watermark_sync_refused_total").increment(1),
            }
        }
    }

    /// Merges the verified marks of `message` into every watermark of the process; how many were merged
    /// and how many refused.
    fn merge(&self, message: &[u8]) -> (usize, usize) {
        let Opened {
            marks,
            refused,
            other_devices,
        } = open_records(message, |device| self.intake.mac_key(device));
        if refused > 0 {
            metrics::counter!("tsbc_watermark_refused_total").increment(refused as u64);
        }
        if other_devices > 0 {
            metrics::counter!("tsbc_watermark_other_devices_total").increment(other_devices as u64);
        }
        for &(device_id, mark) in &marks {
            for watermark in &self.watermarks {
                watermark.wrote(device_id, mark);
            }
        }
        (marks.len(), refused)
    }

    /// Every mark of the process, to `reply`, each message bound to the request (device `anchor`'s, whose
    /// key this process holds: it verified the request with it) by the answer trailer.
    async fn answer(&self, reply: &str, anchor: u64) {
        let Some(key) = self.intake.mac_key(anchor) else { return };
        for (mut message, _) in self.messages(|_, _| true) {
            let tag = answer_tag(key, anchor, reply, &message);
            message.extend_from_slice(&anchor.to_le_bytes());
            message.extend_from_slice(&tag);
            if let Err(e) = self.client.publish(reply.to_owned(), message.into()).await {
                debug!("watermark exchange: an answer to a sync failed: {e}");
            }
        }
    }

    /// An answer to this process's sync requests (to `reply`, anchored on one of `anchors`): its records
    /// merged as any marks are; whether it is bound to one of the requests (its trailer's tag verifies),
    /// which only a running process of the service can make for this reply subject. Marks sniffed
    /// earlier and sent again are merged (they only raise a watermark to where a ledger was), but do not
    /// end the wait: an independent attack answered a new gateway's sync with an old authentic mark and
    /// a flood of junk, so that it served before the genuine answers were read (a rolled-back replay
    /// "accepted", 3 of about 50 tries).
    fn merge_answer(&self, message: &[u8], reply: &str, anchors: &[u64]) -> (usize, usize, bool) {
        let Some(records_bytes) = message.len().checked_sub(ANSWER_TRAILER_BYTES) else {
            let (merged, refused) = self.merge(message);
            return (merged, refused, false);
        };
        let (records, trailer) = message.split_at(records_bytes);
        let (anchor, tag) = trailer.split_at(8);
        let anchor = u64::from_le_bytes(anchor.try_into().unwrap_or_default());
        let bound = anchors.contains(&anchor)
            && self
                .intake
                .mac_key(anchor)
                .is_some_and(|key| key.verify(&answer_tagged(anchor, reply, records), tag));
        if bound {
            let (merged, refused) = self.merge(records);
            (merged, refused, true)
        } else {
            let (merged, refused) = self.merge(message);
            (merged, refused, false)
        }
    }

    /// The process's marks that `wanted` keeps, as messages of at most [`RECORDS_PER_MESSAGE`] records, each
    /// with the marks it holds.
    fn messages(&self, wanted: impl Fn(u64, Mark) -> bool) -> Vec<(Vec<u8>, Marks)> {
        let mut now: HashMap<u64, Mark> = HashMap::new();
        for watermark in &self.watermarks {
            for (device, mark) in watermark.marks() {
                let entry = now.entry(device).or_insert(mark);
                *entry = entry.max(mark);
            }
        }
        let chosen: Vec<(u64, Mark)> = now.into_iter().filter(|&(d, m)| wanted(d, m)).collect();
        chosen
            .chunks(RECORDS_PER_MESSAGE)
            .map(|batch| {
                let mut message = Vec::with_capacity(batch.len() * RECORD_BYTES);
                let mut held = Vec::with_capacity(batch.len());
                for &(device, mark) in batch {
                    if let Some(key) = self.intake.mac_key(device) {
                        push_record(&mut message, key, device, mark);
                        held.push((device, mark));
                    }
                }
                (message, held)
            })
            .filter(|(message, _)| !message.is_empty())
            .collect()
    }

    /// Publishes every mark that differs from `published` (all of them when it is empty), and records them.
    async fn publish_moved(&self, published: &mut HashMap<u64, Mark>) {
        for (message, records) in self.messages(|device, mark| published.get(&device) != Some(&mark)) {
            match self.client.publish(self.subjects.marks.clone(), message.into()).await {
                Ok(()) => published.extend(records),
                Err(e) => debug!("watermark exchange: publish failed, tried again in 100 ms: {e}"),
            }
        }
    }
}

/// Marks of devices, by device id.
type Marks = Vec<(u64, Mark)>;

/// The tag of a start-up sync request answered to `reply`, under device `anchor`'s key.
fn sync_tag(key: &MacKey, anchor: u64, reply: &str) -> [u8; TAG_BYTES] {
    key.tag(&tagged_sync(anchor, reply))
}

/// The tag that binds an answer's `records` to the sync request of `anchor` answered to `reply`.
fn answer_tag(key: &MacKey, anchor: u64, reply: &str, records: &[u8]) -> [u8; TAG_BYTES] {
    key.tag(&answer_tagged(anchor, reply, records))
}

/// What an answer's tag authenticates: the domain, the anchor, the reply subject's length and bytes, and
/// the records.
fn answer_tagged(anchor: u64, reply: &str, records: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(ANSWER_DOMAIN.len() + 16 + reply.len() + records.len());
    message.extend_from_slice(ANSWER_DOMAIN);
    message.extend_from_slice(&anchor.to_le_bytes());
    message.extend_from_slice(&(reply.len() as u64).to_le_bytes());
    message.extend_from_slice(reply.as_bytes());
    message.extend_from_slice(records);
    message
}

/// What a sync request's tag authenticates: the domain, the anchor device's id and the reply subject.
fn tagged_sync(anchor: u64, reply: &str) -> Vec<u8> {
    let mut message = Vec::with_capacity(SYNC_DOMAIN.len() + 8 + reply.len());
    message.extend_from_slice(SYNC_DOMAIN);
    message.extend_from_slice(&anchor.to_le_bytes());
    message.extend_from_slice(reply.as_bytes());
    message
}

/// Refused marks since the last warning: one warning at most every 10 s, with the count.
#[derive(Default)]
struct Refusals {
    since: usize,
    warned: Option<Instant>,
}

impl Refusals {
    fn add(&mut self, refused: usize) {
        self.since += refused;
    }

    fn report(&mut self) {
        if self.since > 0 && self.warned.is_none_or(|at| at.elapsed() >= Duration::from_secs(10)) {
            warn!(
                refused = self.since,
                "watermark exchange: marks that do not authenticate under their devices' keys were dropped (a \
                 client of NATS other than the service, or another deployment on the same subjects; \
                 tsbc_watermark_refused_total counts them)"
            );
            self.since = 0;
            self.warned = Some(Instant::now());
        }
    }
}

/// Which authenticated sync requests are answered: each reply subject once (a replayed request is not), at
/// most [`SYNC_ANSWERS_PER_SECOND`] a second per anchor device (a holder of one device's key uses up that
/// device's answers only; a process starting up draws its anchors at random).
#[derive(Default)]
struct SyncAnswers {
    recent: std::collections::VecDeque<String>,
    /// Per anchor device: the start of its current second and the answers in it (bounded by the key store).
    seconds: HashMap<u64, (Instant, usize)>,
}

impl SyncAnswers {
    /// Whether to answer a request under `anchor` to `reply` now.
    fn take(&mut self, anchor: u64, reply: &str) -> bool {
        if self.recent.iter().any(|r| r == reply) {
            metrics::counter!("tsbc_watermark_sync_refused_total").increment(1);
            return false;
        }
        let (second, in_second) = self.seconds.entry(anchor).or_insert((Instant::now(), 0));
        if second.elapsed() >= Duration::from_secs(1) {
            *second = Instant::now();
            *in_second = 0;
        }
        if *in_second >= SYNC_ANSWERS_PER_SECOND {
            metrics::counter!("tsbc_watermark_sync_refused_total").increment(1);
            return false;
        }
        *in_second += 1;
        if self.recent.len() == 256 {
            self.recent.pop_front();
        }
        self.recent.push_back(reply.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(generation: u64, highest: Option<u64>) -> Mark {
        Mark {
            generation,
            highest,
            fingerprint: generation.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        }
    }

    #[test]
    fn only_a_reply_subject_of_the_exchange_with_one_token_is_answered() {
        let subjects = Subjects::new("tsbc");
        assert!(subjects.is_reply("tsbc.watermark.reply.Zx81kQ"));
        for refused in [
            "_INBOX.Zx81kQ",
            "tsbc.watermark.reply.",
            "tsbc.watermark.reply.*",
            "tsbc.watermark.reply.>",
            "tsbc.watermark.reply.a.b",
            "tsbc.watermark.reply.a b",
            "tsbc.watermark.marks",
            "$KV.tsbc-devices.device.7",
            "other.watermark.reply.Zx81kQ",
        ] {
            assert!(!subjects.is_reply(refused), "{refused}");
        }
    }

    #[test]
    fn sync_requests_are_answered_once_each_and_at_most_5_a_second_per_anchor() {
        let mut answers = SyncAnswers::default();
        assert!(answers.take(7, "_INBOX.a"));
        assert!(!answers.take(7, "_INBOX.a"), "a replayed request");
        assert!(!answers.take(8, "_INBOX.a"), "a replayed request under another anchor");
        for i in 1..SYNC_ANSWERS_PER_SECOND {
            assert!(answers.take(7, &format!("_INBOX.{i}")), "request {i}");
        }
        assert!(
            !answers.take(7, "_INBOX.late"),
            "past the anchor's budget for this second"
        );
        assert!(answers.take(8, "_INBOX.other"), "another anchor's budget");
        answers.seconds.get_mut(&7).unwrap().0 = Instant::now() - Duration::from_secs(1);
        assert!(answers.take(7, "_INBOX.late"), "a second later");
        let key = MacKey::from_bytes([3; 32]);
        assert_ne!(sync_tag(&key, 1, "_INBOX.a"), sync_tag(&key, 1, "_INBOX.b"));
        assert_ne!(sync_tag(&key, 1, "_INBOX.a"), sync_tag(&key, 2, "_INBOX.a"));
    }

    #[test]
    fn a_mark_opens_only_under_its_devices_key_and_unchanged() {
        let (k1, k2) = (MacKey::from_bytes([1; 32]), MacKey::from_bytes([2; 32]));
        let key_of = |device: u64| match device {
            1 => Some(&k1),
            2 => Some(&k2),
            _ => None,
        };
        let mut message = Vec::new();
        push_record(&mut message, &k1, 1, mark(7, Some(u64::MAX - 1)));
        push_record(&mut message, &k2, 2, mark(3, None));
        assert_eq!(message.len(), 2 * RECORD_BYTES);
        let opened = |marks, refused, other_devices| Opened {
            marks,
            refused,
            other_devices,
        };
        assert_eq!(
            open_records(&message, key_of),
            opened(vec![(1, mark(7, Some(u64::MAX - 1))), (2, mark(3, None))], 0, 0)
        );
        // Under another device's key: refused. Of a device this process does not serve: skipped, counted
        // apart (another key set's), not refused.
        let mut forged = Vec::new();
        push_record(&mut forged, &k2, 1, mark(9, Some(9)));
        push_record(&mut forged, &k1, 3, mark(9, Some(9)));
        assert_eq!(open_records(&forged, key_of), opened(vec![], 1, 1));
        // Any byte changed: that record refused (or, if the change names another device, skipped), the
        // other kept.
        for i in 0..RECORD_BYTES {
            let mut changed = message.clone();
            changed[i] ^= 1;
            let (refused, other_devices) = if i < 8 { (0, 1) } else { (1, 0) };
            assert_eq!(
                open_records(&changed, key_of),
                opened(vec![(2, mark(3, None))], refused, other_devices),
                "byte {i}"
            );
        }
        // Not whole records, none, too many: refused whole.
        assert_eq!(open_records(&message[..RECORD_BYTES + 1], key_of).marks, vec![]);
        assert_eq!(open_records(&[], key_of), opened(vec![], 1, 0));
        let many: Vec<u8> = message[..RECORD_BYTES].repeat(RECORDS_PER_MESSAGE + 1);
        assert_eq!(open_records(&many, key_of).marks, vec![]);
        assert_eq!(
            open_records(&message[..RECORD_BYTES].repeat(RECORDS_PER_MESSAGE), key_of)
                .marks
                .len(),
            RECORDS_PER_MESSAGE
        );
    }
}
