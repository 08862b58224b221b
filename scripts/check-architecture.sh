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
# The page's block tagged `wing-rules` lists what each wing of the device crate may import,
#     encrypt -> csprng, noise, product, frame
# and every `crate::<wing>` path in the code of `src/<wing>/` (comments and doc comments aside) must name the
# wing itself or one it lists. That part runs once the wings are directories under
# crates/tfhe-sbc-device/src (until then it says it skipped); from then on a wing the page lists but the crate
# lacks is an error too.
#
# Inside each crate, no module cycle: scripts/lib/module_cycles.py builds the graph of a crate's module files
# (an edge where one file names another by a `use` or a path in code, `super`/`self`/`crate` resolved) and
# fails on every strongly connected component of more than one file: its ALLOWED list (a ratchet that may
# only shrink) is empty, so any module cycle fails. `--self-test` runs its own self-test too (cycles planted
# in synthetic crates).
#
# Usage:
#   bash scripts/check-architecture.sh                 check the workspace against the page
#   bash scripts/check-architecture.sh --self-test     show that the check fails on violations it must catch
#                                                      (fake edges injected into the real graph) and passes
#                                                      on the ones it must ignore (dev-dependencies)
#   bash scripts/check-architecture.sh --inject 'tfhe-sbc-core -> tfhe-sbc-device'
#                                                      the check with one fake normal dependency added
#   --page FILE / --metadata FILE / --device-src DIR   another page, a saved `cargo metadata` output, or
#                                                      another device crate's src/ (for the wing rules)
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
DEVICE_SRC=crates/tfhe-sbc-device/src
MODE=check
INJECT=()
while [ $# -gt 0 ]; do
  case "$1" in
    --self-test) MODE=self-test ;;
    --inject) INJECT+=("${2:?--inject takes 'crate -> crate'}"); shift ;;
    --page) PAGE="${2:?--page takes a file}"; shift ;;
    --metadata) METADATA="${2:?--metadata takes a file}"; shift ;;
    --device-src) DEVICE_SRC="${2:?--device-src takes a directory}"; shift ;;
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

# Module cycles inside each crate: its own check (and self-test); the crate rules below still run if it fails.
MODULE_CYCLES=0
if [ "$MODE" = self-test ]; then
  python3 scripts/lib/module_cycles.py --self-test || MODULE_CYCLES=1
else
  python3 scripts/lib/module_cycles.py || MODULE_CYCLES=1
fi

python3 - "$MODE" "$PAGE" "$METADATA" "$DEVICE_SRC" "${INJECT[@]+"${INJECT[@]}"}" <<'PY'
import copy
import json
import os
import re
import shutil
import sys
import tempfile
from collections import deque

mode, page_path, metadata_path, device_src, injections = (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4],
                                                           sys.argv[5:])
NAME = r"[A-Za-z0-9_-]+"
RULE = re.compile(rf"^({NAME})\s*!->\s*({NAME}(?:\s*,\s*{NAME})*)$")
WING = r"[a-z_][a-z0-9_]*"
WING_RULE = re.compile(rf"^({WING})\s*->\s*((?:{WING}(?:\s*,\s*{WING})*)?)$")
EXCEPTION = re.compile(rf"^({WING}(?:/{WING})*\.rs)\s*->\s*({WING}(?:\s*,\s*{WING})*)$")


class RuleError(Exception):
    pass


def block(text, tag, where):
    """(line number, rule) of each rule line in the page's fenced blocks tagged `tag`, comments dropped."""
    lines, inside, found = [], False, False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not inside and re.match(rf"^```+\s*{tag}\s*$", stripped):
            inside, found = True, True
        elif inside and stripped.startswith("```"):
            inside = False
        elif inside:
            body = stripped.split("#", 1)[0].strip()
            if body:
                lines.append((number, body))
    if not found or not lines:
        raise RuleError(f"{where}: no rules (a fenced block tagged `{tag}`)")
    return lines


def parse_rules(text, where):
    """The `architecture-rules` block: [(crate, [crates it must never reach])]."""
    rules = []
    for number, body in block(text, "architecture-rules", where):
        match = RULE.match(body)
        if not match:
            raise RuleError(f"{where}:{number}: not a rule (`crate !-> crate, crate`): {body}")
        rules.append((match.group(1), [name.strip() for name in match.group(2).split(",")]))
    return rules


