#!/usr/bin/env bash
# Every test of the workspace, with the set-up a fresh Debian machine needs. README's second command; CI
# runs exactly this (.ci/run).
#
#   1. set-up: rustup targets (aarch64 Linux, Cortex-M4F), Debian's aarch64 cross gcc and qemu-user
#   2. format and lints (cargo fmt --check, clippy -D warnings, rustdoc -D warnings)
#   3. host tests of the whole workspace (the JetStream service's two test binaries beside the others), plus
#      every benchmark (tfhe-rs peer included) run once in test mode;
#      the results page's quick mode (crates/tfhe-sbc-results) into a temporary directory, every table and plot
#   4. aarch64 tests under qemu-user (the FFT tables and the samplers must behave identically there)
#   5. the no_std guard: the no_std crates build for thumbv7em-none-eabihf and riscv32imc-unknown-none-elf,
#      which have no std at all, so any dependency that pulls std in makes this step fail
#   5b. the device targets' lane (scripts/test-device-targets.sh), started once the host tests are built and
#      run beside everything from there on, in build directories of its own: MSRV; the microcontroller
#      firmware (KAT digest, RAM and flash budgets and instruction counts under qemu-system-arm and
#      qemu-system-riscv32 on thumbv7em, thumbv7m, thumbv6m, riscv32imc and riscv32imac), its RAM imaged from
#      outside and its constant time on its own instruction sets; the firmware guide; the portable kernels
#      (--cfg tfhe_sbc_backend="soft") and the AVX2 instance under the device crates' tests; every feature
#      alone (cargo hack check); the Cortex-M0/M3 multiplier. Its log is printed when it ends; a failure
#      there fails the run at the next step here
#   5c. the publishable crates (scripts/package.sh) and the firmware template against them (scripts/template.sh)
#   6. fuzzing (scripts/fuzz.sh, 60 s), started after the host tests and run beside the steps from 3 on
#   7. the constant-time check: scripts/ctgrind.sh runs the device code under valgrind memcheck with its secrets
#      marked undefined; any secret-dependent branch or address in the default path fails the run
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step prints the time since the start, so that a CI log shows where the minutes go,
# and the CPU time (user and system) its finished commands used so far: with two cores, a step whose CPU grows
# by less than twice its seconds left a core idle.
# cpu_seconds: cutime and cstime (fields 16-17 of /proc/$$/stat, this shell's even inside a command
# substitution, where `times` would report the subshell's): its finished children's user and system time.
TICKS=$(getconf CLK_TCK)
cpu_seconds() { local st; read -ra st < /proc/$$/stat; echo $(((st[15] + st[16]) / TICKS)); }
step() { printf '\n==> [%4d s] [cpu %4d s] %s\n' "$SECONDS" "$(cpu_seconds)" "$*"; }

# A CI run builds once from scratch: incremental caches only cost disk there (gigabytes with tfhe-rs).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# TFHE_SBC_BACKEND=avx2|soft runs every x86_64 build of the run on that instance of the SIMD dispatch (the
# XOF lanes, the FFT kernels), as a machine without AVX-512 (avx2) or without AVX2 (soft) would: no verdict
# may depend on the host's instruction set. Target-scoped, so the Cortex-M and aarch64 builds keep their own
# flags; the steps below that force an instance themselves (RUSTFLAGS) still do.
case "${TFHE_SBC_BACKEND:-}" in
  "") ;;
  avx2|soft)
    export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="--cfg tfhe_sbc_backend=\"$TFHE_SBC_BACKEND\""
    echo "every x86_64 build forced to the $TFHE_SBC_BACKEND instance ($CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS)" ;;
  *) echo "TFHE_SBC_BACKEND=$TFHE_SBC_BACKEND: use avx2 or soft (or leave it unset: the instance the CPU picks)" >&2
     exit 2 ;;
esac

# Keep a copy of everything for the final count of tests.
mkdir -p target
LOG=target/test-all.log
exec > >(tee "$LOG") 2>&1

step "set-up: rustup targets"
rustup target add aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf thumbv7em-none-eabihf \
  riscv32imc-unknown-none-elf
rustup component add rustfmt clippy

if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null \
    || [ ! -d /usr/aarch64-linux-gnu/lib ] || ! command -v valgrind >/dev/null \
    || ! command -v arm-linux-gnueabihf-gcc >/dev/null || [ ! -d /usr/arm-linux-gnueabihf/lib ]; then
  step "set-up: Debian packages (aarch64 and armhf cross gcc, libc, qemu-user, valgrind)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
    valgrind gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
