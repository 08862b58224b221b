//! Cloned devices racing through the JetStream service: two boards with the same device key and the same
//! counter (a counter file copied onto a second board, or restored from a backup while the first still
//! runs) send *different* readings under the *same* sequence numbers, at the same moment, each through
//! its own gateway process (two `tfhe-sbc-server --nats --role both` processes, two worker tasks each, on
//! one nats-server). The shipped binaries, raw frames on loopback TCP, the adapter's results reader.
//!
//! Invariant, per sequence number: at most one of the two frames is ever answered "accepted" or
//! "duplicate", and the readings the results reader decrypts under that number are exactly that frame's.
//! The other board hears "too old" (with the number after the device's highest) and stops, so no reading
//! a device counts as delivered is lost, and none it was refused is ever announced in its place. Before,
//! the ledger admitted a number, not a frame: both boards could hear "accepted", with one board's bytes
//! stored, and two-chunk messages came out spliced from both boards' chunks unnoticed.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::common::nats::NatsServer;
use crate::common::service::{Meter, Server, connect, integer_key_set, send};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Barrier;
use std::time::{Duration, Instant};
use tfhe::FheUint16Id;
use tfhe::prelude::FheDecrypt;
use tfhe_sbc_adapter::ResultsError;
use tfhe_sbc_adapter::key_set::client_key::read_integer_client_key;
use tfhe_sbc_adapter::results::reader::ResultsReader;
use tfhe_sbc_device::frame::ack::{Ack, AckStatus};
use tfhe_sbc_device::frame::mac::MacKey;

/// Rounds of the race: each board sends one message per round (even rounds one frame, odd rounds two).
const ROUNDS: u64 = 12;

