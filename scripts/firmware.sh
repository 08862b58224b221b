#!/usr/bin/env bash
# Microcontrollers in CI: builds the firmware test (firmware/) for five targets, runs each under
# qemu-system-arm or qemu-system-riscv32 and checks the known-answer digest and the budgets. Installs what it
# needs.
#
#   thumbv7em-none-eabihf        on -machine mps2-an386 -cpu cortex-m4   (M4F)
#   thumbv7m-none-eabi           on -machine lm3s6965evb                  (M3: 64 KiB RAM, 256 KiB flash)
#   thumbv6m-none-eabi           code on the lm3s6965evb model            (M0/M0+ code; the M3 runs Thumb-1)
#   riscv32imc-unknown-none-elf  on qemu-system-riscv32 -machine virt     (ESP32-C3 class: RV32IMC)
#   riscv32imac-unknown-none-elf on qemu-system-riscv32 -machine virt     (ESP32-C6 class: RV32IMAC)
#
# Each target is built twice at opt-level "s" (profile `firmware`): with the default product (what a firmware
# gets: DefaultProduct) and with the f64 FFT named explicitly (feature `fft`), to compare the two. The firmware
# prints its digest and exits non-zero unless it equals the one build.rs computed on the host; it measures the
# peak stack (painted by cortex-m-rt, construction included) and its statics, and counts the instructions of
# each phase with SysTick under -icount shift=0 (RISC-V: the minstret counter), calibrated against a loop of
# known length. On Cortex-M flip-link puts the stack below the statics, so an overflow faults (qemu reports a
# lockup) instead of corrupting .bss; riscv-rt puts the stack above them (no flip-link for RISC-V).
#
# Budgets, checked on the default-product builds: RAM (statics + peak stack) <= 24 KiB,
# flash (text + rodata + data) <= 64 KiB; <= 0.49 M instructions per encryption on the M4 model, <= 0.87 M on
# the RISC-V targets (the base ISA has no 32x32->64 multiply-accumulate: mul + mulhu per product). A
# deliberate stack overflow checks that flip-link makes it fault. Then a debug build (opt-level 0 everywhere,
# as a new firmware project builds by default) must link on the M3 and pass too.
#
# The integer variant (feature `integer`): the u64 IntegerEncryptor<2048, NttPlan64> (two 24 KiB
# spectra) and its 16,479-byte frame, on the M4 model only (one more build and qemu run, about 30 s). Its own
# budgets, since it needs about 68 KiB of RAM and no 24 KiB part can hold it: RAM <= 96 KiB (a 128 KiB part),
# flash <= 64 KiB, <= 2.95 M instructions per N = 2048 encryption of 512 u8 readings. The integer public-key
# variant (feature `integer-public-key`): IntegerPublicKeyEncryptor<2048, NttPlan64> (four 24 KiB spectra),
# its key read in place from a 16,443-byte public-key file in flash, 32,831-byte frames, on the M4 model only
# too. It needs about 133 KiB of RAM, more than a 128 KiB part has: RAM <= 144 KiB (a 192 or 256 KiB part),
# flash <= 80 KiB (the key file included), <= 3.85 M instructions per encryption. The MPS2 AN386 layout
# (firmware/memory/mps2-an386.x, 4 MiB of RAM) is the same for every variant: the budgets are checked on what
# the program uses. The compact-list variant (feature `compact-list`): tfhe-rs's own CompactCiphertextList of 64
# and of 512 u8 readings from the streaming CompactListEncryptor, the raw 32 KiB public key read in place from
# flash, on the M4 and the M3 models (one build and run each, a few seconds): working RAM (all but the list
# buffer) <= 16 KiB, flash <= 80 KiB (the key included), <= 57 M / 80 M instructions per list.
#
# Usage: bash scripts/firmware.sh   (CARGO_TARGET_DIR is honoured; FIRMWARE_SKIP_DEBUG=1 skips the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."

