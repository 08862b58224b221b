"""Per-package summary of a timestamped `cargo test --workspace` log (scripts/package.sh, step (e)).

Each line of the log is `<monotonic seconds> <cargo's line>`. Cargo runs a package's test binaries one
after the other, its unit tests (`Running unittests src/lib.rs (.../deps/<crate>-<hash>)`) first, then its
integration tests (`Running tests/<name>.rs`), and every package's doc-tests at the end
(`Doc-tests <crate>`): a binary belongs to the package of the last unit-test line, a doc-test run to the
crate it names. Prints, per package: test binaries, tests passed, failed, ignored, and the seconds its
binaries ran (from each `Running`/`Doc-tests` line to the next one).
"""

import re
import sys

UNIT = re.compile(r"Running unittests \S+ \(.*/deps/([A-Za-z0-9_]+)-[0-9a-f]+\)")
INTEGRATION = re.compile(r"Running (tests|benches|examples)/")
DOC = re.compile(r"Doc-tests ([A-Za-z0-9_]+)")
RESULT = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")


def main(path):
    packages = {}
    current = None
    started = None
    last = None

    def close(now):
        if current is not None and started is not None:
            packages[current]["seconds"] += now - started

    with open(path, encoding="utf-8", errors="replace") as log:
        for raw in log:
            stamp, _, line = raw.rstrip("\n").partition(" ")
            try:
                now = float(stamp)
            except ValueError:
                continue
            last = now
            unit, doc = UNIT.search(line), DOC.search(line)
            if unit or doc or INTEGRATION.search(line):
                close(now)
                if unit or doc:
                    current = (unit or doc).group(1).replace("_", "-")
                packages.setdefault(current, {"binaries": 0, "passed": 0, "failed": 0, "ignored": 0, "seconds": 0.0})
                packages[current]["binaries"] += 1
                started = now
                continue
            result = RESULT.search(line)
            if result and current is not None:
                for key, value in zip(("passed", "failed", "ignored"), result.groups()):
                    packages[current][key] += int(value)
    if last is not None:
        close(last)
    print(f"{'package':<20} {'binaries':>8} {'passed':>7} {'failed':>7} {'ignored':>8} {'seconds':>8}")
    for name, p in packages.items():
        print(f"{name:<20} {p['binaries']:>8} {p['passed']:>7} {p['failed']:>7} {p['ignored']:>8} {p['seconds']:>8.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
