#!/usr/bin/env bash
# The Raspberry Pi client end to end, on loopback: tfhe-sbc-client cross-built for the Pi and run under
# qemu-user against tfhe-sbc-server on this machine.
#
#   1. set-up: rustup targets (aarch64 glibc and musl, armv7 glibc), Debian's cross gcc and qemu-user
#   2. host: tfhe-sbc-keys and tfhe-sbc-server (tfhe-rs); a key set with three devices, one per key mode
#   3. the client for aarch64-unknown-linux-gnu (64-bit Pi OS), aarch64-unknown-linux-musl (static, linked
#      with rust-lld and Rust's self-contained musl CRT: no musl cross gcc needed) and
#      armv7-unknown-linux-gnueabihf (32-bit Pi OS); sizes and the glibc version the glibc builds need
#   4. the server with the demo client key (it decrypts what arrived) and a fault: it closes each connection
#      after every 5th frame before acknowledging it, so the clients reconnect and resend
#   5. each client under qemu, readings from a file, from stdin and from a periodic sensor command; the run
#      fails unless the server decrypted exactly the readings sent, each message once, and acknowledged
#      resends as duplicates
#   6. an integer key set: four clients send u16, i16 and f32 readings from integer credential files
#      (per-device, fleet, public key, and tfhe-rs compact lists with --mode tfhe-compact-list); the server
#      turns each into a FheUint of its width (tfhe-rs expands the lists), must decrypt exactly the readings'
#      bits and print the readings as sent, in the format their headers state; a client asked for readings
#      without a width (--format hex) on an integer credential refuses at start-up
#   7. the same devices against the JetStream service on one machine (scripts/local-service.sh: the pinned
#      nats-server and the server in both roles): the clients' messages are committed, and the fleet_sum
#      example adds every committed reading under encryption; its decryption must be the sum sent
#
# Env: CARGO_TARGET_DIR (host and default for the client), CLIENT_TARGET_DIR (the client's cross builds),
# PI_E2E_WORKSPACE_BUILD=1 (test-all.sh: build the host binaries as its workspace test step did).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
step() { printf '\n--> [%3d s] %s\n' "$(( $(date +%s) - started ))" "$*"; }
# The address a server started in the background (PID) writes to FILE, waiting up to 60 s; its LOG if it dies.
address_of() {
  local file=$1 pid=$2 log=$3
  for _ in $(seq 600); do
    [ -s "$file" ] && { cat "$file"; return; }
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "the server of $file did not start" >&2; exit 1; }
    sleep 0.1
  done
  echo "no address in $file within 60 s" >&2
  exit 1
}

TARGET_DIR=${CARGO_TARGET_DIR:-target}
CLIENT_TARGET_DIR=${CLIENT_TARGET_DIR:-$TARGET_DIR}
WORK="$TARGET_DIR/pi-client-e2e"
rm -rf "$WORK"
mkdir -p "$WORK"