def parse_wing_rules(text, where):
    """The `wing-rules` block: ({wing: set of the other wings it may import}, {file: set of wings it imports
    against its wing's rule, as a known exception}). Exception lines name a file under the device's `src/`:
    `encrypt/secret_key.rs -> files`."""
    rules, exceptions = {}, {}
    for number, body in block(text, "wing-rules", where):
        match, exception = WING_RULE.match(body), EXCEPTION.match(body)
        if exception:
            names = {name.strip() for name in exception.group(2).split(",")}
            exceptions.setdefault(exception.group(1), set()).update(names)
        elif match:
            rules[match.group(1)] = {name.strip() for name in match.group(2).split(",") if name.strip()}
        else:
            raise RuleError(f"{where}:{number}: not a wing rule (`wing -> wing, wing`, `wing ->`, or an exception "
                            f"`wing/file.rs -> wing`): {body}")
    for left, named in list(rules.items()) + list(exceptions.items()):
        unknown = named - set(rules)
        if unknown:
            raise RuleError(f"{where}: wing rule `{left}` names {sorted(unknown)}, which have no rule of their own")
    for path in exceptions:
        if path.split("/", 1)[0].removesuffix(".rs") not in rules:
            raise RuleError(f"{where}: exception `{path}` is in no wing")
    return rules, exceptions


# --- crate rules ---------------------------------------------------------------------------------------------

def load_graph(metadata):
    """Package names, workspace members and the normal/build dependency edges of the resolved graph."""
    names = {p["id"]: p["name"] for p in metadata["packages"]}
    members = {names[i]: i for i in metadata["workspace_members"]}
    edges = {}
    for node in metadata["resolve"]["nodes"]:
        edges[node["id"]] = [dep["pkg"] for dep in node["deps"]
                             if {k["kind"] for k in dep.get("dep_kinds", [])} & {None, "build"}]
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


# --- wing rules ----------------------------------------------------------------------------------------------

def strip_comments(code):
    """The code with `//` and `/* */` comments (doc comments included) blanked, line numbers kept."""
    code = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), code, flags=re.S)
    return re.sub(r"//[^\n]*", "", code)


def crate_paths(code):
    """(line, first segment) of every `crate::x` and `crate::{x::.., y}` path in the code."""
    found = []
    for match in re.finditer(r"\bcrate\s*::\s*(\{|" + WING + ")", code):
        line = code.count("\n", 0, match.start()) + 1
        if match.group(1) != "{":
            found.append((line, match.group(1)))
            continue
        depth, start, i = 1, match.end(), match.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        inner, depth, part = code[start:i - 1], 0, ""
        for char in inner + ",":
            if char == "," and depth == 0:
                first = re.match(r"\s*(" + WING + ")", part)
                if first:
                    found.append((line, first.group(1)))
                part = ""
                continue
            depth += {"{": 1, "}": -1}.get(char, 0)
            part += char
    return found


def check_wings(wing_rules, src):
    """None if the wings are not directories yet; else violations (file, line, wing, imported wing), where
    line 0 is an exception of the page that no import needs any more (stale: the page must drop it)."""
    rules, exceptions = wing_rules
    if not any(os.path.isdir(os.path.join(src, wing)) for wing in rules):
        return None
    files = {}
    for wing in rules:
        directory, single = os.path.join(src, wing), os.path.join(src, wing + ".rs")
        if os.path.isdir(directory):
            files[wing] = sorted(os.path.join(root, name) for root, _, names in os.walk(directory)
                                 for name in names if name.endswith(".rs"))
        elif os.path.isfile(single):
            files[wing] = [single]
        else:
            raise RuleError(f"wing `{wing}` has a rule but no {directory}/ or {single} (renamed? fix the page)")
    violations, excused = [], set()
    for wing, paths in files.items():
        for path in paths:
            relative = os.path.relpath(path, src).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                code = strip_comments(f.read())
            for line, used in crate_paths(code):
                if used in rules and used != wing and used not in rules[wing]:
                    if used in exceptions.get(relative, ()):
                        excused.add((relative, used))
                    else:
                        violations.append((relative, line, wing, used))
    for relative, named in exceptions.items():
        for used in named - {u for r, u in excused if r == relative}:
            violations.append((relative, 0, relative.split("/", 1)[0].removesuffix(".rs"), used))
    return sorted(violations)


