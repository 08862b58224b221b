#!/usr/bin/env bash
# The device targets' lane of scripts/test-all.sh: every step that builds for a microcontroller, for a forced
# instruction-set instance or with another toolchain, in build directories of its own. scripts/test-all.sh
# starts it beside the host tests (its own process group, its log in target/device-targets.log, printed
# when it ends), so that its builds and qemu runs use what the host steps leave of the two cores. Also
# runnable alone, after test-all.sh's set-up (rustup targets, qemu, the cross gcc):
#
#   bash scripts/test-device-targets.sh
#
#   1. MSRV: the library crates checked with the toolchain rust-version names (host and thumbv7em)
#   2. the microcontroller firmware (scripts/firmware.sh): KAT digest, RAM and flash budgets and instruction
#      counts on thumbv7em, thumbv7m and thumbv6m under qemu-system-arm, riscv32imc and riscv32imac under
#      qemu-system-riscv32; its RAM imaged from outside (scripts/firmware-ram-image.sh); its constant time on
#      its own instruction sets (scripts/firmware-ct-trace.sh)
#   3. the firmware guide (scripts/firmware-guide.sh): docs/firmware.md shows examples/firmware-guide verbatim,
#      and that crate builds and runs under qemu-system-arm within 24 KiB of RAM and the guide's figures
#   4. the portable kernels (--cfg tfhe_sbc_backend="soft") and, on an AVX-512 host, the AVX2 instance under
#      the device crates' tests and stack budgets
#   5. every feature alone (cargo hack check) for thumbv7em and for the adapter without tfhe-rs
#   6. negacyclic-ntt with the Cortex-M0/M3 multiplier (--cfg negacyclic_ntt_mul16), with and without cmov;
#      and its Arm assembly (src/arm_asm.rs: the Cortex-M4's passes, pointwise product and CRT) on
#      armv7-unknown-linux-gnueabihf under qemu-arm, in Thumb-2 and in A32: the twins and the exactness tests
set -euo pipefail
cd "$(dirname "$0")/.."

# TEST_ALL_SECONDS: test-all.sh's clock when it started this lane, so that both lanes' step lines share it.
SECONDS=${TEST_ALL_SECONDS:-0}
# Each step prints that clock and the CPU time (user and system) its finished commands used so far: with two
# cores, a step whose CPU grows by less than twice its seconds left a core idle.
# cpu_seconds: cutime and cstime (fields 16-17 of /proc/$$/stat, this shell's even inside a command
# substitution, where `times` would report the subshell's): its finished children's user and system time.
TICKS=$(getconf CLK_TCK)
cpu_seconds() { local st; read -ra st < /proc/$$/stat; echo $(((st[15] + st[16]) / TICKS)); }
step() { printf '\n==> [%4d s] [cpu %4d s] %s\n' "$SECONDS" "$(cpu_seconds)" "$*"; }

export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# The steps below that name no build directory of their own (the firmware scripts, cargo hack) build here,
# never in the host lane's target/: cargo would make the two lanes wait for each other's lock on it.
export CARGO_TARGET_DIR="${DEVICE_TARGETS_DIR:-target/device-targets}"

step "MSRV: the library crates checked (cargo check) with the toolchain rust-version names (host and thumbv7em-none-eabihf)"
bash scripts/msrv.sh

# --- Cortex-M firmware: begin ---
step "microcontroller firmware under qemu-system-arm and qemu-system-riscv32: KAT digest, RAM <= 24 KiB, flash <= 64 KiB (thumbv7em, thumbv7m, thumbv6m, riscv32imc, riscv32imac)"
bash scripts/firmware.sh

step "microcontroller firmware RAM image: no dead secret after the run or after an encryption (qemu pmemsave + scan; thumbv7em, thumbv7m, thumbv6m, riscv32imc, riscv32imac)"
bash scripts/firmware-ram-image.sh

step "microcontroller firmware constant time: the same instruction and memory addresses for three sets of secrets under qemu (thumbv7em, thumbv7m, thumbv6m, riscv32imc, riscv32imac), planted leaks seen"
bash scripts/firmware-ct-trace.sh
# --- Cortex-M firmware: end ---

# --- firmware guide: begin ---
step "firmware guide: docs/firmware.md's own firmware (examples/firmware-guide) built and run under qemu-system-arm, RAM <= 24 KiB"
bash scripts/firmware-guide.sh
# --- firmware guide: end ---

