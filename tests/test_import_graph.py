"""The package's import graph: no cycles, no borrowed private names, and the
layering DESIGN.md states ("soi/ never imports lower/").

Every module of ``coarsen_nb/`` is parsed with :mod:`ast`, and every import
counts, at module level and inside functions alike: an import deferred into a
function to dodge a cycle at load time is still a cycle in the design.  An
edge goes to the module an import names (``from coarsen_nb.lower import
module`` names ``coarsen_nb.lower.module``; ``from coarsen_nb import
__version__`` names the package ``coarsen_nb`` itself); the implicit import of
a parent package is not an edge.  Imports under ``if TYPE_CHECKING:`` are
annotations only and are not edges.  A borrowed private name is one imported
(``from X import _name``) or read through a module name bound to another
module of the package (``X._name``); the numba ``xp`` files, one namespace
written in several files, share theirs (see :func:`_own_module_lines`).
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


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _from_import(node: ast.ImportFrom, name: str, path: Path, known: set[str]) -> list[tuple[str, str, int]]:
    """``(target module, imported name or "", line)`` for each name of one ``from ... import``, or ``[]``
    when it imports from outside the package."""
    base = node.module or ""
    if node.level:
        package = _package(name, path).split(".")
        base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
    if base.split(".")[0] != PACKAGE:
        return []
    return [(f"{base}.{a.name}", "", node.lineno) if f"{base}.{a.name}" in known else (base, a.name, node.lineno)
            for a in node.names]


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, str, int]]:
    """``(target module, imported name or "", line)`` for each ``coarsen_nb`` import in one module."""
    tree = ast.parse(path.read_text(), str(path))
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.split(".")[0] == PACKAGE]
        else:
            out += _from_import(node, name, path, known)
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


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _own_module_lines(path: Path) -> set[int]:
    """The lines of a ``# <own-module>`` ... ``# </own-module>`` block.

    The numba ``xp`` namespace is one module written in several files (``lower/numba_xp*.py``):
    :mod:`coarsen_nb.backends` pastes their text, one after the other, into every numba module, and
    leaves such a block out.  The block exists only so that a continuation file imports on its own
    (the tests), taking the names the files before it define in the same namespace (numba_xp_axes.py,
    the second half of numba_xp's text, has its docstring in it too); their ``_``
    marks them private to the generated module (no clash with the user's names), not to one file.
    """
    out, inside = set(), False
    for k, text in enumerate(path.read_text().splitlines(), 1):
        if text.strip() == "# <own-module>":
            inside = True
        elif text.strip() == "# </own-module>":
            inside = False
        elif inside:
            out.add(k)
    return out


def private_uses(name: str, path: Path, known: set[str]) -> list[str]:
    """``from X import _name`` and ``X._name`` (``X`` bound to another module of the package) in one module."""
    own = _own_module_lines(path)
    found = imports(name, path, known)
    out = [f"line {line}: from {_short(target)} import {what}" for target, what, line in found
           if _private(what) and target != name and line not in own]
    tree = ast.parse(path.read_text(), str(path))
    bound = {}     # local name -> the module of the package it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bound |= {a.asname: a.name for a in node.names if a.asname and a.name in known}
        elif isinstance(node, ast.ImportFrom):
            bound |= {a.asname or a.name: target for a, (target, what, _) in
                      zip(node.names, _from_import(node, name, path, known), strict=False) if not what}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr)
                and bound.get(node.value.id, name) != name and node.lineno not in own):
            out.append(f"line {node.lineno}: {node.value.id}.{node.attr} ({_short(bound[node.value.id])})")
    return out


def test_no_uses_of_private_names():
    """Another module's private name, imported (``from X import _name``) or read (``X._name``): make
    it public where it is shared."""
    mods = modules()
    bad = [f"{_short(m)} {use}" for m, path in mods.items() for use in private_uses(m, path, set(mods))]
    assert not bad, "uses of another module's private name:\n" + "\n".join(bad)


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


def test_the_checker_sees_private_uses(tmp_path):
    """The checker itself: a private name imported, read through a module, or shared in an own-module block."""
    f = tmp_path / "m.py"
    f.write_text("from coarsen_nb.phi import forms\nfrom coarsen_nb.ir import _PREC, Name\n"
                 "import coarsen_nb.lower.emit as em\nforms._x, em._y, forms.z, Name._n\n"
                 "# <own-module>\nfrom coarsen_nb.ir import _wrap\nforms._ok\n# </own-module>\n")
    known = {"coarsen_nb.phi.forms", "coarsen_nb.ir", "coarsen_nb.lower.emit", "coarsen_nb.m"}
    assert sorted(private_uses("coarsen_nb.m", f, known)) == [
        "line 2: from ir import _PREC", "line 4: em._y (lower/emit)", "line 4: forms._x (phi/forms)"]
