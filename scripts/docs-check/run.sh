#!/usr/bin/env bash
# Checks docs/key-files.md and docs/compact-list.md against real bytes: makes key sets with the keys tool,
# has the client send compact-list frames to a loopback stand-in (capture.py, no acknowledgement), has the
# device crate write an empty-message frame (the client sends no empty message), and reads them all with
# check.py, a reader written from docs/ alone. Loopback only, no network.
#
#   scripts/docs-check/run.sh [BINS]   BINS: the directory of tfhe-sbc-keys and tfhe-sbc-client
#                                       (default target/release, from cargo build-tools)
# TSBC_DOCS_CHECK_NO_CARGO=1 skips the empty-message frame (it runs one device-crate test through cargo).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bins="$(cd "${1:-$root/target/release}" && pwd)"
work="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
keys="$bins/tfhe-sbc-keys"
client="$bins/tfhe-sbc-client"

"$keys" init --dir lists --parameters integer --compact-list --key-id 305419896 >/dev/null 2>&1
"$keys" issue --dir lists --device-id 10 --mode compact-list >/dev/null 2>&1
"$keys" issue --dir lists --device-id 11 --mode fleet >/dev/null 2>&1
"$keys" init --dir plain --parameters integer --key-id 7 >/dev/null 2>&1
for set in tfhe-lib ks-pbs-512 ks-pbs-1024; do
    "$keys" init --dir "$set" --parameters "$set" --key-id 1 >/dev/null 2>&1
done
mkdir frames

# send NAME FORMAT BATCH READINGS...: one message through the client, captured as frames/NAME.frame.
send() {
    local name="$1" format="$2" batch="$3"
    shift 3
    rm -rf dev && cp -r lists/devices dev
    printf '%s\n' "$@" >in.txt
    rm -f port
    python3 "$here/capture.py" port "frames/$name.frame" &
    local capture=$!
    while [ ! -s port ]; do sleep 0.1; done
    "$client" --credentials dev/10.tsdc --mode tfhe-compact-list --format "$format" --batch "$batch" \
        --server "127.0.0.1:$(cat port)" --input in.txt >client.log 2>&1 &
    local sender=$!
    pids+=("$sender")
    wait "$capture"
    kill "$sender" 2>/dev/null || true
    wait "$sender" 2>/dev/null || true
    cmp "frames/$name.frame" dev/10.counter.outbox/*.frame # the bytes sent are the outbox's
}
send u16-6 u16 6 0 1 65535 4660 43981 7
send u8-1024 u8 1024 $(seq 0 1023 | awk '{ print ($1 * 37) % 256 }')

frames=(--frame frames/u16-6.frame=0,1,65535,4660,43981,7
        --frame "frames/u8-1024.frame=$(seq 0 1023 | awk '{ printf "%s%d", (NR > 1 ? "," : ""), ($1 * 37) % 256 }')")
if [ -z "${TSBC_DOCS_CHECK_NO_CARGO:-}" ]; then
    (cd "$root" && TSBC_DOCS_CHECK_DEVICE="$work/lists/devices/10" TSBC_DOCS_CHECK_OUT="$work/frames" \
        cargo test -q --workspace --all-features --test docs_check_frames -- --ignored >/dev/null 2>&1)
    frames+=(--frame frames/empty-u8.frame= --frame frames/u8-5.frame=0,1,2,127,255
             --frame frames/u32-3.frame=0,0xdeadbeef,0xffffffff --counting-stream frames/u8-1-x400.stream
             --bool-list frames/bool-5.list=1,0,0,1,1)
fi
python3 "$here/check.py" --keys lists --device 10 --fleet-device 11 --plain-keys plain \
    --boolean-keys tfhe-lib --boolean-keys ks-pbs-512 --boolean-keys ks-pbs-1024 "${frames[@]}"