step "set-up: rustup targets, cross gcc and qemu-user"
rustup target add aarch64-unknown-linux-gnu aarch64-unknown-linux-musl armv7-unknown-linux-gnueabihf >/dev/null
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v arm-linux-gnueabihf-gcc >/dev/null \
    || ! command -v qemu-aarch64 >/dev/null || ! command -v qemu-arm >/dev/null \
    || [ ! -d /usr/aarch64-linux-gnu/lib ] || [ ! -d /usr/arm-linux-gnueabihf/lib ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
    gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user
fi

step "host: tfhe-sbc-keys and tfhe-sbc-server"
if [ "${PI_E2E_WORKSPACE_BUILD:-0}" = 1 ]; then
  # test-all.sh: built exactly as its host step built the workspace's tests (the server's and the keys' tests
  # need their binaries), so tfhe-rs is reused; `cargo build -p` resolves features differently (serde's
  # `alloc`, ...) and would compile tfhe-rs again, for minutes.
  cargo test --quiet --workspace --all-features --no-run
else
  cargo build --quiet -p tfhe-sbc-keys -p tfhe-sbc-server
fi
KEYS_BIN="$TARGET_DIR/debug/tfhe-sbc-keys"
SERVER_BIN="$TARGET_DIR/debug/tfhe-sbc-server"

step "the client, cross-built (release)"
# aarch64 glibc: the linker and runner of .cargo/config.toml. musl: rust-lld with the self-contained CRT.
# armv7: Debian's arm-linux-gnueabihf-gcc.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=rust-lld
export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER=arm-linux-gnueabihf-gcc
declare -A CLIENT RUN
# One cargo invocation for the three targets: the host's proc-macros (clap's derive, ...) are built once.
CARGO_TARGET_DIR="$CLIENT_TARGET_DIR" cargo build --quiet --release -p tfhe-sbc-client \
  --target aarch64-unknown-linux-gnu --target aarch64-unknown-linux-musl --target armv7-unknown-linux-gnueabihf
for target in aarch64-unknown-linux-gnu aarch64-unknown-linux-musl armv7-unknown-linux-gnueabihf; do
  CLIENT[$target]="$CLIENT_TARGET_DIR/$target/release/tfhe-sbc-client"
done
RUN[aarch64-unknown-linux-gnu]="qemu-aarch64 -L /usr/aarch64-linux-gnu"
RUN[aarch64-unknown-linux-musl]="qemu-aarch64"
RUN[armv7-unknown-linux-gnueabihf]="qemu-arm -L /usr/arm-linux-gnueabihf"
printf '%-32s %10s %10s  %s\n' target bytes stripped "needs"
for target in "${!CLIENT[@]}"; do
  bin=${CLIENT[$target]}
  cp "$bin" "$WORK/client-$target"
  case $target in
    aarch64-*-gnu) strip_tool=aarch64-linux-gnu-strip; dump=aarch64-linux-gnu-objdump ;;
    aarch64-*-musl) strip_tool=aarch64-linux-gnu-strip; dump="" ;;
    armv7-*) strip_tool=arm-linux-gnueabihf-strip; dump=arm-linux-gnueabihf-objdump ;;
  esac
  $strip_tool -o "$WORK/client-$target.stripped" "$bin"
  if [ -n "$dump" ]; then
    needs="glibc >= $($dump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V -u | tail -1)"
  else
    needs="nothing (static: $(file -b "$bin" | grep -o 'statically linked'))"
  fi
  printf '%-32s %10d %10d  %s\n' "$target" "$(stat -c %s "$bin")" "$(stat -c %s "$WORK/client-$target.stripped")" "$needs"
done

step "key set: tfhe-lib, devices 7 (per-device), 8 (public-key), 9 (fleet)"
"$KEYS_BIN" init --dir "$WORK/keys" --parameters tfhe-lib --key-id 0x5eed >"$WORK/keys.log"
"$KEYS_BIN" issue --dir "$WORK/keys" --device-id 7 --mode per-device >>"$WORK/keys.log"
"$KEYS_BIN" issue --dir "$WORK/keys" --device-id 8 --mode public-key >>"$WORK/keys.log"
"$KEYS_BIN" issue --dir "$WORK/keys" --device-id 9 --mode fleet >>"$WORK/keys.log"

# Readings: device 7 from a file, 8 from stdin (u16), 9 from a sensor command run four times (f32: the
# server must print the floats the sensor gave, from the reading format the frames carry).
seq 11 50 >"$WORK/readings-7.txt"                                 # 40 u8 readings, batches of 4: 10 messages
printf '%s\n' 1000 2000 65535 4 5 6 7 8 9 10 11 12 >"$WORK/readings-8.txt"  # 12 u16, batches of 3: 4 messages
MESSAGES=$((10 + 4 + 4))

step "server: demo client key, threshold 25, drops each connection after every 3rd frame"
"$SERVER_BIN" --keys "$WORK/keys" --listen 127.0.0.1:0 --address-file "$WORK/address" \
  --demo-client-key "$WORK/keys/client_key.bin" --threshold 25 --exit-after "$MESSAGES" \
  --drop-connection-every 3 --state "$WORK/floors" >"$WORK/server.out" 2>"$WORK/server.log" &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
