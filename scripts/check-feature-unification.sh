#!/usr/bin/env bash
# tfhe-rs is checked once for the workspace's lints and docs: the workspace-wide `cargo clippy --all-targets
# --all-features` (dev-dependencies resolved) and `cargo doc --no-deps --all-features` (no dev-dependency)
# must use the same check build of tfhe-rs. When a dev-dependency turns on a feature in one of tfhe-rs's
# dependencies, the two differ and a fresh machine checks tfhe-rs twice (several minutes):
# crates/workspace-hack pins such features, and this script fails, naming the features, when a new one
# appears. Run after those two commands (scripts/test-all.sh does): both are fresh then, so this costs
# seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

tfhe_rmeta() {
  { "$@" --message-format=json 2>/dev/null || true; } | grep -o '"filenames":\["[^"]*/libtfhe-[0-9a-f]*\.rmeta"' \
    | grep -o 'libtfhe-[0-9a-f]*' | sort -u || true
}
lints=$(tfhe_rmeta cargo clippy --workspace --all-targets --all-features -q)
docs=$(RUSTDOCFLAGS="-D warnings" tfhe_rmeta cargo doc --workspace --no-deps --all-features -q)
echo "tfhe-rs checked for clippy: ${lints:-none}; for rustdoc: ${docs:-none}"
if [ -z "$lints" ] || [ "$lints" != "$docs" ]; then
  echo "clippy and rustdoc use different check builds of tfhe-rs: a dev-dependency turns on a feature in one"
  echo "of tfhe-rs's dependencies. These do (add them to crates/workspace-hack/Cargo.toml):"
  tree() { cargo tree --workspace --all-features -e "$1" --prefix none 2>/dev/null | sed 's/ (\*)//' | sort -u; }
  deps=$(cargo tree -p tfhe -e normal --prefix none 2>/dev/null | awk '{print $1}' | sort -u)
  diff <(tree normal,build,features) <(tree normal,build,dev,features) | sed -n 's/^> \([^ ]*\) feature /\1 /p' \
    | grep -Fwf <(printf '%s\n' $deps) || true
  exit 1
fi