RAM_BUDGET=$((24 * 1024))
FLASH_BUDGET=$((64 * 1024))
# Instructions per N = 1024 encryption on the M4 model, default product (measured 467,840 with the BLAKE2s
# XOF, construction v3; 682,680 with BLAKE2b).
M4_INSTRUCTION_BUDGET=490000
# Per N = 1024 encryption on RV32IMC / RV32IMAC (measured 832,118 with NttPlan32 on its small primes, masks
# hidden from LLVM, and the BLAKE2s XOF; 1,064,583 with BLAKE2b).
RV32_INSTRUCTION_BUDGET=870000
# The integer variant on the M4 model (N = 2048, u64 torus, 512 u8 readings per frame).
INTEGER_RAM_BUDGET=$((96 * 1024))
INTEGER_FLASH_BUDGET=$((64 * 1024))
# Measured 2,830,320 per encryption with the BLAKE2s XOF (3.64 M with BLAKE2b).
INTEGER_INSTRUCTION_BUDGET=2950000
# The integer public-key variant on the M4 model (the same readings under a public key: the key's two spectra,
# u's and a scratch one, 96 KiB, and a 32,831-byte frame; the 16,443-byte key file in flash).
INTEGER_PK_RAM_BUDGET=$((144 * 1024))
INTEGER_PK_FLASH_BUDGET=$((80 * 1024))
# Measured 3,676,680 per encryption with the BLAKE2s XOF (4.21 M with BLAKE2b).
INTEGER_PK_INSTRUCTION_BUDGET=3850000
# The compact-list variant on the M4 and M3 models (tfhe-rs's own CompactCiphertextList from the streaming
# CompactListEncryptor, the raw 32 KiB public key in flash): its working RAM (everything but the list buffer:
# the encryptor, the test's statics, the peak stack) <= 16 KiB, flash (the key included) <= 80 KiB, and
# instructions per list of 64 and of 512 u8 readings.
CLIST_WORKING_RAM_BUDGET=$((16 * 1024))
CLIST_FLASH_BUDGET=$((80 * 1024))
# Measured 54,471,960 and 76,568,680 on the M4 model with the BLAKE2s XOF.
CLIST_64_INSTRUCTION_BUDGET=57000000
CLIST_512_INSTRUCTION_BUDGET=80000000
# shellcheck source=scripts/lib/firmware-setup.sh
source scripts/lib/firmware-setup.sh
ARM_TARGETS=("${ARM_FIRMWARE_TARGETS[@]}")
RISCV_TARGETS=("${RISCV_FIRMWARE_TARGETS[@]}")
TARGETS=("${FIRMWARE_TARGETS[@]}")
TARGET_DIR=${CARGO_TARGET_DIR:-target}
start=$(date +%s)

step() { printf '\n==> firmware: %s\n' "$*"; }

step "set-up: rustup targets, llvm-tools, flip-link $FLIP_LINK_VERSION, qemu-system-arm, qemu-system-riscv32"
firmware_setup "${TARGETS[@]}"
qemu-system-arm --version | head -n 1
qemu-system-riscv32 --version | head -n 1

use_flip_link "${TARGETS[@]}"

# Runs one ELF; prints its output; leaves it in $OUT and qemu's status in $RC.
run_elf() {
  local elf=$1 target=$2
  set +e
  OUT=$(bash firmware/qemu-run.sh "$elf" "$target" 2>&1)
  RC=$?
  set -e
  printf '%s\n' "$OUT" | sed 's/^/    /'
}

# The value of `key=` in $OUT (first occurrence), or "-".
field() { printf '%s\n' "$OUT" | grep -oE "(^| )$1=[^ ]+" | head -n 1 | sed 's/.*=//' || true; }

TABLE_FORMAT='| %-28s | %-7s | %-10s | %6s | %7s | %6s | %6s | %6s | %9s | %9s | %9s | %9s | %s |'
# One table row from $OUT: target, build, flash, statics, total RAM, status. The compact frame (integer run
# only) is "-" when the run has none.
row() {
  local compact
  compact=$(field compact_frame)
  [ "$compact" = 0 ] && compact="-"
  # shellcheck disable=SC2059 # the format is ours
  printf "$TABLE_FORMAT" "$1" "$2" "$(field product | sed 's/.*:://')" "$3" "$4" "$(field stack_construct)" \
    "$(field stack_encrypt)" "$5" "$(field construct)" "$(field encrypt)" "$(field frame)" "${compact:--}" "$6"
}

