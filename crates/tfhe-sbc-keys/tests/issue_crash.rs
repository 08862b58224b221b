//! `issue --count 50` is crash-consistent, checked outside-in with the shipped binary: a pass is SIGKILLed at
//! eight points (the journal written; 1, 5, 20, 35, 49 and all 50 credential files written; the key store's
//! temporary file present, i.e. during the store write), each point polled from the file system on a fresh
//! copy of one `tfhe-lib` key set, then the same command is run again. After it: 50 devices in the key store,
//! each credential file authenticating a frame against the key store's MAC keys (the adapter's intake), `show`
//! clean, no journal, no orphan and no temporary file. Public-key mode: the cheapest devices (no client key, no
//! key switching), so the test exercises the pass's files and store, not the key generation.
//!
//! Also with the shipped binary: an I/O error injected (strace's `inject`) at every `fsync` and `renameat` of a
//! two-device pass leaves a key set that `repair` makes complete or empty, never a store listing a device
//! without its credential file; and `repair` with a key store restored from an older backup moves the
//! newer devices' credential files into `quarantine/`, byte for byte, instead of deleting them.
#![allow(clippy::unwrap_used)]

mod common;

use common::{KeySet, credentials_path, device_frames, run, run_ok, s, scratch_copy};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tfhe_sbc_adapter::intake::IntakeConfig;
use tfhe_sbc_adapter::key_store::KeyStore;

const FIRST: u64 = 1000;
const COUNT: u64 = 50;
/// Attempts per kill point before the test gives up on reaching it (a pass that ended before the point was
/// seen is tried again on a fresh copy).
const ATTEMPTS: usize = 10;

fn key_set() -> &'static KeySet {
    KeySet::shared(&["--parameters", "tfhe-lib", "--key-id", "0x5eed0050"], &[])
}

/// Where a pass is killed: the first moment the file system shows this.
#[derive(Clone, Copy, Debug)]
enum KillPoint {
    /// `issue.journal` exists.
    Journal,
    /// At least this many `devices/<ID>.tsdc`.
    Credentials(usize),
    /// The atomic writer's temporary file of the key store (`.key_store.bin.XXXXXX`) exists.
    StoreWrite,
}

/// What a killed pass left.
#[derive(Debug)]
struct Left {
    journal: bool,
    credentials: usize,
    temporary: Vec<String>,
    stored: usize,
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn credentials(dir: &Path) -> usize {
    names(&dir.join("devices"))
        .iter()
        .filter(|n| !n.starts_with('.') && n.ends_with(".tsdc"))
        .count()
}

fn reached(dir: &Path, point: KillPoint) -> bool {
    match point {
        KillPoint::Journal => dir.join("issue.journal").exists(),
        KillPoint::Credentials(k) => credentials(dir) >= k,
        KillPoint::StoreWrite => names(dir).iter().any(|n| n.starts_with(".key_store.bin.")),
    }
}

fn stored(dir: &Path) -> usize {
    KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap())
        .unwrap()
        .len()
}

