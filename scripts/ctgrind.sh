#!/usr/bin/env bash
# The constant-time check (ctgrind, A. Langley 2010): runs the device code under valgrind memcheck with its
# secrets (key bits, RNG output, messages) marked undefined through client requests, so that memcheck
# reports every conditional jump and every memory address computed from a secret. The harness is the
# workspace member ctgrind/ (`ctgrind list` prints every check). Called by scripts/test-all.sh.
#
#   default    everything the device does by default: MUST report no error
#   ziggurat   the Ziggurat sampler (the paper's opt-in): MUST be flagged, which proves the check can fail
#   self-test  a planted `if secret == 0` and a planted TABLE[secret]: MUST be flagged, both kinds
#
# Every check of a mode is judged on its own (the harness counts the errors each one caused), and every check
# must prove that its secrets reached its output (VALGRIND_GET_VBITS), or it would pass vacuously.
# Each mode runs in two builds: `release` (the code generation that ships; line tables added for the
# reports, which does not change code generation) and `dev` (what `cargo test` runs: opt-level 2 with
# overflow checks and debug assertions in our crates). CTGRIND_PROFILES="release" runs one of them.
# And each in every instance of the SIMD dispatch (the XOF lanes, the FFT kernels) that valgrind can run:
#   dispatched  the build that ships, its instance picked at run time from what valgrind's CPUID offers: AVX2
#               on a CPU with AVX2 (valgrind has no AVX-512), the portable code otherwise
#   soft        --cfg tfhe_sbc_backend="soft": the portable code only (the SSE2 build of the XOF and the FFT,
#               which an AVX2 machine otherwise never runs), built in $CTGRIND_SOFT_TARGET_DIR (default
#               target/soft, where scripts/test-all.sh's portable step builds with the same flags)
# The harness prints the instances it ran, and a run in another instance than expected fails.
# CTGRIND_INSTANCES="dispatched" runs one of them.
#
# Scope and limits:
# - x86_64 Linux only: memcheck sees the instructions of this build; aarch64 and Cortex-M builds are not seen.
# - valgrind does not emulate AVX-512: under it CPUID reports none, so the run-time dispatch of the XOF and
#   the FFT picks their AVX2 builds (the portable build on a CPU without AVX2). The XOF's AVX-512F instance
#   (what an AVX-512 machine runs) is the same portable source compiled with another target feature; it
#   cannot run under valgrind and is NOT checked here. The AVX2 and the portable instances are.
# - memcheck sees branches and addresses, not operand-dependent instruction latency (division, a soft-float
#   multiply's early exit on Cortex-M), and not a conditional move (constant-time on x86_64).
# - No suppression file: nothing outside our code (std start-up included) is reported.
# Logs: $CARGO_TARGET_DIR/ctgrind/<instance>-<profile>-<mode>.log (valgrind's) and .out (the harness's:
# errors per check); CARGO_TARGET_DIR defaults to target.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -s)" != Linux ] || [ "$(uname -m)" != x86_64 ]; then
  echo "ctgrind: FAILED: this check runs on x86_64 Linux only (here: $(uname -s) $(uname -m))."
  echo "  It judges this build's instructions under valgrind memcheck; run it on an x86_64 Linux machine."
  exit 1
fi
if ! command -v valgrind >/dev/null; then
  echo "ctgrind: FAILED: valgrind is not installed: apt-get install -y valgrind (scripts/test-all.sh does)."
  exit 1
fi
echo "ctgrind: $(valgrind --version), $(uname -m)"

OUT=${CARGO_TARGET_DIR:-target}/ctgrind
mkdir -p "$OUT"
PROFILES=${CTGRIND_PROFILES:-"release dev"}
INSTANCES=${CTGRIND_INSTANCES:-"dispatched soft"}
SOFT_TARGET_DIR=${CTGRIND_SOFT_TARGET_DIR:-target/soft}
# What the harness must report for each instance ("xof X fft Y"): under valgrind's CPUID, AVX2 if the CPU has
# it (the dispatched build), the portable code otherwise.
if grep -qw avx2 /proc/cpuinfo; then DISPATCHED="xof avx2 fft avx2"; else DISPATCHED="xof portable fft portable"; fi
# scripts/test-all.sh's TFHE_SBC_BACKEND forces every x86_64 build, the dispatched one included, onto one
# instance (CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS): the dispatched build then runs that instance.
case "${TFHE_SBC_BACKEND:-}" in
  soft) DISPATCHED="xof soft fft soft" ;;
  avx2) DISPATCHED="xof avx2 fft avx2" ;;
esac
VALGRIND=(valgrind --tool=memcheck --error-exitcode=99 --track-origins=yes --leak-check=no
  --error-limit=no --num-callers=24)
FAILURES=0
# The two kinds of report: a branch (or move) on a secret, and a secret used as an address.
KINDS="Conditional jump or move depends on uninitialised|Use of uninitialised value of size"

fail() {
  echo "ctgrind: FAILED: $*"
  FAILURES=$((FAILURES + 1))
}

# Builds the harness in profile $1 and instance $2 and prints the binary's path.
build() {
  local json
  if [ "$2" = soft ]; then
    json=$(RUSTFLAGS='--cfg tfhe_sbc_backend="soft"' CARGO_TARGET_DIR="$SOFT_TARGET_DIR" \
      CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build -p tfhe-sbc-ctgrind --bin ctgrind \
      --profile "$1" --message-format=json-render-diagnostics)
  else
    json=$(CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build -p tfhe-sbc-ctgrind --bin ctgrind \
      --profile "$1" --message-format=json-render-diagnostics)
  fi
  grep -o '"executable":"[^"]*/ctgrind"' <<<"$json" | tail -n 1 | cut -d'"' -f4
}

