#!/usr/bin/env bash
# Fails if a crate of the workspace reaches a crate that docs/architecture.md forbids it.
#
# The rules are read from the page itself: its fenced block tagged `architecture-rules`, one rule a line,
#     tfhe-sbc-device !-> tfhe-sbc-adapter, tfhe
# meaning "no normal or build dependency path, direct or transitive, leads from tfhe-sbc-device to
# tfhe-sbc-adapter or to tfhe". Dev-dependencies are not followed (tests may use anything). The graph is
# `cargo metadata --format-version 1 --all-features` without a platform filter: every optional dependency
# and every target's dependencies count, so a feature or a `cfg(target_*)` table cannot hide a violation.
# A rule naming a crate the workspace does not have is an error (a renamed crate would otherwise make the
# rule vacuous), and so is a page without rules.
#
# Usage:
#   bash scripts/check-architecture.sh                 check the workspace against the page
#   bash scripts/check-architecture.sh --self-test     show that the check fails on violations it must catch
#                                                      (fake edges injected into the real graph) and passes
#                                                      on the ones it must ignore (dev-dependencies)
#   bash scripts/check-architecture.sh --inject 'tfhe-sbc-core -> tfhe-sbc-device'
#                                                      the check with one fake normal dependency added
#   --page FILE / --metadata FILE                      another page, or a saved `cargo metadata` output
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v python3 >/dev/null; then
  printf '\n==> set-up: Debian package python3-minimal (for scripts/check-architecture.sh)\n'
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3-minimal
fi

PAGE=docs/architecture.md
METADATA=""
MODE=check
INJECT=()
while [ $# -gt 0 ]; do
  case "$1" in
    --self-test) MODE=self-test ;;
    --inject) INJECT+=("$2"); shift ;;
    --page) PAGE="$2"; shift ;;
    --metadata) METADATA="$2"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "check-architecture: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done

if [ -z "$METADATA" ]; then
  METADATA=$(mktemp)
  trap 'rm -f "$METADATA"' EXIT
  cargo metadata --format-version 1 --all-features --quiet >"$METADATA"
fi

python3 - "$MODE" "$PAGE" "$METADATA" "${INJECT[@]+"${INJECT[@]}"}" <<'PY'
import copy
import json
import re
import sys
from collections import deque

