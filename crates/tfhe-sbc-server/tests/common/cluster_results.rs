//! What `tests/cluster.rs` finds in JetStream after a run: every announcement on `TSBC_RESULTS`, counted
//! raw (one per published record that opens under its device's MAC key) and as the adapter's
//! `ResultsReader` returns them, each message's stored frames decrypted with the demo client key of its
//! key set, and, for a message acknowledged and never announced, the evidence: its device's ledger and
//! which of its frames the results bucket holds.

use crate::cluster_harness::{Fleet, Sent};
use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};
use tfhe::FheUint16Id;
use tfhe::boolean::prelude::Ciphertext;
use tfhe::prelude::FheDecrypt;
use tfhe_sbc_adapter::commit::DeviceLedger;
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::interop::big_key::{BigKeyBridge, BooleanSet};
use tfhe_sbc_adapter::interop::integer::{IntegerBridge, ReadingBits};
use tfhe_sbc_adapter::interop::{BooleanBridge, Converter, Input};
use tfhe_sbc_adapter::key_set::client_key::{read_client_key, read_integer_client_key};
use tfhe_sbc_adapter::key_set::server_key::{read_integer_server_key, read_server_key};
use tfhe_sbc_adapter::key_store::{KeyStore, KeyedIntake};
use tfhe_sbc_adapter::results::reader::ResultsReader;
use tfhe_sbc_adapter::results::{DEVICES_BUCKET, MessageCommitted, RESULTS_BUCKET, RESULTS_STREAM};

/// The counts of one run.
#[derive(Debug, Default)]
pub struct Counts {
    /// Messages whose every frame a gateway acknowledged.
    pub acknowledged: u64,
    /// Distinct messages announced.
    pub announced: u64,
    /// Acknowledged and never announced.
    pub lost: u64,
    /// Messages a reader was given more than once, or announced twice with different contents.
    pub duplicated: u64,
    /// Extra identical copies of an announcement on the results stream (a reader keeps one).
    pub repeats: u64,
    /// Messages decrypted and compared with what was sent.
    pub checked: u64,
}

/// What was found: the counts, and the messages behind a non-zero `lost` or `duplicated`.
pub struct Findings {
    pub counts: Counts,
    pub missing: Vec<(u64, u64)>,
    pub duplicated: Vec<(u64, u64)>,
}

