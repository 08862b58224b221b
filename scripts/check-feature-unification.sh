#!/usr/bin/env bash
# One build of tfhe-rs for everything that links it. tfhe-rs takes minutes to check and more to compile;
# cargo compiles a crate once per feature set of it and of its dependencies, so every build that links
# tfhe-rs must resolve tfhe-rs's dependency tree alike:
#   (a) the workspace-wide `cargo clippy --all-targets --all-features` (dev-dependencies resolved) and
#       `cargo doc --no-deps --all-features` (none) use the same check build of tfhe-rs;
#   (b) each binary that links tfhe-rs, built alone as a user builds it (`cargo install tfhe-sbc-keys`,
#       `cargo build --release -p tfhe-sbc-server`, `cargo run --release -p results`, the root's examples),
#       resolves no feature of tfhe-rs's dependencies that the workspace's test build does not: the README's
#       commands after the first, and scripts/package.sh's `cargo install` of the packaged keys tool, reuse
#       its build.
# When a dependency turns on a feature in one of tfhe-rs's dependencies that another build does not, the
# adapter's feature `tfhe` pins it (crates/tfhe-sbc-adapter/Cargo.toml, after `futures-util`); this script
# fails naming the feature. Run after clippy and rustdoc (scripts/test-all.sh does): both are fresh then, so
# (a) costs seconds, and (b) is `cargo tree` only.
set -euo pipefail
cd "$(dirname "$0")/.."

tfhe_rmeta() {
  { "$@" --message-format=json 2>/dev/null || true; } | grep -o '"filenames":\["[^"]*/libtfhe-[0-9a-f]*\.rmeta"' \
    | grep -o 'libtfhe-[0-9a-f]*' | sort -u || true
}
lints=$(tfhe_rmeta cargo clippy --workspace --all-targets --all-features -q)
docs=$(RUSTDOCFLAGS="-D warnings" tfhe_rmeta cargo doc --workspace --no-deps --all-features -q)
echo "tfhe-rs checked for clippy: ${lints:-none}; for rustdoc: ${docs:-none}"

# Every package tfhe-rs depends on (build dependencies and proc macros included), and the features each
# build below turns on in them: one line per package and feature set, as `cargo tree` prints them.
closure=$(cargo tree -p tfhe -e normal,build --prefix none -f '{p}' | sed 's/ (\*)//' | sort -u)
features_in_closure() {
  cargo tree "$@" -e features --prefix none -f '{p}|{f}' | sed 's/ (\*)//' | sort -u \
    | grep -Ff <(printf '%s\n' "$closure" | sed 's/$/|/') || true
}
workspace=$(features_in_closure --workspace --all-features -e normal,build,dev)
[ -n "$workspace" ] || { echo "check-feature-unification: cargo tree printed nothing for tfhe-rs's dependencies"; exit 1; }
failed=0
if [ -z "$lints" ] || [ "$lints" != "$docs" ]; then
  echo "clippy and rustdoc use different check builds of tfhe-rs: a dev-dependency turns on a feature in one"
  echo "of tfhe-rs's dependencies that \`cargo doc\` does not (pin it in the adapter's feature tfhe):"
  diff <(features_in_closure --workspace --all-features -e normal,build) <(printf '%s\n' "$workspace") \
    | sed -n 's/^> /  /p' || true
  failed=1
fi
# The root package's examples are built with its dev-dependencies; the others are binaries, built without.
for build in "-p tfhe-sbc-keys -e normal,build" "-p tfhe-sbc-server -e normal,build" "-p results -e normal,build" \
    "-p tfhe-sbc -e normal,build,dev"; do
  # shellcheck disable=SC2086
  extra=$(comm -13 <(printf '%s\n' "$workspace") <(features_in_closure $build))
  if [ -n "$extra" ]; then
    echo "\`cargo build $build\` resolves tfhe-rs's dependencies unlike the workspace's test build, so it"
    echo "compiles tfhe-rs again; these lines (package|features) are not the workspace's (pin what differs in"
    echo "the adapter's feature tfhe):"
    printf '  %s\n' "$extra"
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
echo "one build of tfhe-rs: clippy and rustdoc alike; tfhe-sbc-keys, tfhe-sbc-server, results and the examples resolve as the tests"