mode, page_path, metadata_path, injections = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
RULE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*!->\s*([A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*)\s*$")


class RuleError(Exception):
    pass


def parse_rules(text, where):
    """The `architecture-rules` block of the page: [(crate, [forbidden crates])]."""
    rules, inside, found = [], False, False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not inside and re.match(r"^```+\s*architecture-rules\s*$", stripped):
            inside, found = True, True
            continue
        if inside and stripped.startswith("```"):
            inside = False
            continue
        if not inside:
            continue
        body = stripped.split("#", 1)[0].strip()
        if not body:
            continue
        match = RULE.match(body)
        if not match:
            raise RuleError(f"{where}:{number}: not a rule (`crate !-> crate, crate`): {line.strip()}")
        rules.append((match.group(1), [name.strip() for name in match.group(2).split(",")]))
    if not found or not rules:
        raise RuleError(f"{where}: no rules (a fenced block tagged `architecture-rules` with `crate !-> crate` lines)")
    return rules


def load_graph(metadata):
    """Package names, workspace members and the normal/build dependency edges of the resolved graph."""
    names = {p["id"]: p["name"] for p in metadata["packages"]}
    members = {names[i]: i for i in metadata["workspace_members"]}
    edges = {}
    for node in metadata["resolve"]["nodes"]:
        out = []
        for dep in node["deps"]:
            kinds = {k["kind"] for k in dep.get("dep_kinds", [])}
            if kinds & {None, "build"}:
                out.append(dep["pkg"])
        edges[node["id"]] = out
    return names, members, edges


def check(rules, names, members, edges):
    """Violations as (crate, forbidden crate, path of names)."""
    known = set(names.values())
    for source, forbidden in rules:
        if source not in members:
            raise RuleError(f"rule names `{source}`, which is not a workspace member")
        for target in forbidden:
            if target not in known:
                raise RuleError(f"rule `{source} !-> {target}`: no crate `{target}` in the dependency graph")
    violations = []
    for source, forbidden in rules:
        start = members[source]
        parent, queue = {start: None}, deque([start])
        while queue:
            node = queue.popleft()
            for dep in edges.get(node, []):
                if dep not in parent:
                    parent[dep] = node
                    queue.append(dep)
        for node in parent:
            if node != start and names[node] in forbidden:
                path, step = [], node
                while step is not None:
                    path.append(names[step])
                    step = parent[step]
                violations.append((source, names[node], list(reversed(path))))
    return sorted(violations)


def inject(graph, source, target, kind=None):
    """A copy of the graph with one fake edge `source -> target` of the given kind (None: normal)."""
    names, members, edges = copy.deepcopy(graph)
    by_name = {}
    for pkg_id, name in names.items():
        by_name.setdefault(name, pkg_id)
    # A package id (the transitive self-test names the exact node) or a crate name.
    source_id = source if source in names else members.get(source) or by_name.get(source)
    target_id = by_name.get(target)
    if source_id is None or target_id is None:
        raise RuleError(f"cannot inject `{source} -> {target}`: unknown crate")
    if kind in (None, "build"):
        edges.setdefault(source_id, []).append(target_id)
    return names, members, edges


def report(violations, rules):
    for source, target, path in violations:
        print(f"check-architecture: VIOLATION: {source} reaches {target}: {' -> '.join(path)}")
    if violations:
        print(f"check-architecture: FAILED: {len(violations)} forbidden dependenc"
              f"{'y' if len(violations) == 1 else 'ies'} (rules: {page_path}, block `architecture-rules`; "
              "normal and build dependencies, transitively, all features and targets)")
        return 1
    print(f"check-architecture: OK: {sum(len(f) for _, f in rules)} forbidden pairs in {len(rules)} rules "
          f"hold ({page_path})")
    return 0


try:
    with open(page_path, encoding="utf-8") as f:
        rules = parse_rules(f.read(), page_path)
    with open(metadata_path, encoding="utf-8") as f:
        graph = load_graph(json.load(f))

    if mode == "check":
        for spec in injections:
            source, _, target = (part.strip() for part in spec.partition("->"))
            graph = inject(graph, source, target)
            print(f"check-architecture: injected a fake normal dependency {source} -> {target}")
        sys.exit(report(check(rules, *graph), rules))

    # Self-test: every rule must catch a direct, a transitive and a build-time edge to each crate it
    # forbids, and must ignore a dev-dependency; bad pages must be refused.
    names, members, edges = graph
    failures, cases = [], 0

    def expect(description, graph_case, caught_pair):
        global cases
        cases += 1
        found = check(rules, *graph_case)
        hit = [v for v in found if (v[0], v[1]) == caught_pair] if caught_pair else found
        ok = bool(hit) if caught_pair else not found
        verdict = ("caught: " + " -> ".join(hit[0][2])) if hit else ("ignored" if not found else
                                                                     f"unexpected: {found}")
        print(f"  {'ok  ' if ok else 'FAIL'} {description}: {verdict}")
        if not ok:
            failures.append(description)

    baseline = check(rules, *graph)
    if baseline:
        print("check-architecture: self-test: the real graph already violates the rules; fix that first")
        report(baseline, rules)
        sys.exit(1)
    print(f"check-architecture: self-test on the real graph of {len(members)} workspace members")
    for source, forbidden in rules:
        # A dependency of the source that is not forbidden (a workspace crate if it has one): the transitive
        # case hangs the fake edge below it.
        below = [d for d in edges.get(members[source], []) if names[d] not in forbidden]
        middle = next((d for d in below if d in members.values()), below[0] if below else None)
        for target in forbidden:
            expect(f"{source} -> {target} (normal, direct)", inject(graph, source, target), (source, target))
            expect(f"{source} -> {target} (build-dependency)", inject(graph, source, target, "build"),
                   (source, target))
            if middle is not None:
                expect(f"{source} -> {names[middle]} -> {target} (transitive)", inject(graph, middle, target),
                       (source, target))
            expect(f"{source} -> {target} (dev-dependency only)", inject(graph, source, target, "dev"), None)
    for label, text in [
        ("a page without a rules block", "# nothing here\n"),
        ("a rule naming an unknown crate", "```architecture-rules\ntfhe-sbc-device !-> no-such-crate\n```\n"),
        ("a malformed rule", "```architecture-rules\ntfhe-sbc-device -> tfhe\n```\n"),
    ]:
        cases += 1
        try:
            check(parse_rules(text, "<self-test page>"), *graph)
            print(f"  FAIL refuses {label}: accepted")
            failures.append(label)
        except RuleError as error:
            print(f"  ok   refuses {label}: {error}")
    if failures:
        print(f"check-architecture: self-test FAILED: {len(failures)} of {cases} cases")
        sys.exit(1)
    print(f"check-architecture: self-test passed: {cases} cases")
except RuleError as error:
    print(f"check-architecture: FAILED: {error}")
    sys.exit(1)
PY