# The first memcheck report of log $1 whose first line matches $2, with the frames below the check's own
# function (tfhe_sbc_ctgrind::checks::*) cut off.
first_report() {
  awk -v kind="$2" '
    !started && $0 ~ kind { started = 1 }
    started {
      line = $0; sub(/^==[0-9]+== ?/, "", line)
      if (line == "") exit
      if (skip && line ~ /^ +(at|by) /) next
      skip = 0
      print "    " line
      if (line ~ /tfhe_sbc_ctgrind::checks::/) skip = 1
    }' "$1"
}

# Where the reports of log $1 are: per error, its kind, its innermost frame and the innermost frame in our
# crates (tfhe_sbc_*, negacyclic_fft, negacyclic_ntt), counted.
report_sites() {
  awk -v kinds="$KINDS" '
    function flush() { if (kind != "") print kind " | " at (ours != "" && ours != at ? " | in " ours : "") }
    $0 ~ kinds {
      flush(); kind = $0; sub(/^==[0-9]+== /, "", kind); at = ""; ours = ""; inerr = 1; next
    }
    inerr && / (at|by) 0x/ {
      frame = $0; sub(/^==[0-9]+== +(at|by) 0x[0-9A-F]+: /, "", frame)
      if (at == "") at = frame
      if (ours == "" && frame ~ /(tfhe_sbc|negacyclic_fft|negacyclic_ntt|ziggurat|tuniform|encryption|xof|wire|kernels)/) ours = frame
      next
    }
    { inerr = 0 }
    END { flush() }' "$1" | sort | uniq -c | sort -rn | awk 'NR <= 40'
}

for instance in $INSTANCES; do
  case $instance in
    dispatched) expected_instances=$DISPATCHED ;;
    soft) expected_instances="xof soft fft soft" ;;
    *) fail "unknown instance $instance (CTGRIND_INSTANCES: dispatched, soft)"; continue ;;
  esac
  for profile in $PROFILES; do
    # The label of this build in the verdicts: instance and profile.
    build_name="$instance/$profile"
    echo
    echo "==> ctgrind: build ($build_name)"
    BIN=$(build "$profile" "$instance")
    if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
      fail "no ctgrind binary from the $build_name build"
      continue
    fi
    for mode in default ziggurat self-test; do
      log="$OUT/$instance-$profile-$mode.log"
      out="$OUT/$instance-$profile-$mode.out"
      set +e
      "${VALGRIND[@]}" --log-file="$log" "$BIN" "$mode" >"$out" 2>&1
      rc=$?
      set -e
      summary=$(grep -o 'ERROR SUMMARY: .*' "$log" 2>/dev/null | tail -n 1 || true)
      errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) errors.*/\1/p' "$log" 2>/dev/null | tail -n 1 || true)
      if [ "$mode" = default ]; then expect=clean; else expect=flagged; fi
      printf 'ctgrind %-18s %-9s %s -> must be %s\n' "$build_name" "$mode" "${summary:-no ERROR SUMMARY}" "$expect"
      sed -n 's/^check /    check /p' "$out"
      ran=$(sed -n 's/^ctgrind: instances: //p' "$out")
      if [ "$ran" != "$expected_instances" ]; then
        fail "$build_name $mode: the harness ran instances '${ran:-none reported}', not '$expected_instances'"
      fi
      if [ -z "$errors" ] || ! grep -q "^ctgrind: mode $mode done" "$out" || { [ "$rc" -ne 0 ] && [ "$rc" -ne 99 ]; }; then
        fail "$build_name $mode: the harness did not complete (valgrind exit $rc); its output and the log's end:"
        tail -n 20 "$out"
        tail -n 20 "$log"
        continue
      fi
      # Judge every check on its own: clean in default, flagged elsewhere.
      while read -r name count; do
        if [ "$expect" = clean ] && [ "$count" -ne 0 ]; then
          fail "$build_name $mode: check $name caused $count memcheck error(s): secret-dependent branch or address"
        elif [ "$expect" = flagged ] && [ "$count" -eq 0 ]; then
          fail "$build_name $mode: check $name was not flagged: the check cannot see this leak"
        fi
      done < <(sed -n 's/^check \([^ ]*\) *\([0-9][0-9]*\) memcheck.*/\1 \2/p' "$out")
      if [ "$expect" = clean ] && [ "$errors" -ne 0 ]; then
        fail "$build_name $mode: $errors memcheck error(s) in the default path. Where (count | kind | innermost frame | our frame):"
        report_sites "$log"
        echo "  First report (all of them: $log):"
        first_report "$log" "$KINDS"
      fi
      if [ "$mode" = self-test ]; then
        grep -q "Conditional jump or move depends on uninitialised" "$log" \
          || fail "$build_name self-test: the planted secret branch was not reported"
        grep -q "Use of uninitialised value of size" "$log" \
          || fail "$build_name self-test: the planted secret table index was not reported"
      fi
      if [ "$expect" = flagged ] && [ "$errors" -gt 0 ] && [ "$profile" = "${PROFILES%% *}" ] \
        && [ "$instance" = "${INSTANCES%% *}" ]; then
        # One report of each kind: a branch on a secret, then an address computed from one.
        for kind in "Conditional jump or move depends on uninitialised" "Use of uninitialised value of size"; do
          if grep -q "$kind" "$log"; then
            echo "  first report of this kind:"
            first_report "$log" "$kind"
          fi
        done
      fi
    done
  done
done

echo
if [ "$FAILURES" -ne 0 ]; then
  echo "ctgrind: $FAILURES failure(s); logs in $OUT/"
  exit 1
fi
echo "ctgrind: passed: default clean, ziggurat and self-test flagged (instances: $INSTANCES; profiles: $PROFILES)"
