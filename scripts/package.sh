#!/usr/bin/env bash
# The publishable crates as crates.io would get them.
#
#  (a) `cargo package` with verification for the device-side crates (negacyclic-fft, negacyclic-ntt,
#      tfhe-sbc-core, tfhe-sbc-device), in one command so that they resolve each other (cargo verifies
#      workspace packages against the ones it packages alongside); each crate's size and file count;
#  (b) `cargo package --no-verify` for the crates that link tfhe-rs or sit above the adapter (tfhe-sbc-adapter,
#      tfhe-sbc-client, tfhe-sbc-keys, tfhe-sbc-server): a verification would build tfhe-rs once per crate.
#      Every .crate of (a) and (b) must hold README.md, LICENSE-MIT and LICENSE-APACHE, and its normalized
#      Cargo.toml must give every dependency a version (no path left);
#  (c) unpacks the four device-side packages into a fresh directory, puts a generated workspace around them
#      (`[patch.crates-io]` pointing at the unpacked siblings, the repository's test profile, its Cargo.lock
#      for the same dependency versions) and runs their own test suites there, all features, as CI runs
#      them in the repository: a test that reads a file outside its crate fails here;
#  (d) `cargo install --path` of the unpacked tfhe-sbc-keys package (its dependencies on our crates patched to
#      their unpacked packages) into a temporary --root, and that binary's init, issue (a development
#      credential, 20 public-key devices), repair, show and check-frame (a good and a corrupted frame).
#
# Everything goes under target/package-tests (PACKAGE_TESTS_DIR overrides it). Runs without a network only
# if the registry cache already holds every dependency (`cargo fetch` first).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${PACKAGE_TESTS_DIR:-$root/target/package-tests}"
export CARGO_TARGET_DIR="$out/target"
mkdir -p "$out"
start=$SECONDS

DEVICE_SIDE=(negacyclic-fft negacyclic-ntt tfhe-sbc-core tfhe-sbc-device)
SERVER_SIDE=(tfhe-sbc-adapter tfhe-sbc-client tfhe-sbc-keys tfhe-sbc-server)
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
pkgdir="$CARGO_TARGET_DIR/package"

p_args() { for c in "$@"; do printf -- '-p\n%s\n' "$c"; done; }

# `--allow-dirty`: a developer's tree has work in progress; CI's is clean and packages the same files.
echo "== (a) cargo package (verified): ${DEVICE_SIDE[*]}"
mapfile -t args < <(p_args "${DEVICE_SIDE[@]}")
cargo package --allow-dirty "${args[@]}"

echo "== (b) cargo package --no-verify: ${SERVER_SIDE[*]}"
# Packaged together with the device-side crates, which they depend on by version.
mapfile -t args < <(p_args "${DEVICE_SIDE[@]}" "${SERVER_SIDE[@]}")
cargo package --allow-dirty --no-verify "${args[@]}"

echo "== crate sizes"
printf '%-20s %10s %8s %s\n' crate bytes files missing
failed=0
for c in "${DEVICE_SIDE[@]}" "${SERVER_SIDE[@]}"; do
    crate="$pkgdir/$c-$version.crate"
    listing="$(tar -tzf "$crate")"
    files="$(grep -vc '/$' <<<"$listing")"
    missing=""
    for f in README.md LICENSE-MIT LICENSE-APACHE Cargo.toml; do
        grep -qx "$c-$version/$f" <<<"$listing" || missing="$missing $f"
    done
    # A dependency left with a path and no version would not resolve on crates.io (cargo refuses to
    # package it, but a dev-dependency is dropped silently: say which ones are gone).
    manifest="$(tar -xzOf "$crate" "$c-$version/Cargo.toml")"
    if grep -q '^path = "\.\./' <<<"$manifest"; then
        missing="$missing (path dependency in Cargo.toml)"
    fi
    printf '%-20s %10s %8s %s\n' "$c" "$(stat -c %s "$crate")" "$files" "${missing:--}"
    [ -z "$missing" ] || failed=1
done
if [ "$failed" != 0 ]; then
    echo "package.sh: a crate lacks a README.md, a license file or has a path dependency (above)" >&2
    exit 1
fi
# Cargo drops a path-only dev-dependency from a package without a word: name the ones that are gone.
cargo metadata --format-version 1 --no-deps >"$out/metadata.json"
for c in "${DEVICE_SIDE[@]}" "${SERVER_SIDE[@]}"; do
    tar -xzOf "$pkgdir/$c-$version.crate" "$c-$version/Cargo.toml" >"$out/$c.Cargo.toml"
    python3 -c '
import json, sys, tomllib
name, metadata, packaged = sys.argv[1:]
package = next(p for p in json.load(open(metadata))["packages"] if p["name"] == name)
declared = {d["rename"] or d["name"] for d in package["dependencies"] if d["kind"] == "dev"} - {name}
kept = set(tomllib.load(open(packaged, "rb")).get("dev-dependencies", {}))
if declared - kept:
    print(f"note: the package of {name} drops its path-only dev-dependencies {sorted(declared - kept)}")
' "$c" "$out/metadata.json" "$out/$c.Cargo.toml"
done
echo "packaging: $((SECONDS - start)) s"

echo "== (c) the device-side packages' own tests, unpacked"
tests_start=$SECONDS
ws="$out/unpacked"
rm -rf "$ws"
mkdir -p "$ws/crates"
members=""
patches=""
for c in "${DEVICE_SIDE[@]}"; do
    tar -xzf "$pkgdir/$c-$version.crate" -C "$ws/crates"
    mv "$ws/crates/$c-$version" "$ws/crates/$c"
    members="$members\"crates/$c\", "
    patches="$patches$c = { path = \"crates/$c\" }"$'\n'
