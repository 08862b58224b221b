//! The server's command line without a key set: help, and one-line errors that say what to fix (the full
//! path, with keys and devices, is `scripts/pi-client-e2e.sh`).

#![allow(clippy::unwrap_used)]

use std::process::Command;

fn server(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-server"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn help_and_one_line_errors() {
    let (code, stdout, _) = server(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("--keys") && stdout.contains("--demo-client-key"),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let (code, _, stderr) = server(&["--keys", missing.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("server_key.bin") && !stderr.contains("panicked"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");

    // --demo-client-key with --nats: refused at once (the JetStream roles never decrypt), not silently
    // ignored, in one line that names the trusted party's reader of the results store instead.
    let (code, _, stderr) = server(&[
        "--keys",
        missing.to_str().unwrap(),
        "--nats",
        "nats://127.0.0.1:4222",
        "--demo-client-key",
        "client_key.bin",
    ]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("cannot be used with") && stderr.contains("--demo-client-key") && stderr.contains("--nats"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tfhe-sbc-server read --keys DIR --client-key FILE --nats URL"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    // The reader it names exists and takes those options.
    let (code, stdout, _) = server(&["read", "--help"]);
    assert_eq!(code, Some(0));
    assert!(
        ["--keys <DIR>", "--client-key <FILE>", "--nats <URL>"]
            .iter()
            .all(|option| stdout.contains(option)),
        "{stdout}"
    );

    for (flag, value) in [("--threshold", "3"), ("--state", "state.txt"), ("--integer-bits", "16")] {
        let (code, _, stderr) = server(&[
            "--keys",
            missing.to_str().unwrap(),
            "--nats",
            "nats://127.0.0.1:4222",
            flag,
            value,
        ]);
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains("cannot be used with") && stderr.contains(flag),
            "{stderr}"
        );
    }

    // --listen without a port (or not HOST:PORT): refused at once in one line saying what to write, before
    // the key set is read and NATS is reached (an unreachable NATS server is tried for 30 s; the address
    // was refused only after that, naming NATS).
    for (listen, says) in [
        ("127.0.0.1", "has no port: write HOST:PORT, e.g. 127.0.0.1:7700"),
        ("::1", "an IPv6 address goes in brackets"),
        ("0.0.0.0:70000", "is not a port number"),
    ] {
        for nats in [None, Some("nats://127.0.0.1:1")] {
            let mut args = vec!["--keys", missing.to_str().unwrap(), "--listen", listen];
            args.extend(nats.iter().flat_map(|url| ["--nats", url]));
            let started = std::time::Instant::now();
            let (code, _, stderr) = server(&args);
            assert_eq!(code, Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains("--listen") && stderr.contains(says),
                "{args:?}: {stderr}"
            );
            assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
            assert!(started.elapsed() < std::time::Duration::from_secs(10), "{args:?}");
        }
    }

    // A file that is not a server key.
    std::fs::write(dir.path().join("server_key.bin"), b"not a key").unwrap();
    let (code, _, stderr) = server(&["--keys", dir.path().to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with("tfhe-sbc-server: error: ") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// A count or duration of 0 would start a server that serves nothing (no worker, no connection, every frame
/// "busy"; `--max-message-age 0` has its own test in tests/service/message_expiry.rs), and JetStream refuses more than 5 replicas only after a minute of
/// retries: each is refused at once, exit 2, in one line naming the option and what to give. Any clap
/// error is one line too.
#[test]
fn zero_counts_and_durations_are_refused_in_one_line() {
    let single = ["--keys", "k"];
    let nats = ["--keys", "k", "--nats", "nats://127.0.0.1:4222"];
    let cases: [(&[&str], &str, &str); 13] = [
        (&single, "--exit-after", "0"),
        (&nats, "--frames-in-flight", "0"),
        (&nats, "--stream-max-bytes", "0"),
        (&nats, "--workers", "0"),
        (&nats, "--replicas", "0"),
        (&nats, "--replicas", "6"),
        (&nats, "--ack-wait", "0"),
        (&nats, "--idle-timeout", "0"),
        (&nats, "--max-connections", "0"),
        (&single, "--conversion-queue-bytes", "0"),
        (&single, "--conversion-queue-per-device", "0"),
        (&single, "--idle-timeout", "zero"),
        (
            &["read", "--keys", "k", "--nats", "nats://127.0.0.1:4222"],
            "--read-timeout",
            "0",
        ),
    ];
    for (base, flag, value) in cases {
        let args: Vec<&str> = base.iter().copied().chain([flag, value]).collect();
        let (code, _, stderr) = server(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(flag) && stderr.contains("give 1"), "{args:?}: {stderr}");
    }
    let args = [
        "--keys",
        "k",
        "--nats",
        "nats://127.0.0.1:4222",
        "--stream-max-bytes=-5",
    ];
    let (code, _, stderr) = server(&args);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--stream-max-bytes") && stderr.contains("give 1"),
        "{stderr}"
    );
    let (code, _, stderr) = server(&["--keys", "k", "--nats", ""]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--nats"), "{stderr}");
    let (code, _, stderr) = server(&["--keys", "k", "--no-such-option"]);
    assert_eq!(code, Some(2));
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--no-such-option"), "{stderr}");
}
