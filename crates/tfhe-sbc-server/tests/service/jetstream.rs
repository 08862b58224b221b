//! The server on NATS JetStream (a real nats-server on loopback, `tests/common/nats.rs`): a gateway and two
//! workers in one `tfhe-sbc-server --nats` process, on an integer key set with a fleet, a per-device and a
//! public-key meter sending single- and two-chunk messages. Checked:
//!
//! * every frame is acknowledged "accepted" with a record that opens under the device's MAC key for that
//!   frame, and only after it is in the stream; a resend is acknowledged "duplicate" and committed once;
//! * the server is killed (SIGKILL) and started again: frames accepted before are still "duplicate" after
//!   the restart (replay floors live in the devices KV bucket), a frame numbered `u64::MAX - 1` (the last a device counter hands out) is accepted
//!   once and never again;
//! * a two-chunk message whose second chunk arrives after the restart is committed whole (reassembly state
//!   lives in the devices bucket, not in a process);
//! * the NATS server is killed and started again: the gateway answers "busy" meanwhile, then goes on;
//! * a forged frame gets an unauthenticated refusal; an unknown device is refused before its body is read;
//! * every acknowledged message has exactly one announcement, and its stored frames, read back, verified and
//!   converted with the adapter, decrypt (demo client key) to exactly the readings sent.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::nats::NatsServer;
use crate::common::service::{
    METERS, Meter, Server, connect, integer_key_set, readings, send, send_until_acknowledged,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tfhe::FheUint16Id;
use tfhe::prelude::FheDecrypt;
use tfhe_sbc_adapter::commit::DeviceLedger;
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::integer::IntegerBridge;
use tfhe_sbc_adapter::key_set::client_key::read_integer_client_key;
use tfhe_sbc_adapter::key_set::server_key::read_integer_server_key;
use tfhe_sbc_adapter::key_store::{KeyStore, KeyedIntake};
use tfhe_sbc_adapter::results::reader::ResultsReader;
use tfhe_sbc_device::frame::FrameCounter;
use tfhe_sbc_device::frame::ack::AckStatus;

#[test]
fn frames_are_committed_once_across_a_kill_and_decrypt_to_what_was_sent() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0005);
    let mut nats = NatsServer::start();
    let address_file = root.path().join("address");
    let (server, address) = Server::start(&keys, &nats.url(), &address_file);

    let mut meters: Vec<Meter> = METERS.iter().map(|&(id, _)| Meter::new(&keys, id, 100)).collect();
    let mut sent: BTreeMap<(u64, u64), Vec<u16>> = BTreeMap::new();
    let mut first_frames = Vec::new();
    for meter in &mut meters {
        let mut stream = connect(&address);
        for m in 0..6 {
            let first = meter.counter.next_sequence();
            let values = readings(meter.id, m);
            for frame in meter.message(&values) {
                let ack = send(&mut stream, &frame, meter.credentials.mac_key()).unwrap();
                assert_eq!((ack.status, ack.device_id), (AckStatus::Accepted, meter.id));
                first_frames.push((meter.id, frame));
            }
            sent.insert((meter.id, first), values);
        }
        // A resend on the same connection: a duplicate, not a second commit.
        let frame = &first_frames.last().unwrap().1;
        let ack = send(&mut stream, frame, meter.credentials.mac_key()).unwrap();
        assert_eq!(ack.status, AckStatus::Duplicate);
    }

    // A two-chunk message interrupted by the kill: chunk 0 before it, chunk 1 after the restart.
    let interrupted = &mut meters[2];
    let first = interrupted.counter.next_sequence();
    let values = readings(interrupted.id, 1);
    let halves = interrupted.message(&values);
    assert_eq!(halves.len(), 2);
    let mut stream = connect(&address);
    interrupted.send_expecting(&mut stream, &halves[0], AckStatus::Accepted);
    sent.insert((interrupted.id, first), values);

    // SIGKILL, restart on the same NATS: nothing is forgotten.
    drop(server);
    let (_server, address) = Server::start(&keys, &nats.url(), &address_file);
    let interrupted = &meters[2];
    let mut stream = connect(&address);
    interrupted.send_expecting(&mut stream, &halves[1], AckStatus::Accepted);
    for meter in &mut meters {
        let mut stream = connect(&address);
        for (id, frame) in first_frames.iter().filter(|(id, _)| *id == meter.id).take(3) {
            let ack = send(&mut stream, frame, meter.credentials.mac_key()).unwrap();
            assert_eq!(
                (ack.status, ack.device_id),
                (AckStatus::Duplicate, *id),
                "accepted again after a restart"
            );
        }
        for m in 6..8 {
            let first = meter.counter.next_sequence();
            let values = readings(meter.id, m);
            for frame in meter.message(&values) {
                meter.send_expecting(&mut stream, &frame, AckStatus::Accepted);
            }
            sent.insert((meter.id, first), values);
        }
    }

    // The NATS server is killed (SIGKILL) and started again: what it acknowledged is on disk
    // (`sync_interval: always`); the gateway answers "busy" until it is back, then goes on.
    nats.restart();
    let meter = &mut meters[1];
    let first = meter.counter.next_sequence();
    let values = readings(meter.id, 8);
    for frame in meter.message(&values) {
        assert_eq!(
            send_until_acknowledged(&address, &frame, meter.credentials.mac_key()),
            AckStatus::Accepted
        );
    }
    sent.insert((meter.id, first), values);

    // The last sequence number a device counter hands out (u64::MAX - 1): accepted once, then a duplicate, also after a restart.
    let last = &mut meters[0];
    last.counter = FrameCounter::new(u64::MAX - 1);
    let values = readings(last.id, 0);
    let frame = last.message(&values).remove(0);
    sent.insert((last.id, u64::MAX - 1), values);
    let mut stream = connect(&address);
    last.send_expecting(&mut stream, &frame, AckStatus::Accepted);
    last.send_expecting(&mut stream, &frame, AckStatus::Duplicate);

    // A forged frame (one bit of its tag flipped): refused with an unauthenticated record.
    let mut forged = first_frames[0].1.clone();
    *forged.last_mut().unwrap() ^= 1;
    let refused = send(&mut stream, &forged, meters[0].credentials.mac_key()).unwrap_err();
    assert_eq!(refused.status, AckStatus::BadCredentials);
    // An unknown device: refused from its header alone, and the connection closed.
    let mut unknown = first_frames[0].1.clone();
    unknown[5 + 6..5 + 14].copy_from_slice(&999u64.to_le_bytes());
    let mut other = connect(&address);
    let refused = send(&mut other, &unknown, meters[0].credentials.mac_key());
    assert!(
        matches!(refused, Err(ack) if ack.status == AckStatus::UnknownDevice),
        "{refused:?}"
    );

    // Exactly one announcement per acknowledged message, and each decrypts to what was sent (the adapter's
    // results reader, as a cloud service would read them).
    let (_, client_key) = read_integer_client_key(&keys.join("client_key.bin")).unwrap();
    let keyed = common::service::integer_results_intake(&keys);
    let runtime = common::service::runtime();
    runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let reader = ResultsReader::connect(client, keyed).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let records = loop {
            let records = reader.messages(None, 10_000).await.unwrap();
            if records.len() >= sent.len() || Instant::now() > deadline {
                break records;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let names: BTreeSet<(u64, u64)> = records.iter().map(|r| (r.device_id, r.first_sequence)).collect();
        assert_eq!(names.len(), records.len(), "a message announced twice");
        assert_eq!(
            names,
            sent.keys().copied().collect(),
            "announced messages differ from those acknowledged"
        );
        let of_one = reader.messages(Some(METERS[1].0), 10_000).await.unwrap();
        assert!(!of_one.is_empty() && of_one.iter().all(|r| r.device_id == METERS[1].0));
        for record in &records {
            let mut decrypted = Vec::new();
            for frame in reader.load(record).await.unwrap() {
                for value in reader.keyed().frame_readings::<FheUint16Id>(&frame).unwrap() {
                    let clear: u16 = value.decrypt(client_key.get());
                    decrypted.push(clear);
                }
            }
            assert_eq!(
                &decrypted,
                &sent[&(record.device_id, record.first_sequence)],
                "{record:?}"
            );
        }
    });
}

