//! The commit state machine (`tfhe_sbc_adapter::commit`) under arbitrary interleavings: several devices
//! send multi-chunk messages; gateways admit frames in any order (resends, duplicates, frames held back by
//! the network, gateways that publish and stop before admitting), workers store the published copies in
//! any order and any number of times (redeliveries), a worker may stop between storing and announcing.
//!
//! A clone of each device (a board with a copy of its key and counter) sends other frames under the same
//! numbers, through any gateway, at any moment.
//!
//! Invariant: every chunk admitted (acknowledged "accepted") ends in exactly one completed message; every
//! message completes exactly once; at the end every message the devices sent is complete and announced;
//! under each number, at most one frame is ever answered "accepted" or "duplicate", and the bytes stored
//! under the number are that frame's (never a clone's frame that heard "too old").
//! Each step is one compare-and-swap in the service, so the model applies each transition atomically.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use tfhe_sbc_adapter::IntakeError;
use tfhe_sbc_adapter::commit::{ChunkId, DeviceLedger, LedgerLimits, Stored};
use tfhe_sbc_adapter::replay::FrameTag;

/// How far ahead of its oldest unacknowledged frame a device sends (the client's bound, below the window).
const SPAN: u64 = 64;

#[derive(Clone, Debug)]
enum Step {
    /// A gateway takes device `d`'s `i`-th sendable frame: publishes it, then admits it.
    Send(usize, usize),
    /// The same, but the gateway stops after publishing (no admission, no answer).
    SendAndStop(usize, usize),
    /// A worker takes the `i`-th published copy and stores it (the copy stays for a redelivery if `keep`).
    Store(usize, bool),
    /// A worker announces the `i`-th unannounced message of device `d`.
    Announce(usize, usize),
    /// Device `d`'s clone sends, under the number of its `i`-th chunk, a frame of its own.
    Clone(usize, usize),
}

/// The tag of device `d`'s frame under `sequence`, from the device (`clone` false) or its clone.
fn tag(d: usize, sequence: u64, clone: bool) -> FrameTag {
    let mut bytes = [0u8; 8];
    bytes[..6].copy_from_slice(&(sequence + 1).to_le_bytes()[..6]);
    bytes[6] = d as u8;
    bytes[7] = 1 + u8::from(clone);
    FrameTag(bytes)
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..3usize, 0..80usize).prop_map(|(d, i)| Step::Send(d, i)),
        1 => (0..3usize, 0..80usize).prop_map(|(d, i)| Step::SendAndStop(d, i)),
        4 => (0..400usize, any::<bool>()).prop_map(|(i, keep)| Step::Store(i, keep)),
        1 => (0..3usize, 0..8usize).prop_map(|(d, i)| Step::Announce(d, i)),
        1 => (0..3usize, 0..200usize).prop_map(|(d, i)| Step::Clone(d, i)),
    ]
}

struct Device {
    /// Every chunk the device will send, in sequence order.
    chunks: Vec<ChunkId>,
    /// Sequence numbers the device holds an "accepted" or "duplicate" answer for.
    answered: BTreeSet<u64>,
}

impl Device {
    fn new(d: usize, message_sizes: &[u32]) -> Self {
        let mut chunks = Vec::new();
        let mut next = 0u64;
        for &count in message_sizes {
            for index in 0..count {
                chunks.push(ChunkId {
                    sequence: next + u64::from(index),
                    first_sequence: next,
                    chunk_count: count,
                    chunk_index: index,
                    tag: tag(d, next + u64::from(index), false),
                });
            }
            next += u64::from(count);
        }
        Self {
            chunks,
            answered: BTreeSet::new(),
        }
    }

    /// The frames the device may send now: unanswered, within SPAN of its oldest unanswered one.
    fn sendable(&self) -> Vec<ChunkId> {
        let mut open = self.chunks.iter().filter(|c| !self.answered.contains(&c.sequence));
        let Some(oldest) = open.next().map(|c| c.sequence) else {
            return Vec::new();
        };
        self.chunks
            .iter()
            .filter(|c| !self.answered.contains(&c.sequence) && c.sequence < oldest + SPAN)
            .copied()
            .collect()
    }
}

