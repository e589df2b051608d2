#!/usr/bin/env python3
"""Finds include cycles between the units of a source folder.

A unit is a header and its .cc (`x.h` + `x.cc` are one unit `x`): the cycles
that make a folder hard to read are between units, e.g. `a.cc` includes `b.h`
while `b.cc` includes `a.h`, which no compiler complains about. Tests
(`*_test.cc`) are left out: they sit on top of what they test.

The graph is only true if a header declares what its own .cc defines: a
function declared in `a.h` but defined in `b.cc` is an edge a -> b that no
include shows. Such functions are reported too (a heuristic: non-inline
`noexcept` functions declared at the start of a line).

    scripts/include_cycles.py [--root src] recorder

Prints the unit graph's edges, then each misplaced definition and each cycle
found; exits 1 if there is either.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def unit_of(path: pathlib.Path, root: pathlib.Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    return rel.as_posix()


def graph(root: pathlib.Path, folder: str) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted((root / folder).rglob("*")):
        if path.suffix not in (".h", ".cc") or path.stem.endswith("_test"):
            continue
        unit = unit_of(path, root)
        targets = edges.setdefault(unit, set())
        for included in INCLUDE.findall(path.read_text()):
            if not included.startswith(folder + "/"):
                continue
            target = pathlib.PurePosixPath(included).with_suffix("").as_posix()
            if target != unit:
                targets.add(target)
    return edges


DECLARATION = re.compile(
    r"^(?!\s*(?:return|inline|static|constexpr|template|#|//))[A-Za-z_][\w:<>&*, ]*?[ *&]"
    r"([a-z_]\w*)\(([^;{]*)\)\s*(?:const\s*)?noexcept;", re.M)


def misplaced(root: pathlib.Path, folder: str) -> list[str]:
    """Functions a header declares that a .cc other than its own defines."""
    sources = {unit_of(p, root): p.read_text() for p in sorted((root / folder).rglob("*.cc"))
               if not p.stem.endswith("_test")}
    found = []
    for header in sorted((root / folder).rglob("*.h")):
        unit = unit_of(header, root)
        for name in dict.fromkeys(m.group(1) for m in DECLARATION.finditer(header.read_text())):
            definition = re.compile(
                r"(^|[\s:*&])" + re.escape(name) + r"\([^;]*?\)\s*(const\s*)?noexcept\s*\{", re.M)
            where = [u for u, text in sources.items() if definition.search(text)]
            if where and unit not in where:
                found.append(f"{unit}.h declares {name}, defined in {', '.join(w + '.cc' for w in where)}")
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a folder under the root, e.g. recorder")
    parser.add_argument("--root", default="src", type=pathlib.Path)
    parser.add_argument("--quiet", action="store_true", help="print only the cycles")
    args = parser.parse_args()
    edges = graph(args.root, args.folder)
    if not args.quiet:
        for unit in sorted(edges):
            if edges[unit]:
                print(f"{unit} -> {', '.join(sorted(edges[unit]))}")
    elsewhere = misplaced(args.root, args.folder)
    for line in elsewhere:
        print(line)
    found = cycles(edges)
    for component in found:
        print("cycle: " + " <-> ".join(component))
    print(f"{len(edges)} units, {sum(map(len, edges.values()))} edges, {len(found)} cycles, "
          f"{len(elsewhere)} functions defined outside their unit")
    return 1 if found or elsewhere else 0


if __name__ == "__main__":
    sys.exit(main())