/// The frames stream is a work queue bounded by the backlog, not by history: a stream with room for about
/// six integer frames carries 40 of them (about seven times its limit), every one answered "accepted" (after
/// "busy" answers while the workers catch up) and every message announced once, with nothing left in the
/// stream. Before, a stream kept every frame ever accepted and answered "busy" for good once full.
#[test]
fn a_small_frames_stream_carries_many_times_its_limit() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0009);
    let nats = NatsServer::start();
    let (_server, address) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("address"),
        &["--stream-max-bytes", "100000"],
        std::process::Stdio::null(),
        "",
    );
    let mut meter = Meter::new(&keys, METERS[0].0, 0);
    let mut sent = BTreeSet::new();
    let mut bytes = 0;
    for m in 0..40 {
        let first = meter.counter.next_sequence();
        let frame = meter.message(&readings(meter.id, m * 2)).remove(0);
        bytes += frame.len();
        assert_eq!(
            send_until_acknowledged(&address, &frame, meter.credentials.mac_key()),
            AckStatus::Accepted
        );
        sent.insert((meter.id, first));
    }
    println!("{bytes} bytes of frames through a 100,000-byte stream");
    assert!(bytes > 500_000);
    let runtime = common::service::runtime();
    runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let deadline = Instant::now() + Duration::from_secs(60);
        let names: BTreeSet<(u64, u64)> = loop {
            let mut stream = js.get_stream("TSBC_RESULTS").await.unwrap();
            let announced = stream.info().await.unwrap().state.messages;
            if announced >= 40 || Instant::now() > deadline {
                let records = read_announcements(&js).await;
                break records;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(names, sent, "announced messages differ from those acknowledged");
        let mut frames = js.get_stream("TSBC_FRAMES").await.unwrap();
        let left = frames.info().await.unwrap().state.messages;
        assert_eq!(left, 0, "frames stored by a worker leave the work queue");
    });
    // A role started later with another --stream-max-bytes applies it to the existing stream (before, the
    // stream kept its first bound and the option was ignored).
    drop(_server);
    let (_server, _) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("address"),
        &["--stream-max-bytes", "250000"],
        std::process::Stdio::null(),
        "",
    );
    runtime.block_on(async {
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        let mut frames = js.get_stream("TSBC_FRAMES").await.unwrap();
        assert_eq!(frames.info().await.unwrap().config.max_bytes, 250_000);
    });
}