fi

step "set-up: the pinned nats-server (2.15.1) for the JetStream service's tests"
TSBC_NATS_SERVER="$(bash scripts/nats-server.sh)"
export TSBC_NATS_SERVER
"$TSBC_NATS_SERVER" --version

NO_STD_CRATES=(-p negacyclic-fft -p negacyclic-ntt -p tfhe-sbc-core -p tfhe-sbc-device)

step "format"
cargo fmt --all -- --check

step "architecture: no crate reaches what docs/architecture.md forbids (cargo metadata), and the check's self-test"
bash scripts/check-architecture.sh --self-test
bash scripts/check-architecture.sh

step "clippy (all targets, -D warnings)"
cargo clippy --workspace --all-targets --all-features -- -D warnings
cargo clippy "${NO_STD_CRATES[@]}" --lib --no-default-features --target thumbv7em-none-eabihf -- -D warnings

step "rustdoc (-D warnings)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --quiet
# Both steps above used one check build of tfhe-rs, and each binary built alone would reuse the test build's
# (the adapter's feature tfhe pins the features that would split them).
bash scripts/check-feature-unification.sh

step "host tests (x86_64 or whatever this machine is): built, then the device targets' lane started beside them"
# --all-targets: the benchmarks too (test mode, as their step below runs them), compiled here beside the tests
# instead of alone later, when the build no longer fills both cores.
cargo test --workspace --all-features --all-targets --no-run
# The device targets' lane (scripts/test-device-targets.sh: MSRV, the firmware under qemu, the forced
# instances, the feature matrix, the Cortex-M0/M3 multiplier) builds in directories of its own, so it runs from
# here on beside this lane. Its own process group: stopped with this script whatever way this script ends.
# Its log goes to target/device-targets.log and is printed when it ends (the firmware table included, which
# crates/tfhe-sbc-results reads from this log); a failure there fails this run at this lane's next step.
LANE_LOG=target/device-targets.log
LANE_STATUS=target/device-targets.status
rm -f "$LANE_STATUS"
TEST_ALL_SECONDS=$SECONDS setsid bash -c \
  'bash scripts/test-device-targets.sh > "$1" 2>&1; echo $? > "$2"' lane "$LANE_LOG" "$LANE_STATUS" &
LANE_PID=$!
trap 'kill -- -"$LANE_PID" 2>/dev/null || true' EXIT
lane_failed() {
  if [ -s "$LANE_STATUS" ] && [ "$(cat "$LANE_STATUS")" != 0 ]; then
    cat "$LANE_LOG"
    echo "the device targets' lane (scripts/test-device-targets.sh) failed: its log is above"
    exit 1
  fi
}
step() { lane_failed; printf '\n==> [%4d s] [cpu %4d s] %s\n' "$SECONDS" "$(cpu_seconds)" "$*"; }
# The JetStream service's tests (the server's `service` and `cluster` binaries: real nats-server nodes and
# server processes, most of their time spent waiting on them) run beside the other host tests, which skip
# them by exact name: a busy machine is what they must pass on anyway, and the waits no longer add to the
# run. Their log is printed when they end, after the others.
NATS_TESTS=(--test service --test cluster)
NATS_TEST_LOG=target/nats-tests.log
NATS_TEST_STATUS=target/nats-tests.status
rm -f "$NATS_TEST_STATUS"
mapfile -t NATS_TEST_NAMES < <(cargo test --workspace --all-features "${NATS_TESTS[@]}" -- --list --format terse \
  2>/dev/null | sed -n 's/: test$//p')
[ "${#NATS_TEST_NAMES[@]}" -ge 40 ] || { echo "the service tests' list has ${#NATS_TEST_NAMES[@]} names"; exit 1; }
setsid bash -c 'cargo test --workspace --all-features "${@:3}" > "$1" 2>&1; echo $? > "$2"' nats-tests \
  "$NATS_TEST_LOG" "$NATS_TEST_STATUS" "${NATS_TESTS[@]}" &
