#!/usr/bin/env bash
# The firmware template, as a user starts from it: templates/cortex-m/ asks for tfhe-sbc-device "0.1" from the
# registry; this script builds a copy of it against the packaged crates ([patch.crates-io] to the unpacked
# .crate files, what crates.io would serve) and fails unless
#   1. the keys tool makes a development key set and credential (init --parameters tfhe-lib, the cheapest set
#      that `issue --unsafe-dev-credential` takes; issue --unsafe-dev-credential) and the copy takes it;
#   2. the copy is formatted, passes clippy -D warnings and builds with the template's Cargo.lock (--locked);
#   3. it runs under qemu-system-arm (mps2-an386, the template's runner) to `result=ok`, with RAM (statics +
#      painted peak stack) <= 24 KiB and flash (text + data) <= 64 KiB, both as the firmware reports them and
#      as the ELF says;
#   4. `tfhe-sbc-keys check-frame --hex` authenticates every frame the firmware printed and decrypts it to the
#      readings the firmware encrypted (byte for byte, the right range of the right message), and refuses the
#      same frame with one bit flipped;
#   5. docs/firmware.md's "Start here" states this run's figures (its `template-figures` comment): RAM and
#      flash within 2%, and the SHA-256 of the frames exactly (the development credential, seed, boot count and
#      readings are fixed, so the frames are bit for bit the same on every run).
# Installs what it needs (scripts/lib/firmware-setup.sh). Packages the device crates itself unless
# scripts/package.sh left them unpacked in target/package-tests/unpacked/crates.
#
# Usage: bash scripts/template.sh      (TSBC_KEYS: the keys tool binary; default target/debug/tfhe-sbc-keys)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TEMPLATE=templates/cortex-m
TARGET=thumbv7em-none-eabihf
RAM_BUDGET=$((24 * 1024))
FLASH_BUDGET=$((64 * 1024))
CRATES=(negacyclic-fft negacyclic-ntt tfhe-sbc-core tfhe-sbc-device)
KEYS=${TSBC_KEYS:-$ROOT/target/debug/tfhe-sbc-keys}
WORK=$ROOT/target/template-run
START=$SECONDS
# shellcheck source=scripts/lib/firmware-setup.sh
source scripts/lib/firmware-setup.sh
FAILURES=()

step() { printf '\n==> template: %s\n' "$*"; }
die() {
  printf 'template: FAILED: %s\n' "$*" >&2
  exit 1
}

[ -x "$KEYS" ] || die "no keys tool at $KEYS (cargo build -p tfhe-sbc-keys, or set TSBC_KEYS)"

step "set-up: rustup target $TARGET, llvm-tools, flip-link $FLIP_LINK_VERSION, qemu-system-arm"
firmware_setup "$TARGET"

step "the packaged device crates"
UNPACKED=$ROOT/target/package-tests/unpacked/crates
for c in "${CRATES[@]}"; do [ -f "$UNPACKED/$c/Cargo.toml" ] || UNPACKED=""; done
if [ -z "$UNPACKED" ]; then
  # scripts/package.sh has not run: package them here (the .crate files crates.io would serve) and unpack.
  PACKAGE_DIR=$ROOT/target/template-package
  rm -rf "$PACKAGE_DIR/unpacked"
  mkdir -p "$PACKAGE_DIR/unpacked"
  CARGO_TARGET_DIR=$PACKAGE_DIR cargo package --no-verify --allow-dirty "${CRATES[@]/#/-p}"
  # -m: a .crate's entries carry one fixed mtime (cargo package makes them reproducible), so with the
  # archive's mtimes cargo would take the last run's build of the same path as fresh and link stale code.
  for c in "${CRATES[@]}"; do
    tar -xzmf "$PACKAGE_DIR/package/$c-0.1.0.crate" -C "$PACKAGE_DIR/unpacked"
    mv "$PACKAGE_DIR/unpacked/$c-0.1.0" "$PACKAGE_DIR/unpacked/$c"
  done
  UNPACKED=$PACKAGE_DIR/unpacked
fi
echo "  $UNPACKED: ${CRATES[*]}"

step "a copy of $TEMPLATE, [patch.crates-io] to the packages"
rm -rf "$WORK"
mkdir -p "$WORK"
FW=$WORK/firmware
# The template's files only: not a build directory or a credential someone left in it.
mkdir -p "$FW"
tar -C "$TEMPLATE" --exclude=./target --exclude=./device.tsdc --exclude=./device.seed -cf - . | tar -C "$FW" -xf -
grep -q '^# \[patch.crates-io\]$' "$FW/Cargo.toml" || die "$TEMPLATE/Cargo.toml has no commented [patch.crates-io]"
grep -qE '^tfhe-sbc-device = \{ version = "0\.1", default-features = false' "$FW/Cargo.toml" ||
  die "$TEMPLATE/Cargo.toml does not take tfhe-sbc-device \"0.1\" from the registry"
{
  printf '\n[patch.crates-io]\n'
  for c in "${CRATES[@]}"; do printf '%s = { path = "%s" }\n' "$c" "$UNPACKED/$c"; done
} >>"$FW/Cargo.toml"
sed -n '/^\[patch.crates-io\]$/,$p' "$FW/Cargo.toml" | sed 's/^/  /'