step "clippy (firmware code, thumbv7em-none-eabihf, -D warnings)"
cargo clippy -p tfhe-sbc-firmware --target thumbv7em-none-eabihf --profile firmware -- -D warnings
cargo clippy -p tfhe-sbc-firmware --target thumbv7em-none-eabihf --profile firmware --features integer -- -D warnings
cargo clippy -p tfhe-sbc-firmware --target thumbv7em-none-eabihf --profile firmware --features integer-public-key \
  -- -D warnings
cargo clippy -p tfhe-sbc-firmware --target thumbv7em-none-eabihf --profile firmware --features compact-list -- -D warnings
cargo clippy -p tfhe-sbc-firmware --target riscv32imc-unknown-none-elf --profile firmware -- -D warnings

# The ELF $1's sizes in $text, $data and $bss, and its flash in $flash, from its sections: text (vector table,
# code, rodata, unwind tables) and data (initial values) both live in flash; bss is .bss and .uninit (not
# riscv-rt's .heap and .stack, which only reserve the rest of RAM).
elf_size() {
  local sections
  sections=$("$LLVM_SIZE" -A "$1")
  section() { awk -v name="$1" '$1 == name { size = $2 } END { print size + 0 }' <<<"$sections"; }
  text=$(( $(section .vector_table) + $(section .text) + $(section .init.rust) + $(section .rodata) \
    + $(section .eh_frame) + $(section .gnu.sgstubs) ))
  data=$(section .data)
  bss=$(( $(section .bss) + $(section .uninit) ))
  flash=$((text + data))
}

# The verdict on the run run_elf just made ($RC, $OUT) in $status: ok, or why not. $1, if given, is the variant
# the firmware must report. Also reads $statics and $total and checks the statics against the ELF's
# .data + .bss (elf_size's $data and $bss).
run_status() {
  status=ok
  if [ "$RC" -ne 0 ] || [ "$(field result)" != ok ] || { [ -n "${1:-}" ] && [ "$(field variant)" != "$1" ]; }; then
    if printf '%s' "$OUT" | grep -q Lockup; then status="FAIL(stack overflow: lockup)"
    elif [ "$RC" -eq 124 ]; then status="FAIL(timeout)"
    else status="FAIL(exit $RC)"; fi
  fi
  statics=$(field statics); total=$(field total)
  if [ "$status" = ok ] && [ "$statics" != "$((data + bss))" ]; then
    status="FAIL(statics $statics != ELF .data + .bss $((data + bss)))"
  fi
}

ROWS=()
FAILURES=()
for product in default fft; do
  features=()
  [ "$product" = fft ] && features=(--features fft)
  step "build ($product product, profile firmware: opt-level s, fat LTO)"
  # One build per architecture: in one cargo call the targets' features are resolved together, and
  # cortex-m's and riscv's critical-section restore states (bool, u32) cannot both be on.
  cargo build -p tfhe-sbc-firmware --profile firmware "${features[@]}" $(printf -- '--target %s ' "${ARM_TARGETS[@]}")
  cargo build -p tfhe-sbc-firmware --profile firmware "${features[@]}" $(printf -- '--target %s ' "${RISCV_TARGETS[@]}")
  for t in "${TARGETS[@]}"; do
    elf="$TARGET_DIR/$t/firmware/tfhe-sbc-firmware"
    elf_size "$elf"
    step "run $t ($product product): flash $flash B (text $text, data $data), .bss $bss B"
    run_elf "$elf" "$t"
    run_status
    if [ "$product" = default ] && [ "$status" = ok ]; then
      over=()
      if [ "$total" -gt "$RAM_BUDGET" ]; then over+=("RAM $total > $RAM_BUDGET"); fi
      if [ "$flash" -gt "$FLASH_BUDGET" ]; then over+=("flash $flash > $FLASH_BUDGET"); fi
      if [ "$t" = thumbv7em-none-eabihf ] && [ "$(field encrypt)" -gt "$M4_INSTRUCTION_BUDGET" ]; then
        over+=("M4 instructions $(field encrypt) > $M4_INSTRUCTION_BUDGET")
      fi
      if [[ "$t" == riscv32* ]] && [ "$(field encrypt)" -gt "$RV32_INSTRUCTION_BUDGET" ]; then
        over+=("RV32 instructions $(field encrypt) > $RV32_INSTRUCTION_BUDGET")
      fi
      if [ "${#over[@]}" -ne 0 ]; then status="OVER($(IFS=,; echo "${over[*]}"))"; fi
    fi
    [ "$status" = ok ] || FAILURES+=("$t ($product): $status")
    ROWS+=("$(row "$t" "$product" "$flash" "$statics" "$total" "$status")")
  done