/// Every announcement on the results stream, as (device, first sequence), asserting none repeats.
async fn read_announcements(js: &async_nats::jetstream::Context) -> BTreeSet<(u64, u64)> {
    use futures_util::StreamExt;
    let stream = js.get_stream("TSBC_RESULTS").await.unwrap();
    let consumer = stream
        .create_consumer(async_nats::jetstream::consumer::pull::Config {
            ack_policy: async_nats::jetstream::consumer::AckPolicy::None,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut names = BTreeSet::new();
    let mut messages = consumer
        .fetch()
        .max_messages(10_000)
        .expires(Duration::from_secs(2))
        .messages()
        .await
        .unwrap();
    while let Some(message) = messages.next().await {
        let payload = message.unwrap().payload.clone();
        let record = tfhe_sbc_adapter::results::MessageCommitted::decode(&payload[..34]).unwrap();
        assert!(
            names.insert((record.device_id, record.first_sequence)),
            "announced twice: {record:?}"
        );
    }
    names
}

/// NATS is not trusted with a device's ledger: a raw NATS client (no key) that rewrites the device's
/// entry in `tsbc-devices` to mark its next 128 numbers as seen gets no authenticated "duplicate" for the
/// device's next frame (which would make the device forget a reading never stored): the gateway refuses
/// to act on an entry that does not authenticate and answers "busy", so the device keeps the frame. Nor
/// does a copy of a genuine announcement, published again with a new message id, reach a reader twice.
#[test]
fn a_ledger_or_announcement_written_by_a_raw_nats_client_decides_nothing() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    use tfhe_sbc_adapter::commit::{ChunkId, DeviceLedger, LedgerLimits};
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_000b);
    let nats = NatsServer::start();
    let (_server, address) = Server::start(&keys, &nats.url(), &root.path().join("address"));
    let mut meter = Meter::new(&keys, METERS[0].0, 0);
    let runtime = common::service::runtime();
    // Before the device sends: junk published under the message id a service that de-duplicated
    // announcements by id would give the device's first message (it would drop the real one).
    runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(&nats).await);
        let publish = async_nats::jetstream::message::PublishMessage::build()
            .payload(vec![0x5a; 50].into())
            .message_id(format!("c.{}.0", meter.id));
        js.send_publish(format!("tsbc.results.{}", meter.id), publish)
            .await
            .unwrap()
            .await
            .unwrap();
    });
    let mut stream = connect(&address);
    let frame = meter.message(&readings(meter.id, 0)).remove(0);
    meter.send_expecting(&mut stream, &frame, AckStatus::Accepted);
    // The accepted frame's announcement, awaited before the attacks below: a forged ledger stops the worker
    // from committing the device's frames (as it must), so a frame still in flight then would wait for an
    // operator, and this test is not about that.
    let genuine = runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(&nats).await);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut results = js.get_stream("TSBC_RESULTS").await.unwrap();
            if results.info().await.unwrap().state.messages >= 2 {
                break results.get_raw_message(2).await.unwrap().payload;
            }
            assert!(Instant::now() < deadline, "the accepted frame was never announced");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });

    runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let js = async_nats::jetstream::new(client);
        // The attacker's ledger: numbers 1..=128 admitted, written without the device's key.
        let mut forged = DeviceLedger::new();
        for sequence in 1..=128 {
            let chunk = ChunkId {
                sequence,
                first_sequence: sequence,
                chunk_count: 1,
                chunk_index: 0,
                tag: tfhe_sbc_adapter::replay::FrameTag::of_mac(&sequence.to_le_bytes()),
            };
            let limits = LedgerLimits {
                max_incomplete: 4,
                max_backlog: 1000,
            };
            forged.admit(meter.id, chunk, &limits).unwrap();
        }
        let devices = js.get_key_value("tsbc-devices").await.unwrap();
        devices
            .put(format!("device.{}", meter.id), forged.encode().into())
            .await
            .unwrap();
    });
    let next = meter.message(&readings(meter.id, 2)).remove(0);
    let ack = meter.send_expecting(&mut stream, &next, AckStatus::Busy);
    println!("a frame after the forged ledger: {:?} (authenticated)", ack.status);
    // The same ledger with a guessed tag.
    runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(&nats).await);
        let devices = js.get_key_value("tsbc-devices").await.unwrap();
        let (_, entry) = (0, devices.get(format!("device.{}", meter.id)).await.unwrap().unwrap());
        let mut value = entry.to_vec();
        value.extend_from_slice(&[0u8; 16]);
        devices.put(format!("device.{}", meter.id), value.into()).await.unwrap();
    });
    meter.send_expecting(&mut stream, &next, AckStatus::Busy);

    runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let js = async_nats::jetstream::new(client);
        // Publish a copy of the genuine announcement (read above) under a new message id.
        let publish = async_nats::jetstream::message::PublishMessage::build()
            .payload(genuine)
            .message_id("attacker-copy");
        js.send_publish(format!("tsbc.results.{}", meter.id), publish)
            .await
            .unwrap()
            .await
            .unwrap();
        let (_, server_key) = read_integer_server_key(&keys.join("server_key.bin")).unwrap();
        let bridge = IntegerBridge::new(server_key).unwrap();
        let store = KeyStore::read_file(&keys.join("key_store.bin")).unwrap();
        let keyed = KeyedIntake::new(IntakeConfig::default(), store, bridge).unwrap();
        let reader = ResultsReader::connect(js_client(&nats).await, keyed).await.unwrap();
        let records = reader.messages(None, 100).await.unwrap();
        assert_eq!(
            records.len(),
            1,
            "a copied announcement was returned twice: {records:?}"
        );
    });
}

