#!/usr/bin/env bash
# The host tests of the whole workspace (`cargo test --workspace --all-features`), in two lanes that run at
# the same time:
#   - the JetStream service's tests (crates/tfhe-sbc-server/tests/service and tests/cluster), which spend
#     most of their time waiting on real nats-server nodes, timers and redeliveries;
#   - every other test target and the doc tests, which keep the CPUs busy.
# The result is the same set of tests as one `cargo test`, in about 5 minutes less: the service lane ran
# 350 s of mostly idle waiting after everything else. The service tests run beside a loaded machine on
# purpose: they must pass on a busy machine (docs/operations.md), and here they always do.
#
# Both lanes use one build (cargo releases the build directory's lock while tests run), so nothing is
# compiled twice. Environment: TSBC_NATS_SERVER as for the service tests (scripts/nats-server.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

FEATURES=(--workspace --all-features)
# The service lane's test targets (package tfhe-sbc-server). A new NATS-bound test target is added here.
SERVICE_TESTS=(service cluster)

cargo test "${FEATURES[@]}" --no-run

# Every other integration-test target of the workspace, by name, from cargo metadata; a test target named
# like a service test in another package would be run by the service lane, so that is refused.
mapfile -t OTHER_TESTS < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
service = set(sys.argv[1:])
meta = json.load(sys.stdin)
names = set()
for p in meta["packages"]:
    for t in p["targets"]:
        if "test" in t["kind"]:
            package, target = p["name"], t["name"]
            if target in service and package != "tfhe-sbc-server":
                sys.exit(f"host-tests.sh: {package} has a test target named {target}, as the service lane")
            names.add(t["name"])
missing = service - names
if missing:
    sys.exit(f"host-tests.sh: no test target {sorted(missing)} in tfhe-sbc-server: update SERVICE_TESTS")
for n in sorted(names - service):
    print(n)
' "${SERVICE_TESTS[@]}")
[ "${#OTHER_TESTS[@]}" -gt 0 ] || { echo "host-tests.sh: no test target found" >&2; exit 1; }

LANE_LOG="$(mktemp)"
trap 'rm -f "$LANE_LOG"' EXIT
SERVICE_ARGS=()
for t in "${SERVICE_TESTS[@]}"; do SERVICE_ARGS+=(--test "$t"); done
cargo test "${FEATURES[@]}" "${SERVICE_ARGS[@]}" >"$LANE_LOG" 2>&1 &
service_lane=$!

OTHER_ARGS=()
for t in "${OTHER_TESTS[@]}"; do OTHER_ARGS+=(--test "$t"); done
status=0
# The default selection of `cargo test` is lib, bins, examples (built only), integration tests and doc tests.
cargo test "${FEATURES[@]}" --lib --bins "${OTHER_ARGS[@]}" || status=$?
cargo test "${FEATURES[@]}" --doc || status=$?

service_status=0
wait "$service_lane" || service_status=$?
echo
echo "==> the service lane (${SERVICE_TESTS[*]}), run beside the tests above"
cat "$LANE_LOG"
if [ "$service_status" -ne 0 ]; then
  echo "host-tests.sh: the service lane failed (exit $service_status)" >&2
  status=1
fi
exit "$status"