NATS_TEST_PID=$!
trap 'kill -- -"$LANE_PID" 2>/dev/null || true; kill -- -"$NATS_TEST_PID" 2>/dev/null || true' EXIT
SKIP_NATS_TESTS=()
for name in "${NATS_TEST_NAMES[@]}"; do SKIP_NATS_TESTS+=(--skip "$name"); done
cargo test --workspace --all-features -- --exact "${SKIP_NATS_TESTS[@]}"
step "the JetStream service's tests (started beside the host tests): waiting for them"
wait "$NATS_TEST_PID" || true
cat "$NATS_TEST_LOG"
[ "$(cat "$NATS_TEST_STATUS" 2>/dev/null)" = 0 ] || { echo "the JetStream service's tests failed (their log is above)"; exit 1; }

# Fuzzing (scripts/fuzz.sh: 60 s on the authenticated v2 intake, in fuzz/'s own build directory) from here
# on beside the steps below: libFuzzer uses one core, and they leave one idle much of the time (linking,
# qemu, valgrind, the service's waits). Its result is read before the end.
FUZZ_LOG=target/fuzz-step.log
FUZZ_STATUS=target/fuzz-step.status
rm -f "$FUZZ_STATUS"
setsid bash -c 'bash scripts/fuzz.sh > "$1" 2>&1; echo $? > "$2"' fuzz "$FUZZ_LOG" "$FUZZ_STATUS" &
FUZZ_PID=$!
trap 'kill -- -"$LANE_PID" 2>/dev/null || true; kill -- -"$FUZZ_PID" 2>/dev/null || true' EXIT

# --- results page: begin ---
step "results page: the quick mode of crates/tfhe-sbc-results into a temporary directory; every table and plot produced"
# The host tests above built the binary (its integration test needs it) with their features, so nothing of
# tfhe-rs is rebuilt. Checks that the page and the plots exist and carry their axes (quantity and unit),
# legends and the tree's stamp, not the values.
SECONDS_START=$SECONDS
RESULTS_BIN="${CARGO_TARGET_DIR:-target}/debug/results"
RESULTS_OUT="$(mktemp -d)"
# Without --allow-dirty a tree no commit holds is refused before anything is measured (exit 2, one line);
# tests/cli.rs checks a modified repository, this the case of no commit at all.
set +e
REFUSAL="$(GIT_DIR="$RESULTS_OUT/no-git" "$RESULTS_BIN" --quick --out "$RESULTS_OUT" 2>&1 >/dev/null)"
REFUSAL_STATUS=$?
set -e
[ "$REFUSAL_STATUS" = 2 ] && [ "$(printf '%s\n' "$REFUSAL" | wc -l)" = 1 ] \
  && [[ "$REFUSAL" == *"--allow-dirty"* ]] && [ ! -e "$RESULTS_OUT/results.md" ] \
  || { echo "results: a tree with no commit was not refused (status $REFUSAL_STATUS): $REFUSAL"; exit 1; }
# This page goes to a temporary directory, never into docs/: --allow-dirty, so that a developer's modified
# tree runs it too (the page then says it is not reproducible; a CI clone is clean and names its commit).
"$RESULTS_BIN" --quick --allow-dirty --out "$RESULTS_OUT"
# The stamp names a commit that exists, and says "not reproducible" exactly when the tree had changes (read
# from the page: a developer's tree may change while the run lasts; a CI clone is clean).
STAMP_COMMIT="$(grep -m1 -oE '^\*\*Machine:\*\* .* · (commit|generated from a modified tree of commit) [0-9a-f]{10}' \
  "$RESULTS_OUT/results.md" | grep -oE '[0-9a-f]{10}$' || true)"
git cat-file -e "${STAMP_COMMIT:-none}^{commit}" 2>/dev/null \
  || { echo "results.md's stamp names no commit of this repository: '${STAMP_COMMIT}'"; exit 1; }
if grep -qF "generated from a modified tree of commit $STAMP_COMMIT: not reproducible" "$RESULTS_OUT/results.md"; then
  TREE_STAMP="generated from a modified tree of commit $STAMP_COMMIT: not reproducible"
  grep -qF "**Not reproducible:**" "$RESULTS_OUT/results.md" || { echo "results.md: a modified tree, not said"; exit 1; }
else
  TREE_STAMP="commit $STAMP_COMMIT"
  if grep -qF "Not reproducible" "$RESULTS_OUT/results.md"; then echo "results.md: clean tree called not reproducible"; exit 1; fi
fi
grep -q "^## 1\. Client-side encryption" "$RESULTS_OUT/results.md"
for heading in "## 2. Server-side conversion" "## 3. CSPRNG, noise and product" "## 4. Microcontrollers" \
    "## 5. Integers" "## 6. Scale" "**Machine:**" "| bits | TLWE per bit (tfhe-rs)"; do
  grep -qF "$heading" "$RESULTS_OUT/results.md" || { echo "results.md lacks: $heading"; exit 1; }