/// The devices bucket is NATS, so an attacker can delete a device's ledger entry, or write back an older
/// authentic one, and then replay frames the device sent: a ledger admits each number once, and it no longer
/// knows them. Two pieces of evidence stand against it: the results bucket (a frame stored there is
/// answered "duplicate", never accepted a second time), and the gateway's watermark, the highest number it
/// has seen in the device's ledger: a ledger read behind it (deleted, or an older entry) is not trusted, so
/// a replay whose stored copy was purged too is answered "busy" (the alarm `tsbc_ledger_behind_total`)
/// until the entry is restored - never "accepted".
#[test]
fn a_replay_after_the_ledger_is_purged_or_rolled_back_is_never_accepted() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    use tfhe_sbc_adapter::results::frame_key;
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_000c);
    let nats = NatsServer::start();
    let (_server, address) = Server::start(&keys, &nats.url(), &root.path().join("address"));
    let id = METERS[0].0;
    let runtime = common::service::runtime();
    let key = format!("device.{id}");
    // Frame `first_sequence` stored, and the worker's commit and announcement recorded in the ledger (so
    // that no worker writes the ledger after the test does).
    let settled = |first_sequence: u64| drop(settled_entry(&runtime, &nats, id, first_sequence));
    // Writes the ledger entry (`None`: purges it), returning the entry it replaced (`None`: none).
    let ledger = |write: Option<bytes::Bytes>| {
        runtime.block_on(async {
            let js = async_nats::jetstream::new(js_client(&nats).await);
            let devices = js.get_key_value("tsbc-devices").await.unwrap();
            let current = devices.get(&key).await.unwrap();
            match write {
                Some(value) => drop(devices.put(&key, value).await.unwrap()),
                None => devices.purge(&key).await.unwrap(),
            }
            current
        })
    };
    let current = || {
        runtime.block_on(async {
            let js = async_nats::jetstream::new(js_client(&nats).await);
            let devices = js.get_key_value("tsbc-devices").await.unwrap();
            devices.get(&key).await.unwrap().unwrap()
        })
    };
    let purge_stored = |first_sequence: u64| {
        runtime.block_on(async {
            let js = async_nats::jetstream::new(js_client(&nats).await);
            let results = js.get_key_value("tsbc-results").await.unwrap();
            results.purge(frame_key(id, first_sequence, 0)).await.unwrap();
        })
    };
    let mut stream = connect(&address);

    // Purged: the device's first message, committed, then its ledger entry gone, then the frame again.
    let mut first = Meter::new(&keys, id, 0);
    let frame0 = first.message(&readings(id, 0)).remove(0);
    first.send_expecting(&mut stream, &frame0, AckStatus::Accepted);
    settled(0);
    let entry0 = ledger(None).unwrap();
    first.send_expecting(&mut stream, &frame0, AckStatus::Duplicate);
    // Its stored copy purged as well: no evidence but the watermark, which refuses the read.
    purge_stored(0);
    first.send_expecting(&mut stream, &frame0, AckStatus::Busy);
    // Restored by the operator: the ledger knows the frame.
    ledger(Some(entry0));
    first.send_expecting(&mut stream, &frame0, AckStatus::Duplicate);

    // Rolled back inside the window: number 20, then number 10 (out of order); the entry saved between the
    // two written back (the same newest number, an older generation); number 10 again: found stored; a new
    // frame: "busy" (the gateway saw a later generation) until the entry is restored.
    let mut late = Meter::new(&keys, id, 20);
    let frame20 = late.message(&readings(id, 2)).remove(0);
    late.send_expecting(&mut stream, &frame20, AckStatus::Accepted);
    settled(20);
    let saved20 = current();
    let mut early = Meter::new(&keys, id, 10);
    let frame10 = early.message(&readings(id, 4)).remove(0);
    early.send_expecting(&mut stream, &frame10, AckStatus::Accepted);
    settled(10);
    let after10 = ledger(Some(saved20)).unwrap();
    early.send_expecting(&mut stream, &frame10, AckStatus::Duplicate);
    let mut at30 = Meter::new(&keys, id, 30);
    let frame30 = at30.message(&readings(id, 6)).remove(0);
    at30.send_expecting(&mut stream, &frame30, AckStatus::Busy);
    ledger(Some(after10));

    // Rolled back below the replayed frame's own number: number 30 committed, the entry from before it
    // written back, number 30 again: found stored; then its stored copy purged: refused by the watermark.
    let before30 = current();
    at30.send_expecting(&mut stream, &frame30, AckStatus::Accepted);
    settled(30);
    let after30 = ledger(Some(before30)).unwrap();
    at30.send_expecting(&mut stream, &frame30, AckStatus::Duplicate);
    purge_stored(30);
    at30.send_expecting(&mut stream, &frame30, AckStatus::Busy);
    // Restored: the device's next new frame is accepted as usual.
    ledger(Some(after30));
    let frame31 = at30.message(&readings(id, 8)).remove(0);
    at30.send_expecting(&mut stream, &frame31, AckStatus::Accepted);
    println!("replays after a purge and after rollbacks: duplicate while stored, busy once purged, never accepted");
}