step "a development key set and device 1's credential ($KEYS)"
"$KEYS" init --dir "$WORK/keys" --parameters tfhe-lib | sed 's/^/  /'
"$KEYS" issue --dir "$WORK/keys" --device-id 1 --mode per-device --unsafe-dev-credential | sed 's/^/  /'
cp "$WORK/keys/devices/1.UNSAFE-DEV.tsdc" "$FW/device.tsdc"
cp "$WORK/keys/devices/1.UNSAFE-DEV.seed" "$FW/device.seed"

cd "$FW"
export CARGO_TARGET_DIR=$ROOT/target/template
step "fmt, clippy -D warnings, build (the template's Cargo.lock, profile release)"
cargo fmt --check
cargo clippy --release --locked -- -D warnings
cargo build --release --locked
elf=$CARGO_TARGET_DIR/$TARGET/release/tfhe-sbc-firmware-template
read -r text data bss _ < <("$LLVM_SIZE" "$elf" | tail -n 1)
flash=$((text + data))
echo "  flash $flash B (text $text, data $data), .bss $bss B"

step "run under qemu-system-arm (mps2-an386, the runner of $TEMPLATE/.cargo/config.toml)"
set +e
OUT=$(timeout 120 cargo run --release --locked 2>&1)
RC=$?
set -e
# The frames' hex is long: show the first 100 characters of each line.
printf '%s\n' "$OUT" | cut -c 1-100 | sed 's/^/    /'
# The value of `key=` in the line that starts with `prefix`.
field() { printf '%s\n' "$OUT" | grep -E "^$1" | grep -oE "(^| )$2=[^ ]+" | head -n 1 | sed 's/.*=//' || true; }
if [ "$RC" -ne 0 ] || ! printf '%s\n' "$OUT" | grep -qx 'result=ok'; then
  die "the run did not end with result=ok (exit $RC)"
fi
ram=$(field 'ram:' total)
statics=$(field 'ram:' statics)
reported_flash=$(field 'flash:' used)
echo "  RAM $ram B (statics $statics + peak stack $(field 'ram:' stack)), flash $flash B"
[ "$ram" -le "$RAM_BUDGET" ] || FAILURES+=("RAM $ram B > $RAM_BUDGET B")
[ "$flash" -le "$FLASH_BUDGET" ] || FAILURES+=("flash $flash B > $FLASH_BUDGET B")
[ "$statics" = "$((data + bss))" ] || FAILURES+=("statics $statics != the ELF's .data + .bss $((data + bss))")
# The firmware's own figure is where .data's initial values end (__sidata + .data), which counts the gaps
# that section alignment leaves between .text and .rodata; the ELF's text + data does not: at most a few
# bytes apart (4 with the BLAKE2s build), never less.
[ "$reported_flash" -ge "$flash" ] && [ $((reported_flash - flash)) -lt 64 ] ||
  FAILURES+=("the firmware reports flash $reported_flash, the ELF $flash (more than alignment apart)")

step "check-frame on every frame the firmware printed"
cd "$ROOT"
declare -A PLAIN
while read -r m hex; do PLAIN[$m]=$hex; done < <(printf '%s\n' "$OUT" | sed -n 's/^plaintext message=\([0-9]*\) hex=\([0-9a-f]*\)$/\1 \2/p')
FRAMES=0
ALL_FRAMES=""
while read -r m c n hex; do
  FRAMES=$((FRAMES + 1))
  ALL_FRAMES+=$hex
  [ "${#hex}" -eq $((2 * n)) ] || FAILURES+=("frame $m/$c: ${#hex} hex digits for $n bytes")
  set +e
  CHECK=$("$KEYS" check-frame --dir "$WORK/keys" --hex "$hex" 2>&1)
  CHECK_RC=$?
  set -e
  printf '%s\n' "$CHECK" | sed 's/^/    /'
  if [ "$CHECK_RC" -ne 0 ]; then
    FAILURES+=("check-frame refused frame $m/$c (exit $CHECK_RC)")
    continue
  fi
  printf '%s\n' "$CHECK" | grep -q 'device 1 (per-device mode, UNSAFE-DEV' ||
    FAILURES+=("frame $m/$c: check-frame does not name development device 1")
  # "message bytes A..B (L bytes)", then the bytes in hex, two-space indented.
  range=$(printf '%s\n' "$CHECK" | sed -n 's/.*message bytes \([0-9]*\)\.\.\([0-9]*\) .*/\1 \2/p')
  read -r from to <<<"$range"
  decrypted=$(printf '%s\n' "$CHECK" | sed -n '/message bytes/,$p' | tail -n +2 | tr -d ' \n')
  want=${PLAIN[$m]:-}
  want=${want:$((2 * ${from:-0})):$((2 * (${to:-0} - ${from:-0})))}
  if [ -z "$want" ] || [ "$decrypted" != "$want" ]; then
    FAILURES+=("frame $m/$c decrypts to '$decrypted', the firmware encrypted '$want' (bytes $range)")
  else
    echo "  frame message=$m chunk=$c ($n B): authenticated, decrypts to the firmware's readings (bytes $from..$to)"
  fi