done
# The repository's test profile (opt-level 2 for our crates, dependencies optimized): the statistical tests
# need it, and the stack budgets are measured with it (tests/common/painted_stack.rs reads ../../Cargo.toml).
cat >"$ws/Cargo.toml" <<EOF
# Generated by scripts/package.sh: the unpacked device-side packages, resolving each other.
[workspace]
resolver = "3"
members = [${members%, }]

[patch.crates-io]
${patches}
[profile.dev]
opt-level = 2
debug = "line-tables-only"

[profile.dev.package."*"]
opt-level = 3
debug = false
debug-assertions = false
overflow-checks = false
EOF
# The same dependency versions as the repository (cargo drops what these four do not use).
cp Cargo.lock "$ws/Cargo.lock"
(
    cd "$ws"
    export CARGO_TARGET_DIR="$out/target-unpacked"
    # Feature std wipes the stack it would measure, so the stack budgets are checked without it, as CI does
    # in the repository (the generated workspace carries the test profile they were measured with).
    cargo test -p tfhe-sbc-device --features hazmat,getrandom --test stack --test compact_list
    cargo test --workspace --all-features
)
echo "unpacked tests: $((SECONDS - tests_start)) s"

echo "== (d) tfhe-sbc-keys installed from its package: init, issue, repair, show, check-frame"
# `cargo install --path` of the unpacked tfhe-sbc-keys package, in a generated workspace that patches its
# crates.io dependencies on our crates to their unpacked packages (as crates.io would serve them), with the
# repository's Cargo.lock (the same dependency versions) and test profile, building in (c)'s target directory
# (the device-side crates are built there already). The installed binary, run from its --root, then makes a
# key set and checks the checked-in frame of development device 1, and a corrupted copy of it.
# It builds tfhe-rs once more (the keys tool's features alone differ from the workspace's): several minutes on
# a 2-core machine, which the README's test command cannot afford within its 40-minute budget. So it runs
# only with PACKAGE_INSTALL=1 (`PACKAGE_INSTALL=1 bash scripts/package.sh`), and says so when skipped.
if [ "${PACKAGE_INSTALL:-0}" != "1" ]; then
  echo "(d) SKIPPED: set PACKAGE_INSTALL=1 to install tfhe-sbc-keys from its package and run it (a tfhe-rs build)"
  echo "package.sh: $((SECONDS - start)) s in all"
  exit 0
fi
install_start=$SECONDS
kws="$out/unpacked-keys"
rm -rf "$kws"
mkdir -p "$kws/crates"
for c in tfhe-sbc-adapter tfhe-sbc-keys; do
    tar -xzf "$pkgdir/$c-$version.crate" -C "$kws/crates"
    mv "$kws/crates/$c-$version" "$kws/crates/$c"
done
{
    echo '# Generated by scripts/package.sh: the unpacked tfhe-sbc-keys package and the packages it depends on.'
    echo '[workspace]'
    echo 'resolver = "3"'
    echo 'members = ["crates/tfhe-sbc-keys"]'
    echo
    echo '[patch.crates-io]'
    for c in "${DEVICE_SIDE[@]}"; do echo "$c = { path = \"../unpacked/crates/$c\" }"; done
    echo 'tfhe-sbc-adapter = { path = "crates/tfhe-sbc-adapter" }'
    echo
    # The profile sections of (c)'s workspace: the same build of the shared dependencies.
    sed -n '/^\[profile/,$p' "$ws/Cargo.toml"
} >"$kws/Cargo.toml"
cp Cargo.lock "$kws/Cargo.lock"
keys_root="$out/keys-root"
rm -rf "$keys_root"
CARGO_TARGET_DIR="$out/target-unpacked" cargo install --debug --locked --path "$kws/crates/tfhe-sbc-keys" --root "$keys_root"
keys="$keys_root/bin/tfhe-sbc-keys"
frame="$root/crates/tfhe-sbc-keys/tests/data/dev-device-1.frame"
kd="$out/keys-run"
rm -rf "$kd"
mkdir -p "$kd"
(
    cd "$keys_root"
    "$keys" --version
    "$keys" init --dir "$kd/keys" --parameters tfhe-lib
    "$keys" issue --dir "$kd/keys" --device-id 1 --mode per-device --unsafe-dev-credential
    "$keys" issue --dir "$kd/keys" --device-id 100 --count 20 --mode public-key
    "$keys" repair --dir "$kd/keys"
    "$keys" show --dir "$kd/keys"
    "$keys" check-frame --dir "$kd/keys" --file "$frame"
    # A corrupted frame is refused (exit 1) with the intake's reason.
    python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 1; open(sys.argv[2], "wb").write(b)' \
        "$frame" "$kd/corrupted.frame"
    set +e
    refused="$("$keys" check-frame --dir "$kd/keys" --file "$kd/corrupted.frame" 2>&1)"
    rc=$?
    set -e
    echo "$refused"
    if [ "$rc" != 1 ] || ! grep -q 'bad frame MAC' <<<"$refused"; then
        echo "package.sh: the installed tfhe-sbc-keys did not refuse a corrupted frame as a bad MAC (exit $rc)" >&2
        exit 1
    fi
)
echo "installed tfhe-sbc-keys: $((SECONDS - install_start)) s"
echo "package.sh: $((SECONDS - start)) s in all"
