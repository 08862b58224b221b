#!/usr/bin/env bash
# Instructions per N = 1024 encryption on aarch64, counted under qemu-user with a
# small TCG plugin (scripts/qemu-plugin/insn_count.c: every executed guest instruction, exactly).
#
# The program (crates/tfhe-sbc-device/examples/encryption_count.rs) runs R encryptions with fixed seeds;
# count(R) - count(0) is R encryptions' worth, so process start-up and key set-up cancel out. Counts are
# deterministic (same binary, same inputs): the script runs R twice and fails if the two counts differ.
#
# Needs: gcc, qemu-aarch64 (Debian qemu-user >= 4.2, built with plugin support, as bookworm's is), the
# aarch64 cross linker and rustup target (scripts/test-all.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

R=${R:-20}
OUT=target/qemu-plugin
mkdir -p "$OUT"
gcc -O2 -shared -fPIC -Wall -Wextra -Werror -o "$OUT/insn_count.so" scripts/qemu-plugin/insn_count.c

cargo build --quiet --release -p tfhe-sbc-device --example encryption_count --target aarch64-unknown-linux-gnu
BIN=target/aarch64-unknown-linux-gnu/release/examples/encryption_count
[ -n "${CARGO_TARGET_DIR:-}" ] && BIN="$CARGO_TARGET_DIR/aarch64-unknown-linux-gnu/release/examples/encryption_count"

count() {
  qemu-aarch64 -L /usr/aarch64-linux-gnu -plugin "$OUT/insn_count.so" "$BIN" "$1" 2>&1 >/dev/null \
    | awk '/^insn_count/ { print $2 }'
}
base=$(count 0)
run=$(count "$R")
again=$(count "$R")
if [ -z "$base" ] || [ -z "$run" ]; then
  echo "the qemu plugin printed no instruction count"
  exit 1
fi
if [ "$run" != "$again" ]; then
  echo "instruction counts differ between two identical runs: $run vs $again"
  exit 1
fi
per=$(( (run - base) / R ))
echo "aarch64 (qemu-user $(qemu-aarch64 --version | head -1 | awk '{print $3}')): $per instructions per N = 1024 seeded encryption"
echo "  (count($R) = $run, count(0) = $base; default product: the f64 FFT, TUniform noise, keyed BLAKE2b XOF)"
# The paper: 3.1 ms per encryption on a 1 GHz Cortex-A53 (Raspberry Pi Zero 2 W).
awk -v n="$per" 'BEGIN {
  printf "  at 1 GHz: %.3f ms at IPC 1.0, %.3f ms at IPC 0.5 (the paper: 3.1 ms on a Pi Zero 2 W)\n",
    n / 1e6, n / 0.5e6
}'
