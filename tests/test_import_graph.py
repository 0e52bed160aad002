"""The package's import graph: no cycles, no borrowed private names, and the
layering DESIGN.md states ("soi/ never imports lower/").

Every module of ``coarsen_nb/`` is parsed with :mod:`ast`, and every import
counts, at module level and inside functions alike: an import deferred into a
function to dodge a cycle at load time is still a cycle in the design.  An
edge goes to the module an import names (``from coarsen_nb.lower import
module`` names ``coarsen_nb.lower.module``; ``from coarsen_nb import
__version__`` names the package ``coarsen_nb`` itself); the implicit import of
a parent package is not an edge.  Imports under ``if TYPE_CHECKING:`` are
annotations only and are not edges.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import coarsen_nb

ROOT = Path(os.path.dirname(os.path.abspath(coarsen_nb.__file__)))
PACKAGE = "coarsen_nb"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _type_checking_only(node: ast.AST, parents: dict) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, str, int]]:
    """``(target module, imported name or "", line)`` for each ``coarsen_nb`` import in one module."""
    tree = ast.parse(path.read_text(), str(path))
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.split(".")[0] == PACKAGE]
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        if base.split(".")[0] != PACKAGE:
            continue
        for a in node.names:
            sub = f"{base}.{a.name}"
            out.append((sub, "", node.lineno) if sub in known else (base, a.name, node.lineno))
    return out


def graph() -> dict[str, dict[str, int]]:
    """``{module: {imported module: first line}}`` over the package (self-imports dropped)."""
    mods = modules()
    g: dict[str, dict[str, int]] = {m: {} for m in mods}
    for m, path in mods.items():
        for target, _, line in imports(m, path, set(mods)):
            if target != m and target in mods:
                g[m].setdefault(target, line)
    return g


def strongly_connected(g: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


def _path(g: dict[str, dict[str, int]], start: str, goal: str, inside: set[str]) -> list[str]:
    """A shortest path ``start … goal`` through ``inside`` (breadth first, neighbours in sorted order)."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v]):
                if w in inside and w not in paths:
                    paths[w] = paths[v] + [w]
                    if w == goal:
                        return paths[w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("not strongly connected")     # pragma: no cover


def cycles(g: dict[str, dict[str, int]]) -> list[list[str]]:
    """Import cycles covering every edge inside every strongly connected component.

    Each edge ``a -> b`` not yet on a listed cycle gives the cycle ``a -> b`` plus a shortest way back
    from ``b`` to ``a``: so ``x ⇄ y`` and ``x ⇄ z`` in one component are both named, not just one.
    """
    out = []
    for comp in strongly_connected(g):
        inside, covered = set(comp), set()
        for a in comp:
            for b in sorted(g[a]):
                if b in inside and (a, b) not in covered:
                    cyc = [a] + _path(g, b, a, inside) if b != a else [a, a]
                    covered.update(zip(cyc, cyc[1:], strict=False))
                    out.append(cyc)
    return out


def _short(m: str) -> str:
    return m.removeprefix(PACKAGE + ".").replace(".", "/") or PACKAGE


def describe_cycles(g: dict[str, dict[str, int]]) -> list[str]:
    """Each cycle of :func:`cycles` as ``a (line n) -> b (line m) -> a``: the line of each import."""
    return [" -> ".join([f"{_short(a)} (line {g[a][b]})" for a, b in zip(c, c[1:], strict=False)]
                        + [_short(c[-1])]) for c in cycles(g)]


def test_no_import_cycles():
    cycles = describe_cycles(graph())
    assert not cycles, "import cycles in coarsen_nb:\n" + "\n".join(cycles)


def test_no_imports_of_private_names():
    """``from X import _name`` of another module's private name: make it public where it is shared."""
    mods = modules()
    bad = [f"{_short(m)} line {line}: from {_short(target)} import {what}"
           for m, path in mods.items() for target, what, line in imports(m, path, set(mods))
           if what.startswith("_") and not what.startswith("__") and target != m]
    assert not bad, "imports of another module's private name:\n" + "\n".join(bad)


def test_soi_never_imports_lower():
    """DESIGN.md, Lowering: SOI selection needs only the lifted graph, so ``soi/`` never imports ``lower/``."""
    g = graph()
    bad = [f"{_short(m)} line {line}: imports {_short(t)}" for m in g if m.startswith(f"{PACKAGE}.soi.")
           for t, line in g[m].items() if t == f"{PACKAGE}.lower" or t.startswith(f"{PACKAGE}.lower.")]
    assert not bad, "soi/ imports lower/:\n" + "\n".join(bad)


def test_the_checker_sees_a_cycle():
    """The checker itself: a two-module cycle and a longer one are both found and named."""
    g = {"a": {"b": 1}, "b": {"a": 2}, "c": {"d": 1}, "d": {"e": 3}, "e": {"c": 4}, "f": {"a": 1}}
    g |= {"x": {"y": 1, "z": 2}, "y": {"x": 3}, "z": {"x": 4}}
    assert describe_cycles(g) == ["a (line 1) -> b (line 2) -> a", "c (line 1) -> d (line 3) -> e (line 4) -> c",
                                  "x (line 1) -> y (line 3) -> x", "x (line 2) -> z (line 4) -> x"]