/// Device `id`'s ledger entry once its frame `first_sequence` is stored and its ledger holds no open or
/// unannounced message (so that no worker writes the ledger after the test does); at most 60 s.
fn settled_entry(runtime: &tokio::runtime::Runtime, nats: &NatsServer, id: u64, first_sequence: u64) -> bytes::Bytes {
    use tfhe_sbc_adapter::results::frame_key;
    runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(nats).await);
        let results = js.get_key_value("tsbc-results").await.unwrap();
        let devices = js.get_key_value("tsbc-devices").await.unwrap();
        let key = format!("device.{id}");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let stored = results.get(frame_key(id, first_sequence, 0)).await.unwrap().is_some();
            let entry = devices.get(&key).await.unwrap().unwrap();
            let ledger = DeviceLedger::decode(&entry[..entry.len() - 16]).unwrap();
            if stored && ledger.messages.is_empty() && ledger.unannounced.is_empty() {
                return entry;
            }
            assert!(Instant::now() < deadline, "frame {first_sequence} never committed");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

async fn js_client(nats: &NatsServer) -> async_nats::Client {
    async_nats::connect(nats.url()).await.unwrap()
}

/// A device whose counter went back (a counter file restored from a backup, or cloned) sends new readings
/// under numbers its ledger admitted: "duplicate" would make it forget them unsent. The ledger keeps each
/// admitted frame's tag, so the gateway answers "too old" with the number after the device's highest; the
/// frames it did take, sent again, are still "duplicate". NATS decides nothing: a value a raw NATS client
/// wrote under a committed frame's name (not authentic) leaves its resend "duplicate".
#[test]
fn another_frame_under_a_committed_number_is_too_old_not_a_duplicate() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    use tfhe_sbc_adapter::results::frame_key;
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_000f);
    let nats = NatsServer::start();
    let (_server, address) = Server::start(&keys, &nats.url(), &root.path().join("address"));
    let mut meter = Meter::new(&keys, METERS[0].0, 50);
    let id = meter.id;
    let sequence = |frame: &[u8]| tfhe_sbc_adapter::intake::header_of(frame).unwrap().sequence;
    let mut sent = Vec::new();
    // Single-frame messages (even m: 5 readings).
    for m in [0, 2, 4] {
        let frame = meter.message(&readings(id, m)).remove(0);
        assert_eq!(
            send_until_acknowledged(&address, &frame, meter.credentials.mac_key()),
            AckStatus::Accepted
        );
        sent.push(frame);
    }
    let highest = sequence(sent.last().unwrap());
    let runtime = common::service::runtime();
    runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(&nats).await);
        let results = js.get_key_value("tsbc-results").await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        for frame in &sent {
            while results.get(frame_key(id, sequence(frame), 0)).await.unwrap().is_none() {
                assert!(Instant::now() < deadline, "frame {} never committed", sequence(frame));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    // The first answer that is not "busy", on a fresh connection each time (at most 60 s).
    let answer = |frame: &[u8]| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ack = send(&mut connect(&address), frame, meter.credentials.mac_key()).unwrap();
            if ack.status != AckStatus::Busy || Instant::now() > deadline {
                return ack;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let mut restored = Meter::new(&keys, id, 50);
    for (m, frame) in sent.iter().enumerate() {
        restored.counter = FrameCounter::new(sequence(frame));
        let reused = restored.message(&readings(id, 100 + 2 * m as u64)).remove(0);
        assert_eq!(sequence(&reused), sequence(frame));
        assert_ne!(&reused, frame);
        let ack = answer(&reused);
        assert_eq!(ack.status, AckStatus::TooOld, "number {} reused", sequence(frame));
        assert_eq!(ack.detail, highest + 1, "number {} reused", sequence(frame));
    }
    for frame in &sent {
        assert_eq!(answer(frame).status, AckStatus::Duplicate);
    }
    // A raw NATS client overwrites the stored copy of the first frame with bytes that do not authenticate:
    // that frame, sent again, is still "duplicate" (not "too old": the stored value decides nothing).
    runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(&nats).await);
        let results = js.get_key_value("tsbc-results").await.unwrap();
        let mut forged = sent[0].clone();
        let last = forged.len() - 1;
        forged[last] ^= 1;
        results
            .put(frame_key(id, sequence(&sent[0]), 0), forged.into())
            .await
            .unwrap();
    });
    assert_eq!(answer(&sent[0]).status, AckStatus::Duplicate);
    // The device, moved to the number it was told, is accepted again.
    restored.counter = FrameCounter::new(highest + 1);
    let next = restored.message(&readings(id, 200)).remove(0);
    assert_eq!(answer(&next).status, AckStatus::Accepted);
}

