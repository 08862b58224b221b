#!/usr/bin/env python3
"""Module-level dependency cycles inside each crate of the workspace (called by scripts/check-architecture.sh).

A crate is a root file (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs` of a workspace member) and the module
files its `mod name;` declarations reach (`name.rs` or `name/mod.rs`, `#[path = ".."]` honoured). One file is
one node; an inline module (`mod tests { .. }`) belongs to its file. There is an edge A -> B when A's code
names module B by a path: `use crate::x::y`, `use super::..`, `use self::..`, `pub use child::X`, and the same
paths written inside code (`crate::x::f()`, `super::T`, `child::g()`). `super`, `self` and `crate` are
resolved relative to the (inline) module they are written in; a path ends at the deepest module it names, so
`crate::a::T` with `T` re-exported by `a/mod.rs` is an edge to `a/mod.rs`, and `super::Helper` from a child
is an edge to its parent's file. `mod child;` declarations are not edges. Comments, strings and `$crate`
paths are ignored.

Every strongly connected component of more than one file is a cycle, printed with the edges inside it (the
file:line of each path), and fails the check. ALLOWED below is empty: no crate of the workspace has a module
cycle. Its mechanism stays as a ratchet for a cycle that must be tolerated for a while: a listed component
is tolerated, and a listed one that is no longer found exactly (it shrank, grew or is gone) fails until the
list is edited.

Usage:
    python3 scripts/lib/module_cycles.py [--root DIR]     check the workspace (exit 1 on a cycle)
    python3 scripts/lib/module_cycles.py --self-test      the check on synthetic crates in a temporary directory
"""
import os
import re
import shutil
import sys
import tempfile

# Cycles tolerated, per crate root (relative to the workspace; files relative to the root's directory): each
# entry is the exact set of files of one strongly connected component. Empty: every crate is acyclic, so any
# module cycle fails. The mechanism stays for a cycle that must be tolerated for a while (a crate another
# change is editing); such an entry is a debt with a reason next to it, it may only shrink (a cycle not listed
# fails, and so does a listed one that changed or is gone), and the way out is the one the last four took: a
# type or helper both sides import moves into a file of its own named after what it is, a `mod.rs` only
# declares and re-exports, and a test that reaches a sibling moves to where the edge already goes.
ALLOWED = {}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
KEYWORDS = {"crate", "super", "self", "Self"}


# --- reading Rust --------------------------------------------------------------------------------------------