done

# A variant built with feature $1 on the M4 model, with its own budgets: RAM $4, flash $5 and instructions
# per encryption $6; $2 names it in the table, $3 describes it. Its output stays in $OUT.
run_m4_variant() {
  local feature=$1 name=$2 what=$3 ram_budget=$4 flash_budget=$5 instruction_budget=$6
  local t=thumbv7em-none-eabihf elf text data bss flash status statics total
  local -a over
  step "build the $name variant ($what) for $t"
  cargo build -p tfhe-sbc-firmware --profile firmware --target "$t" --features "$feature"
  elf="$TARGET_DIR/$t/firmware/tfhe-sbc-firmware"
  elf_size "$elf"
  step "run $t ($name variant): flash $flash B (text $text, data $data), .bss $bss B"
  run_elf "$elf" "$t"
  run_status "$feature"
  if [ "$status" = ok ]; then
    over=()
    if [ "$total" -gt "$ram_budget" ]; then over+=("RAM $total > $ram_budget"); fi
    if [ "$flash" -gt "$flash_budget" ]; then over+=("flash $flash > $flash_budget"); fi
    if [ "$(field encrypt)" -gt "$instruction_budget" ]; then
      over+=("instructions $(field encrypt) > $instruction_budget")
    fi
    if [ "${#over[@]}" -ne 0 ]; then status="OVER($(IFS=,; echo "${over[*]}"))"; fi
  fi
  [ "$status" = ok ] || FAILURES+=("$t ($name): $status")
  ROWS+=("$(row "$t" "$name" "$flash" "$statics" "$total" "$status")")
}

# The integer variants on the M4 model, with their own budgets: under the secret key (feature `integer`),
# then under a public key (feature `integer-public-key`).
run_m4_variant integer integer "IntegerEncryptor<2048, NttPlan64>, 512 u8 readings per frame" \
  "$INTEGER_RAM_BUDGET" "$INTEGER_FLASH_BUDGET" "$INTEGER_INSTRUCTION_BUDGET"
INTEGER_FRAMES="integer frames: $(field frame_bytes) B with the full body, $(field compact_frame_bytes) B compact"
run_m4_variant integer-public-key int-pk \
  "IntegerPublicKeyEncryptor<2048, NttPlan64>, the key file in flash, 512 u8 readings per frame" \
  "$INTEGER_PK_RAM_BUDGET" "$INTEGER_PK_FLASH_BUDGET" "$INTEGER_PK_INSTRUCTION_BUDGET"
INTEGER_FRAMES+="; int-pk frames: $(field frame_bytes) B (mask in full)"

# The compact-list variant (feature `compact-list`) on the M4 and M3 models: one build and run per target, two
# rows (the lists of 64 and of 512 readings, one run). The list buffer is one static sized for the 512-reading
# list; a row's RAM is the working RAM (statics less that buffer, plus the larger of the construction's and that
# list's stack peaks) plus the list's own bytes: measured as is for 512, the buffer a 64-reading firmware would
# have for 64.
step "build the compact-list variant (the streaming CompactListEncryptor, the raw 32 KiB key in flash)"
cargo build -p tfhe-sbc-firmware --profile firmware --target thumbv7em-none-eabihf --target thumbv7m-none-eabi \
  --features compact-list