# --- backend override and feature matrix ---------------------------------------------------------
# The crates that run on a device; negacyclic-ntt has no SIMD instance but belongs to the same KATs.
DEVICE_CRATES=(-p negacyclic-fft -p negacyclic-ntt -p tfhe-sbc-core -p tfhe-sbc-device)

step "portable kernels: device crates' tests under --cfg tfhe_sbc_backend=\"soft\" (no AVX2/AVX-512 instance)"
# On an AVX-512 host the tests above never run the portable FFT nor the SSE2/AVX2 XOF lanes. This builds them
# alone (own target dir, so the main one is not rebuilt) and runs the KATs and exactness tests on them;
# TFHE_SBC_EXPECT_BACKEND makes tests/backend.rs of both crates fail unless backend() says "soft".
SECONDS_START=$SECONDS
RUSTFLAGS='--cfg tfhe_sbc_backend="soft"' TFHE_SBC_EXPECT_BACKEND=soft CARGO_TARGET_DIR=target/soft \
  cargo test "${DEVICE_CRATES[@]}" --all-features
echo "soft backend step: $((SECONDS - SECONDS_START)) s"

# The AVX2 instance (the XOF's AVX2 lanes; the FFT's AVX2 kernels are its widest, run above already): only an
# AVX-512 host needs it forced, a host with AVX2 alone ran it in the steps above, and a host without AVX2
# cannot run it (said here; tests/backend.rs fails loudly if the instance is forced on such a CPU).
if grep -qw avx512f /proc/cpuinfo && grep -qw avx2 /proc/cpuinfo; then
  step "AVX2 instance: device crates' tests under --cfg tfhe_sbc_backend=\"avx2\" (the XOF's AVX-512F instance compiled out)"
  SECONDS_START=$SECONDS
  RUSTFLAGS='--cfg tfhe_sbc_backend="avx2"' TFHE_SBC_EXPECT_BACKEND=avx2 CARGO_TARGET_DIR=target/avx2 \
    cargo test "${DEVICE_CRATES[@]}" --all-features
  echo "avx2 backend step: $((SECONDS - SECONDS_START)) s"
elif grep -qw avx2 /proc/cpuinfo; then
  echo "AVX2 instance: this CPU has AVX2 and no AVX-512F, so the steps above ran the AVX2 instance (the AVX-512F"
  echo "  lanes are not tested on this machine: no instruction to run them)"
else
  echo "AVX2 instance: NOT TESTED on this machine: the CPU has no AVX2 (nor AVX-512F); only the portable code ran"
fi

step "stack budgets per forced instance: tests/stack.rs and the streaming compact list without feature std (the CPU's own instance: scripts/test-all.sh)"
# Feature std scrubs 64 KiB of stack after every secret call, which hides a call's depth from the painting:
# with std (every run above) the budget tests skip their budgets and say so. Here they run without it (the
# firmware's build, same code), in each forced instance this CPU runs; scripts/test-all.sh runs the CPU's own
# instance in the test profile and in release (in its build directory, where those builds are warm).
SECONDS_START=$SECONDS
STACK_BUDGET_TESTS=(-p tfhe-sbc-device --features hazmat,getrandom,test-utils --test stack --test compact_list)
RUSTFLAGS='--cfg tfhe_sbc_backend="soft"' CARGO_TARGET_DIR=target/soft cargo test "${STACK_BUDGET_TESTS[@]}" -- stack
if grep -qw avx512f /proc/cpuinfo && grep -qw avx2 /proc/cpuinfo; then
  RUSTFLAGS='--cfg tfhe_sbc_backend="avx2"' CARGO_TARGET_DIR=target/avx2 cargo test "${STACK_BUDGET_TESTS[@]}" -- stack
  RUSTFLAGS='--cfg tfhe_sbc_backend="avx2"' CARGO_TARGET_DIR=target/avx2 \
    cargo test --release "${STACK_BUDGET_TESTS[@]}" -- stack
fi
echo "stack budget step: $((SECONDS - SECONDS_START)) s"

