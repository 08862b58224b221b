#!/usr/bin/env bash
# Outside-in test that the microcontroller firmware's RAM holds no dead secret after its encryptions: builds
# the boolean known-answer firmware (firmware/src/run.rs) with the feature `hold-for-ram-image` (the measured
# firmware is unchanged), runs it under qemu-system-arm or qemu-system-riscv32 with a monitor on a unix socket,
# waits for its line `ram-image: hold`, reads the stack pointer (`info registers`: R13, or RISC-V's x2/sp),
# saves the whole RAM (`pmemsave`) and quits
# qemu, then scans the image on the host (firmware/examples/ram_image_scan.rs): the CSPRNG's seed and every
# key, keyed chaining value and ratchet block of its chain, the MAC key and its keyed state, the key packed,
# unpacked and as a spectrum, the plaintext and its encoding. Only the live generator's chaining value and the
# key's spectrum may be found, once each, inside the static ENCRYPTOR, and both must be (positive controls).
#
# Images, per target:
#   end         after the run (two frames: two encryptions, two ratchets)    on every target given
#   encryption  right after the first encryption (one ratchet), mid-frame    on every target given
#   planted     after the run, with a copy of the seed in a static            on thumbv7em-none-eabihf and
#               riscv32imc-unknown-none-elf: the scan must FAIL on it (negative control)
#
# Usage: bash scripts/firmware-ram-image.sh [TARGET...]   (default: thumbv7em-none-eabihf thumbv7m-none-eabi
#        thumbv6m-none-eabi riscv32imc-unknown-none-elf riscv32imac-unknown-none-elf; CARGO_TARGET_DIR is
#        honoured). Exits 1 on a dead secret or a failed control.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib/firmware-setup.sh
source scripts/lib/firmware-setup.sh
TARGETS=("$@")
[ "${#TARGETS[@]}" -ne 0 ] || TARGETS=("${FIRMWARE_TARGETS[@]}")
TARGET_DIR=${CARGO_TARGET_DIR:-target}
WORK=$(mktemp -d)
echo "work: $WORK"
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
start=$(date +%s)
HOLD_TIMEOUT=${HOLD_TIMEOUT:-60}

step() { printf '\n==> firmware-ram-image: %s\n' "$*"; }

step "set-up"
firmware_setup "${TARGETS[@]}"
LLVM_NM="$(dirname "$LLVM_SIZE")/llvm-nm"
use_flip_link "${TARGETS[@]}"

step "build the scanner (host)"
cargo build -p tfhe-sbc-firmware --example ram_image_scan
SCANNER="$TARGET_DIR/debug/examples/ram_image_scan"
# The Cortex-M3/M0 builds multiply by 16x16-bit partial products over other primes (negacyclic-ntt's
# build.rs sets --cfg negacyclic_ntt_mul16 from their target triple): their key spectrum, a positive
# control of the scan, is computed by a scanner with the same NTT (own target directory).
CARGO_TARGET_DIR="$TARGET_DIR/ram-image-mul16" RUSTFLAGS="--cfg negacyclic_ntt_mul16" \
  cargo build -p tfhe-sbc-firmware --example ram_image_scan
SCANNER_MUL16="$TARGET_DIR/ram-image-mul16/debug/examples/ram_image_scan"
scanner_for() {
  case "$1" in
    thumbv7m-none-eabi | thumbv6m-none-eabi) echo "$SCANNER_MUL16" ;;
    *) echo "$SCANNER" ;;
  esac
}

# qemu, its machine (two options), RAM base and RAM size per target (firmware/memory/*.x)
machine_of() {
  case "$1" in
    thumbv7em-none-eabihf) echo "qemu-system-arm -machine mps2-an386 -cpu cortex-m4 0x20000000 $((4 * 1024 * 1024))" ;;
    thumbv7m-none-eabi | thumbv6m-none-eabi) echo "qemu-system-arm -machine lm3s6965evb -cpu cortex-m3 0x20000000 $((64 * 1024))" ;;
    riscv32imc-unknown-none-elf | riscv32imac-unknown-none-elf)
      echo "qemu-system-riscv32 -machine virt -bios none 0x80040000 $((64 * 1024))" ;;
    *) echo "firmware-ram-image.sh: no machine for $1" >&2; return 2 ;;
  esac
}

# Runs ELF $1 (target $2) until it holds, saves its RAM to $3 and its sp to $3.sp; prints the firmware's output.
image_of() {
  local elf=$1 target=$2 image=$3 m sock out base ram
  read -r -a m < <(machine_of "$target")
  base=${m[5]} ram=${m[6]}
  sock="$WORK/monitor.sock"
  out="$WORK/qemu.out"
  rm -f "$sock"
  timeout "$((HOLD_TIMEOUT + 30))" "${m[0]}" "${m[@]:1:4}" -nographic -monitor "unix:$sock,server,nowait" \
    -serial none -semihosting-config enable=on,target=native -icount shift=0 -kernel "$elf" >"$out" 2>&1 &
  local qemu=$!
  python3 - "$sock" "$out" "$image" "$base" "$ram" "$HOLD_TIMEOUT" <<'EOF'
import re, socket, sys, time
sock_path, out, image, base, ram, limit = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6])
deadline = time.monotonic() + limit
while True:
    text = open(out, errors="replace").read()
    if "ram-image: hold" in text:
        break
    if time.monotonic() > deadline or "result=ERROR" in text or "result=MISMATCH" in text:
        sys.exit("the firmware did not reach 'ram-image: hold' within %gs" % limit)
    time.sleep(0.05)
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sock_path)
def prompt():
    data = b""
    while not data.rstrip().endswith(b"(qemu)"):
        data += s.recv(65536)
    return data.decode(errors="replace")