/// The ledger watermark as a freshness anchor outside NATS: a gateway and workers started with
/// `--watermark-file` keep, on their own disk, the highest number they saw in each device's ledger. Killed
/// (SIGKILL) and restarted with the file, the process still refuses a ledger written back to an older
/// authentic state by a raw NATS client whose replay's stored copy was purged too: the replay is answered
/// "busy", never "accepted". Restarted without the file (the gap the file closes, documented), the same
/// replay is accepted.
#[test]
fn a_role_restarted_with_its_watermark_file_refuses_a_rolled_back_ledger() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    use tfhe_sbc_adapter::results::frame_key;
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0010);
    let nats = NatsServer::start();
    let watermark = root.path().join("watermark.txt");
    let address_file = root.path().join("address");
    let with_file = ["--watermark-file", watermark.to_str().unwrap()];
    let start = |extra: &[&str]| {
        Server::start_with(
            &keys,
            &nats.url(),
            &address_file,
            extra,
            std::process::Stdio::null(),
            "",
        )
    };
    let (server, address) = start(&with_file);
    let id = METERS[0].0;
    let key = format!("device.{id}");
    let runtime = common::service::runtime();
    // The device's ledger entry once frame `sequence` is stored and the ledger holds no open message.
    let settled = |sequence: u64| settled_entry(&runtime, &nats, id, sequence);
    let mut meter = Meter::new(&keys, id, 0);
    let frame0 = meter.message(&readings(id, 0)).remove(0);
    meter.send_expecting(&mut connect(&address), &frame0, AckStatus::Accepted);
    let before = settled(0);
    let frame1 = meter.message(&readings(id, 2)).remove(0);
    meter.send_expecting(&mut connect(&address), &frame1, AckStatus::Accepted);
    settled(1);
    // Written within a second of the move.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&watermark)
        .unwrap_or_default()
        .contains(&format!("\n{id} 1 "))
    {
        assert!(
            Instant::now() < deadline,
            "the watermark file never named device {id} at 1"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);
    // A raw NATS client writes back the entry from before frame 1 and purges frame 1's stored copy.
    runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(&nats).await);
        let devices = js.get_key_value("tsbc-devices").await.unwrap();
        devices.put(&key, before.clone()).await.unwrap();
        let results = js.get_key_value("tsbc-results").await.unwrap();
        results.purge(frame_key(id, 1, 0)).await.unwrap();
    });
    let (server, address) = start(&with_file);
    meter.send_expecting(&mut connect(&address), &frame1, AckStatus::Busy);
    drop(server);
    // Without the file the restarted process has no watermark for the device: the replay is accepted.
    let (_server, address) = start(&[]);
    meter.send_expecting(&mut connect(&address), &frame1, AckStatus::Accepted);
}

