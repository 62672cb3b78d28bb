#!/usr/bin/env python3
"""`make lint`'s cycle contract: no import cycle among the modules of the given packages, inside a layer too.

import-linter's layers contract (pyproject.toml) keeps every import pointing down between floors; two modules of
one floor may still import each other, and then neither can be read, tested or moved alone. This gate finds every
strongly connected set of modules in grimp's import graph (function-level imports count: they are imports all the
same) and prints each with the lines that close it. Exit 0 none, 1 some (listed), 2 bad input.

    scripts/check_import_cycles.py [--path DIR] PACKAGE [PACKAGE ...]
"""

from __future__ import annotations

import argparse
import sys


def cycles(graph) -> list[list[str]]:
    """Every set of two or more modules that import each other, directly or through one another (Tarjan's
    strongly connected components, iterative: a deep package must not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", action="append", default=[], help="a directory to import the packages from (repeatable)")
    ap.add_argument("packages", nargs="+")
    args = ap.parse_args(argv)
    sys.path[:0] = args.path
    import grimp

    try:
        graph = grimp.build_graph(*args.packages, include_external_packages=False, cache_dir=None)
    except Exception as exc:  # an unknown package: one line
        print(f"check_import_cycles: cannot read {' '.join(args.packages)}: {exc}", file=sys.stderr)
        return 2
    found = cycles(graph)
    for component in found:
        members = set(component)
        print(f"import cycle among {len(component)} modules: {', '.join(component)}")
        for importer in component:
            for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
                for d in graph.get_import_details(importer=importer, imported=imported):
                    print(f"  {importer} -> {imported} (line {d['line_number']}: {d['line_contents']})")
    if found:
        print(f"{len(found)} import cycle(s): give the shared types a module of their own (docs/design.md, Layers)", file=sys.stderr)
        return 1
    print(f"no import cycle in {', '.join(args.packages)} ({len(graph.modules)} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
