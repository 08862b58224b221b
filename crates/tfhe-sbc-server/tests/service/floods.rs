//! What a client of NATS can do to the service's subjects (junk frames, a full dead-letter stream, the workers'
//! consumer changed) must
//! neither stop the workers nor grow the log by a line per message. Found by an independent attack on the
//! shipped binaries (2026-11-29): with the dead-letter stream full (discard new), every worker stopped behind
//! the frames it could not dead-letter and logged "cannot dead-letter" 1,024 times a second; 20,000 junk
//! messages on the frames subjects gave 13,941 log lines.

use crate::common;
use crate::common::nats::NatsServer;
use crate::common::service::{METERS, Meter, Server, integer_key_set, readings, send_until_acknowledged};
use async_nats::jetstream::stream;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tfhe_sbc_device::frame::ack::AckStatus;

/// Junk published to the frames subjects.
const JUNK: usize = 3_000;
/// Log lines allowed for all of it: a few per call site per 10 s ("suppressed" counts the rest).
const MAX_LOG_LINES: usize = 120;

#[test]
fn a_full_dead_letter_stream_and_a_junk_flood_neither_stop_the_workers_nor_flood_the_log() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_00b1);
    let nats = NatsServer::start();
    let runtime = common::service::runtime();
    // The dead-letter stream as the earlier version made it (discard new), small, and full of junk.
    runtime.block_on(async {
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        js.create_stream(stream::Config {
            name: "TSBC_DEAD".into(),
            subjects: vec!["tsbc.dead.>".into()],
            max_bytes: 65_536,
            discard: stream::DiscardPolicy::New,
            storage: stream::StorageType::File,
            ..Default::default()
        })
        .await
        .unwrap();
        let mut stored = 0;
        loop {
            let ack = js.publish("tsbc.dead.999", vec![0xee; 1_000].into()).await.unwrap();
            if ack.await.is_err() {
                break;
            }
            stored += 1;
            assert!(stored < 1_000, "the dead-letter stream never filled");
        }
    });
    let log = root.path().join("server.log");
    let (_server, address) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("address"),
        &[],
        std::process::Stdio::from(std::fs::File::create(&log).unwrap()),
        "export RUST_LOG=info;",
    );
    let (device, _) = METERS[0];
    // The service set it to discard old at start-up; a client of NATS with the roles' update right sets it
    // back to discard new while the service runs (a re-attack did, and the workers stopped: they set the
    // policy only at start-up then). Every worker checks it every 2 s.
    std::thread::sleep(Duration::from_secs(2));
    runtime.block_on(async {
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        let mut dead = js.get_stream("TSBC_DEAD").await.unwrap();
        let config = dead.info().await.unwrap().config.clone();
        js.update_stream(stream::Config {
            discard: stream::DiscardPolicy::New,
            ..config
        })
        .await
        .unwrap();
    });
    runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        for i in 0..JUNK {
            let junk = vec![(i % 251) as u8; 64 + i % 700];
            client
                .publish(format!("tsbc.frames.{device}"), junk.into())
                .await
                .unwrap();
        }
        client.flush().await.unwrap();
    });
    // A genuine message after the junk: acknowledged, then stored and announced by the worker, which
    // must get through the junk (each dead-lettered into the full stream, or not stored at all) first.
    let mut meter = Meter::new(&keys, device, 0);
    let first = meter.counter.next_sequence();
    let frame = meter.message(&readings(device, 0)).remove(0);
    assert_eq!(
        send_until_acknowledged(&address, &frame, meter.credentials.mac_key()),
        AckStatus::Accepted
    );
    let announced = runtime.block_on(async {
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let mut results = js.get_stream("TSBC_RESULTS").await.unwrap();
            let count = results.info().await.unwrap().state.messages;
            if count >= 1 || Instant::now() > deadline {
                let mut dead = js.get_stream("TSBC_DEAD").await.unwrap();
                let discard = dead.info().await.unwrap().config.discard;
                break (count, discard);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let text = std::fs::read_to_string(&log).unwrap();
    let lines = text.lines().count();
    println!(
        "{JUNK} junk frames behind a full dead-letter stream: {} announcement(s), {lines} log lines, discard {:?}",
        announced.0, announced.1
    );
    // At least once on the stream (a stall may put an announcement there twice: the readers keep one per
    // message, docs/security.md), never zero.
    assert!(
        announced.0 >= 1,
        "the genuine message (device {device}, sequence {first}) was not announced within 90 s behind the junk: \
         the workers stopped at the full dead-letter stream; log:\n{}",
        text.lines().rev().take(20).collect::<Vec<_>>().join("\n")
    );
    assert_eq!(
        announced.1,
        stream::DiscardPolicy::Old,
        "the dead-letter stream drops its oldest letters"
    );
    assert!(
        lines <= MAX_LOG_LINES,
        "{lines} log lines for {JUNK} junk frames (a line per message?):\n{}",
        text.lines().take(40).collect::<Vec<_>>().join("\n")
    );
}

/// The workers' consumer changed by a client of NATS with the workers' rights while the service runs: a
/// worker sets it back, and every acknowledged message is announced. Found by the same attack (a filter
/// matching nothing, one delivery: 4 acknowledged messages never announced) and, on the check that compared
/// only those fields, by a fifth (headers only: the workers dead-lettered empty bodies of acknowledged
/// frames, lost for good; `max_batch: 1` or `max_expires: 1ms`: pulls refused, 4 of 12 messages left
/// unannounced, and a "pull ended" line 8,000 times a second). Each change in turn, two messages after
/// each, on one service.
#[test]
fn a_changed_workers_consumer_is_set_back_and_acknowledged_messages_are_announced() {
    use async_nats::jetstream::consumer::{AckPolicy, pull::Config};
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys: PathBuf = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_00b2);
    let nats = NatsServer::start();
    let log = root.path().join("server.log");
    let (_server, address) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("address"),
        &[],
        std::process::Stdio::from(std::fs::File::create(&log).unwrap()),
        "export RUST_LOG=warn;",
    );
    let workers = Config {
        durable_name: Some("workers".into()),
        ack_policy: AckPolicy::Explicit,
        ack_wait: Duration::from_secs(30),
        max_ack_pending: 1024,
        max_deliver: -1,
        ..Default::default()
    };
    // `None`: the consumer deleted (what an inactive threshold of 1 ms does once a worker's pull ends).
    let changes: [(&str, Option<Config>); 6] = [
        (
            "a filter matching nothing, one delivery",
            Some(Config {
                filter_subject: "tsbc.frames.999".into(),
                max_deliver: 1,
                ..workers.clone()
            }),
        ),
        (
            "headers only",
            Some(Config {
                headers_only: true,
                ..workers.clone()
            }),
        ),
        (
            "one message per pull",
            Some(Config {
                max_batch: 1,
                ..workers.clone()
            }),
        ),
        (
            "pulls that expire in 1 ms",
            Some(Config {
                max_expires: Duration::from_millis(1),
                ..workers.clone()
            }),
        ),
        (
            "deleted after 1 ms without a pull (inactive threshold)",
            Some(Config {
                inactive_threshold: Duration::from_millis(1),
                ..workers.clone()
            }),
        ),
        ("deleted", None),
    ];
    let runtime = common::service::runtime();
    let (device, _) = METERS[0];
    let mut meter = Meter::new(&keys, device, 0);
    let mut sent = 0;
    for (change, config) in changes {
        runtime.block_on(async {
            let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
            let frames = js.get_stream("TSBC_FRAMES").await.unwrap();
            match config {
                Some(config) => {
                    frames.update_consumer(config).await.unwrap();
                }
                None => {
                    frames.delete_consumer("workers").await.unwrap();
                }
            }
        });
        for _ in 0..2 {
            for frame in meter.message(&readings(device, sent)) {
                assert_eq!(
                    send_until_acknowledged(&address, &frame, meter.credentials.mac_key()),
                    AckStatus::Accepted,
                    "{change}"
                );
            }
            sent += 1;
        }
        let (announced, config) = runtime.block_on(async {
            let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let mut results = js.get_stream("TSBC_RESULTS").await.unwrap();
                let count = results.info().await.unwrap().state.messages;
                if count >= sent || Instant::now() > deadline {
                    let frames = js.get_stream("TSBC_FRAMES").await.unwrap();
                    let mut consumer: async_nats::jetstream::consumer::PullConsumer =
                        frames.get_consumer("workers").await.unwrap();
                    break (count, consumer.info().await.unwrap().config.clone());
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            announced >= sent,
            "{change}: {announced} of {sent} acknowledged messages announced within 60 s of the consumer's \
             change; log:\n{text}"
        );
        assert_eq!(
            (
                config.filter_subject.as_str(),
                config.max_deliver,
                config.headers_only,
                config.max_batch,
                config.max_expires
            ),
            ("", -1, false, 0, Duration::ZERO),
            "{change}: the consumer set back"
        );
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("set back"), "the change is logged:\n{text}");
    assert!(
        !text.contains("dead-lettered"),
        "an acknowledged frame was dead-lettered:\n{text}"
    );
    let lines = text.lines().count();
    assert!(
        lines <= 60,
        "{lines} log lines for four changes of the consumer:\n{}",
        text.lines().take(40).collect::<Vec<_>>().join("\n")
    );
}