/// A gateway process that never read a device's ledger - one started after the device was served, and one
/// started before but that never served it - still refuses that ledger rolled back, because the processes
/// exchange their watermarks over NATS (`src/watermark_gossip.rs`, each mark tagged under the device's MAC
/// key): a raw NATS client writes back the device's older authentic entry and purges the replayed frame's
/// stored copy, and the replay through either new gateway is "busy", as through the process that served
/// the device (before the exchange both answered "accepted", and do with the merge removed). A forged mark
/// (tagged under another key, or not a whole record) published by the raw client raises nothing: the
/// entry written back as it was, both new gateways accept the device's next frame.
#[test]
fn a_gateway_that_never_read_the_ledger_refuses_it_rolled_back_from_the_marks_of_the_others() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    use tfhe_sbc_adapter::results::frame_key;
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0012);
    let nats = NatsServer::start();
    let start = |name: &str, extra: &[&str]| {
        Server::start_with(
            &keys,
            &nats.url(),
            &root.path().join(format!("{name}.address")),
            extra,
            std::fs::File::create(root.path().join(format!("{name}.log")))
                .unwrap()
                .into(),
            "",
        )
    };
    // The process that serves the device (gateway and worker), and a gateway already running beside it.
    let (_served, address) = start("served", &[]);
    let (_before, before_address) = start("before", &["--role", "gateway"]);
    let id = METERS[0].0;
    let key = format!("device.{id}");
    let runtime = common::service::runtime();
    let settled = |sequence: u64| settled_entry(&runtime, &nats, id, sequence);
    let mut meter = Meter::new(&keys, id, 0);
    let frame0 = meter.message(&readings(id, 0)).remove(0);
    meter.send_expecting(&mut connect(&address), &frame0, AckStatus::Accepted);
    let entry0 = settled(0);
    let frame1 = meter.message(&readings(id, 2)).remove(0);
    meter.send_expecting(&mut connect(&address), &frame1, AckStatus::Accepted);
    let entry1 = settled(1);
    // A gateway started after the device was served, while a raw NATS client floods the start-up sync's
    // subject with requests of its own (empty, and with reply subjects and junk: 500 a second for 3 s): a
    // process answers only requests tagged under a device's key, so the new gateway's own request is
    // answered at once (the red team had the answers deferred past the new process's start with one empty
    // request; with every request answered, the flood uses up the answers and the gateway starts without
    // the marks: "accepted" below).
    // With them, authentic requests under one other device's key (the holder of a stolen board's key), 500 a
    // second, each to a fresh inbox: they use up that device's answers only (one budget for all requests
    // let them use up every answer: "accepted" below).
    let flood = {
        let url = nats.url();
        let keys = keys.clone();
        std::thread::spawn(move || {
            let stolen = Meter::new(&keys, METERS[2].0, 0);
            let anchor = METERS[2].0.to_le_bytes();
            common::service::runtime().block_on(async {
                let client = async_nats::connect(url).await.unwrap();
                // And every request seen gets a junk "answer" at once on its reply subject (the new gateway's
                // included): an answer counts only if its marks authenticate.
                let mut seen = client.subscribe("tsbc.watermark.sync").await.unwrap();
                let answering = client.clone();
                let junk_answers = tokio::spawn(async move {
                    while let Some(request) = futures_util::StreamExt::next(&mut seen).await {
                        if let Some(reply) = request.reply {
                            let _ = answering.publish(reply, bytes::Bytes::from(vec![0xa5; 49])).await;
                        }
                    }
                });
                let until = Instant::now() + Duration::from_secs(3);
                let mut sent = 0u32;
                while Instant::now() < until {
                    for _ in 0..50 {
                        // A reply subject of the exchange's form, so that the requests are answered.
                        let reply = format!(
                            "tsbc.watermark.reply.{}",
                            client.new_inbox().rsplit('.').next().unwrap()
                        );
                        let signed = [&b"TSWS sync v1\0\0\0\0"[..], &anchor, reply.as_bytes()].concat();
                        let request = [&anchor[..], &stolen.credentials.mac_key().tag(&signed)].concat();
                        client
                            .publish_with_reply("tsbc.watermark.sync", reply, request.into())
                            .await
                            .unwrap();
                        client
                            .publish("tsbc.watermark.sync", bytes::Bytes::new())
                            .await
                            .unwrap();
                        let reply = client.new_inbox();
                        let junk = bytes::Bytes::from(vec![0x5a; 24]);
                        client
                            .publish_with_reply("tsbc.watermark.sync", reply, junk)
                            .await
                            .unwrap();
                        sent += 3;
                    }
                    client.flush().await.unwrap();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                junk_answers.abort();
                sent
            })
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let (_after, after_address) = start("after", &["--role", "gateway"]);
    assert!(flood.join().unwrap() > 1500, "the flood ran");
    // A raw NATS client: forged marks first (a high generation under another device's key, and a torn
    // record), then the entry from before frame 1 written back and frame 1's stored copy purged.
    runtime.block_on(async {
        let client = js_client(&nats).await;
        let other = tfhe_sbc_device::frame::mac::MacKey::from_bytes([0x5a; 32]);
        // The record of src/watermark_gossip.rs's layout: device id, generation, "has a number", highest,
        // fingerprint, and the tag over "TSWM watermark1\0" and those 33 bytes - here under a key that is
        // not the device's.
        let mut forged = Vec::new();
        forged.extend_from_slice(&id.to_le_bytes());
        forged.extend_from_slice(&u64::MAX.to_le_bytes());
        forged.push(1);
        forged.extend_from_slice(&(u64::MAX - 1).to_le_bytes());
        forged.extend_from_slice(&1u64.to_le_bytes());
        let tag = other.tag(&[&b"TSWM watermark1\0"[..], &forged].concat());
        forged.extend_from_slice(&tag);
        // 2,000 messages of each: every one dropped and counted, the log warned once (a line per message
        // filled the disk in the red team's flood).
        for _ in 0..2_000 {
            client
                .publish("tsbc.watermark.marks", forged.clone().into())
                .await
                .unwrap();
            client
                .publish("tsbc.watermark.marks", forged[..48].to_vec().into())
                .await
                .unwrap();
        }
        client.flush().await.unwrap();
        let js = async_nats::jetstream::new(client);
        let devices = js.get_key_value("tsbc-devices").await.unwrap();
        devices.put(&key, entry0.clone()).await.unwrap();
        let results = js.get_key_value("tsbc-results").await.unwrap();
        results.purge(frame_key(id, 1, 0)).await.unwrap();
    });
    for gateway in [&after_address, &before_address, &address] {
        meter.send_expecting(&mut connect(gateway), &frame1, AckStatus::Busy);
    }
    let log = std::fs::read_to_string(root.path().join("after.log")).unwrap();
    let warnings = log
        .lines()
        .filter(|l| l.contains("marks that do not authenticate"))
        .count();
    assert!(
        (1..=2).contains(&warnings),
        "{warnings} warnings for 4,000 refused mark messages:\n{log}"
    );
    // The latest entry written back: every gateway takes the device's next frame (the forged marks raised
    // no watermark above it).
    runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(&nats).await);
        let devices = js.get_key_value("tsbc-devices").await.unwrap();
        devices.put(&key, entry1.clone()).await.unwrap();
    });
    for (i, gateway) in [&after_address, &before_address].into_iter().enumerate() {
        let next = meter.message(&readings(id, 4 + 2 * i as u64)).remove(0);
        meter.send_expecting(&mut connect(gateway), &next, AckStatus::Accepted);
    }
}

/// The text of `http://{address}/metrics` (`--metrics-listen`).
fn metrics_text(address: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: {address}\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text
}

