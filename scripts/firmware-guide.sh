#!/usr/bin/env bash
# The firmware guide, kept true: docs/firmware.md shows every file of examples/firmware-guide/ (a firmware crate
# of its own, as a user would write it) verbatim, and this script fails unless
#   1. each block the guide marks `<!-- file: examples/firmware-guide/PATH -->` equals that file, and every
#      source file of the crate is shown (Cargo.lock and the binary test files in devices/ excepted);
#   2. the test credential in devices/ is what `firmware/examples/test_credential.rs` makes (its provenance),
#      and that tool's host replay of the firmware's run gives the digest the firmware prints for its frames;
#   3. the crate is formatted, passes clippy -D warnings, and builds with its own Cargo.lock (--locked);
#   4. `cargo run --release` (qemu-system-arm, mps2-an386, semihosting) runs to `result=ok`, with RAM (statics +
#      painted peak stack) <= 24 KiB and flash (text + data) <= 64 KiB, interrupts taken during a frame,
#      frames of the expected lengths, and the frames' digest equal to the host's (bit-exact frames);
#   5. the figures the guide states (its `guide-figures` comment, and the same numbers in its table) are those
#      of this run: size_of the encryptor and the frame lengths exactly, the rest within 2%.
# Installs what it needs (rustup target, llvm-tools, a pinned flip-link, Debian's qemu-system-arm).
#
# Usage: bash scripts/firmware-guide.sh   (the crate always builds in examples/firmware-guide/target)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
GUIDE=docs/firmware.md
CRATE=examples/firmware-guide
TARGET=thumbv7em-none-eabihf
RAM_BUDGET=$((24 * 1024))
FLASH_BUDGET=$((64 * 1024))
# shellcheck source=scripts/lib/firmware-setup.sh
source scripts/lib/firmware-setup.sh
FAILURES=()

step() { printf '\n==> firmware guide: %s\n' "$*"; }

step "set-up: rustup target $TARGET, llvm-tools, flip-link $FLIP_LINK_VERSION, qemu-system-arm"
firmware_setup "$TARGET"

