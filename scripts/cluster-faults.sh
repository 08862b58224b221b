#!/usr/bin/env bash
# The JetStream service's fault matrix: crates/tfhe-sbc-server/tests/cluster.rs (3 real nats-server nodes
# on 127.0.0.1, 2 gateway and 2 worker processes, 212 devices, 4,626 messages) once per fault x worker tasks
# x machine load, each run counting the messages acknowledged, announced, lost and duplicated (a run fails
# unless 0 are lost and 0 duplicated), and a table of them at the end.
#
#   bash scripts/cluster-faults.sh                       # the whole matrix: 6 faults x 2 x 2 = 24 runs
#   FAULTS="partition store-full" TASKS=4 LOADS=busy bash scripts/cluster-faults.sh
#
# FAULTS (kills stall partition leader all-nodes store-full), TASKS (worker tasks per worker process: 2 4),
# LOADS (idle: nothing else started; busy: `stress-ng --cpu 2` for the run), RUN_LIMIT_S (one run, 420),
# TOTAL_LIMIT_S (the matrix: no run starts after it, 10800). partition and store-full need root (iptables,
# mount): without it they print "SKIPPED: needs root". iptables is installed if missing (apt-get, root).
# Rules and tmpfs mounts a killed run left behind are found by their name, tsbc-cluster-test, and removed.
set -euo pipefail
cd "$(dirname "$0")/.."

FAULTS=${FAULTS:-"kills stall partition leader all-nodes store-full"}
TASKS=${TASKS:-"2 4"}
LOADS=${LOADS:-"idle busy"}
RUN_LIMIT_S=${RUN_LIMIT_S:-420}
TOTAL_LIMIT_S=${TOTAL_LIMIT_S:-10800}
export TSBC_NATS_SERVER=${TSBC_NATS_SERVER:-$PWD/target/nats-venv/bin/nats-server}
LOGS=${CLUSTER_FAULTS_LOGS:-$(mktemp -d /tmp/cluster-faults.XXXXXX)}
mkdir -p "$LOGS"

if [ ! -x "$TSBC_NATS_SERVER" ]; then
    echo "no nats-server at $TSBC_NATS_SERVER: run bash scripts/nats-server.sh" >&2
    exit 1
fi
if [ "$(id -u)" = 0 ]; then
    if ! command -v iptables > /dev/null; then
        apt-get install -y iptables > "$LOGS/apt-get.log" 2>&1 || { apt-get update > /dev/null && apt-get install -y iptables; }
    fi
else
    echo "************************************************************************"
    echo "*** SKIPPED: needs root: the partition and store-full runs are skipped ***"
    echo "************************************************************************"
fi
if [[ " $LOADS " == *" busy "* ]] && ! command -v stress-ng > /dev/null; then
    echo "stress-ng is missing (apt-get install -y stress-ng): it makes the busy runs' load" >&2
    exit 1
fi

stress_pid=""
cleanup() {
    if [ -n "$stress_pid" ]; then kill "$stress_pid" 2> /dev/null || true; fi
    if [ "$(id -u)" = 0 ]; then
        # What a run killed by its time limit could not remove itself.
        iptables -S 2> /dev/null | grep -- '--comment tsbc-cluster-test' | sed 's/^-A /-D /' | while read -r rule; do
            eval "iptables $rule" || true
        done
        awk '$1 == "tsbc-cluster-test" { print $2 }' /proc/mounts | while read -r mount; do
            umount -l "$mount" || true
        done
    fi
}
trap cleanup EXIT

echo "building the cluster test"
executable=$(cargo test -p tfhe-sbc-server --all-features --test cluster --no-run 2>&1 | tee "$LOGS/build.log" \
    | sed -n 's/.*Executable tests\/cluster.rs (\(.*\))/\1/p')
if [ -z "$executable" ]; then
    tail -20 "$LOGS/build.log"
    exit 1
fi

started=$(date +%s)
rows=()
failed=0
for fault in $FAULTS; do
    for tasks in $TASKS; do
        for load in $LOADS; do
            name="$fault-$tasks-$load"
            if [ $(($(date +%s) - started)) -ge "$TOTAL_LIMIT_S" ]; then
                rows+=("| $fault | $tasks | $load | | | | | | | not run: TOTAL_LIMIT_S |")
                continue
            fi
            if [ "$load" = busy ]; then
                stress-ng --cpu 2 --timeout "${RUN_LIMIT_S}s" > "$LOGS/$name.stress.log" 2>&1 &
                stress_pid=$!
            fi
            echo "$(date -u +%H:%M:%S) $name: TSBC_CLUSTER_FAULT=$fault TSBC_CLUSTER_WORKER_TASKS=$tasks $executable --nocapture"
            run_started=$(date +%s)
            rc=0
            TSBC_CLUSTER_FAULT=$fault TSBC_CLUSTER_WORKER_TASKS=$tasks timeout -k 15 "$RUN_LIMIT_S" \
                "$executable" --nocapture > "$LOGS/$name.log" 2>&1 || rc=$?
            wall=$(($(date +%s) - run_started))
            if [ -n "$stress_pid" ]; then
                kill "$stress_pid" 2> /dev/null || true
                wait "$stress_pid" 2> /dev/null || true
                stress_pid=""
            fi
            line=$(grep '^CLUSTER-RUN' "$LOGS/$name.log" | tail -1 || true)
            field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$line"; }
            if [[ "$line" == *SKIPPED* ]]; then
                result="SKIPPED: needs root"
            elif [ "$rc" = 0 ]; then
                result=ok
            elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                result="FAILED: over ${RUN_LIMIT_S} s"
                failed=$((failed + 1))
            else
                result="FAILED (exit $rc): $(grep -m1 -o "panicked at.*" "$LOGS/$name.log" || grep -m1 "^thread" "$LOGS/$name.log" || true)"
                failed=$((failed + 1))
            fi
            row="| $fault | $tasks | $load | $(field acknowledged) | $(field announced) | $(field lost) | $(field duplicated) | $(field repeats) | $wall | $result |"
            echo "  $row"
            rows+=("$row")
        done
    done
done

echo
echo "logs: $LOGS"
echo "| fault | worker tasks | load | acknowledged | announced | lost | duplicated | repeated copies | wall s | result |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
if [ "$failed" -gt 0 ]; then
    echo "$failed run(s) failed"
    exit 1
fi
