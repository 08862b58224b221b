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
    /// A repository whose work tree is clean at its one commit.
    fn clean() -> Self {
        let repo = Self::dirty();
        git(&repo.0, &["commit", "-q", "-a", "-m", "two"]);
        repo
    }

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

/// git obeys GIT_DIR and GIT_WORK_TREE over the workspace's own directory: pointed at a clean repository
/// elsewhere, it used to report a clean tree whatever the built workspace held, and the page was stamped
/// with the other repository's commit. The tool now refuses a tree that is not the workspace it was built
/// from (exit 2, one line naming the variables and --allow-dirty) before anything is measured.
#[test]
fn git_pointed_at_another_clean_tree_is_refused() {
    let clean = Repo::clean();
    let out_dir = clean.0.join("out");
    for (with_work_tree, what) in [(true, "GIT_DIR and GIT_WORK_TREE"), (false, "GIT_DIR alone")] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_results"));
        command
            .args(["--quick", "--out"])
            .arg(&out_dir)
            .env("GIT_DIR", clean.0.join(".git"));
        if with_work_tree {
            command.env("GIT_WORK_TREE", &clean.0);
        }
        let out = command.output().expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: {stderr}");
        // GIT_DIR alone makes git compare the other repository's index with this directory: refused as a
        // modified tree; with GIT_WORK_TREE the other tree is clean and only the new check refuses it.
        assert!(stderr.contains("--allow-dirty"), "{what}: {stderr}");
        assert!(!with_work_tree || stderr.contains("GIT_DIR"), "{what}: {stderr}");
        assert!(!out_dir.join("results.md").exists(), "{what}: a page was written");
    }
}