CLIST_NOTES=""
for t in thumbv7em-none-eabihf thumbv7m-none-eabi; do
  elf="$TARGET_DIR/$t/firmware/tfhe-sbc-firmware"
  elf_size "$elf"
  step "run $t (compact-list variant): flash $flash B (text $text, data $data), .bss $bss B"
  run_elf "$elf" "$t"
  run_status compact-list
  buffer=$(field buffer); stack_c=$(field stack_construct)
  for n in 64 512; do
    if [ "$n" = 64 ]; then stack_n=$(field stack_64); else stack_n=$(field stack_encrypt); fi
    list_status=$status
    working="-" ram="-"
    if [ "$status" = ok ]; then
      peak=$(( stack_c > stack_n ? stack_c : stack_n ))
      working=$(( statics - buffer + peak ))
      ram=$(( working + $(field "bytes_$n") ))
      budget_var="CLIST_${n}_INSTRUCTION_BUDGET"
      over=()
      if [ "$working" -gt "$CLIST_WORKING_RAM_BUDGET" ]; then over+=("working RAM $working > $CLIST_WORKING_RAM_BUDGET"); fi
      if [ "$flash" -gt "$CLIST_FLASH_BUDGET" ]; then over+=("flash $flash > $CLIST_FLASH_BUDGET"); fi
      if [ "$(field "list_$n")" -gt "${!budget_var}" ]; then
        over+=("instructions $(field "list_$n") > ${!budget_var}")
      fi
      if [ "${#over[@]}" -ne 0 ]; then list_status="OVER($(IFS=,; echo "${over[*]}"))"; fi
    fi
    [ "$list_status" = ok ] || FAILURES+=("$t (cl-$n): $list_status")
    # shellcheck disable=SC2059 # the format is ours
    ROWS+=("$(printf "$TABLE_FORMAT" "$t" "cl-$n" "$(field product | sed 's/.*:://')" "$flash" "$statics" \
      "$stack_c" "$stack_n" "$ram" "$(field construct)" "$(field "list_$n")" "-" "-" "$list_status")")
  done
  CLIST_NOTES+="; $t: working RAM $working B"
done

# flip-link, checked: the `stack-overflow` build recurses until the stack overflows, checking a canary in .bss
# at every level. Linked by flip-link it must fault (qemu: "Lockup") with .bss intact; linked plainly (rust-lld),
# the same program must report the corruption, which shows the check can fail.
step "flip-link check: a deliberate stack overflow on thumbv7m-none-eabi"
elf="$TARGET_DIR/thumbv7m-none-eabi/firmware/tfhe-sbc-firmware"
for linker in flip-link rust-lld; do
  CARGO_TARGET_THUMBV7M_NONE_EABI_LINKER=$linker cargo build -p tfhe-sbc-firmware --profile firmware \
    --target thumbv7m-none-eabi --features stack-overflow
  run_elf "$elf" thumbv7m-none-eabi
  if [ "$linker" = flip-link ]; then
    if ! printf '%s' "$OUT" | grep -q Lockup || printf '%s' "$OUT" | grep -q CORRUPTED; then
      FAILURES+=("flip-link: the stack overflow did not fault cleanly")
    else
      echo "  flip-link: the overflow faulted (lockup), .bss intact"
    fi
  elif ! printf '%s' "$OUT" | grep -q CORRUPTED; then
    FAILURES+=("flip-link check: without flip-link the canary was not hit, so the check proves nothing")
  else
    echo "  without flip-link: the stack ran into .bss, as expected"
  fi
done