def report_wings(violations):
    if violations is None:
        print(f"check-architecture: wing rules skipped: no wing directory under {device_src} yet")
        return 0
    for path, line, wing, used in violations:
        if line:
            print(f"check-architecture: VIOLATION: wing {wing}/ imports {used}/ at {device_src}/{path}:{line}")
        else:
            print(f"check-architecture: STALE: the page excuses {path} -> {used}, which {device_src}/{path} "
                  f"no longer imports (or no longer exists): drop that line")
    if violations:
        print(f"check-architecture: FAILED: {len(violations)} wing imports the page does not allow "
              f"({page_path}, block `wing-rules`)")
        return 1
    print(f"check-architecture: OK: the device crate's wings import only what {page_path} allows"
          f"{f' ({sum(len(v) for v in wing_rules[1].values())} listed exceptions)' if wing_rules[1] else ''}")
    return 0


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


# --- self-test -----------------------------------------------------------------------------------------------

def self_test(rules, wing_rules, graph):
    """Every crate rule catches a direct, a transitive and a build-time edge to each crate it forbids and
    ignores a dev-dependency; the wing rules catch forbidden imports in a fake source tree and ignore allowed
    ones and comments; bad pages are refused. Returns the number of failed cases."""
    names, members, edges = graph
    failures, cases = [], 0

    def expect(description, ok, verdict):
        nonlocal cases
        cases += 1
        print(f"  {'ok  ' if ok else 'FAIL'} {description}: {verdict}")
        if not ok:
            failures.append(description)

    def expect_crates(description, graph_case, pair):
        found = check(rules, *graph_case)
        hit = [v for v in found if (v[0], v[1]) == pair] if pair else []
        verdict = ("caught: " + " -> ".join(hit[0][2])) if hit else ("ignored" if not found else f"found {found}")
        expect(description, bool(hit) if pair else not found, verdict)

    baseline = check(rules, *graph)
    if baseline:
        print("check-architecture: self-test: the real graph already violates the rules; fix that first")
        report(baseline, rules)
        return 1
    print(f"check-architecture: self-test: crate rules, on the real graph of {len(members)} workspace members")
    for source, forbidden in rules:
        # A dependency of the source that is not forbidden (a workspace crate if it has one): the transitive
        # case hangs the fake edge below it.
        below = [d for d in edges.get(members[source], []) if names[d] not in forbidden]
        middle = next((d for d in below if d in members.values()), below[0] if below else None)
        for target in forbidden:
            expect_crates(f"{source} -> {target} (normal, direct)", inject(graph, source, target), (source, target))
            expect_crates(f"{source} -> {target} (build-dependency)", inject(graph, source, target, "build"),
                          (source, target))
            if middle is not None:
                expect_crates(f"{source} -> {names[middle]} -> {target} (transitive)",
                              inject(graph, middle, target), (source, target))
            expect_crates(f"{source} -> {target} (dev-dependency only)", inject(graph, source, target, "dev"), None)

    print("check-architecture: self-test: wing rules, on a fake device src/")
    wings = wing_rules[0]
    plain = (wings, {})
    allowed = [(w, a) for w in sorted(wings) for a in sorted(wings[w])]
    forbidden = [(w, o) for w in sorted(wings) for o in sorted(wings) if o != w and o not in wings[w]]
    root = tempfile.mkdtemp(prefix="check-architecture-")

    def write(relative, text):
        os.makedirs(os.path.dirname(os.path.join(root, relative)), exist_ok=True)
        with open(os.path.join(root, relative), "w", encoding="utf-8") as f:
            f.write(text)

    def found_pairs(tree_rules):
        return [(v[0], v[1], v[3]) for v in check_wings(tree_rules, root)]

    try:
        for wing in wings:
            write(f"{wing}/mod.rs", f"//! The {wing} wing.\nuse crate::Error;\nuse crate::{wing}::inner;\n")
        expect("no import across wings", found_pairs(plain) == [], "clean tree passes")
        if allowed:
            wing, used = allowed[0]
            write(f"{wing}/allowed.rs", f"use crate::{used}::Thing;\n")
            expect(f"{wing}/ -> {used}/ (allowed)", found_pairs(plain) == [], "ignored")
        if forbidden:
            (wing, used), (wing2, used2) = forbidden[0], forbidden[-1]
            write(f"{wing}/comment.rs", f"/// See [`crate::{used}`].\n// crate::{used}\n/* crate::{used} */\nfn f() {{}}\n")
            expect(f"{wing}/ -> {used}/ in comments only", found_pairs(plain) == [], "ignored")
            write(f"{wing}/bad.rs", f"fn f() {{}}\nuse crate::{used}::Thing;\n")
            found = found_pairs(plain)
            expect(f"{wing}/ -> {used}/ (forbidden, `use crate::{used}::..`)",
                   found == [(f"{wing}/bad.rs", 2, used)], f"found {found}")
            excused = (wings, {f"{wing}/bad.rs": {used}})
            found = found_pairs(excused)
            expect(f"{wing}/bad.rs -> {used}/ listed as an exception", found == [], f"found {found}")
            os.remove(os.path.join(root, wing, "bad.rs"))
            found = found_pairs(excused)
            expect(f"a stale exception ({wing}/bad.rs -> {used}, no such import any more)",
                   found == [(f"{wing}/bad.rs", 0, used)], f"found {found}")
            write(f"{wing2}/deep/grouped.rs", f"use crate::{{\n    Error,\n    {used2}::{{a, b}},\n}};\n")
            found = found_pairs(plain)
            expect(f"{wing2}/ -> {used2}/ (forbidden, grouped `use crate::{{..}}` in a sub-module)",
                   found == [(f"{wing2}/deep/grouped.rs", 1, used2)], f"found {found}")
        missing = sorted(wings)[0]
        shutil.rmtree(os.path.join(root, missing))
        try:
            check_wings(plain, root)
            expect(f"a wing the page lists but the crate lacks ({missing}/)", False, "accepted")
        except RuleError as error:
            expect(f"a wing the page lists but the crate lacks ({missing}/)", True, f"refused: {error}")
        for wing in wings:
            shutil.rmtree(os.path.join(root, wing), ignore_errors=True)
        expect("no wing directories yet", check_wings(plain, root) is None, "skipped")
    finally:
        shutil.rmtree(root)

    print("check-architecture: self-test: pages")
    for label, text, parse in [
        ("a page without a rules block", "# nothing here\n", parse_rules),
        ("a rule naming an unknown crate", "```architecture-rules\ntfhe-sbc-device !-> no-such-crate\n```\n",
         parse_rules),
        ("a malformed rule", "```architecture-rules\ntfhe-sbc-device -> tfhe\n```\n", parse_rules),
        ("a page without a wing-rules block", "# nothing here\n", parse_wing_rules),
        ("a wing rule naming a wing without a rule", "```wing-rules\nframe -> nowhere\n```\n", parse_wing_rules),
        ("an exception in no wing", "```wing-rules\nframe ->\nwire/header.rs -> frame\n```\n", parse_wing_rules),
    ]:
        try:
            parsed = parse(text, "<self-test page>")
            if parse is parse_rules:
                check(parsed, *graph)
            expect(f"refuses {label}", False, "accepted")
        except RuleError as error:
            expect(f"refuses {label}", True, str(error))
    if failures:
        print(f"check-architecture: self-test FAILED: {len(failures)} of {cases} cases")
        return 1
    print(f"check-architecture: self-test passed: {cases} cases")
    return 0


try:
    with open(page_path, encoding="utf-8") as f:
        page = f.read()
    rules, wing_rules = parse_rules(page, page_path), parse_wing_rules(page, page_path)
    with open(metadata_path, encoding="utf-8") as f:
        graph = load_graph(json.load(f))
    if mode == "self-test":
        sys.exit(self_test(rules, wing_rules, graph))
    for spec in injections:
        source, _, target = (part.strip() for part in spec.partition("->"))
        graph = inject(graph, source, target)
        print(f"check-architecture: injected a fake normal dependency {source} -> {target}")
    crates_failed = report(check(rules, *graph), rules)
    wings_failed = report_wings(check_wings(wing_rules, device_src))
    sys.exit(crates_failed or wings_failed)
except RuleError as error:
    print(f"check-architecture: FAILED: {error}")
    sys.exit(1)
PY
exit "$MODULE_CYCLES"