/// A ledger **forked** under one generation: the entry a second process would write from an older entry
/// written back (the red team's fork through a gateway that had not yet heard the newer mark), made here
/// directly with the device's MAC key - the entry the gateway saw, at the same generation, with a clone's
/// frame admitted under the device's next number. Its newest number is past the gateway's watermark, so
/// only the entry's fingerprint tells it from the one the gateway saw: the device's genuine next frame is
/// answered "busy", never "too old" (which it is with the fingerprint check removed: the clone's frame
/// holds the number), and `tsbc_ledger_fork_total` counts it.
#[test]
fn a_ledger_forked_under_one_generation_is_refused_with_the_fork_alarm() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    use tfhe_sbc_adapter::commit::{ChunkId, LedgerLimits};
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0013);
    let nats = NatsServer::start();
    let metrics = format!("127.0.0.1:{}", common::nats::free_port());
    let (_server, address) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("address"),
        &["--metrics-listen", &metrics],
        std::process::Stdio::null(),
        "",
    );
    let id = METERS[0].0;
    let runtime = common::service::runtime();
    let mut meter = Meter::new(&keys, id, 0);
    let mut frame = Vec::new();
    for (sequence, m) in [(0, 0), (1, 2)] {
        frame = meter.message(&readings(id, m)).remove(0);
        meter.send_expecting(&mut connect(&address), &frame, AckStatus::Accepted);
        settled_entry(&runtime, &nats, id, sequence);
    }
    let seen = settled_entry(&runtime, &nats, id, 1);
    // Frame 1 sent again: the gateway reads the settled entry itself (its mark), whenever the workers'
    // marks reach it.
    meter.send_expecting(&mut connect(&address), &frame, AckStatus::Duplicate);
    let mut fork = DeviceLedger::decode(&seen[..seen.len() - 16]).unwrap();
    let clone_frame = ChunkId {
        sequence: 2,
        first_sequence: 2,
        chunk_count: 1,
        chunk_index: 0,
        tag: tfhe_sbc_adapter::replay::FrameTag::of_mac(b"a clone's frame 2"),
    };
    fork.admit(id, clone_frame, &LedgerLimits::default()).unwrap();
    // Sealed as the service seals an entry: the bytes, then a tag under the device's MAC key over
    // "TSLG ledger v2\0\0", the device id and the bytes. Same generation as the entry seen.
    let mut value = fork.encode();
    let tag = meter
        .credentials
        .mac_key()
        .tag(&[&b"TSLG ledger v2\0\0"[..], &id.to_le_bytes(), &value].concat());
    value.extend_from_slice(&tag);
    runtime.block_on(async {
        let js = async_nats::jetstream::new(js_client(&nats).await);
        let devices = js.get_key_value("tsbc-devices").await.unwrap();
        devices.put(format!("device.{id}"), value.into()).await.unwrap();
    });
    let frame2 = meter.message(&readings(id, 4)).remove(0);
    meter.send_expecting(&mut connect(&address), &frame2, AckStatus::Busy);
    let text = metrics_text(&metrics);
    assert!(
        text.lines()
            .any(|l| l.starts_with("tsbc_ledger_fork_total ") && !l.ends_with(" 0")),
        "no fork counted:\n{text}"
    );
}

/// An older authentic ledger entry with the **same newest number** written back by a raw NATS client while
/// a frame it does not hold waits in the work queue (a gateway alone: nothing stores it yet). The window's
/// highest number cannot tell the two entries apart; the ledger's generation (one on at every write) can:
/// the gateway that saw the newer entry answers a clone's other frame under the forgotten number "busy"
/// (`tsbc_ledger_behind_total`), never "accepted" (with the generation check removed it is "Accepted": both
/// boards would hear "accepted" under one number, and the first one's readings could be lost). Restored, the
/// clone's frame is "too old" and the first board's is "duplicate".
#[test]
fn an_older_entry_with_the_same_newest_number_is_refused_by_the_gateway_that_saw_the_newer() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_0011);
    let nats = NatsServer::start();
    let (_gateway, address) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("address"),
        &["--role", "gateway"],
        std::process::Stdio::null(),
        "",
    );
    let id = METERS[0].0;
    let key = format!("device.{id}");
    let runtime = common::service::runtime();
    let devices = |write: Option<bytes::Bytes>| {
        runtime.block_on(async {
            let js = async_nats::jetstream::new(js_client(&nats).await);
            let devices = js.get_key_value("tsbc-devices").await.unwrap();
            if let Some(value) = write {
                devices.put(&key, value).await.unwrap();
            }
            devices.get(&key).await.unwrap().unwrap()
        })
    };
    let generation = |entry: &bytes::Bytes| DeviceLedger::decode(&entry[..entry.len() - 16]).unwrap().generation;
    let mut stream = connect(&address);
    // Number 5, then number 3 (out of order): the two entries both have 5 as their newest number.
    let mut board = Meter::new(&keys, id, 5);
    let frame5 = board.message(&readings(id, 0)).remove(0);
    board.send_expecting(&mut stream, &frame5, AckStatus::Accepted);
    let before3 = devices(None);
    board.counter = FrameCounter::new(3);
    let frame3 = board.message(&readings(id, 2)).remove(0);
    board.send_expecting(&mut stream, &frame3, AckStatus::Accepted);
    let after3 = devices(None);
    assert!(generation(&after3) > generation(&before3));
    // Written back: the ledger no longer holds 3, and its newest number is still 5.
    devices(Some(before3));
    let mut clone = Meter::new(&keys, id, 3);
    let other3 = clone.message(&readings(id, 4)).remove(0);
    assert_ne!(other3, frame3);
    clone.send_expecting(&mut stream, &other3, AckStatus::Busy);
    // Restored by the operator: the clone's frame is "too old", the first board's "duplicate".
    devices(Some(after3));
    clone.send_expecting(&mut stream, &other3, AckStatus::TooOld);
    board.send_expecting(&mut stream, &frame3, AckStatus::Duplicate);
}