done
# A quick page says its figures are indicative, and draws the scale plots from the committed service log.
grep -qF "**Indicative only:**" "$RESULTS_OUT/results.md" || { echo "results.md: quick page not marked indicative"; exit 1; }
for plot in scale-fps.svg scale-latency.svg; do
  [ -s "$RESULTS_OUT/results/$plot" ] || { echo "results: the quick run drew no $plot"; exit 1; }
done
# Each plot: linked with a caption; each axis' label is its quantity with a unit ("time per call [µs]"), or
# "(log scale)" with the unit on every tick ("10 µs", "1 ms"); its legend entries; the stamp; no tick
# label in SI-suffixed base units ("10.0k", "100M").
UNIT='(ns|µs|ms|s|B|KiB|MiB|GiB|bits|1/s)'
while IFS='|' read -r plot axes legend; do
  svg="$RESULTS_OUT/results/$plot"
  [ -s "$svg" ] || { echo "missing or empty plot: $plot"; exit 1; }
  grep -qF "(results/$plot)" "$RESULTS_OUT/results.md" || { echo "results.md does not link $plot"; exit 1; }
  CAPTION="$(grep -A2 -F "(results/$plot)" "$RESULTS_OUT/results.md")"
  [[ "$CAPTION" == *"_What to see:_"* ]] || { echo "results.md has no caption under $plot"; exit 1; }
  IFS=';' read -ra quantities <<< "$axes"
  for q in "${quantities[@]}"; do
    grep -qxE "$q \[$UNIT\]( \(log scale\))?" "$svg" && continue
    grep -qxF "$q (log scale)" "$svg" && grep -qxE "[0-9.]+ $UNIT" "$svg" && continue
    echo "$plot: no axis '$q' with its unit"; exit 1
  done
  IFS=';' read -ra want <<< "$legend"
  for text in "${want[@]}" "$TREE_STAMP" "cores"; do
    grep -qF "$text" "$svg" || { echo "$plot lacks the text: $text"; exit 1; }
  done
  if grep -qxE '[0-9.]+ ?[kMG]( [^ ]+)?' "$svg"; then echo "$plot: a tick label in SI-suffixed units"; exit 1; fi
done <<'PLOTS'
table1-time.svg|plaintext size;encryption time|ours, secret key;TLWE per bit (tfhe-rs)
fig3-time.svg|plaintext size;conversion time|extraction only;boolean fleet
fig3-memory.svg|plaintext size;peak heap|extraction only;boolean public key
fig3-integer-time.svg|plaintext size;conversion time|integer fleet;integer per-device
fig3-integer-memory.svg|plaintext size;peak heap|integer public key
table6-csprng.svg|time per call|BLAKE2b XOF (ours);ChaCha20
table6-noise.svg|time per call|TUniform(8);Ziggurat;polar
table7-product.svg|time per call|FFT, key spectrum reused (ours);naive schoolbook
integers-time.svg|time per value|tfhe-rs FheUint8::encrypt
integers-bytes.svg|bytes per value|tfhe-rs CompactCiphertextList
PLOTS
# Table 1's axes fit its data: a tick at every measured size, 256 bits included, and a time axis that ends
# at 100 s (the paper's slowest figure is 61.6 s), not at 100 M ms.
T1="$RESULTS_OUT/results/table1-time.svg"
for tick in 256 1024 4096 8192 "1 ms" "100 s"; do
  grep -qxF "$tick" "$T1" || { echo "table1-time.svg lacks the tick: $tick"; exit 1; }
done
if grep -qxE '[0-9.]+ s' "$T1" && [ "$(grep -xE '[0-9.]+ s' "$T1" | sort -n | tail -1)" != "100 s" ]; then
  echo "table1-time.svg: its time axis runs past 100 s"; exit 1
fi
rm -rf "$RESULTS_OUT"
echo "results page step: $((SECONDS - SECONDS_START)) s"
# --- results page: end ---

step "benchmarks (with the tfhe-rs peer), each run once as a test"
# Every bench of the workspace (the root's, the adapter's integer intake, the server's service bench in its
# small test-mode sizes) with the host tests' selection and features, so that tfhe-rs and every other
# dependency is reused: `cargo test --benches` alone (the default members, default features) resolved
# tfhe-rs's features otherwise and compiled it a third time on a fresh machine.
cargo test --workspace --all-features --benches --quiet

