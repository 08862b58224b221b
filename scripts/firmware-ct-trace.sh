#!/usr/bin/env bash
# Constant time, checked on the microcontroller binaries themselves: builds the boolean known-answer firmware
# three times per target, with the KAT's secrets, with their bitwise complement (TSBC_FIRMWARE_SECRETS=alt,
# read by firmware/build.rs: every bit of the key's coefficients, the CSPRNG seed, the MAC key and the message
# flipped; the mask and the noise, drawn from the seed, differ as random values do) and with a third,
# arbitrary set (=third), checks that the builds' code (.text) is byte for byte the same, then runs them under
# qemu with a TCG plugin (scripts/qemu-plugin/ct_trace.c) that fingerprints the address of every executed
# instruction and of every load and store. At the end of each measured phase (set key + seed; one encryption;
# one sealed frame) the firmware calls `tsbc_ct_checkpoint`, where the plugin prints the fingerprint so far;
# the three runs must print the same ones. So no branch and no memory address of the whole run up to the last
# frame depends on a secret, on the instruction set the firmware ships for (not only on the x86_64 build
# scripts/ctgrind.sh runs). A leak on one bit of the key, the seed, the MAC key or the message is always seen
# (the complement flips it); a leak on one bit of one mask or noise value is missed with probability 1/4.
# Profile `firmware` (opt-level "s") only: that is the build the budgets measure.
#
# Negative controls, on riscv32imc and thumbv7em: the same builds with a planted branch on a seed bit
# (TSBC_FIRMWARE_CT_PLANT=branch) and with a planted seed-indexed load and no branch (=lookup) must each give
# different fingerprints, or the check proves nothing.
#
# Usage: bash scripts/firmware-ct-trace.sh [TARGET...]   (default: the five firmware targets). Exits 1 on a
# difference or a failed control. On a difference, KEEP_WORK=1 keeps the traces' directory; rerun the two
# ELFs with `-plugin ct_trace.so,trace=FILE` to get every instruction address and diff the files.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib/firmware-setup.sh
source scripts/lib/firmware-setup.sh
TARGETS=("$@")
[ "${#TARGETS[@]}" -ne 0 ] || TARGETS=("${FIRMWARE_TARGETS[@]}")
CONTROL_TARGETS=(riscv32imc-unknown-none-elf thumbv7em-none-eabihf)
TARGET_DIR=${CARGO_TARGET_DIR:-target}
WORK=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
start=$(date +%s)

step() { printf '\n==> firmware-ct-trace: %s\n' "$*"; }

step "set-up"
firmware_setup "${TARGETS[@]}"
use_flip_link "${TARGETS[@]}"
LLVM_BIN="$(dirname "$LLVM_SIZE")"
mkdir -p "$TARGET_DIR/qemu-plugin"
PLUGIN="$TARGET_DIR/qemu-plugin/ct_trace.so"
gcc -O2 -shared -fPIC -Wall -Wextra -Werror -o "$PLUGIN" scripts/qemu-plugin/ct_trace.c