done < <(printf '%s\n' "$OUT" | sed -n 's/^frame message=\([0-9]*\) chunk=\([0-9]*\) bytes=\([0-9]*\) hex=\([0-9a-f]*\)$/\1 \2 \3 \4/p')
[ "$FRAMES" -gt 0 ] && [ "${#PLAIN[@]}" -gt 0 ] || FAILURES+=("the firmware printed no frame or no plaintext")
FRAMES_SHA256=$(printf '%s' "$ALL_FRAMES" | xxd -r -p | sha256sum | cut -d' ' -f1)
echo "  $FRAMES frames of ${#PLAIN[@]} messages; sha256 of their bytes: $FRAMES_SHA256"

# The check can fail: the first frame with one bit of its body flipped must be refused.
first=$(grep -m 1 '^frame ' <<<"$OUT" | sed 's/.* hex=//')
if [ -n "$first" ]; then
  at=$((${#first} / 2))
  flipped=${first:0:at}$(printf '%x' $((0x${first:at:1} ^ 1)))${first:at+1}
  if "$KEYS" check-frame --dir "$WORK/keys" --hex "$flipped" >/dev/null 2>&1; then
    FAILURES+=("check-frame accepted the first frame with a bit flipped")
  else
    echo "  the first frame with one bit flipped: refused"
  fi
fi

# docs/firmware.md's "Start here" states this run's figures: a comment, and the same numbers in its text.
GUIDE=docs/firmware.md
STATED=$(sed -n 's/^<!-- template-figures: \(.*\) -->$/\1/p' "$GUIDE")
[ -n "$STATED" ] || FAILURES+=("$GUIDE has no '<!-- template-figures: ... -->' line")
declare -A MEASURED=([ram]=$ram [flash]=$flash) LABEL=([ram]=RAM [flash]=flash)
for pair in $STATED; do
  key=${pair%%=*} stated=${pair#*=} measured=${MEASURED[${pair%%=*}]:-}
  if [ "$key" = frames_sha256 ]; then
    # The frames are fixed (public development credential and seed, boot 1, fixed readings): bit for bit.
    grep -qF "\`$stated\`" "$GUIDE" || FAILURES+=("$GUIDE states frames_sha256=$stated, but its text never shows it")
    if [ "$stated" = "$FRAMES_SHA256" ]; then echo "  $GUIDE: frames_sha256 stated and measured $stated"
    else FAILURES+=("frames_sha256: $GUIDE says $stated, this run's frames give $FRAMES_SHA256"); fi
    continue
  fi
  grouped=$(printf '%s' "$stated" | rev | sed 's/[0-9]\{3\}/&,/g; s/,$//' | rev)
  grep -qF "$grouped bytes of ${LABEL[$key]:-$key}" "$GUIDE" ||
    FAILURES+=("$GUIDE states $key=$stated, but its text never says '$grouped bytes of ${LABEL[$key]:-$key}'")
  if [ -z "$measured" ]; then
    FAILURES+=("$GUIDE states $key, which this run does not measure")
  elif diff=$((measured - stated)) && [ "${diff#-}" -gt $((stated / 50)) ]; then
    FAILURES+=("$key: $GUIDE says $stated, this run measured $measured: update its template-figures line and text")
  else
    echo "  $GUIDE: $key stated $stated, measured $measured"
  fi
done

if [ "${#FAILURES[@]}" -ne 0 ]; then
  printf 'template: FAILED: %s\n' "${FAILURES[@]}"
  exit 1
fi
echo "template: $FRAMES frames checked by check-frame, RAM $ram <= $RAM_BUDGET, flash $flash <= $FLASH_BUDGET ($((SECONDS - START)) s)"