step "aarch64 tests under qemu-user"
cargo test --target aarch64-unknown-linux-gnu "${NO_STD_CRATES[@]}"

step "stack budgets and no secret copies in the profile users build: release, x86_64 and aarch64 (the Pi client's)"
# tests/stack.rs (painted-stack budgets of a static encryptor) and tests/secret_copies.rs (no copy of the
# CSPRNG state left on the stack by the Pi client's encryptor, every mode) also run in the test profile above;
# here in release, on both hosts, since the budgets must hold in the profile the client ships.
DEVICE_STACK_TESTS=(-p tfhe-sbc-device --features std,hazmat,getrandom --test stack --test secret_copies)
cargo test --release "${DEVICE_STACK_TESTS[@]}"
cargo test --release --target aarch64-unknown-linux-gnu "${DEVICE_STACK_TESTS[@]}"

step "stack budgets in the CPU's own instance: tests/stack.rs and the streaming compact list without feature std, test profile and release"
# Feature std scrubs 64 KiB of stack after every secret call, which hides a call's depth from the painting:
# with std (every run above) the budget tests skip their budgets and say so. Here they run without it (the
# firmware's build, same code); the device targets' lane runs them in the forced instances.
STACK_BUDGET_TESTS=(-p tfhe-sbc-device --features hazmat,getrandom,test-utils --test stack --test compact_list)
cargo test "${STACK_BUDGET_TESTS[@]}" -- stack
cargo test --release "${STACK_BUDGET_TESTS[@]}" -- stack

step "no secret in the running client's memory: the shipped client (release) in all 7 credential kinds, imaged through /proc"
# tests/memory_image.rs (also in the host tests above, debug): an LD_PRELOAD getrandom shim captures the OS
# seed, the test replays the ratchet chain from it and searches the SIGSTOPped client's writable memory.
cargo test --release -p tfhe-sbc-client --test memory_image

step "aarch64 instruction count per encryption (qemu-user + the insn_count TCG plugin)"
bash scripts/aarch64-count.sh

# --- Pi client: begin ---
step "Raspberry Pi client end to end: cross-built for aarch64 (glibc, static musl) and armv7, run under qemu-user against tfhe-sbc-server on loopback"
PI_E2E_WORKSPACE_BUILD=1 bash scripts/pi-client-e2e.sh
# --- Pi client: end ---

step "no_std guard: build for thumbv7em-none-eabihf and riscv32imc-unknown-none-elf (no std exists there)"
cargo build --target thumbv7em-none-eabihf "${NO_STD_CRATES[@]}" --lib --no-default-features
cargo build --target riscv32imc-unknown-none-elf "${NO_STD_CRATES[@]}" --lib --no-default-features
cargo build --target thumbv7em-none-eabihf -p tfhe-sbc-core --lib --no-default-features --features serde


step "publishable crates: cargo package (verified for the device-side crates); the unpacked packages built in the host tests' build directory (tfhe-rs reused), tfhe-sbc-keys from its package, the device-side packages' own tests"
bash scripts/package.sh

step "firmware template: templates/cortex-m against the packaged crates under qemu-system-arm, RAM <= 24 KiB, flash <= 64 KiB, every frame checked by tfhe-sbc-keys check-frame"
bash scripts/template.sh

step "constant-time check: ctgrind (valgrind memcheck; default path clean, Ziggurat and self-test flagged)"
bash scripts/ctgrind.sh

step "fuzzing: waiting for scripts/fuzz.sh (started after the host tests)"
wait "$FUZZ_PID" || true
cat "$FUZZ_LOG"
[ "$(cat "$FUZZ_STATUS" 2>/dev/null)" = 0 ] || { echo "scripts/fuzz.sh failed (its log is above)"; exit 1; }

step "waiting for the device targets' lane"
wait "$LANE_PID" || true
trap - EXIT
cat "$LANE_LOG"
lane_failed
[ -s "$LANE_STATUS" ] || { echo "the device targets' lane ended without a status"; exit 1; }

step "all tests passed"
echo "total: $SECONDS s"
# One closing line over every cargo test run above (host, benches, aarch64): "N passed, N failed".
awk '/^test result:/ { p += $4; f += $6 } END { printf "tests: %d passed, %d failed\n", p, f }' "$LOG"
# CI machines have a few tens of GB: the build's footprint is printed so that growth is seen before it fails.
echo "disk: target/ holds $(du -sh target | cut -f1)"