def strip(code):
    """The code with comments, string, byte-string, raw-string and char literals blanked, newlines kept (so
    offsets and line numbers stay those of the file)."""
    out, i, n = [], 0, len(code)

    def blank(text):
        return re.sub(r"[^\n]", " ", text)

    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(code[i:j]))
            i = j
        elif code.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if code.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif code.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(code[i:j]))
            i = j
        elif re.match(r"b?r#*\"", code[i:i + 260]) and (i == 0 or not re.match(r"\w", code[i - 1])):
            m = re.match(r"b?r(#*)\"", code[i:])
            end = code.find('"' + m.group(1), i + m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(blank(code[i:j]))
            i = j
        elif c == '"' or (c == "b" and code.startswith('b"', i) and (i == 0 or not re.match(r"\w", code[i - 1]))):
            j = i + (2 if c == "b" else 1)
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out.append(blank(code[i:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'\n])'", code[i:])
            if m:  # a char literal; otherwise a lifetime or label
                out.append(blank(m.group(0)))
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(code, offset):
    return code.count("\n", 0, offset) + 1


def inline_scopes(code):
    """[(start, end, name)] of the inline modules `mod name { .. }` of stripped code (nested ones too)."""
    scopes = []
    for m in re.finditer(rf"\bmod\s+({IDENT})\s*\{{", code):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        scopes.append((m.end(), i, m.group(1)))
    return scopes


def scope_at(scopes, offset):
    """The inline module path (outermost first) that contains the offset."""
    return tuple(name for start, end, name in scopes if start <= offset < end)


def use_paths(tree):
    """The paths of a `use` tree (`a::{b, c::{d, e as f}, self}` -> [[a, b], [a, c, d], [a, c, e], [a]])."""
    tree = re.sub(rf"\s+as\s+{IDENT}", "", tree)
    tree = re.sub(r"\s+", "", tree)

    def parse(text):
        parts, depth, current = [], 0, ""
        for char in text + ",":
            if char == "," and depth == 0:
                if current:
                    parts.append(current)
                current = ""
                continue
            depth += {"{": 1, "}": -1}.get(char, 0)
            current += char
        paths = []
        for part in parts:
            brace = part.find("{")
            if brace < 0:
                segments = [s for s in part.split("::") if s]
                if segments and segments[-1] == "self":
                    segments = segments[:-1]
                if segments:
                    paths.append(segments)
                continue
            prefix = [s for s in part[:brace].split("::") if s]
            for inner in parse(part[brace + 1:part.rfind("}")]):
                paths.append(prefix + inner if inner != ["self"] else prefix)
            if not parse(part[brace + 1:part.rfind("}")]):
                paths.append(prefix)
        return paths

    return parse(tree)


# --- the module tree -----------------------------------------------------------------------------------------

class Crate:
    """The modules of one crate: `modules` maps a module path (tuple) to (file, inline path inside it)."""

    def __init__(self, root_file):
        self.root_file = root_file
        self.modules = {}
        self.code = {}
        self.scopes = {}
        self.files = []
        self.errors = []
        self._load(root_file, (), is_dir_owner=True)

    def _load(self, path, module, is_dir_owner):
        if path in self.code:
            self.errors.append(f"{path}: reached twice (two `mod` declarations for one file)")
            return
        with open(path, encoding="utf-8") as f:
            code = strip(f.read())
        self.code[path] = code
        self.files.append(path)
        scopes = inline_scopes(code)
        self.scopes[path] = scopes
        self.modules[module] = (path, ())
        for start, end, name in scopes:
            inner = scope_at(scopes, start)
            self.modules[module + inner] = (path, inner)
        base = os.path.dirname(path)
        own_dir = base if is_dir_owner else os.path.join(base, os.path.splitext(os.path.basename(path))[0])
        for m in re.finditer(rf"((?:#\s*\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?\bmod\s+({IDENT})\s*;", code):
            attributes, name = m.group(1), m.group(2)
            inner = scope_at(scopes, m.start())
            raw = open(path, encoding="utf-8").read()[m.start():m.end()]
            explicit = re.search(r"#\s*\[\s*path\s*=\s*\"([^\"]+)\"", raw)
            if explicit:
                child = os.path.normpath(os.path.join(base, explicit.group(1)))
                self._load(child, module + inner + (name,), is_dir_owner=os.path.basename(child) == "mod.rs")
                continue
            directory = os.path.join(own_dir, *inner)
            flat, nested = os.path.join(directory, name + ".rs"), os.path.join(directory, name, "mod.rs")
            if os.path.isfile(flat):
                self._load(flat, module + inner + (name,), is_dir_owner=False)
            elif os.path.isfile(nested):
                self._load(nested, module + inner + (name,), is_dir_owner=True)
            else:
                self.errors.append(f"{path}:{line_of(code, m.start())}: `mod {name};` has no file "
                                   f"({flat} or {nested})")

    def module_of(self, path, inner):
        for module, (file, scope) in self.modules.items():
            if file == path and scope == inner:
                return module
        raise KeyError(path)

    def resolve(self, here, segments):
        """The file the path (list of segments) written in module `here` names, or None (another crate, a
        local item, a macro)."""
        if not segments:
            return None
        first, rest = segments[0], list(segments[1:])
        if first == "crate":
            base = ()
        elif first == "self":
            base = here
        elif first == "super":
            base = here[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif here + (first,) in self.modules:
            base, rest = here + (first,), rest
        else:
            return None
        while rest and base + (rest[0],) in self.modules:
            base, rest = base + (rest[0],), rest[1:]
        return self.modules[base][0]

    def edges(self):
        """{(from file, to file): [line, ..]} of the paths between different files."""
        found = {}
        for path in self.files:
            code, scopes = self.code[path], self.scopes[path]
            file_module = self.module_of(path, ())

            def add(offset, segments):
                here = file_module + scope_at(scopes, offset)
                target = self.resolve(here, segments)
                if target is not None and target != path:
                    found.setdefault((path, target), []).append(line_of(code, offset))

            covered = []
            for m in re.finditer(r"(?<![\w$])use\s+([^;]*);", code):
                covered.append((m.start(), m.end()))
                for segments in use_paths(m.group(1).lstrip(":")):
                    add(m.start(), segments)
            for m in re.finditer(rf"(?<![\w$:.])({IDENT})((?:\s*::\s*{IDENT})+)", code):
                if any(start <= m.start() < end for start, end in covered):
                    continue
                first = m.group(1)
                segments = [first] + [s.strip() for s in m.group(2).split("::") if s.strip()]
                if first in KEYWORDS or file_module + scope_at(scopes, m.start()) + (first,) in self.modules:
                    add(m.start(), segments)
        return found


def crate_roots(workspace):
    """The root files of the workspace's crates: src/lib.rs, src/main.rs and src/bin/*.rs of each member."""
    with open(os.path.join(workspace, "Cargo.toml"), encoding="utf-8") as f:
        manifest = f.read()
    members = re.search(r"^members\s*=\s*\[([^\]]*)\]", manifest, re.M)
    directories = ["."] + (re.findall(r"\"([^\"]+)\"", members.group(1)) if members else [])
    roots = []
    for directory in directories:
        src = os.path.join(workspace, directory, "src")
        for name in ("lib.rs", "main.rs"):
            if os.path.isfile(os.path.join(src, name)):
                roots.append(os.path.join(src, name))
        if os.path.isdir(os.path.join(src, "bin")):
            roots.extend(sorted(os.path.join(src, "bin", n) for n in os.listdir(os.path.join(src, "bin"))
                                if n.endswith(".rs")))
    return roots


# --- cycles --------------------------------------------------------------------------------------------------

def components(nodes, edges):
    """Strongly connected components (Tarjan, iterative) with more than one node, each a sorted list."""
    successors = {node: [] for node in nodes}
    for source, target in edges:
        successors[source].append(target)
    index, low, on_stack, stack, result, counter = {}, {}, set(), [], [], [0]
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(successors[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors[child])))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    result.append(sorted(component))
    return sorted(result)


def check(workspace, allowed, out=print):
    """Prints every cycle of every crate; returns (number of failing findings, number of cycles)."""
    failures, total = 0, 0
    roots = crate_roots(workspace)
    for name in sorted(set(allowed) - {os.path.relpath(root, workspace) for root in roots}):
        out(f"module-cycles: STALE: {name}: allowed cycles are listed for a crate root the workspace does not have")
        failures += 1
    for root in roots:
        crate = Crate(root)
        name = os.path.relpath(root, workspace)
        for error in crate.errors:
            out(f"module-cycles: ERROR: {error}")
            failures += 1
        edges = crate.edges()
        cycles = components(crate.files, edges)
        total += len(cycles)
        rel = lambda p: os.path.relpath(p, os.path.dirname(root))  # noqa: E731
        listed = [frozenset(c) for c in allowed.get(name, [])]
        found = set()
        for cycle in cycles:
            members = frozenset(rel(p) for p in cycle)
            found.add(members)
            tolerated = members in listed
            out(f"module-cycles: {'ALLOWED' if tolerated else 'CYCLE'}: {name}: {len(cycle)} files: "
                f"{', '.join(sorted(members))}")
            for (source, target), lines in sorted(edges.items()):
                if source in cycle and target in cycle:
                    where = ", ".join(str(n) for n in sorted(set(lines)))
                    out(f"    {rel(source)} -> {rel(target)}  ({rel(source)}:{where})")
            failures += 0 if tolerated else 1
        for members in listed:
            if members not in found:
                out(f"module-cycles: STALE: {name}: the allowed cycle {', '.join(sorted(members))} is no longer "
                    f"found as such: update ALLOWED in scripts/lib/module_cycles.py")
                failures += 1
        out(f"module-cycles: {name}: {len(crate.files)} files, {len(edges)} edges, {len(cycles)} cycles")
    return failures, total


# --- self-test -----------------------------------------------------------------------------------------------

def self_test():
    """Synthetic crates in a temporary directory: the check must fail on each planted cycle (checked, like the
    workspace, with nothing allowed) and pass on the acyclic ones; the ratchet's own cases (an allowed cycle
    tolerated, a stale or grown entry failing) use a list of their own. Returns the number of failed cases."""
    cases, failed = 0, []

    def expect(description, ok, verdict):
        nonlocal cases
        cases += 1
        print(f"  {'ok  ' if ok else 'FAIL'} {description}: {verdict}")
        if not ok:
            failed.append(description)

    def crate(files, allowed=None):
        root = tempfile.mkdtemp(prefix="module-cycles-")
        try:
            with open(os.path.join(root, "Cargo.toml"), "w", encoding="utf-8") as f:
                f.write('[package]\nname = "synthetic"\n')
            for relative, text in files.items():
                path = os.path.join(root, "src", relative)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            lines = []
            failures, cycles = check(root, allowed or {}, out=lines.append)
            return failures, cycles, lines
        finally:
            shutil.rmtree(root)

    acyclic = {
        "lib.rs": "//! A face.\nmod shared;\nmod a;\nmod b;\npub use a::A;\npub use b::B;\n",
        "shared.rs": "pub struct Shared;\n",
        "a.rs": "use crate::shared::Shared;\npub struct A(Shared);\n",
        "b.rs": "use crate::{a::A, shared::Shared};\n/// crate::lib, super::super (comments are no edges)\n"
                "pub struct B(A, Shared);\nconst S: &str = \"crate::b::B super::x\";\n"
                "#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::a::A;\n}\n",
    }
    planted = [
        ("two siblings naming each other (`use crate::b::B` / `crate::a::f()` in code)",
         {"a.rs": "use crate::b::B;\npub fn f() {}\n", "b.rs": "pub struct B;\nfn g() { crate::a::f() }\n"},
         {"a.rs", "b.rs"}),
        ("a child importing a helper from its parent, which re-exports the child",
         {"lib.rs": acyclic["lib.rs"] + "mod face;\n",
          "face/mod.rs": "mod child;\npub use child::C;\npub(crate) fn helper() {}\n",
          "face/child.rs": "use super::helper;\npub struct C;\n"},
         {"face/mod.rs", "face/child.rs"}),
        ("a cycle through the crate root (`use crate::Shared` re-exported by lib.rs)",
         {"lib.rs": acyclic["lib.rs"] + "pub use shared::Shared;\n",
          "shared.rs": "pub struct Shared;\nfn f() -> crate::A { todo!() }\n"},
         {"lib.rs", "shared.rs", "a.rs", "b.rs"}),
        ("a cycle written in a test module (`use super::super::b::B` in a.rs's inline `mod tests`)",
         {"a.rs": acyclic["a.rs"] + "#[cfg(test)]\nmod tests {\n    use super::super::b::B;\n}\n"},
         {"a.rs", "b.rs"}),
        ("a grouped use (`use crate::{shared::{self}, b::{B as Bee}}`)",
         {"a.rs": "use crate::{shared::{self}, b::{B as Bee}};\npub struct A;\n"},
         {"a.rs", "b.rs"}),
    ]
    print("module-cycles: self-test: synthetic crates in a temporary directory")
    failures, cycles, lines = crate(acyclic)
    expect("an acyclic crate (shared type in its own file, face-only lib.rs)", failures == 0 and cycles == 0,
           f"{cycles} cycles, exit {1 if failures else 0}")
    for description, change, expected in planted:
        files = dict(acyclic)
        files.update(change)
        failures, cycles, lines = crate(files)
        reported = [line for line in lines if line.startswith("module-cycles: CYCLE")]
        members = set(reported[0].split(": ", 4)[4].split(", ")) if len(reported) == 1 else set()
        expect(f"planted: {description}", failures > 0 and members == expected,
               f"failed, {reported[0][len('module-cycles: '):] if reported else 'no cycle reported'}")
    files = dict(acyclic)
    files.update(planted[0][1])
    allowed = {"src/lib.rs": [{"a.rs", "b.rs"}]}
    failures, cycles, _ = crate(files, allowed)
    expect("a planted cycle listed as allowed", failures == 0 and cycles == 1, f"{cycles} cycle, tolerated")
    failures, cycles, lines = crate(acyclic, allowed)
    expect("an allowed cycle that is gone (stale entry)", failures == 1 and any("STALE" in x for x in lines),
           "failed: the list must shrink")
    files = dict(acyclic)
    files["c.rs"] = "use crate::a::A;\n"
    files["a.rs"] = "use crate::b::B;\nuse crate::c;\n"
    files["b.rs"] = "pub struct B;\nuse crate::a;\n"
    files["lib.rs"] = acyclic["lib.rs"] + "mod c;\n"
    failures, cycles, _ = crate(files, allowed)
    expect("an allowed cycle that grew (a third file joined)", failures == 2, f"{failures} findings (new + stale)")
    files = dict(acyclic)
    files["lib.rs"] = acyclic["lib.rs"] + "mod missing;\n"
    failures, _, lines = crate(files)
    expect("a `mod` without its file", failures == 1, "refused")
    failures, _, lines = crate(acyclic, {"src/gone.rs": [{"a.rs", "b.rs"}]})
    expect("allowed cycles of a crate root that is gone", failures == 1 and any("STALE" in x for x in lines),
           "failed")
    if failed:
        print(f"module-cycles: self-test FAILED: {len(failed)} of {cases} cases")
        return 1
    print(f"module-cycles: self-test passed: {cases} cases")
    return 0


def main(argv):
    workspace = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    if "--root" in argv:
        workspace = argv[argv.index("--root") + 1]
    if "--self-test" in argv:
        return self_test()
    failures, cycles = check(workspace, ALLOWED)
    if failures:
        print(f"module-cycles: FAILED: {failures} findings ({cycles} cycles in all, {sum(len(v) for v in ALLOWED.values())}"
              " allowed)")
        return 1
    allowed = sum(len(v) for v in ALLOWED.values())
    print(f"module-cycles: OK: no module cycle{f' outside the {allowed} allowed' if allowed else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