step "$GUIDE shows every file of $CRATE verbatim"
# The files the guide marks: `<!-- file: PATH -->`, then a fenced block whose content must equal PATH.
mapfile -t SHOWN < <(sed -n 's/^<!-- file: \([^ ]*\) -->$/\1/p' "$GUIDE")
for path in "${SHOWN[@]}"; do
  block=$(awk -v marker="<!-- file: $path -->" '
    $0 == marker { want = 1; next }
    want == 1 && /^```/ { want = 2; next }
    want == 2 && /^```$/ { exit }
    want == 2 { print }' "$GUIDE")
  if [ ! -f "$path" ]; then
    FAILURES+=("the guide shows $path, which does not exist")
  elif ! diff -u --label "$path" --label "$GUIDE ($path)" "$path" <(printf '%s\n' "$block"); then
    FAILURES+=("$GUIDE's copy of $path differs from the file (diff above)")
  else
    echo "  $path: identical"
  fi
done
while IFS= read -r path; do
  case "$path" in "$CRATE/Cargo.lock" | "$CRATE"/devices/*) continue ;; esac
  if ! printf '%s\n' "${SHOWN[@]}" | grep -qxF "$path"; then
    FAILURES+=("$GUIDE does not show $path")
  fi
done < <(find "$CRATE" -path "$CRATE/target" -prune -o -type f -print | sort)

step "the test credential in $CRATE/devices is what firmware/examples/test_credential.rs makes"
set +e
HOST=$(cargo run -q -p tfhe-sbc-firmware --example test_credential -- 1 "$CRATE/devices" --check --frames-digest)
HOST_RC=$?
set -e
printf '%s\n' "$HOST" | sed 's/^/  /'
[ "$HOST_RC" -eq 0 ] || FAILURES+=("$CRATE/devices/1.* are not the tool's test credential")
HOST_DIGEST=$(printf '%s\n' "$HOST" | sed -n 's/^frames_digest=//p')

cd "$CRATE"
export CARGO_TARGET_DIR="$ROOT/$CRATE/target"
step "fmt, clippy -D warnings, build (its own Cargo.lock, profile release)"
cargo fmt --check
cargo clippy --release --locked -- -D warnings
cargo build --release --locked
elf="target/$TARGET/release/firmware-guide"
read -r text data bss _ < <("$LLVM_SIZE" "$elf" | tail -n 1)
flash=$((text + data))
echo "  flash $flash B (text $text, data $data), .bss $bss B"

step "run under qemu-system-arm (mps2-an386, the runner of $CRATE/.cargo/config.toml)"
set +e
OUT=$(timeout 120 cargo run --release --locked 2>&1)
RC=$?
set -e
printf '%s\n' "$OUT" | sed 's/^/    /'
# The value of `key=` in the run's output.
field() { printf '%s\n' "$OUT" | grep -oE "(^| )$1=[^ ]+" | head -n 1 | sed 's/.*=//' || true; }
declare -A MEASURED=(
  [flash]=$flash [statics]=$(field statics) [stack_setup]=$(field stack_setup)
  [stack_encrypt]=$(field stack_encrypt) [ram]=$(field total) [size_of_encryptor]=$(field size_of_encryptor)
  [setup]=$(field setup) [full_frame]=$(field full_frame) [compact_frame]=$(field compact_frame)
)
if [ "$RC" -ne 0 ] || [ "$(field result)" != ok ]; then
  if printf '%s' "$OUT" | grep -q Lockup; then FAILURES+=("the run locked up (a stack overflow: flip-link)")
  else FAILURES+=("the run did not end with result=ok (exit $RC)"); fi
else
  [ "${MEASURED[ram]}" -le "$RAM_BUDGET" ] || FAILURES+=("RAM ${MEASURED[ram]} B > $RAM_BUDGET B")
  [ "$flash" -le "$FLASH_BUDGET" ] || FAILURES+=("flash $flash B > $FLASH_BUDGET B")
  [ "${MEASURED[statics]}" = "$((data + bss))" ] ||
    FAILURES+=("statics ${MEASURED[statics]} != the ELF's .data + .bss $((data + bss))")
  [ "$(field interrupts_during_full_frame)" -gt 0 ] ||
    FAILURES+=("no interrupt was taken during a frame: the encryption must not mask interrupts")
  [ -n "$HOST_DIGEST" ] && [ "$(field frames_digest)" = "$HOST_DIGEST" ] ||
    FAILURES+=("the firmware's frames_digest $(field frames_digest) is not the host's ${HOST_DIGEST:-(none)}")
  [ "$(field full)" = 4191 ] && [ "$(field compact)" = 1503,1503 ] ||
    FAILURES+=("frames of $(field full) and $(field compact) B, not 4191 (full) and 1503,1503 (compact)")
fi

step "the figures $GUIDE states are this run's"
cd "$ROOT"
STATED=$(sed -n 's/^<!-- guide-figures: \(.*\) -->$/\1/p' "$GUIDE")
[ -n "$STATED" ] || FAILURES+=("$GUIDE has no '<!-- guide-figures: ... -->' line")
for pair in $STATED; do
  key=${pair%%=*} stated=${pair#*=} measured=${MEASURED[${pair%%=*}]:-}
  if [ -z "$measured" ]; then
    FAILURES+=("the guide states $key, which this run does not measure")
    continue
  fi
  # The same number, with thousands separators, in the guide's text.
  grouped=$(printf '%s' "$stated" | rev | sed 's/[0-9]\{3\}/&,/g; s/,$//' | rev)
  grep -qF "$grouped" "$GUIDE" || FAILURES+=("the guide states $key=$stated, but its text never says $grouped")
  case "$key" in
    size_of_encryptor) tolerance=0 ;;
    *) tolerance=$((stated / 50)) ;;
  esac
  diff=$((measured - stated))
  if [ "${diff#-}" -gt "$tolerance" ]; then
    FAILURES+=("$key: the guide says $stated, this run measured $measured: update $GUIDE (the comment and the table)")
  else
    echo "  $key: stated $stated, measured $measured"
  fi
done

if [ "${#FAILURES[@]}" -ne 0 ]; then
  printf 'firmware guide: FAILED: %s\n' "${FAILURES[@]}"
  exit 1
fi
echo "firmware guide: the guide's files, test credential, build, run and figures agree (RAM ${MEASURED[ram]} <= $RAM_BUDGET, flash $flash <= $FLASH_BUDGET)"
