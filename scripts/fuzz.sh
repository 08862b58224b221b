#!/usr/bin/env bash
# 60 s of fuzzing on the authenticated v2 intake (crates/tfhe-sbc-adapter/src/fuzzing/): a crash, or a run
# that prints no execution count, fails. scripts/test-all.sh runs it in the background once the host tests
# have run (libFuzzer uses one core; the steps after the host tests leave one idle much of the time).
set -euo pipefail
cd "$(dirname "$0")/.."
# A pinned cargo-fuzz, installed when missing or at another version, so that every run fuzzes.
CARGO_FUZZ_VERSION=0.13.2
if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
# New inputs go to target/fuzz-corpus; the checked-in seeds (v2 frames, and the legacy v1 frames as
# negative inputs) are only read. The target runs every input raw and with its MAC fixed up, so the fuzzer
# reaches the replay window, the mask expansion and the reassembly (crates/tfhe-sbc-adapter/src/fuzzing/).
mkdir -p target/fuzz-corpus
if ! (cd fuzz && cargo +stable fuzz run intake -s none ../target/fuzz-corpus corpus/intake_v2 corpus/intake_v1 \
      -- -max_total_time=60 -rss_limit_mb=2048 > ../target/fuzz.log 2>&1); then
  tail -n 40 target/fuzz.log
  echo "fuzzing failed or found a crash: see fuzz/artifacts/intake (replayed by crates/tfhe-sbc-adapter/tests/fuzz_corpus.rs)"
  exit 1
fi
if ! grep -E "^Done [0-9]+ runs" target/fuzz.log; then
  tail -n 20 target/fuzz.log
  echo "the fuzz run printed no execution count"
  exit 1
fi