# Builds target $1 with secrets $2 (kat or alt) and planted leak $3 (none, branch, lookup) into $WORK/$4.elf.
build() {
  local t=$1 secrets=$2 plant=$3 name=$4
  TSBC_FIRMWARE_SECRETS=$secrets TSBC_FIRMWARE_CT_PLANT=${plant#none} \
    cargo build -q -p tfhe-sbc-firmware --profile firmware --target "$t"
  cp "$TARGET_DIR/$t/firmware/tfhe-sbc-firmware" "$WORK/$name.elf"
  "$LLVM_BIN/llvm-objcopy" -O binary --only-section=.text "$WORK/$name.elf" "$WORK/$name.text"
}

# Runs $WORK/$1.elf (target $2) under the plugin; writes the checkpoint lines to $WORK/$1.trace and the
# firmware's result to $WORK/$1.out.
trace() {
  local name=$1 t=$2 checkpoint
  checkpoint=$("$LLVM_BIN/llvm-nm" "$WORK/$name.elf" | awk '$3 == "tsbc_ct_checkpoint" { print "0x" $1 }')
  [ -n "$checkpoint" ] || { echo "no tsbc_ct_checkpoint in $name.elf" >&2; return 2; }
  QEMU_TIMEOUT=120 QEMU_EXTRA_ARGS="-plugin $PLUGIN,checkpoint=$checkpoint" \
    bash firmware/qemu-run.sh "$WORK/$name.elf" "$t" >"$WORK/$name.out" 2>&1 || true
  grep '^ct_trace checkpoint' "$WORK/$name.out" >"$WORK/$name.trace" || true
}

# Builds and traces target $1 with planted leak $2 (none, branch, lookup) for the three secret sets; sets
# $VERDICT: same (all three traces equal), differ, or why the comparison could not be made.
compare() {
  local t=$1 plant=$2 kat name secrets
  kat="$t-kat-$plant"
  for secrets in kat alt third; do
    build "$t" "$secrets" "$plant" "$t-$secrets-$plant"
  done
  for secrets in alt third; do
    if ! cmp -s "$WORK/$kat.text" "$WORK/$t-$secrets-$plant.text"; then
      VERDICT="code differs between the builds (.text, kat and $secrets), so the traces cannot be compared"
      return
    fi
  done
  for secrets in kat alt third; do
    trace "$t-$secrets-$plant" "$t"
  done
  for name in "$kat" "$t-alt-$plant" "$t-third-$plant"; do
    if ! grep -q '^result=ok' "$WORK/$name.out"; then
      VERDICT="$name did not end with result=ok: $(grep -m1 '^result=' "$WORK/$name.out" || echo none)"
      return
    fi
    if [ "$(wc -l <"$WORK/$name.trace")" -ne 3 ]; then
      VERDICT="$name printed $(wc -l <"$WORK/$name.trace") checkpoints, not 3"
      return
    fi
  done
  for secrets in kat alt third; do
    sed "s/^/    $secrets: /" "$WORK/$t-$secrets-$plant.trace"
  done
  if cmp -s "$WORK/$kat.trace" "$WORK/$t-alt-$plant.trace" && cmp -s "$WORK/$kat.trace" "$WORK/$t-third-$plant.trace"
  then VERDICT=same; else VERDICT=differ; fi
}

FAILURES=()
SUMMARY=()
CONTROLS=0
for t in "${TARGETS[@]}"; do
  step "$t: the KAT's secrets, their complement and a third set: same code, same trace"
  compare "$t" none
  SUMMARY+=("$t: $VERDICT")
  [ "$VERDICT" = same ] || FAILURES+=("$t: the traces for two sets of secrets: $VERDICT")
done
for t in "${CONTROL_TARGETS[@]}"; do
  printf '%s\n' "${TARGETS[@]}" | grep -qx "$t" || continue
  for plant in branch lookup; do
    step "$t, negative control (a planted $plant on the CSPRNG seed): the traces must differ"
    compare "$t" "$plant"
    SUMMARY+=("$t with a planted $plant: $VERDICT (must differ)")
    CONTROLS=$((CONTROLS + 1))
    [ "$VERDICT" = differ ] || FAILURES+=("$t: the planted leak ($plant) was not seen: $VERDICT")
  done
done

step "summary"
printf '  %s\n' "${SUMMARY[@]}"
echo "firmware-ct-trace.sh took $(( $(date +%s) - start )) s"
if [ "${#FAILURES[@]}" -ne 0 ]; then
  printf 'firmware-ct-trace: FAILED: %s\n' "${FAILURES[@]}"
  exit 1
fi
if [ "$CONTROLS" -eq 0 ]; then
  echo "firmware-ct-trace: no instruction or memory address depends on the secrets on ${TARGETS[*]}; no negative control ran (they run on ${CONTROL_TARGETS[*]})"
else
  echo "firmware-ct-trace: no instruction or memory address depends on the secrets on ${TARGETS[*]}; $CONTROLS planted leaks seen"
fi