ADDRESS=$(address_of "$WORK/address" "$SERVER_PID" "$WORK/server.log")
echo "server on $ADDRESS"

step "clients under qemu"
client_started=$(date +%s)
C="--give-up-after 120s --max-backoff 500ms"
${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" $C \
  --credentials "$WORK/keys/devices/7.tsdc" --server "$ADDRESS" --input "$WORK/readings-7.txt" --batch 4 \
  2>"$WORK/client-7.log" &
P7=$!
${RUN[aarch64-unknown-linux-musl]} "$WORK/client-aarch64-unknown-linux-musl" $C \
  --credentials "$WORK/keys/devices/8.tsdc" --server "$ADDRESS" --format u16 --batch 3 \
  <"$WORK/readings-8.txt" 2>"$WORK/client-8.log" &
P8=$!
${RUN[armv7-unknown-linux-gnueabihf]} "$WORK/client-armv7-unknown-linux-gnueabihf" $C \
  --credentials "$WORK/keys/devices/9.tsdc" --server "$ADDRESS" \
  --command 'echo 48.3 -7.25; echo 21.5' --format f32 --interval 300ms --runs 4 --batch 3 2>"$WORK/client-9.log" &
P9=$!
status=0
for p in 7 8 9; do
  pid_var="P$p"
  if ! wait "${!pid_var}"; then
    echo "client of device $p failed:"; cat "$WORK/client-$p.log"; status=1
  fi
done
[ "$status" -eq 0 ] || exit 1
echo "clients done in $(( $(date +%s) - client_started )) s"
for p in 7 8 9; do tail -n 1 "$WORK/client-$p.log"; done

wait "$SERVER_PID" || { cat "$WORK/server.log"; echo "the server failed"; exit 1; }
trap - EXIT

step "what the server decrypted (demo client key)"
# Each device's decrypted bytes, in message order, as one list.
decrypted() {
  grep "decrypted with the demo client key" "$WORK/server.log" | grep "device=$1 " \
    | sed -E 's/.*values=\[([^]]*)\].*/\1/' | tr -d ' ' | paste -sd, -
}
expect_7=$(seq -s, 11 50)
expect_8=$(awk '{ printf "%s%d,%d", sep, $1 % 256, int($1 / 256); sep = "," }' "$WORK/readings-8.txt")  # u16 LE
expect_9=$(python3 -c 'import struct; print(",".join(str(b) for b in struct.pack("<3f", 48.3, -7.25, 21.5) * 4))')
fail=0
for p in 7 8 9; do
  got=$(decrypted "$p")
  want_var="expect_$p"
  if [ "$got" == "${!want_var}" ]; then
    echo "device $p: $got"
  else
    echo "device $p: decrypted [$got], sent [${!want_var}]"; fail=1
  fi
done
# Device 9's readings as the server printed them: the floats its sensor command gave, read as f32 because
# its frames say so.
readings_9=$(grep "decrypted with the demo client key" "$WORK/server.log" | grep "device=9 " \
  | sed -E 's/.*reading_format=([a-z0-9]+) readings=\[([^]]*)\].*/\1: \2/' | sort -u)
if [ "$readings_9" == "f32: 48.3, -7.25, 21.5" ]; then
  echo "device 9 (--format f32): the server printed $readings_9"
else
  echo "device 9 (--format f32): the server printed [$readings_9], sent f32: 48.3, -7.25, 21.5"; fail=1
fi
# The alarm bit each message got from tfhe-rs gates, against the plaintext answer for its decrypted bytes.
read -r alarms wrong < <(grep "decrypted with the demo client key" "$WORK/server.log" \
  | sed -E 's/.*values=\[([^]]*)\] alarm=Some\(([a-z]+)\).*/\1 \2/' | tr -d ',' \
  | awk '{ above = "false"; for (i = 1; i < NF; i++) if ($i > 25) above = "true";
           if ($NF == "true") t++; if ($NF != above) w++ } END { print t + 0, w + 0 }')
echo "alarm bits (some byte > 25, computed with tfhe-rs gates): true in $alarms of $MESSAGES messages, $wrong wrong"
duplicates=$(grep -c "acknowledged again" "$WORK/server.log" || true)
drops=$(grep -c "fault injection" "$WORK/server.log" || true)
echo "connections dropped by the server: $drops; resent frames acknowledged as duplicates: $duplicates"
cat "$WORK/server.out"
if [ "$drops" -eq 0 ] || [ "$duplicates" -eq 0 ]; then
  echo "expected dropped connections and resends"; fail=1
fi
if [ "$wrong" -ne 0 ] || [ "$alarms" -eq 0 ] || [ "$(grep -c "decrypted with the demo" "$WORK/server.log")" -ne "$MESSAGES" ]; then
  echo "expected $MESSAGES decrypted messages, some alarms and no wrong alarm bit"; fail=1
fi
[ "$fail" -eq 0 ] || { echo "see $WORK"; exit 1; }

step "restart: the server keeps its replay windows (--state); a client whose counter file was lost, or restored from a backup, is refused"
# The state file holds each device's replay window (hex of floor u64, flag u8, highest u64, bitmap u128,
# little-endian): the restarted server accepts only numbers above the highest.
floor_7=$(python3 -c 'import sys
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "7":
        b = bytes.fromhex(f[1]); print(int.from_bytes(b[9:17], "little") + 1)' "$WORK/floors")
echo "replay state written by the server: $(grep -v '^#' "$WORK/floors" | tr '\n' ' ')"
"$SERVER_BIN" --keys "$WORK/keys" --listen 127.0.0.1:0 --address-file "$WORK/address-2" --state "$WORK/floors" \
  2>"$WORK/server-2.log" &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 600); do [ -s "$WORK/address-2" ] && break; sleep 0.1; done
rm "$WORK/keys/devices/7.counter"
code=0
${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" --give-up-after 60s \
  --credentials "$WORK/keys/devices/7.tsdc" --server "$(cat "$WORK/address-2")" --input "$WORK/readings-7.txt" \
  2>"$WORK/client-7-again.log" || code=$?
tail -n 1 "$WORK/client-7-again.log"
if [ "$code" -ne 1 ] || ! grep -q "write $floor_7 into .*7.counter" "$WORK/client-7-again.log"; then
  kill "$SERVER_PID"
  echo "expected the restarted server to refuse sequence 0 and the client to ask for $floor_7 in its counter file"
  exit 1
fi
# The fix the error asks for: the number written into the counter file, and the readings go through.
echo "$floor_7" >"$WORK/keys/devices/7.counter"
cp "$WORK/keys/devices/7.counter" "$WORK/7.counter.backup"
${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" --give-up-after 60s --batch 4 \
  --credentials "$WORK/keys/devices/7.tsdc" --server "$(cat "$WORK/address-2")" --input "$WORK/readings-7.txt" \
  2>"$WORK/client-7-fixed.log" || { kill "$SERVER_PID"; cat "$WORK/client-7-fixed.log"; exit 1; }
# 10 messages of 4 readings, one frame each (the counter file holds a reservation, not the next number).
next_7=$((floor_7 + $(wc -l <"$WORK/readings-7.txt") / 4))
# The counter file restored from that backup while the server runs: the numbers it hands out were accepted
# for other readings, still inside the server's windows. Answered "duplicate", the new readings would be
# lost without an error; the server answers "too old" and the client stops (exit 1) asking for the number.
cp "$WORK/7.counter.backup" "$WORK/keys/devices/7.counter"
seq 61 68 >"$WORK/readings-7-other.txt"
code=0
${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" --give-up-after 60s --batch 4 \
  --credentials "$WORK/keys/devices/7.tsdc" --server "$(cat "$WORK/address-2")" \
  --input "$WORK/readings-7-other.txt" 2>"$WORK/client-7-restored.log" || code=$?
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; trap - EXIT
tail -n 1 "$WORK/client-7-restored.log"
if [ "$code" -ne 1 ] || ! grep -q "counter went back; write $next_7 into .*7.counter" "$WORK/client-7-restored.log" \
  || ! grep -q "counter went back" "$WORK/server-2.log"; then
  echo "expected the server to answer the restored counter's numbers 'too old' and the client to ask for $next_7 (exit $code)"
  cat "$WORK/client-7-restored.log"
  exit 1
fi
step "integer key set: the client sends u16, i16 and f32 readings from integer credential files (per-device, fleet and public-key meters, and tfhe-rs compact lists)"
# Integer frames carry little-endian readings as tfhe-rs radix blocks; the server turns each frame into
# FheUint16 or FheUint32 values, the width of the readings' format (per-device: one GLWE key switch per frame, then extraction; fleet and public key:
# extraction) and, with the demo client key, decrypts them. Readings: device 21 from a file (6 readings,
# batches of 3: 2 frames), 22 from stdin (i16), 23 (public key: 32,831-byte frames of at most 256 u16 readings) from
# a sensor command, one message of 260 readings: 2 frames.
# Device 24 sends tfhe-rs's own CompactCiphertextLists (--mode tfhe-compact-list, the key set made with
# --compact-list): 5 f32 readings, one list in one authenticated frame, which tfhe-rs expands at the server.
"$KEYS_BIN" init --dir "$WORK/int-keys" --parameters integer --compact-list --key-id 0x1e7e >>"$WORK/keys.log"
"$KEYS_BIN" issue --dir "$WORK/int-keys" --device-id 21 --mode per-device >>"$WORK/keys.log"
"$KEYS_BIN" issue --dir "$WORK/int-keys" --device-id 22 --mode fleet >>"$WORK/keys.log"
"$KEYS_BIN" issue --dir "$WORK/int-keys" --device-id 23 --mode public-key >>"$WORK/keys.log"
"$KEYS_BIN" issue --dir "$WORK/int-keys" --device-id 24 --mode compact-list >>"$WORK/keys.log"
"$KEYS_BIN" show --dir "$WORK/int-keys" >>"$WORK/keys.log"
for p in 21 22 23 24; do
  printf 'device %s: credential file %d bytes\n' "$p" "$(stat -c %s "$WORK/int-keys/devices/$p.tsdc")"
done
printf '%s\n' 1200 1310 65535 0 42 7 >"$WORK/readings-21.txt"
# Device 22 reads signed 16-bit values and device 24 floats: each becomes a FheUint of its width holding the
# reading's bits (FheUint16 and FheUint32), and the server prints them as the format their header states.
printf '%s\n' -5 300 -32768 32767 >"$WORK/readings-22.txt"
seq 1000 1259 >"$WORK/readings-23.txt"
printf '%s\n' 48.25 -7.5 21.5 0.125 1000 >"$WORK/readings-24.txt"
INT_FRAMES=$((2 + 2 + 2 + 1))
"$SERVER_BIN" --keys "$WORK/int-keys" --listen 127.0.0.1:0 --address-file "$WORK/address-int" \
  --demo-client-key "$WORK/int-keys/client_key.bin" --integer-bits 16 --exit-after "$INT_FRAMES" \
  >"$WORK/server-int.out" 2>"$WORK/server-int.log" &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
ADDRESS=$(address_of "$WORK/address-int" "$SERVER_PID" "$WORK/server-int.log")
${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" $C --format u16 --batch 3 \
  --credentials "$WORK/int-keys/devices/21.tsdc" --server "$ADDRESS" --input "$WORK/readings-21.txt" \
  2>"$WORK/client-21.log" &
P21=$!
${RUN[armv7-unknown-linux-gnueabihf]} "$WORK/client-armv7-unknown-linux-gnueabihf" $C --format i16 --batch 2 \
  --credentials "$WORK/int-keys/devices/22.tsdc" --server "$ADDRESS" <"$WORK/readings-22.txt" \
  2>"$WORK/client-22.log" &
P22=$!
${RUN[aarch64-unknown-linux-musl]} "$WORK/client-aarch64-unknown-linux-musl" $C --format u16 --batch 260 \
  --credentials "$WORK/int-keys/devices/23.tsdc" --server "$ADDRESS" --command "cat $WORK/readings-23.txt" \
  2>"$WORK/client-23.log" &
P23=$!
${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" $C --format f32 --batch 5 \
  --mode tfhe-compact-list --credentials "$WORK/int-keys/devices/24.tsdc" --server "$ADDRESS" \
  --input "$WORK/readings-24.txt" 2>"$WORK/client-24.log" &
P24=$!
for p in 21 22 23 24; do
  pid_var="P$p"
  wait "${!pid_var}" || { echo "client of device $p failed:"; cat "$WORK/client-$p.log"; exit 1; }
  tail -n 1 "$WORK/client-$p.log"
done
wait "$SERVER_PID" || { cat "$WORK/server-int.log"; echo "the integer server failed"; exit 1; }
trap - EXIT
grep -q "device 23: public-key mode, parameter set 4, 32831-byte frames" "$WORK/client-23.log" \
  || { cat "$WORK/client-23.log"; echo "device 23: expected 32831-byte public-key frames on set 4"; exit 1; }
grep -q "device 24: tfhe-compact-list mode, parameter set 4" "$WORK/client-24.log" \
  || { cat "$WORK/client-24.log"; echo "device 24: expected the tfhe-compact-list mode"; exit 1; }
# Each device: the FheUint values decrypted (the readings' bits as unsigned numbers of their width, computed
# here from what was sent) and the readings the server printed in the header's format.
declare -A FORMAT=([21]=u16 [22]=i16 [23]=u16 [24]=f32)
for p in 21 22 23 24; do
  lines=$(grep "decrypted with the demo client key" "$WORK/server-int.log" | grep "device=$p ")
  got=$(sed -E 's/.*values=\[([^]]*)\].*/\1/' <<<"$lines" | tr -d ' ' | paste -sd, -)
  want=$(python3 -c 'import struct, sys
fmt, path = sys.argv[1:]
code = {"u16": "H", "i16": "h", "f32": "f"}[fmt]
unsigned = {"u16": "H", "i16": "H", "f32": "I"}[fmt]
values = [float(v) if fmt == "f32" else int(v) for v in open(path).read().split()]
print(",".join(str(struct.unpack("<" + unsigned, struct.pack("<" + code, v))[0]) for v in values))' \
    "${FORMAT[$p]}" "$WORK/readings-$p.txt")
  shown=$(sed -E 's/.*reading_format=([a-z0-9]+) readings=\[([^]]*)\].*/\1: \2/' <<<"$lines" \
    | sed -E 's/^[a-z0-9]+: //' | tr -d ' ' | paste -sd, -)
  sent=$(paste -sd, "$WORK/readings-$p.txt")
  if [ "$got" == "$want" ] && [ "$shown" == "$sent" ] \
      && ! grep -v "reading_format=${FORMAT[$p]} " <<<"$lines" | grep -q .; then
    count=$(tr ',' '\n' <<<"$got" | wc -l)
    [ "$count" -le 12 ] || got="$(cut -d, -f1-4 <<<"$got"),...,${got##*,} ($count readings)"
    [ "$count" -le 12 ] || shown="$(cut -d, -f1-4 <<<"$shown"),...,${shown##*,}"
    echo "device $p (--format ${FORMAT[$p]}): FheUint values decrypted: $got; shown as ${FORMAT[$p]}: $shown"
  else
    echo "device $p (--format ${FORMAT[$p]}): decrypted [$got] shown as [$shown], sent [$sent] (values [$want])"
    cat "$WORK/server-int.log"; exit 1
  fi
done

# Readings without a width (--format hex) have no FheUint to become: refused at start-up, exit 2, one line.
set +e
refusal=$(${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" $C --format hex \
  --credentials "$WORK/int-keys/devices/21.tsdc" --server 127.0.0.1:9 --input "$WORK/readings-21.txt" 2>&1)
status=$?
set -e
if [ "$status" = 2 ] && grep -q "use --format u8, u16, u32, i8, i16, i32 or f32" <<<"$refusal"; then
  echo "device 21 (--format hex): refused at start-up: $(tail -n 1 <<<"$refusal")"
else
  echo "device 21 (--format hex): expected exit 2 naming the fixed-width formats, got $status: $refusal"; exit 1
fi

step "the JetStream service (scripts/local-service.sh): the integer devices' readings committed, summed by examples/fleet_sum"
NATS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rm -rf "$WORK/jetstream"
TSBC_SERVER_BIN="$SERVER_BIN" setsid bash scripts/local-service.sh "$WORK/int-keys" 127.0.0.1:0 "$NATS_PORT" \
  --address-file "$WORK/address-js" >"$WORK/service.log" 2>&1 &
SERVICE_PID=$!
trap 'kill -- -"$SERVICE_PID" 2>/dev/null || true' EXIT
ADDRESS=$(address_of "$WORK/address-js" "$SERVICE_PID" "$WORK/service.log")
printf '%s\n' 11 22 33 44 >"$WORK/readings-js-21.txt"
printf '%s\n' 65535 2 >"$WORK/readings-js-22.txt"
${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" $C --format u16 --batch 2 \
  --credentials "$WORK/int-keys/devices/21.tsdc" --server "$ADDRESS" --input "$WORK/readings-js-21.txt" \
  2>"$WORK/client-js-21.log" || { cat "$WORK/client-js-21.log"; exit 1; }
${RUN[armv7-unknown-linux-gnueabihf]} "$WORK/client-armv7-unknown-linux-gnueabihf" $C --format u16 --batch 2 \
  --credentials "$WORK/int-keys/devices/22.tsdc" --server "$ADDRESS" --input "$WORK/readings-js-22.txt" \
  2>"$WORK/client-js-22.log" || { cat "$WORK/client-js-22.log"; exit 1; }
printf '%s\n' 100 200 >"$WORK/readings-js-24.txt"
${RUN[aarch64-unknown-linux-gnu]} "$WORK/client-aarch64-unknown-linux-gnu" $C --format u16 --batch 2 \
  --mode tfhe-compact-list --credentials "$WORK/int-keys/devices/24.tsdc" --server "$ADDRESS" \
  --input "$WORK/readings-js-24.txt" 2>"$WORK/client-js-24.log" || { cat "$WORK/client-js-24.log"; exit 1; }
# 4 messages acknowledged (after JetStream stored them); the workers commit them shortly after, and the
# reader hands device 24's compact list to tfhe-rs's expand.
want_sum=$(( (11 + 22 + 33 + 44 + 65535 + 2 + 100 + 200) % 65536 ))
FLEET_SUM="$TARGET_DIR/debug/examples/fleet_sum"
# test-all.sh's workspace build made it; otherwise build it now (a binary left from older sources would not
# read what the devices sent).
[ "${PI_E2E_WORKSPACE_BUILD:-0}" = 1 ] || cargo build --quiet --example fleet_sum
for _ in $(seq 60); do
  "$FLEET_SUM" --keys "$WORK/int-keys" --nats "nats://127.0.0.1:$NATS_PORT" \
    --demo-client-key "$WORK/int-keys/client_key.bin" >"$WORK/fleet-sum.out" 2>&1 || true
  grep -q "^4 messages, 8 readings" "$WORK/fleet-sum.out" && break
  sleep 0.5
done
cat "$WORK/fleet-sum.out"
grep -q "^4 messages, 8 readings" "$WORK/fleet-sum.out" \
  && grep -q "the sum decrypts to $want_sum\$" "$WORK/fleet-sum.out" \
  || { cat "$WORK/service.log"; echo "expected 4 committed messages, 8 readings summing to $want_sum"; exit 1; }
kill -- -"$SERVICE_PID" 2>/dev/null || true
trap - EXIT

echo "pi client end to end: ok in $(( $(date +%s) - started )) s"
