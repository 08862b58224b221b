//! The watermark exchange's start-up sync, outside in (the shipped server, a real nats-server, a raw NATS
//! client as the attacker): only an answer bound to the new process's own request ends its wait.
//!
//! Found by an independent attack (2026-11-29): a new gateway served 200 ms after the first answer whose
//! marks authenticated, whatever answer it was, so an attacker who had sniffed an old authentic mark sent it
//! as the answer with a flood of junk behind it; the gateway served before it read the genuine answers, and
//! a replay under a rolled-back ledger was "accepted" (3 of about 50 tries). Answers now carry a tag under the
//! request's anchor device's key over the request's reply subject and the records (`src/watermark_gossip.rs`).

use crate::common;
use crate::common::nats::NatsServer;
use crate::common::service::{METERS, Meter, Server, integer_key_set, readings, runtime, send_until_acknowledged};
use futures_util::StreamExt;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tfhe_sbc_device::frame::ack::AckStatus;

/// A first process serves a device and publishes its mark; it stops. An attacker answers every sync request
/// at once with that sniffed, authentic mark. A gateway started then (no process of the service runs) must
/// not take it for an answer: it waits the full second and says that no other process answered. With any
/// authentic mark counted as an answer, it served at once and said nothing.
#[test]
fn a_sniffed_authentic_mark_sent_as_an_answer_does_not_end_a_new_processs_wait() {
    let _one_file_at_a_time = common::file_group::enter(module_path!());
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("keys");
    integer_key_set(&keys, 0x1d00_00c3);
    let nats = NatsServer::start();
    let runtime = runtime();
    let (_observer, mut marks) = runtime.block_on(async {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let marks = client.subscribe("tsbc.watermark.marks").await.unwrap();
        (client, marks)
    });
    let first = Server::start_with(&keys, &nats.url(), &root.path().join("first"), &[], Stdio::null(), "");
    let (device, _) = METERS[0];
    let mut meter = Meter::new(&keys, device, 0);
    for frame in meter.message(&readings(device, 0)) {
        assert_eq!(
            send_until_acknowledged(&first.1, &frame, meter.credentials.mac_key()),
            AckStatus::Accepted
        );
    }
    let sniffed = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), marks.next()).await })
        .expect("no mark published within 10 s of an accepted frame")
        .expect("the marks subscription ended")
        .payload;
    drop(first);

    let answered = Arc::new(AtomicUsize::new(0));
    let attacker = {
        let answered = answered.clone();
        let url = nats.url();
        runtime.spawn(async move {
            let client = async_nats::connect(url).await.unwrap();
            let mut requests = client.subscribe("tsbc.watermark.sync").await.unwrap();
            while let Some(request) = requests.next().await {
                if let Some(reply) = request.reply {
                    client.publish(reply, sniffed.clone()).await.unwrap();
                    client.flush().await.unwrap();
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let log = root.path().join("second.log");
    let (_second, _) = Server::start_with(
        &keys,
        &nats.url(),
        &root.path().join("second"),
        &["--role", "gateway"],
        Stdio::from(std::fs::File::create(&log).unwrap()),
        "",
    );
    // The sync lasts 1 s at most; its warning is written before the process serves.
    std::thread::sleep(Duration::from_secs(3));
    attacker.abort();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        answered.load(Ordering::Relaxed) > 0,
        "the attacker saw no sync request; log:\n{text}"
    );
    assert!(
        text.contains("no other process of the service answered"),
        "a new gateway took a sniffed mark sent by a client of NATS for the answer of a running process:\n{text}"
    );
}