struct Service {
    ledgers: Vec<DeviceLedger>,
    limits: LedgerLimits,
    /// Published copies (device, chunk), in any order: the frames stream.
    published: Vec<(usize, ChunkId)>,
    /// Chunks whose bytes are in the results store.
    stored: BTreeSet<(usize, u64)>,
    /// Chunks acknowledged "accepted".
    accepted: BTreeSet<(usize, u64)>,
    /// Completed messages, counted.
    completed: BTreeMap<(usize, u64), u32>,
    /// Announcements made (a reader's view, de-duplicated by (device, first sequence)).
    announced: BTreeSet<(usize, u64)>,
    /// The frame answered "accepted" or "duplicate" under each number.
    answered: BTreeMap<(usize, u64), FrameTag>,
    /// The frame whose bytes are stored under each number.
    stored_tags: BTreeMap<(usize, u64), FrameTag>,
    /// Numbers a clone sent a frame under.
    cloned: BTreeSet<(usize, u64)>,
}

impl Service {
    /// A gateway takes `chunk` of device `d` (or of its clone: `clone`).
    fn gateway(&mut self, devices: &mut [Device], d: usize, chunk: ChunkId, stop: bool, clone: bool) {
        self.published.push((d, chunk));
        if clone {
            self.cloned.insert((d, chunk.sequence));
        }
        if stop {
            return;
        }
        let mut ledger = self.ledgers[d].clone();
        let answered = match ledger.admit(d as u64, chunk, &self.limits) {
            Ok(()) => {
                self.ledgers[d] = ledger;
                assert!(self.accepted.insert((d, chunk.sequence)), "accepted twice");
                true
            }
            Err(IntakeError::Replayed { .. }) => true,
            Err(IntakeError::TooManyOpenMessages { .. } | IntakeError::TooManyOpenMessagesForDevice { .. }) => {
                return;
            }
            // The device's counter went back: the frame under the number is another (the clone's).
            Err(IntakeError::TooOld { .. }) if self.cloned.contains(&(d, chunk.sequence)) => false,
            Err(e) => panic!("a conformant device was refused: {e}"),
        };
        if answered {
            let first = *self.answered.entry((d, chunk.sequence)).or_insert(chunk.tag);
            assert_eq!(
                first, chunk.tag,
                "two frames answered accepted or duplicate under one number"
            );
        }
        if !clone {
            // The device has its answer for the number (a "too old" stops it until its counter is set
            // past it: the model moves on).
            devices[d].answered.insert(chunk.sequence);
        }
    }

    fn worker(&mut self, at: usize, keep: bool) {
        if self.published.is_empty() {
            return;
        }
        let at = at % self.published.len();
        let (d, chunk) = self.published[at];
        let mut ledger = self.ledgers[d].clone();
        let outcome = match ledger.store(chunk) {
            Stored::NotAdmitted => match ledger.admit(d as u64, chunk, &self.limits) {
                // A frame nobody acknowledged: the worker admits it itself (the device will hear "duplicate").
                Ok(()) => ledger.store(chunk),
                // Never acknowledged and refused: dead-lettered; the device still holds it.
                Err(_) => {
                    self.published.swap_remove(at);
                    return;
                }
            },
            other @ (Stored::Now { .. } | Stored::Before | Stored::Forgotten | Stored::OtherFrame) => other,
        };
        match outcome {
            Stored::Now { completed } => {
                self.stored.insert((d, chunk.sequence));
                let first = *self.stored_tags.entry((d, chunk.sequence)).or_insert(chunk.tag);
                assert_eq!(first, chunk.tag, "two frames stored under one number");
                if completed {
                    *self.completed.entry((d, chunk.first_sequence)).or_default() += 1;
                }
            }
            Stored::Before => assert!(self.stored.contains(&(d, chunk.sequence))),
            Stored::OtherFrame => {
                // Dead-lettered: never stored, and never answered for this frame.
                assert!(
                    self.cloned.contains(&(d, chunk.sequence)),
                    "a frame refused with no clone about"
                );
                assert_ne!(self.answered.get(&(d, chunk.sequence)), Some(&chunk.tag));
                self.published.swap_remove(at);
                return;
            }
            Stored::Forgotten => assert!(
                self.stored.contains(&(d, chunk.sequence)) || !self.accepted.contains(&(d, chunk.sequence)),
                "an accepted frame was forgotten before it was stored"
            ),
            Stored::NotAdmitted => unreachable!("admitted just above"),
        }
        self.ledgers[d] = ledger;
        if !keep {
            self.published.swap_remove(at);
        }
    }