step "feature matrix: cargo hack check --each-feature (device crates on thumbv7em, the adapter without tfhe)"
# A pinned cargo-hack, installed when missing or at another version. `check` only: every feature alone (and
# none) must compile. --no-dev-deps: dev-dependencies (std-only) must not be what makes a feature build.
CARGO_HACK_VERSION=0.6.45
if [ "$(cargo hack --version 2>/dev/null)" != "cargo-hack $CARGO_HACK_VERSION" ]; then
  cargo install cargo-hack --version "$CARGO_HACK_VERSION" --locked
fi
SECONDS_START=$SECONDS
# --no-dev-deps rewrites every member's Cargo.toml while it runs (and restores it after): in the source tree,
# the host lane, compiling tests at the same time, read manifests without their dev-dependencies (a CI run
# failed so: "unresolved module or unlinked crate `libc`" in the device crate's aarch64 tests). So cargo hack
# runs in a copy of the source tree (what git tracks or would track: no target/, no ignored files), at a
# fixed path so that its builds are reused, with this lane's build directory.
ROOT=$PWD
HACK_TARGET=$(realpath -m "$CARGO_TARGET_DIR")
HACK_SRC="$HACK_TARGET/hack-src"
rm -rf "$HACK_SRC"
mkdir -p "$HACK_SRC"
git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -C "$HACK_SRC" -xf -
cd "$HACK_SRC"
export CARGO_TARGET_DIR="$HACK_TARGET"
# No std on thumbv7em: the features that need it (`getrandom`, `std`) are checked alone on the host below.
cargo hack check --each-feature --no-dev-deps "${DEVICE_CRATES[@]}" --exclude-features getrandom,std \
  --target thumbv7em-none-eabihf
cargo hack check --each-feature --no-dev-deps -p tfhe-sbc-device
# The adapter without tfhe-rs (`tfhe`, and `nats`, which needs it) and rayon: what a server that only
# validates frames builds (its tfhe-rs features are checked by the clippy step; here they would check
# tfhe-rs a third time, with yet other features).
cargo hack check --each-feature --no-dev-deps -p tfhe-sbc-adapter --exclude-features tfhe,nats,rayon
echo "cargo hack step: $((SECONDS - SECONDS_START)) s"
cd "$ROOT"
export CARGO_TARGET_DIR="${DEVICE_TARGETS_DIR:-target/device-targets}"
# --- end of backend override and feature matrix ----------------------------------------------------------------

# --- integer NTT, Cortex-M0/M3 multiplier: begin ---
step "negacyclic-ntt with the 16x16-bit partial-product multiplier of Cortex-M0/M3 (--cfg negacyclic_ntt_mul16), on the host"
# build.rs picks that multiplier (and Shoup twiddles) from the target triple on thumbv6m/thumbv7m; this runs
# the exactness tests on it (own target dir, so the main one is not rebuilt).
RUSTFLAGS="--cfg negacyclic_ntt_mul16" CARGO_TARGET_DIR=target/mul16 cargo test -p negacyclic-ntt
# And as on Thumb-1 (thumbv6m), which also has no conditional move: masks hidden, csub_any's sign-bit borrow.
RUSTFLAGS="--cfg negacyclic_ntt_mul16 --cfg negacyclic_ntt_no_cmov" CARGO_TARGET_DIR=target/mul16 \
  cargo test -p negacyclic-ntt
step "negacyclic-ntt's Arm assembly (src/arm_asm.rs) on armv7-unknown-linux-gnueabihf under qemu-arm, Thumb-2 and A32"
# The same assembly as the Cortex-M4's (build.rs enables it on armv7 too); its unit tests compare every
# assembly pass, the pointwise product and the CRT with their portable twins, and the exactness tests run
# the plans on it.
ARMV7_ENV=(CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER=arm-linux-gnueabihf-gcc
  "CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_RUNNER=qemu-arm -L /usr/arm-linux-gnueabihf")
env "${ARMV7_ENV[@]}" RUSTFLAGS="-C target-feature=+thumb-mode" CARGO_TARGET_DIR=target/armv7-thumb \
  cargo test --release -p negacyclic-ntt --target armv7-unknown-linux-gnueabihf
env "${ARMV7_ENV[@]}" CARGO_TARGET_DIR=target/armv7 \
  cargo test --release -p negacyclic-ntt --target armv7-unknown-linux-gnueabihf
# --- integer NTT: end ---
step "device targets' lane: all passed"
