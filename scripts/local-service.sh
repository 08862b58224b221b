#!/usr/bin/env bash
# One machine, one command: a local single-node nats-server with JetStream (the pinned 2.15.1, fsync before
# every acknowledgement) and tfhe-sbc-server in both roles (gateway and worker) on it.
#
#   bash scripts/local-service.sh KEYS_DIR [LISTEN_ADDRESS] [NATS_PORT] [SERVER ARGUMENTS...]
#
# The JetStream store lives in KEYS_DIR/../jetstream (kept across runs: replay windows and results are
# durable). Further arguments go to tfhe-sbc-server (e.g. --address-file F, --metrics-listen A).
# TSBC_SERVER_BIN: a tfhe-sbc-server already built (default: build it in release). Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS="${1:?usage: local-service.sh KEYS_DIR [LISTEN_ADDRESS] [NATS_PORT]}"
LISTEN="${2:-127.0.0.1:7700}"
PORT="${3:-4222}"
shift $(( $# < 3 ? $# : 3 ))
[ -f "$KEYS/key_store.bin" ] || { echo "local-service.sh: $KEYS/key_store.bin not found: run tfhe-sbc-keys init first" >&2; exit 2; }
NATS="$(bash scripts/nats-server.sh)"
STORE="$(cd "$KEYS/.." && pwd)/jetstream"
mkdir -p "$STORE"
CONFIG="$STORE/nats.conf"
cat > "$CONFIG" <<CONF
listen: 127.0.0.1:$PORT
jetstream {
  store_dir: "$STORE"
  sync_interval: always
  # JetStream reserves each stream's max_bytes (3 GiB for the service's streams) against this limit; its
  # default, 75 % of the free disk space, would refuse the streams on a nearly full disk.
  max_file_store: ${TSBC_MAX_FILE_STORE:-16GB}
}
CONF
"$NATS" -c "$CONFIG" &
NATS_PID=$!
trap 'kill "$NATS_PID" 2>/dev/null || true' EXIT
SERVER="${TSBC_SERVER_BIN:-}"
if [ -z "$SERVER" ]; then
  # the README's one release build (.cargo/config.toml), so that tfhe-rs is not compiled a second time
  cargo build-tools
  SERVER=target/release/tfhe-sbc-server
fi
# The process's ledger watermark beside the JetStream store (outside NATS): kept across restarts.
"$SERVER" --keys "$KEYS" --listen "$LISTEN" --nats "nats://127.0.0.1:$PORT" --role both --workers 2 \
  --watermark-file "$STORE/ledger_watermark.txt" "$@"