fn issue_args(dir: &str) -> Vec<String> {
    [
        "issue",
        "--dir",
        dir,
        "--device-id",
        &FIRST.to_string(),
        "--count",
        &COUNT.to_string(),
        "--mode",
        "public-key",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Starts the pass on `dir` and SIGKILLs it at `point`; `None` if the pass ended before the point was seen.
fn kill_at(dir: &Path, point: KillPoint) -> Option<Left> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-keys"))
        .args(issue_args(s(dir)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if reached(dir, point) {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            break;
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        assert!(
            Instant::now() < deadline,
            "the pass neither reached {point:?} nor ended in 30 s"
        );
        std::thread::yield_now();
    }
    let mut temporary: Vec<String> = names(dir)
        .into_iter()
        .filter(|n| n.starts_with('.') && n != ".lock")
        .collect();
    temporary.extend(names(&dir.join("devices")).into_iter().filter(|n| n.starts_with('.')));
    Some(Left {
        journal: dir.join("issue.journal").exists(),
        credentials: credentials(dir),
        temporary,
        stored: stored(dir),
    })
}

/// The key set in `dir` holds devices `FIRST..FIRST + COUNT`, each credential file authenticating against
/// the key store, and nothing else: no journal, no temporary or orphan file, `show` without a warning.
fn assert_complete(dir: &Path) {
    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    let mut ids: Vec<u64> = store.iter().map(|r| r.device_id()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (FIRST..FIRST + COUNT).collect::<Vec<_>>());
    let mut expected: Vec<String> = ids.iter().map(|id| format!("{id}.tsdc")).collect();
    expected.sort();
    assert_eq!(
        names(&dir.join("devices")),
        expected,
        "devices/ holds exactly the 50 credential files"
    );
    assert_eq!(
        names(dir).into_iter().filter(|n| n != "quarantine").collect::<Vec<_>>(),
        [
            ".lock",
            "client_key.bin",
            "devices",
            "key_store.bin",
            "public_key.tspk",
            "server_key.bin"
        ],
        "no journal, no temporary file"
    );
    let intake = store.into_intake(IntakeConfig::default());
    for id in FIRST..FIRST + COUNT {
        let file = std::fs::read(credentials_path(dir, id)).unwrap();
        let frames = device_frames(&file, &id.to_le_bytes(), id as u8);
        let parsed = intake
            .verify(&frames[0])
            .unwrap_or_else(|e| panic!("device {id}'s frame: {e}"));
        assert_eq!(parsed.header.device_id, id);
    }
    let show = run(&["show", "--dir", s(dir)]);
    assert!(show.status.success());
    assert!(
        show.stderr.is_empty(),
        "show warns: {}",
        String::from_utf8_lossy(&show.stderr)
    );
    assert!(String::from_utf8_lossy(&show.stdout).contains("devices     50"));
}

#[test]
fn issue_killed_at_eight_points_is_completed_by_a_plain_rerun() {
    let started = Instant::now();
    let points = [
        KillPoint::Journal,
        KillPoint::Credentials(1),
        KillPoint::Credentials(5),
        KillPoint::Credentials(20),
        KillPoint::Credentials(35),
        KillPoint::Credentials(49),
        KillPoint::Credentials(50),
        KillPoint::StoreWrite,
    ];
    let mut journal_text = None;
    for point in points {
        let (scratch, left, attempts) = (1..=ATTEMPTS)
            .find_map(|attempt| {
                let scratch = scratch_copy(&key_set().dir());
                kill_at(scratch.path(), point).map(|left| (scratch, left, attempt))
            })
            .unwrap_or_else(|| panic!("{point:?}: every one of {ATTEMPTS} passes ended before it"));
        let dir = scratch.path();
        // The commit point is the key store: it holds none or all of the pass's devices; the only other files
        // are the pass's credential files and the atomic writer's temporary files.
        assert!(left.stored == 0 || left.stored == COUNT as usize, "{point:?}: {left:?}");
        assert!(left.credentials <= COUNT as usize, "{point:?}: {left:?}");
        assert!(
            left.temporary
                .iter()
                .all(|n| n.starts_with(".key_store.bin.") || n.starts_with(".issue.journal.") || n.contains(".tsdc.")),
            "{point:?}: {left:?}"
        );
        if left.journal && journal_text.is_none() {
            journal_text = std::fs::read_to_string(dir.join("issue.journal")).ok();
        }
        eprintln!("kill point {point:?} (attempt {attempts}): left {left:?}");
        if !left.journal && left.stored == COUNT as usize {
            // Killed after the pass had finished (the journal removed): there is nothing to re-run (a re-run
            // is refused, "already provisioned", as for any device issued twice); the set is complete.
            assert_complete(dir);
            continue;
        }
        let rerun = run_ok(&issue_args(s(dir)).iter().map(String::as_str).collect::<Vec<_>>());
        let recovered = rerun.lines().next().unwrap_or_default().to_owned();
        eprintln!("  re-run: {recovered}");
        if left.journal {
            assert!(recovered.starts_with("recovered an interrupted issue"), "{rerun}");
        }
        assert_complete(dir);
    }
    // Killed after the key store's commit, before the journal's removal: the journal of a pass whose devices
    // are all in the store. The re-run finishes the pass and issues nothing new.
    let scratch = scratch_copy(&key_set().dir());
    let dir = scratch.path();
    run_ok(&issue_args(s(dir)).iter().map(String::as_str).collect::<Vec<_>>());
    std::fs::write(
        dir.join("issue.journal"),
        journal_text.expect("a kill point left a journal"),
    )
    .unwrap();
    let rerun = run_ok(&issue_args(s(dir)).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(rerun.contains("the pass is finished"), "{rerun}");
    assert!(
        rerun.contains("are issued: the interrupted run had written them"),
        "{rerun}"
    );
    assert_complete(dir);
    eprintln!(
        "8 kill points and the post-commit journal: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Files of devices the key store does not hold, without a journal (an older tool's interrupted pass): the
/// refusal names `repair`, which moves them into `quarantine/` (and removes temporary files), and the plain
/// re-run then completes.
#[test]
fn orphans_without_a_journal_are_moved_into_quarantine_by_repair() {
    let scratch = scratch_copy(&key_set().dir());
    let dir = scratch.path();
    std::fs::write(credentials_path(dir, FIRST + 3), b"left over").unwrap();
    let refused = run(&issue_args(s(dir)).iter().map(String::as_str).collect::<Vec<_>>());
    let line = common::assert_error(&refused, &["1003.tsdc exists", "tfhe-sbc-keys repair --dir"]);
    assert!(line.contains(s(dir)), "{line}");
    std::fs::write(dir.join("devices").join(format!(".{}.tsdc.Ab12Cd", FIRST + 4)), b"half").unwrap();
    let repaired = run_ok(&["repair", "--dir", s(dir)]);
    assert!(repaired.contains("removed 1 temporary file"), "{repaired}");
    assert!(
        repaired.contains("moved 1 file of devices the key store does not hold into")
            && repaired.contains("quarantine (a key store restored")
            && repaired.ends_with(": 1003.tsdc\n"),
        "{repaired}"
    );
    assert_eq!(
        std::fs::read(dir.join("quarantine").join("1003.tsdc")).unwrap(),
        b"left over"
    );
    assert!(run_ok(&["repair", "--dir", s(dir)]).contains("is consistent: 0 devices, nothing to repair"));
    run_ok(&issue_args(s(dir)).iter().map(String::as_str).collect::<Vec<_>>());
    assert_complete(dir);
}

/// The device ids in `dir`'s key store.
fn stored_ids(dir: &Path) -> Vec<u64> {
    let store = KeyStore::decode(&std::fs::read(dir.join("key_store.bin")).unwrap()).unwrap();
    let mut ids: Vec<u64> = store.iter().map(|r| r.device_id()).collect();
    ids.sort_unstable();
    ids
}

#[test]
fn an_io_error_at_any_fsync_or_rename_of_a_pass_leaves_a_key_set_that_repair_completes_or_empties() {
    const IDS: [u64; 2] = [2000, 2001];
    let args = [
        "issue",
        "--dir",
        "DIR",
        "--device-id",
        "2000",
        "--count",
        "2",
        "--mode",
        "public-key",
    ];
    // A clean pass of two devices: 9 fsyncs (journal, its directory, 2 x (credential file, directory), key
    // store, directory, the directory after the journal's removal) and 4 renames.
    let mut outcomes = Vec::new();
    for (syscall, calls) in [("fsync", 9), ("renameat", 4)] {
        for k in 1..=calls {
            let scratch = scratch_copy(&key_set().dir());
            let dir = scratch.path();
            let output = Command::new("strace")
                .args(["-f", "-o", "/dev/null", "-e", &format!("trace={syscall}")])
                .arg("-e")
                .arg(format!("inject={syscall}:error=EIO:when={k}"))
                .arg("--")
                .arg(env!("CARGO_BIN_EXE_tfhe-sbc-keys"))
                .args(args.map(|a| if a == "DIR" { s(dir) } else { a }))
                .output()
                .expect("strace (fault injection into the shipped binary)");
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            let journal = dir.join("issue.journal").exists();
            assert!(
                !output.status.success(),
                "{syscall} #{k}: the injected error was not reported"
            );
            if journal {
                assert!(
                    stderr.contains("tfhe-sbc-keys repair --dir"),
                    "{syscall} #{k}: {stderr}"
                );
            }
            let (stored_before, files_before) = (stored_ids(dir), credentials(dir));
            let repaired = run_ok(&["repair", "--dir", s(dir)]);
            let ids = stored_ids(dir);
            let expected_files: Vec<String> = ids.iter().map(|id| format!("{id}.tsdc")).collect();
            let outcome = format!(
                "{syscall} #{k}: journal kept {journal}, store {stored_before:?}, {files_before} credential files; \
                 repair -> store {ids:?}: {}",
                repaired.lines().next().unwrap_or_default()
            );
            println!("{outcome}");
            assert!(ids.is_empty() || ids == IDS, "{outcome}");
            assert_eq!(names(&dir.join("devices")), expected_files, "{outcome}");
            assert!(
                !dir.join("issue.journal").exists() && !dir.join("quarantine").exists(),
                "{outcome}"
            );
            outcomes.push(ids.len());
        }
    }
    println!(
        "13 injected errors: {} passes completed by repair, {} rolled back",
        outcomes.iter().filter(|&&n| n == 2).count(),
        outcomes.iter().filter(|&&n| n == 0).count()
    );
}

#[test]
fn repair_with_a_key_store_from_an_older_backup_moves_the_newer_credentials_into_quarantine() {
    let scratch = scratch_copy(&key_set().dir());
    let dir = scratch.path();
    run_ok(&["issue", "--dir", s(dir), "--device-id", "3000", "--mode", "public-key"]);
    let backup = std::fs::read(dir.join("key_store.bin")).unwrap();
    run_ok(&[
        "issue",
        "--dir",
        s(dir),
        "--device-id",
        "3001",
        "--count",
        "2",
        "--mode",
        "public-key",
    ]);
    let newer = std::fs::read(dir.join("key_store.bin")).unwrap();
    let files: Vec<Vec<u8>> = [3001, 3002]
        .iter()
        .map(|&id| std::fs::read(credentials_path(dir, id)).unwrap())
        .collect();
    // The key store restored from the backup taken before 3001 and 3002 were issued.
    std::fs::write(dir.join("key_store.bin"), &backup).unwrap();
    let repaired = run_ok(&["repair", "--dir", s(dir)]);
    println!("{repaired}");
    let quarantine = dir.join("quarantine");
    assert!(
        repaired.contains(&format!(
            "moved 2 files of devices the key store does not hold into {}",
            quarantine.display()
        )) && repaired.contains("3001.tsdc, 3002.tsdc"),
        "{repaired}"
    );
    assert_eq!(names(&dir.join("devices")), ["3000.tsdc"]);
    for (id, file) in [3001, 3002].iter().zip(&files) {
        assert_eq!(
            &std::fs::read(quarantine.join(format!("{id}.tsdc"))).unwrap(),
            file,
            "device {id}"
        );
    }
    // The operator's way back: the newer key store, the files moved back; the set is whole again.
    std::fs::write(dir.join("key_store.bin"), &newer).unwrap();
    for id in [3001, 3002] {
        std::fs::rename(quarantine.join(format!("{id}.tsdc")), credentials_path(dir, id)).unwrap();
    }
    assert!(run_ok(&["repair", "--dir", s(dir)]).contains("is consistent: 3 devices, nothing to repair"));
}