def command(line):
    s.sendall(line.encode() + b"\n")
    return prompt()
prompt()  # the banner
command("stop")
regs = command("info registers")
# Cortex-M: "R13=2000fe80"; RISC-V: " x2/sp    8004fe80".
sp = re.search(r"R13=([0-9a-fA-F]{8})", regs) or re.search(r"x2/sp\s+([0-9a-fA-F]{8})\b", regs)
if not sp:
    sys.exit("no stack pointer in 'info registers': " + regs)
saved = command("pmemsave %s %d \"%s\"" % (base, ram, image))
if "\r\n(qemu)" not in saved or "invalid" in saved or "rror" in saved:
    sys.exit("pmemsave failed: " + saved[-300:])
open(image + ".sp", "w").write(sp.group(1))
s.sendall(b"quit\n")
try:
    while s.recv(65536):  # until qemu closes the monitor
        pass
except socket.timeout:
    pass
EOF
  kill "$qemu" 2>/dev/null || true
  wait "$qemu" || true
  sed 's/^/    /' "$out"
  [ -s "$image" ] && [ "$(stat -c %s "$image")" = "$ram" ]
}

# Builds with $2 (features), images and scans on target $1 after $3 ratchets; leaves the scan's status in $RC.
SCAN_SECONDS=0
scan() {
  local t=$1 features=$2 live=$3 image elf
  step "$t, features $features: build, run, image, scan"
  cargo build -p tfhe-sbc-firmware --profile firmware --target "$t" --features "$features"
  elf="$TARGET_DIR/$t/firmware/tfhe-sbc-firmware"
  "$LLVM_NM" -S -C --defined-only "$elf" >"$WORK/symbols"
  image="$WORK/ram-$t.bin"
  rm -f "$image"
  image_of "$elf" "$t" "$image"
  local m
  read -r -a m < <(machine_of "$t")
  local s0
  s0=$(date +%s)
  set +e
  "$(scanner_for "$t")" "$image" "${m[5]#0x}" "$WORK/symbols" "$(cat "$image.sp")" "$live" | tee "$WORK/scan.out"
  RC=${PIPESTATUS[0]}
  set -e
  SCAN_SECONDS=$((SCAN_SECONDS + $(date +%s) - s0))
}

FAILURES=()
SUMMARY=()
CONTROLS=0
for t in "${TARGETS[@]}"; do
  scan "$t" hold-for-ram-image 2
  SUMMARY+=("$t end: scan exit $RC")
  [ "$RC" -eq 0 ] || FAILURES+=("$t: dead secrets after the run (or a positive control failed)")
  scan "$t" hold-for-ram-image-after-encryption 1
  SUMMARY+=("$t after the first encryption: scan exit $RC")
  [ "$RC" -eq 0 ] || FAILURES+=("$t: dead secrets after the first encryption (or a positive control failed)")
  if [ "$t" = thumbv7em-none-eabihf ] || [ "$t" = riscv32imc-unknown-none-elf ]; then
    scan "$t" ram-image-plant-seed 2
    if [ "$RC" -eq 1 ] && grep -q '^CSPRNG seed (RNG_SEED, K_0) .*PLANTED_SEED' "$WORK/scan.out"; then
      SUMMARY+=("$t planted seed: scan exit 1, the seed found in PLANTED_SEED (negative control ok)")
      CONTROLS=$((CONTROLS + 1))
    else
      FAILURES+=("$t: the planted seed was not reported (scan exit $RC): the scan proves nothing")
    fi
  fi
done

step "summary"
printf '  %s\n' "${SUMMARY[@]}"
echo "firmware-ram-image.sh took $(( $(date +%s) - start )) s (scans: $SCAN_SECONDS s)"
if [ "${#FAILURES[@]}" -ne 0 ]; then
  printf 'firmware-ram-image: FAILED: %s\n' "${FAILURES[@]}"
  exit 1
fi
if [ "$CONTROLS" -eq 0 ]; then
  echo "firmware-ram-image: no dead secret in the firmware's RAM; live state found in ENCRYPTOR; no planted-seed control ran (it runs on thumbv7em-none-eabihf and riscv32imc-unknown-none-elf)"
else
  echo "firmware-ram-image: no dead secret in the firmware's RAM; live state found in ENCRYPTOR; planted seed caught ($CONTROLS)"
fi