/// The first answer to `frame` at `address` that is not "busy" (fresh connections, at most 60 s).
fn answer(address: &str, frame: &[u8], key: &MacKey) -> Ack {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ack = send(&mut connect(address), frame, key).expect("an authenticated acknowledgement");
        if ack.status != AckStatus::Busy {
            return ack;
        }
        assert!(Instant::now() < deadline, "busy for 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The readings board `board` (0 or 1) sends in round `round`: 5 (one frame) or 300 (two frames), unlike
/// the other board's in every position.
fn board_readings(board: u64, round: u64) -> Vec<u16> {
    let count = if round.is_multiple_of(2) { 5 } else { 300 };
    (0..count).map(|i| (board * 30_000 + round * 1000 + i) as u16).collect()
}

/// The trusted party's reader of the key set in `keys`, and the announcement of device `id`'s message
/// that starts at `sequence`.
async fn reader_and_record(
    client: async_nats::Client,
    keys: &std::path::Path,
    id: u64,
    sequence: u64,
) -> (
    ResultsReader<tfhe_sbc_adapter::interop::integer::IntegerBridge>,
    tfhe_sbc_adapter::results::MessageCommitted,
) {
    let reader = ResultsReader::connect(client, common::service::integer_results_intake(keys))
        .await
        .unwrap();
    let record = reader
        .messages(Some(id), 10_000)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.first_sequence == sequence)
        .unwrap();
    (reader, record)
}

#[test]
fn clones_racing_through_two_gateways_never_both_hear_accepted_and_the_answered_frame_arrives() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0011);
    let nats = NatsServer::start();
    let (first_server, first) = Server::start(&keys, &nats.url(), &root.path().join("first"));
    let (second_server, second) = Server::start(&keys, &nats.url(), &root.path().join("second"));
    let gateways = [first, second];
    let id = common::service::METERS[1].0;
    let mut boards = [Meter::new(&keys, id, 10), Meter::new(&keys, id, 10)];

    // Per sequence number: the readings each board's frame under it carries, and the boards answered
    // "accepted" or "duplicate" under it.
    let mut carried: BTreeMap<u64, [Vec<u16>; 2]> = BTreeMap::new();
    // The two boards' frames under each number (what a NATS client could read from the dead letters).
    let mut frames_of: BTreeMap<u64, [Vec<u8>; 2]> = BTreeMap::new();
    let mut answered: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    let mut too_old = 0;
    // Each round's message: its first number and its frames.
    let mut starts: Vec<(u64, u64)> = Vec::new();
    for round in 0..ROUNDS {
        // Both boards' counters stay level (a clone): the first message of each round shares its numbers.
        let messages: Vec<Vec<Vec<u8>>> = (0..2)
            .map(|b| boards[b].message(&board_readings(b as u64, round)))
            .collect();
        let first = tfhe_sbc_adapter::intake::header_of(&messages[0][0]).unwrap().sequence;
        starts.push((first, messages[0].len() as u64));
        for (index, (a, b)) in messages[0].iter().zip(&messages[1]).enumerate() {
            let sequence = tfhe_sbc_adapter::intake::header_of(a).unwrap().sequence;
            assert_eq!(tfhe_sbc_adapter::intake::header_of(b).unwrap().sequence, sequence);
            let per_board = |b: usize| {
                let values = board_readings(b as u64, round);
                values[index * 256..values.len().min((index + 1) * 256)].to_vec()
            };
            carried.insert(sequence, [per_board(0), per_board(1)]);
            frames_of.insert(sequence, [a.clone(), b.clone()]);
        }
        // Each frame index: both boards at once, through different gateways (which one alternates).
        for (a, b) in messages[0].iter().zip(&messages[1]) {
            let pair = [a, b];
            let barrier = Barrier::new(2);
            let acks: Vec<Ack> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..2)
                    .map(|b| {
                        let frame = pair[b];
                        let address = &gateways[(b + round as usize) % 2];
                        let key = boards[b].credentials.mac_key();
                        let barrier = &barrier;
                        scope.spawn(move || {
                            barrier.wait();
                            answer(address, frame, key)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (b, ack) in acks.iter().enumerate() {
                match ack.status {
                    AckStatus::Accepted | AckStatus::Duplicate => answered.entry(ack.sequence).or_default().push(b),
                    AckStatus::TooOld => too_old += 1,
                    other @ (AckStatus::Busy
                    | AckStatus::Expired
                    | AckStatus::UnknownDevice
                    | AckStatus::BadCredentials
                    | AckStatus::NotAllowed
                    | AckStatus::Malformed) => panic!("board {b}, sequence {}: {other:?}", ack.sequence),
                }
            }
        }
        // Each board sends its frames again (a resend after a lost answer): still at most one is answered.
        for (b, frames) in messages.iter().enumerate() {
            for frame in frames {
                let ack = answer(&gateways[b], frame, boards[b].credentials.mac_key());
                if matches!(ack.status, AckStatus::Accepted | AckStatus::Duplicate) {
                    answered.entry(ack.sequence).or_default().push(b);
                }
            }
        }
    }
    for (sequence, boards) in &mut answered {
        boards.sort_unstable();
        boards.dedup();
        assert_eq!(
            boards.len(),
            1,
            "sequence {sequence}: both boards heard accepted or duplicate"
        );
    }
    assert!(too_old > 0, "no board was ever refused: the race never happened");

    // What the results reader decrypts under each number is the answered board's readings.
    let (_, client_key) = read_integer_client_key(&keys.join("client_key.bin")).unwrap();
    let keyed = common::service::integer_results_intake(&keys);
    let runtime = common::service::runtime();
    let decrypted: BTreeMap<u64, Vec<u16>> = runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let reader = ResultsReader::connect(client, keyed).await.unwrap();
        // Every message with all its numbers answered is announced (a spliced one too: each of its chunks
        // was answered to one board).
        let complete = |first: u64, count: u64| (first..first + count).all(|s| answered.contains_key(&s));
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let records = reader.messages(Some(id), 10_000).await.unwrap();
            let announced: Vec<u64> = records.iter().map(|r| r.first_sequence).collect();
            let wanted: Vec<u64> = starts
                .iter()
                .filter(|&&(first, count)| complete(first, count))
                .map(|&(first, _)| first)
                .collect();
            if wanted.iter().all(|s| announced.contains(s)) || Instant::now() > deadline {
                let mut out = BTreeMap::new();
                for record in &records {
                    for (index, frame) in reader.load(record).await.unwrap().iter().enumerate() {
                        let values: Vec<u16> = reader
                            .keyed()
                            .frame_readings::<FheUint16Id>(frame)
                            .unwrap()
                            .into_iter()
                            .map(|v| v.decrypt(client_key.get()))
                            .collect();
                        out.insert(record.first_sequence + index as u64, values);
                    }
                }
                assert!(
                    wanted.iter().all(|s| announced.contains(s)),
                    "not announced within 120 s"
                );
                break out;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    for (sequence, boards) in &answered {
        let board = boards[0];
        assert_eq!(
            decrypted.get(sequence),
            Some(&carried[sequence][board]),
            "sequence {sequence}: answered to board {board}, another board's readings (or none) arrived"
        );
    }

    // A NATS client with write access puts the losing board's frame (authentic, under the same number) in
    // place of the stored one, with the stored value's binding or without: the reader refuses that message
    // (the binding is the service's, over the frame the ledger admitted) instead of decrypting the loser's
    // readings under a number the winner was answered for. Before, it decrypted them and reported nothing.
    let (&sequence, answered_to) = answered
        .iter()
        .find(|&(s, _)| starts.iter().any(|&(first, count)| first == *s && count == 1))
        .expect("a one-frame message answered");
    let loser = &frames_of[&sequence][1 - answered_to[0]];
    runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let js = async_nats::jetstream::new(client.clone());
        let results = js.get_key_value("tsbc-results").await.unwrap();
        let name = tfhe_sbc_adapter::results::frame_key(id, sequence, 0);
        let stored = results.get(&name).await.unwrap().unwrap();
        let (reader, record) = reader_and_record(client, &keys, id, sequence).await;
        assert!(reader.load(&record).await.is_ok(), "the stored frame loads before");
        let with_binding = [&loser[..], &stored[stored.len() - 16..]].concat();
        for substitute in [with_binding, loser.clone()] {
            results.put(&name, substitute.into()).await.unwrap();
            match reader.load(&record).await {
                Err(ResultsError::UnboundStoredFrame(_)) => {}
                other => panic!(
                    "sequence {sequence}: a substituted frame was not refused: {:?}",
                    other.map(|f| f.len())
                ),
            }
        }
        results.put(&name, stored.clone()).await.unwrap();
    });

    // The ledger deleted by a raw NATS client, the roles restarted without a watermark file (they know
    // nothing of the device): the losing board's frame, sent through a gateway or published straight into
    // the frames stream, is still never stored in place of the answered one. The gateway answers "too old"
    // (another frame is stored under the number); a worker dead-letters the published copy. Before, the
    // gateway answered "accepted" and the worker stored it, bound, and the reader decrypted it.
    drop((first_server, second_server));
    runtime.block_on(async {
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        let devices = js.get_key_value("tsbc-devices").await.unwrap();
        devices.delete(format!("device.{id}")).await.unwrap();
    });
    let (_server, address) = Server::start(&keys, &nats.url(), &root.path().join("restarted"));
    let loser_board = 1 - answered_to[0];
    let ack = answer(&address, loser, boards[loser_board].credentials.mac_key());
    assert_eq!(
        ack.status,
        AckStatus::TooOld,
        "sequence {sequence}: the losing frame after the ledger's deletion"
    );
    // A frame under the number of a stored two-frame message's chunk 1, claiming another chunk layout (a
    // one-frame message of its own): the stored chunk is found under that number all the same ("too old"),
    // since frames are stored by number. Before, it had a name of its own and was accepted beside it.
    let &(two_first, _) = starts
        .iter()
        .find(|&&(first, count)| count == 2 && answered.contains_key(&(first + 1)))
        .expect("a two-frame message answered");
    let mut relayout = Meter::new(&keys, id, two_first + 1);
    let single = relayout.message(&[9, 9, 9, 9, 9]).remove(0);
    let ack = answer(&address, &single, relayout.credentials.mac_key());
    assert_eq!(
        ack.status,
        AckStatus::TooOld,
        "sequence {}: another chunk layout",
        two_first + 1
    );
    runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let js = async_nats::jetstream::new(client.clone());
        // The race dead-lettered losing frames already: this one is the next.
        let dead_before = js
            .get_stream("TSBC_DEAD")
            .await
            .unwrap()
            .info()
            .await
            .unwrap()
            .state
            .messages;
        js.publish(format!("tsbc.frames.{id}"), loser.clone().into())
            .await
            .unwrap()
            .await
            .unwrap();
        // Dead-lettered after the deliveries that leave a gateway the time to admit it (about 3 x 2 s).
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut dead = js.get_stream("TSBC_DEAD").await.unwrap();
            let (messages, last_sequence) = {
                let info = dead.info().await.unwrap();
                (info.state.messages, info.state.last_sequence)
            };
            if messages > dead_before {
                let last = dead.get_raw_message(last_sequence).await.unwrap();
                let reason = last
                    .headers
                    .get("Tsbc-Reason")
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                assert!(reason.contains("another frame is stored"), "{reason}");
                assert_eq!(&last.payload[..], &loser[..]);
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the published losing frame was never dead-lettered"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let (reader, record) = reader_and_record(client, &keys, id, sequence).await;
        let values: Vec<u16> = reader
            .keyed()
            .frame_readings::<FheUint16Id>(&reader.load(&record).await.unwrap()[0])
            .unwrap()
            .into_iter()
            .map(|v| v.decrypt(client_key.get()))
            .collect();
        assert_eq!(
            values, carried[&sequence][answered_to[0]],
            "sequence {sequence}: not the answered board's readings"
        );
    });
}