    fn announce(&mut self, d: usize, i: usize) {
        let Some(&(first, _)) = self.ledgers[d].unannounced.get(i) else {
            return;
        };
        self.announced.insert((d, first));
        assert!(self.ledgers[d].announced(first));
    }
}

fn run(sizes: Vec<Vec<u32>>, steps: Vec<Step>, limits: LedgerLimits) {
    let mut devices: Vec<Device> = sizes.iter().enumerate().map(|(d, s)| Device::new(d, s)).collect();
    let mut service = Service {
        ledgers: vec![DeviceLedger::new(); devices.len()],
        limits,
        published: Vec::new(),
        stored: BTreeSet::new(),
        accepted: BTreeSet::new(),
        completed: BTreeMap::new(),
        announced: BTreeSet::new(),
        answered: BTreeMap::new(),
        stored_tags: BTreeMap::new(),
        cloned: BTreeSet::new(),
    };
    for step in steps {
        match step {
            Step::Send(d, i) | Step::SendAndStop(d, i) => {
                let d = d % devices.len();
                let sendable = devices[d].sendable();
                if let Some(&chunk) = sendable.get(i % sendable.len().max(1)) {
                    service.gateway(&mut devices, d, chunk, matches!(step, Step::SendAndStop(..)), false);
                }
            }
            Step::Clone(d, i) => {
                let d = d % devices.len();
                let chunks = &devices[d].chunks;
                let mut chunk = chunks[i % chunks.len()];
                chunk.tag = tag(d, chunk.sequence, true);
                service.gateway(&mut devices, d, chunk, false, true);
            }
            Step::Store(i, keep) => service.worker(i, keep),
            Step::Announce(d, i) => service.announce(d % devices.len(), i),
        }
        // Bounded by admission: past the limits only by messages older than every incomplete one, which
        // lie within the device's span; the encoding never exceeds its stated maximum.
        for ledger in &service.ledgers {
            assert!(ledger.incomplete() <= limits.max_incomplete + SPAN as usize);
            assert!(ledger.backlog() <= limits.max_backlog + limits.max_incomplete + SPAN as usize);
            let bytes = ledger.encode();
            assert!(bytes.len() <= DeviceLedger::max_encoded_bytes(&limits));
            assert_eq!(DeviceLedger::decode(&bytes).as_ref(), Ok(ledger));
        }
    }
    // Drain fairly, as the client does after a reconnect: every device sends everything unanswered within
    // its span, in order; workers take every copy; announcers run.
    for _round in 0..10_000 {
        let mut progress = false;
        for d in 0..devices.len() {
            for chunk in devices[d].sendable() {
                service.gateway(&mut devices, d, chunk, false, false);
                progress = true;
            }
        }
        while !service.published.is_empty() {
            service.worker(0, false);
            progress = true;
        }
        for d in 0..devices.len() {
            while !service.ledgers[d].unannounced.is_empty() {
                service.announce(d, 0);
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    for (d, device) in devices.iter().enumerate() {
        assert_eq!(
            device.answered.len(),
            device.chunks.len(),
            "device {d} has unanswered frames"
        );
        let firsts: BTreeSet<u64> = device.chunks.iter().map(|c| c.first_sequence).collect();
        for first in firsts {
            assert_eq!(
                service.completed.get(&(d, first)),
                Some(&1),
                "device {d}'s message at {first} completed other than once"
            );
            assert!(service.announced.contains(&(d, first)), "never announced");
        }
        assert!(service.ledgers[d].messages.is_empty());
    }
    // Every accepted chunk is stored, so in a completed message; the bytes stored under a number are
    // those of the frame answered under it.
    for &(d, sequence) in &service.accepted {
        assert!(service.stored.contains(&(d, sequence)));
    }
    for (number, tag) in &service.answered {
        assert_eq!(
            service.stored_tags.get(number),
            Some(tag),
            "{number:?}: not the answered frame's bytes"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, rng_seed: proptest::test_runner::RngSeed::Fixed(0x7f4a_7c15), ..ProptestConfig::default() })]

    /// 512 cases of up to 400 steps over 1-3 devices sending 1-40 messages of 1-5 chunks.
    #[test]
    fn every_accepted_chunk_ends_in_exactly_one_completed_message(
        sizes in prop::collection::vec(prop::collection::vec(1u32..=5, 1..40), 1..=3),
        steps in prop::collection::vec(step(), 0..400),
        max_incomplete in 1usize..4,
        max_backlog in 2usize..12,
    ) {
        run(sizes, steps, LedgerLimits { max_incomplete, max_backlog });
    }

    /// Bytes that are not a ledger (a store's corruption, or an encoding with a byte changed) never panic
    /// the decoder; whatever it takes is a ledger that encodes and decodes to itself, at its generation.
    #[test]
    fn any_bytes_decode_to_a_ledger_or_an_error(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        version in 2u8..=4,
        flip in any::<prop::sample::Index>(),
    ) {
        let mut framed = bytes.clone();
        if let Some(first) = framed.first_mut() {
            *first = version;
        }
        let mut changed = sample_ledger().encode();
        let at = flip.index(changed.len());
        changed[at] ^= 0x5a;
        for input in [&bytes, &framed, &changed] {
            if let Ok(ledger) = DeviceLedger::decode(input) {
                let again = DeviceLedger::decode(&ledger.encode());
                prop_assert_eq!(again.as_ref(), Ok(&ledger));
            }
        }
    }
}

/// A ledger with a window, tags, an open two-chunk message and an unannounced one, at generation 7.
fn sample_ledger() -> DeviceLedger {
    let limits = LedgerLimits::default();
    let mut ledger = DeviceLedger::new();
    let chunk = |first: u64, count: u32, index: u32| ChunkId {
        sequence: first + u64::from(index),
        first_sequence: first,
        chunk_count: count,
        chunk_index: index,
        tag: tag(0, first + u64::from(index), false),
    };
    ledger.admit(1, chunk(3, 2, 0), &limits).expect("a first chunk");
    ledger
        .admit(1, chunk(5, 1, 0), &limits)
        .expect("a single-chunk message");
    ledger.store(chunk(5, 1, 0));
    for _ in 0..7 {
        ledger.next_generation();
    }
    ledger
}

/// The case the review found: a chunk held back while its device sends 300 newer frames is still stored
/// and completes its message.
#[test]
fn a_chunk_held_back_past_the_window_still_completes_its_message() {
    let mut sizes = vec![2u32];
    sizes.extend(std::iter::repeat_n(1, 300));
    let mut steps = vec![Step::Send(0, 0), Step::Send(0, 0)];
    // Chunk 1's copy stays in the stream (index 1) while 300 newer frames are admitted and stored.
    for _ in 0..300 {
        steps.push(Step::Send(0, 0));
        steps.push(Step::Store(2, false));
        steps.push(Step::Announce(0, 0));
    }
    run(
        vec![sizes],
        steps,
        LedgerLimits {
            max_incomplete: 4,
            max_backlog: 64,
        },
    );
}
