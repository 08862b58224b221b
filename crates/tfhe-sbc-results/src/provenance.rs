//! Which source tree a page is generated from: a clean tree of a commit that exists (`git rev-parse`), a
//! modified one (the page could not be reproduced from any commit), or none found. The command refuses to
//! write a page from anything but a clean tree unless `--allow-dirty` is given, and then says so on the page
//! and on every plot.

use std::path::Path;
use std::process::Command;

/// The git tree the page is generated from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tree {
    /// A clean tree at this commit (10 hex digits).
    Clean(String),
    /// A tree with changes (tracked or untracked files) against this commit.
    Modified(String),
    /// A clean tree of this commit, but not the workspace that was built: git's environment (`GIT_DIR`,
    /// `GIT_WORK_TREE`) points at another work tree, here `top` (or at none).
    Elsewhere {
        /// The other tree's commit (10 hex digits).
        commit: String,
        /// The other tree's top-level directory, as git names it (empty: none).
        top: String,
    },
    /// No commit found (not a git work tree, or no git).
    Unknown,
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Tree {
    /// Asks git about the work tree at `dir` (the workspace that was built).
    pub fn read(dir: &Path) -> Tree {
        let head = git(dir, &["rev-parse", "--verify", "--short=10", "HEAD^{commit}"]);
        let status = git(dir, &["status", "--porcelain"]);
        match Self::from_git(head, status) {
            Tree::Clean(commit) => {
                // git obeys GIT_DIR and GIT_WORK_TREE over `-C`: a clean tree elsewhere says nothing of this one.
                let top = git(dir, &["rev-parse", "--show-toplevel"]).unwrap_or_default();
                let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => false,
                };
                if !top.is_empty() && same(Path::new(&top), dir) {
                    Tree::Clean(commit)
                } else {
                    Tree::Elsewhere { commit, top }
                }
            }
            other @ (Tree::Modified(_) | Tree::Elsewhere { .. } | Tree::Unknown) => other,
        }
    }

    /// The tree from `git rev-parse`'s commit and `git status --porcelain`'s output (`None`: the command
    /// failed). A status that could not be read is not taken as clean.
    pub fn from_git(head: Option<String>, status: Option<String>) -> Tree {
        match (head, status) {
            (Some(c), Some(s)) if !c.is_empty() && s.is_empty() => Tree::Clean(c),
            (Some(c), _) if !c.is_empty() => Tree::Modified(c),
            _ => Tree::Unknown,
        }
    }

    /// What the page and every plot say about the source: "commit X", or why it is not reproducible.
    pub fn stamp(&self) -> String {
        match self {
            Tree::Clean(c) => format!("commit {c}"),
            Tree::Modified(c) => format!("generated from a modified tree of commit {c}: not reproducible"),
            Tree::Elsewhere { commit, .. } => {
                format!("generated from a workspace that is not the clean tree of commit {commit}: not reproducible")
            }
            Tree::Unknown => "generated outside any git commit: not reproducible".into(),
        }
    }

    /// Why a page must not be written from this tree without `--allow-dirty` (one line), or `None` when clean.
    pub fn refusal(&self) -> Option<String> {
        match self {
            Tree::Clean(_) => None,
            Tree::Modified(c) => Some(format!(
                "the work tree of commit {c} has changes (git status --porcelain is not empty), so the page could \
                 not be reproduced: commit them, or pass --allow-dirty to write it marked as not reproducible"
            )),
            Tree::Elsewhere { commit, top } => Some(format!(
                "git's environment (GIT_DIR, GIT_WORK_TREE) points at another work tree ({top:?}, commit {commit}) \
                 than the workspace that was built, so its state says nothing of this one: unset them, or pass \
                 --allow-dirty to write the page marked as not reproducible"
            )),
            Tree::Unknown => Some(
                "no git commit found for the workspace (git rev-parse HEAD failed), so the page could not be \
                 reproduced: run it in a git clone, or pass --allow-dirty to write it marked as not reproducible"
                    .into(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_clean_tree_of_a_commit_is_stamped_with_it() {
        let clean = Tree::from_git(Some("6669664340".into()), Some(String::new()));
        assert_eq!(clean, Tree::Clean("6669664340".into()));
        assert_eq!(clean.stamp(), "commit 6669664340");
        assert_eq!(clean.refusal(), None);

        let dirty = Tree::from_git(Some("6669664340".into()), Some(" M README.md".into()));
        assert_eq!(
            dirty.stamp(),
            "generated from a modified tree of commit 6669664340: not reproducible"
        );
        assert!(
            dirty
                .refusal()
                .is_some_and(|r| r.contains("--allow-dirty") && !r.contains('\n'))
        );

        // A status git could not give is not a clean tree.
        assert_eq!(
            Tree::from_git(Some("6669664340".into()), None),
            Tree::Modified("6669664340".into())
        );
        for head in [None, Some(String::new())] {
            let none = Tree::from_git(head, Some(String::new()));
            assert_eq!(none, Tree::Unknown);
            assert!(none.stamp().contains("not reproducible"));
            assert!(none.refusal().is_some());
        }
    }
}
