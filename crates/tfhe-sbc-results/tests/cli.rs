//! The command line: bad input is one line on stderr and exit status 2, and so is a run from a tree that no
//! commit holds (without `--allow-dirty`). (Also makes `cargo test` build the
//! binary, so that scripts/test-all.sh runs the quick mode with the host tests' build.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

#[test]
fn bad_arguments_are_one_line() {
    for args in [&["--no-such-option"][..], &["--out"][..], &["extra"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_results"))
            .args(args)
            .output()
            .expect("the binary runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_names_the_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_results"))
        .arg("--help")
        .output()
        .expect("the binary runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for option in ["--quick", "--out", "--firmware-log", "--service-log", "--allow-dirty"] {
        assert!(help.contains(option), "{option}");
    }
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=results test", "-c", "user.email=results@test.invalid"])
        .args(args)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// A git repository with one commit and a changed file; removed on drop.
struct Repo(PathBuf);

impl Repo {
    fn dirty() -> Self {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("results-tree-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        git(&dir, &["init", "-q"]);
        std::fs::write(dir.join("a.txt"), "one\n").expect("write");
        git(&dir, &["add", "a.txt"]);
        git(&dir, &["commit", "-q", "-m", "one"]);
        std::fs::write(dir.join("a.txt"), "two\n").expect("write");
        Self(dir)
    }
}

impl Drop for Repo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Without --allow-dirty, a modified tree (here a temporary repository, through git's own GIT_DIR and
/// GIT_WORK_TREE) and a tree with no commit are refused before anything is measured: one line naming
/// --allow-dirty, exit status 2, no page written.
#[test]
fn a_tree_no_commit_holds_is_refused() {
    let dirty = Repo::dirty();
    let out_dir = dirty.0.join("out");
    let cases: [(&str, PathBuf, &Path, &str); 2] = [
        ("modified", dirty.0.join(".git"), dirty.0.as_path(), "has changes"),
        (
            "no commit",
            dirty.0.join("no-such-git-dir"),
            dirty.0.as_path(),
            "no git commit",
        ),
    ];
    for (what, git_dir, work_tree, says) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_results"))
            .args(["--quick", "--out"])
            .arg(&out_dir)
            .env("GIT_DIR", &git_dir)
            .env("GIT_WORK_TREE", work_tree)
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: {stderr}");
        assert!(
            stderr.contains(says) && stderr.contains("--allow-dirty"),
            "{what}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{what}");
        assert!(!out_dir.join("results.md").exists(), "{what}: a page was written");
    }
}
