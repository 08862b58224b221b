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
#  (c) unpacks all eight packages into a fresh directory, puts a generated workspace around them
#      (`[patch.crates-io]` pointing at the unpacked siblings, the repository's profiles, its Cargo.lock for the
#      same dependency versions), runs tfhe-sbc-device's stack budgets without feature std and builds the
#      eight, all features (every test of them with PACKAGE_UNPACKED_TESTS=all). The build reuses the
#      repository's (see "Reusing the repository's build" below): tfhe-rs is not compiled again;
#  (d) `cargo install` of tfhe-sbc-keys from its unpacked package into a temporary --root (tfhe-rs reused,
#      not compiled), and that binary's init, issue (a development credential, 20 public-key devices), repair, show and check-frame
#      (a good and a corrupted frame);
#  (e) runs the packages' own test suites there, all features, as CI runs them in the repository: a test that
#      reads a file outside its crate fails here (a test of a file that only the repository has, e.g. the
#      fuzz corpus against its generator, prints "skipped: ... needs the repository" instead). PACKAGE_UNPACKED_TESTS:
#      "device" (default): the device-side four's suites; "build": every test of the eight is built by (c)
#      (so each compiles from its package) and the device-side four's suites run; "all": every package's
#      suite runs, one package after the other, with a line per package (test binaries, passed, failed,
#      ignored, seconds).
#
# Reusing the repository's build. CI runs this after `cargo test --workspace --all-features`, which compiled
# tfhe-rs and every other dependency in the test profile. Cargo reuses a registry dependency's artifacts when
# its version, resolved features (its own and its dependencies'), profile, target and rustc are the same, so:
#  - the unpacked workspace's build directory (`CARGO_BUILD_BUILD_DIR`: intermediate artifacts, fingerprints)
#    is the repository's (`$CARGO_TARGET_DIR`, else target/; PACKAGE_BUILD_DIR overrides it), while its final
#    artifacts (the binaries cargo copies out) go to target/package-tests/target-unpacked, so that the
#    repository's target/debug/tfhe-sbc-* are never replaced by the unpacked packages' builds;
#  - the generated workspace has the repository's [profile] sections, Cargo.lock and one more member,
#    feature-unification (publish = false, empty), whose dependencies are the crates.io dependencies of the
#    repository's unpublished members (the root package, results, ctgrind, firmware) with their features:
#    without it, features those members switch on (num-traits "default" and "libm" through rand_distr and
#    proptest, for one) would be off, and tfhe-rs, which depends on num-traits through pulp, would be
#    compiled again (5 to 25 minutes on a 2-core machine). It adds no feature the repository's own tests do
#    not already run with;
#  - the build step checks it: "Compiling tfhe v" in its output is reported (the run goes on, slower).
# (a) and (b) build in target/package-tests/target as before (cargo's verification needs its own).
#
# Everything goes under target/package-tests (PACKAGE_TESTS_DIR overrides it). Runs without a network only
# if the registry cache already holds every dependency (`cargo fetch` first).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${PACKAGE_TESTS_DIR:-$root/target/package-tests}"
# The repository's build directory, where the host tests built everything (made absolute: cargo reads a
# relative one from the directory it runs in).
repo_build="${PACKAGE_BUILD_DIR:-${CARGO_BUILD_BUILD_DIR:-${CARGO_TARGET_DIR:-target}}}"
case "$repo_build" in /*) ;; *) repo_build="$root/$repo_build" ;; esac
export CARGO_TARGET_DIR="$out/target"
mkdir -p "$out"
start=$SECONDS

DEVICE_SIDE=(negacyclic-fft negacyclic-ntt tfhe-sbc-core tfhe-sbc-device)
SERVER_SIDE=(tfhe-sbc-adapter tfhe-sbc-client tfhe-sbc-keys tfhe-sbc-server)
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
pkgdir="$CARGO_TARGET_DIR/package"

p_args() { for c in "$@"; do printf -- '-p\n%s\n' "$c"; done; }

# Cargo verifies a crate against its siblings' packages through a local registry, and extracts each package
# under $CARGO_HOME/registry/src/<local id>/<crate>-<version>/ once: an extraction left by an earlier run of
# the same version is used again as it was, whatever the crate holds now (a device crate built against a core
# package from before a change failed to compile here). Our crates are not on crates.io, so every such
# extraction and cached .crate of theirs is a local one: removed before packaging.
for c in "${DEVICE_SIDE[@]}" "${SERVER_SIDE[@]}"; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$c-$version" \
        "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$c-$version.crate"
done

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

echo "== (c) the unpacked packages (all eight) and their tests, built in the repository's build directory"
tests_start=$SECONDS
ws="$out/unpacked"
rm -rf "$ws"
# As in cargo's registry cache, the packages are siblings named <name>-<version>: a path that reaches into
# another crate of the repository (`../tfhe-sbc-device/...`) does not resolve here either.
mkdir -p "$ws/crates" "$ws/feature-unification/src"
members='"feature-unification"'
patches=""
for c in "${DEVICE_SIDE[@]}" "${SERVER_SIDE[@]}"; do
    # -m: the archive's entries carry one fixed mtime; kept, cargo would reuse the last run's build of this path.
    tar -xzmf "$pkgdir/$c-$version.crate" -C "$ws/crates"
    members="$members, \"crates/$c-$version\""
    patches="$patches$c = { path = \"crates/$c-$version\" }"$'\n'
done
# The repository's profiles: the test profile (opt-level 2 for our crates, dependencies optimized) is what the
# statistical tests need, what the stack budgets were measured with (tests/common/painted_stack.rs reads
# ../../Cargo.toml), and what the repository's build of the dependencies was made with.
{
    echo '# Generated by scripts/package.sh: the unpacked packages, resolving each other, and feature-unification.'
    echo '[workspace]'
    echo 'resolver = "3"'
    echo "members = [$members]"
    echo
    echo '[patch.crates-io]'
    echo "$patches"
    sed -n '/^\[profile/,$p' Cargo.toml
} >"$ws/Cargo.toml"
# feature-unification: the crates.io dependencies of the repository's unpublished members, with their
# features, so that every dependency resolves as in the repository (see the top of this file).
python3 - "$out/metadata.json" "$ws/feature-unification/Cargo.toml" <<'PY'
import json, sys
metadata, manifest = sys.argv[1:]
tables = {}
for package in json.load(open(metadata))["packages"]:
    if package["publish"] != []:
        continue
    for dep in package["dependencies"]:
        if dep["source"] is None:
            continue
        section = {None: "dependencies", "dev": "dev-dependencies", "build": "build-dependencies"}[dep["kind"]]
        if dep["target"]:
            section = f"target.{json.dumps(dep['target'])}.{section}"
        entry = tables.setdefault(section, {}).setdefault(dep["rename"] or dep["name"], {
            "package": dep["name"], "version": dep["req"], "default": False, "features": set(), "from": set()})
        entry["default"] |= dep["uses_default_features"]
        entry["features"] |= set(dep["features"])
        entry["from"].add(package["name"])
with open(manifest, "w") as f:
    f.write("# Generated by scripts/package.sh: the crates.io dependencies of the repository's unpublished members.\n")
    f.write('[package]\nname = "feature-unification"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n')
    for section in sorted(tables):
        f.write(f"\n[{section}]\n")
        for name, e in sorted(tables[section].items()):
            f.write(f'{name} = {{ package = {json.dumps(e["package"])}, version = {json.dumps(e["version"])}, '
                    f'default-features = {str(e["default"]).lower()}, features = {json.dumps(sorted(e["features"]))} }}'
                    f'  # {", ".join(sorted(e["from"]))}\n')
PY
echo '//! Generated by scripts/package.sh: no code; its dependencies unify features as in the repository.' \
    >"$ws/feature-unification/src/lib.rs"
# The same dependency versions as the repository (cargo drops what the workspace does not use).
cp Cargo.lock "$ws/Cargo.lock"
# Which suites (e) runs: "device" (default: the four device-side packages') or "all" (the eight; the
# server-side ones take about 11 minutes of test time on a 2-core machine, as in the repository).
unpacked_tests="${PACKAGE_UNPACKED_TESTS:-device}"
case "$unpacked_tests" in
    device | build | all) ;;
    *) echo "package.sh: PACKAGE_UNPACKED_TESTS is 'device', 'build' or 'all', not '$unpacked_tests'" >&2; exit 2 ;;
esac
# The JetStream tests of tfhe-sbc-server need the pinned nats-server (scripts/test-all.sh exports it).
if [ -z "${TSBC_NATS_SERVER:-}" ]; then
    TSBC_NATS_SERVER="$(bash scripts/nats-server.sh)"
    export TSBC_NATS_SERVER
fi
(
    cd "$ws"
    export CARGO_BUILD_BUILD_DIR="$repo_build" CARGO_TARGET_DIR="$out/target-unpacked"
    # Feature std wipes the stack it would measure, so the stack budgets are checked without it, as CI does
    # in the repository (the generated workspace carries the test profile they were measured with).
    # test-utils: compact_list counts allocations with the crate's counting allocator (the repository's
    # self-dev-dependency that turns it on is not in the package).
    cargo test -p tfhe-sbc-device --features hazmat,getrandom,test-utils --test stack --test compact_list
    build_start=$SECONDS
    # Always with the whole workspace selected, all features: a narrower selection resolves other features
    # and compiles tfhe-rs again. `--test tfhe_lib` (one of tfhe-sbc-keys's tests) builds every library and
    # the tfhe-sbc-keys binary that (d) needs; PACKAGE_UNPACKED_TESTS=build or all builds every test of the
    # eight.
    build_targets=(--test tfhe_lib)
    [ "$unpacked_tests" = device ] || build_targets=()
    cargo test --workspace --all-features --no-run "${build_targets[@]}" 2>&1 | tee "$out/unpacked-build.log"
    if grep -q '^ *Compiling tfhe v' "$out/unpacked-build.log"; then
        echo "package.sh: NOTE: tfhe-rs was compiled again ($repo_build held no build of it with these features:"
        echo "  is this run after 'cargo test --workspace --all-features', with the same RUSTFLAGS and toolchain?)"
    else
        echo "tfhe-rs: reused from $repo_build (not compiled)"
    fi
    echo "unpacked build: $((SECONDS - build_start)) s"
)
echo "(c): $((SECONDS - tests_start)) s"

echo "== (d) tfhe-sbc-keys from its package, in a temporary --root: init, issue, repair, show, check-frame"
# `cargo install --path` of the unpacked package, in a workspace of its own (the package and the unpacked
# packages it depends on), into a temporary --root, as a user installs it. It resolves features for
# tfhe-sbc-keys alone, which the adapter's feature `tfhe` keeps identical to the test build's for every
# dependency of tfhe-rs (scripts/check-feature-unification.sh), so with the repository's build directory and
# its test profile (--debug) it compiles our crates and reuses tfhe-rs: a compile of tfhe-rs here fails the run.
install_start=$SECONDS
keys_root="$out/keys-root"
rm -rf "$keys_root"
kws="$out/unpacked-keys"
rm -rf "$kws"
mkdir -p "$kws/crates"
cp -a "$ws/crates/tfhe-sbc-keys-$version" "$kws/crates/"
{
    echo '# Generated by scripts/package.sh: the unpacked tfhe-sbc-keys package and the packages it depends on.'
    echo '[workspace]'
    echo 'resolver = "3"'
    echo "members = [\"crates/tfhe-sbc-keys-$version\"]"
    echo
    echo '[patch.crates-io]'
    for c in "${DEVICE_SIDE[@]}" tfhe-sbc-adapter; do echo "$c = { path = \"../unpacked/crates/$c-$version\" }"; done
    echo
    sed -n '/^\[profile/,$p' "$ws/Cargo.toml"
} >"$kws/Cargo.toml"
cp Cargo.lock "$kws/Cargo.lock"
CARGO_BUILD_BUILD_DIR="$repo_build" CARGO_TARGET_DIR="$out/target-install" \
    cargo install --debug --locked --path "$kws/crates/tfhe-sbc-keys-$version" --root "$keys_root" 2>&1 |
    tee "$out/install.log"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
if grep -q '^ *Compiling tfhe v' "$out/install.log"; then
    echo "package.sh: cargo install compiled tfhe-rs again: tfhe-sbc-keys alone resolves tfhe-rs's dependencies" >&2
    echo "  unlike the test build in $repo_build (bash scripts/check-feature-unification.sh names the features)" >&2
    exit 1
fi
echo "cargo install: tfhe-rs reused from $repo_build (not compiled); our crates compiled:" \
    "$(grep -c '^ *Compiling ' "$out/install.log")"
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
echo "tfhe-sbc-keys from its package: $((SECONDS - install_start)) s"

echo "== (e) the unpacked packages' own test suites, all features: $unpacked_tests"
run_start=$SECONDS
(
    cd "$ws"
    export CARGO_BUILD_BUILD_DIR="$repo_build" CARGO_TARGET_DIR="$out/target-unpacked"
    case "$unpacked_tests" in
        all)
            # One run, the whole workspace selected (features resolve as in (c): nothing is compiled again; a
            # narrower selection would compile tfhe-rs again), every line timestamped; the summary gives each
            # package's test binaries (doc-tests included), passed, failed, ignored and seconds.
            set +e
            cargo test --workspace --all-features --no-fail-fast 2>&1 |
                python3 -u -c 'import sys, time
for line in sys.stdin:
    sys.stdout.write(f"{time.monotonic():.1f} {line}")' | tee "$out/unpacked-tests.log" | cut -d' ' -f2-
            rc=${PIPESTATUS[0]}
            set -e
            python3 "$root/scripts/lib/test_summary.py" "$out/unpacked-tests.log"
            if [ "$rc" != 0 ]; then
                echo "package.sh: a package's own tests failed from its unpacked package (above)" >&2
                exit 1
            fi
            ;;
        # The device-side suites alone: resolved for these four (no tfhe-rs among their dependencies).
        device | build) cargo test --all-features -p negacyclic-fft -p negacyclic-ntt -p tfhe-sbc-core -p tfhe-sbc-device ;;
    esac
)
echo "unpacked test suites: $((SECONDS - run_start)) s"
echo "package.sh: $((SECONDS - start)) s in all"