if [ "${FIRMWARE_SKIP_DEBUG:-0}" != 1 ]; then
  # What a new firmware project gets from `cargo build`: opt-level 0 in every crate (this workspace's dev
  # profile optimises, so it is overridden here). It must link in the M3's 256 KiB (it once did not: every
  # FFT table was kept) and give the same digest; its RAM and instructions are reported, not budgeted.
  step "debug build (opt-level 0 everywhere) on thumbv7m-none-eabi"
  elf="$TARGET_DIR/thumbv7m-none-eabi/debug/tfhe-sbc-firmware"
  if cargo build -p tfhe-sbc-firmware --target thumbv7m-none-eabi --config 'profile.dev.opt-level=0' \
      --config 'profile.dev.package."*".opt-level=0'; then
    elf_size "$elf"
    step "run thumbv7m-none-eabi (debug build): flash $flash B, .bss $bss B"
    QEMU_TIMEOUT=300 run_elf "$elf" thumbv7m-none-eabi
    status=ok
    if [ "$RC" -ne 0 ] || [ "$(field result)" != ok ]; then
      if printf '%s' "$OUT" | grep -q Lockup; then status="FAIL(stack overflow: lockup)"; else status="FAIL(exit $RC)"; fi
    fi
  else
    OUT="" flash="-" status="FAIL(does not link in 256 KiB of flash: see the linker's message above)"
  fi
  [ "$status" = ok ] || FAILURES+=("thumbv7m-none-eabi (debug): $status")
  ROWS+=("$(row thumbv7m-none-eabi debug "$flash" "$(field statics)" "$(field total)" "$status")")
fi

step "table (bytes; instructions per phase; budgets on the default product: RAM <= $RAM_BUDGET, flash <= $FLASH_BUDGET, M4 encrypt <= $M4_INSTRUCTION_BUDGET, RV32 encrypt <= $RV32_INSTRUCTION_BUDGET)"
# shellcheck disable=SC2059 # the format is ours
printf "$TABLE_FORMAT\n" target build product flash statics stk-c stk-e RAM construct encrypt frame compact status
printf '|%s|\n' "------------------------------|---------|------------|--------|---------|--------|--------|--------|-----------|-----------|-----------|-----------|-------"
printf '%s\n' "${ROWS[@]}"
echo "build: default = DefaultProduct (what firmware gets), fft = the f64 FFT named explicitly; debug = opt-level 0;"
echo "integer = the u64 IntegerEncryptor<2048, NttPlan64>, one frame of 512 u8 readings (16,479 B), budgets RAM <="
echo "$INTEGER_RAM_BUDGET, flash <= $INTEGER_FLASH_BUDGET, encrypt <= $INTEGER_INSTRUCTION_BUDGET; int-pk = the same readings under a public key"
echo "(IntegerPublicKeyEncryptor<2048, NttPlan64>, public-key frames of 32,831 B; construct: the key file's check,"
echo "set_integer_public_key_le_bytes + seed_from_bytes), budgets RAM <= $INTEGER_PK_RAM_BUDGET, flash <= $INTEGER_PK_FLASH_BUDGET,"
echo "encrypt <= $INTEGER_PK_INSTRUCTION_BUDGET."
echo "stk-c / stk-e: peak stack while setting the key and CSPRNG / during the encryptions; RAM = statics + the"
echo "larger peak. construct: set_packed_key + seed_from_bytes; encrypt: one seeded N = 1024 (integer: N = 2048) encryption (its body in the"
echo "frame buffer); frame: encrypt_seeded_frame_into (the encryption, the v2 header and the MAC); compact: the same"
echo "with the set's compact body (integer run). ${INTEGER_FRAMES:-}"
echo "cl-64 / cl-512 = tfhe-rs's own CompactCiphertextList of 64 / 512 u8 readings (18,643 / 32,979 B) from the"
echo "streaming CompactListEncryptor, the raw 32 KiB public key in flash (one run: construct = the key's check + seed;"
echo "encrypt = one encrypt_list; RAM = working RAM + the list's buffer), budgets working RAM <= $CLIST_WORKING_RAM_BUDGET,"
echo "flash <= $CLIST_FLASH_BUDGET, encrypt <= $CLIST_64_INSTRUCTION_BUDGET / $CLIST_512_INSTRUCTION_BUDGET${CLIST_NOTES:-}."
echo "firmware.sh took $(( $(date +%s) - start )) s"

if [ "${#FAILURES[@]}" -ne 0 ]; then
  printf 'firmware: FAILED: %s\n' "${FAILURES[@]}"
  exit 1
fi
echo "firmware: all targets passed (digest and budgets)"