/// Reads and checks every announcement of `fleet`'s devices on the cluster at `urls`.
pub async fn check(fleet: &Fleet, urls: &[String], acknowledged: u64) -> Findings {
    let client = async_nats::connect(urls.to_vec()).await.unwrap();
    wait_for_results_bucket(&client).await;
    let js = jetstream::new(client.clone());
    let store_of = |dir: &Path| KeyStore::read_file(&dir.join("key_store.bin")).unwrap();
    let (_, server_key) = read_integer_server_key(&fleet.integer_dir.join("server_key.bin")).unwrap();
    let bridge = IntegerBridge::new(server_key)
        .unwrap()
        .with_reading_bits(ReadingBits::from_bits(16).unwrap());
    let keyed = KeyedIntake::new(IntakeConfig::default(), store_of(&fleet.integer_dir), bridge).unwrap();
    let integer = ResultsReader::connect(client.clone(), keyed).await.unwrap();
    let (_, boolean_key) = read_server_key(&fleet.boolean_dir.join("server_key.bin")).unwrap();
    let bridge = BigKeyBridge::for_server_key(BooleanSet::DefaultKsPbs, &boolean_key).unwrap();
    let keyed = KeyedIntake::new(IntakeConfig::default(), store_of(&fleet.boolean_dir), bridge).unwrap();
    let ks_pbs = ResultsReader::connect(client.clone(), keyed).await.unwrap();
    let (_, tfhe_lib_key) = read_server_key(&fleet.tfhe_lib_dir.join("server_key.bin")).unwrap();
    let bridge = BooleanBridge::new(&tfhe_lib_key).unwrap();
    let keyed = KeyedIntake::new(IntakeConfig::default(), store_of(&fleet.tfhe_lib_dir), bridge).unwrap();
    let tfhe_lib = ResultsReader::connect(client.clone(), keyed).await.unwrap();

    // Announcements are sealed under each device's MAC key: a reader returns those of its key set, so
    // the three key sets' readers together return every message.
    let deadline = Instant::now() + Duration::from_secs(180);
    let records = loop {
        // A reading consumer may be refused while the cluster settles after a node's restart.
        let read = async {
            let mut records = integer.messages(None, 100_000).await?;
            records.extend(ks_pbs.messages(None, 100_000).await?);
            records.extend(tfhe_lib.messages(None, 100_000).await?);
            Ok::<_, tfhe_sbc_adapter::ResultsError>(records)
        };
        match read.await {
            Ok(records) if records.len() >= fleet.expected.len() || Instant::now() > deadline => break records,
            Ok(_) => {}
            Err(e) if Instant::now() < deadline => println!("reading the announcements: {e}; trying again"),
            Err(e) => panic!("{e}"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let raw = raw_announcements(&js, fleet).await;

    let mut per_name: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for record in &records {
        *per_name.entry((record.device_id, record.first_sequence)).or_default() += 1;
    }
    let mut duplicated: BTreeSet<(u64, u64)> = per_name.iter().filter(|(_, n)| **n > 1).map(|(k, _)| *k).collect();
    let mut repeats = 0;
    for (name, copies) in &raw {
        let distinct: BTreeSet<&[u8; MessageCommitted::BYTES]> = copies.iter().collect();
        if distinct.len() > 1 {
            println!("{name:?} announced {} times with different records", copies.len());
            duplicated.insert(*name);
        }
        repeats += copies.len() as u64 - 1;
    }
    let repeated: Vec<String> = raw
        .iter()
        .filter(|(_, copies)| copies.len() > 1)
        .map(|(name, copies)| format!("{name:?} x{}", copies.len()))
        .collect();
    if !repeated.is_empty() {
        println!(
            "announcements published more than once (identical): {}",
            repeated.join(", ")
        );
    }
    let missing: Vec<(u64, u64)> = fleet
        .expected
        .keys()
        .filter(|k| !per_name.contains_key(k))
        .copied()
        .collect();
    let unexpected = per_name.keys().filter(|k| !fleet.expected.contains_key(k)).count();
    assert_eq!(unexpected, 0, "announced, never sent");
    for name in missing.iter().take(5) {
        print_evidence(&js, *name).await;
    }

    // Every announced message decrypts to what was sent.
    let (_, integer_client) = read_integer_client_key(&fleet.integer_dir.join("client_key.bin")).unwrap();
    let mut checked = compare(
        &integer,
        &records,
        fleet,
        &store_of(&fleet.integer_dir),
        |reader, inputs| {
            let mut values = Vec::new();
            for input in inputs {
                for value in reader.keyed().frame_readings::<FheUint16Id>(input).unwrap() {
                    values.push(FheDecrypt::<u16>::decrypt(&value, integer_client.get()));
                }
            }
            Sent::Readings(values)
        },
    )
    .await;
    for (dir, reader_is_ks_pbs) in [(&fleet.boolean_dir, true), (&fleet.tfhe_lib_dir, false)] {
        let (_, client_key) = read_client_key(&dir.join("client_key.bin")).unwrap();
        let bytes = |bits: Vec<Ciphertext>| {
            let bits: Vec<bool> = bits.iter().map(|b| client_key.get().decrypt(b)).collect();
            let bytes = bits.chunks(8).map(|byte| {
                byte.iter()
                    .enumerate()
                    .fold(0u8, |acc, (j, &bit)| acc | u8::from(bit) << j)
            });
            Sent::Bytes(bytes.collect())
        };
        let store = store_of(dir);
        checked += if reader_is_ks_pbs {
            compare(&ks_pbs, &records, fleet, &store, |r, inputs| {
                bytes(r.keyed().convert(&inputs[0]).unwrap())
            })
            .await
        } else {
            compare(&tfhe_lib, &records, fleet, &store, |r, inputs| {
                bytes(r.keyed().convert(&inputs[0]).unwrap())
            })
            .await
        };
    }
    Findings {
        counts: Counts {
            acknowledged,
            announced: per_name.len() as u64,
            lost: missing.len() as u64,
            duplicated: duplicated.len() as u64,
            repeats,
            checked,
        },
        missing,
        duplicated: duplicated.into_iter().collect(),
    }
}

/// Every message of `store`'s devices in `records`, loaded through `reader`, decrypted with `decrypt` and
/// compared with what was sent; how many.
async fn compare<C: Converter>(
    reader: &ResultsReader<C>,
    records: &[MessageCommitted],
    fleet: &Fleet,
    store: &KeyStore,
    decrypt: impl Fn(&ResultsReader<C>, &[Input<C>]) -> Sent,
) -> u64 {
    let mut checked = 0;
    for record in records.iter().filter(|r| store.get(r.device_id).is_some()) {
        let inputs = reader.load(record).await.unwrap();
        let key = (record.device_id, record.first_sequence);
        assert_eq!(decrypt(reader, &inputs), fleet.expected[&key], "message {key:?}");
        checked += 1;
    }
    checked
}

/// Every record on the results stream that opens under its device's MAC key, by message: the copies.
async fn raw_announcements(
    js: &jetstream::Context,
    fleet: &Fleet,
) -> BTreeMap<(u64, u64), Vec<[u8; MessageCommitted::BYTES]>> {
    let stream = js.get_stream(RESULTS_STREAM).await.unwrap();
    let mut consumer = stream
        .create_consumer(consumer::pull::Config {
            ack_policy: consumer::AckPolicy::None,
            inactive_threshold: Duration::from_secs(60),
            ..Default::default()
        })
        .await
        .unwrap();
    let pending = consumer.info().await.unwrap().num_pending;
    let mut copies: BTreeMap<(u64, u64), Vec<[u8; MessageCommitted::BYTES]>> = BTreeMap::new();
    let (mut consumed, mut last_progress) = (0u64, Instant::now());
    while consumed < pending {
        assert!(
            last_progress.elapsed() < Duration::from_secs(60),
            "the results stream stopped delivering"
        );
        let mut batch = consumer
            .fetch()
            .max_messages((pending - consumed).min(1000) as usize)
            .expires(Duration::from_secs(1))
            .messages()
            .await
            .unwrap();
        while let Some(message) = batch.next().await {
            let message = message.unwrap();
            consumed += 1;
            last_progress = Instant::now();
            if let Some(record) = MessageCommitted::open(&message.payload, |id| fleet.mac_keys.get(&id)) {
                let entry = copies.entry((record.device_id, record.first_sequence)).or_default();
                entry.push(record.encode());
            }
        }
    }
    if let Ok(info) = consumer.info().await {
        let _ = stream.delete_consumer(&info.name).await;
    }
    copies
}

/// What JetStream holds of the message `(device, first)`: its device's ledger and its stored frames.
async fn print_evidence(js: &jetstream::Context, (device, first): (u64, u64)) {
    println!("evidence for message (device {device}, first sequence {first}):");
    if let Ok(devices) = js.get_key_value(DEVICES_BUCKET).await {
        match devices.entry(format!("device.{device}")).await {
            Ok(Some(entry)) => {
                let bytes = &entry.value[..entry.value.len().saturating_sub(16)];
                println!(
                    "  ledger revision {}: {:?}",
                    entry.revision,
                    DeviceLedger::decode(bytes)
                );
            }
            Ok(None) => println!("  no ledger entry"),
            Err(e) => println!("  ledger unreadable: {e}"),
        }
    }
    if let Ok(frames) = js.get_key_value(RESULTS_BUCKET).await {
        for chunk in 0..4 {
            let key = tfhe_sbc_adapter::results::frame_key(device, first, chunk);
            let stored = frames.entry(key.clone()).await.ok().flatten().map(|e| e.value.len());
            println!("  {key}: {stored:?}");
        }
    }
}

/// Waits (at most 60 s) until the results bucket answers: for a few seconds after a node's restart, the
/// cluster may still be electing the bucket's stream leader, and a lookup times out.
async fn wait_for_results_bucket(client: &async_nats::Client) {
    let js = jetstream::new(client.clone());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match js.get_key_value(RESULTS_BUCKET).await {
            Ok(_) => return,
            Err(e) if Instant::now() < deadline => {
                println!("opening the results bucket: {e}; trying again");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("the results bucket never opened: {e}"),
        }
    }
}
