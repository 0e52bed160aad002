"""Backends are registered in one place (:mod:`coarsen_nb.backends`): no other module compares a
backend or array-module name with a string, and every registered backend is complete."""

from __future__ import annotations

import ast

import pytest
from test_import_graph import ROOT, modules

from coarsen_nb import backends

#: Where backend names may be spelled out: the registry, and a backend's own modules.
OWN = {"coarsen_nb.backends", "coarsen_nb.lower.cupy", "coarsen_nb.lower.fusion", "coarsen_nb.lower.cuda_printer",
       "coarsen_nb.numba_loader"} | {m for m in modules() if m.startswith("coarsen_nb.lower.numba_")}


def _names_tested(node: ast.AST) -> list[str]:
    """The string constants a comparison (``==``, ``in (...)``) or a ``startswith``/``endswith`` tests against."""
    if isinstance(node, ast.Compare):
        parts = [node.left, *node.comparators]
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
          and node.func.attr in ("startswith", "endswith")):
        parts = node.args
    else:
        return []
    return [c.value for part in parts for c in ast.walk(part) if isinstance(c, ast.Constant)]


def test_no_backend_name_comparisons_outside_the_registry():
    # NumPy is also the language of the user's code, which the frontend and the primitive table recognize
    # by its module's name: the default backend's names are not the question here, the others' are
    names = ({b.name for b in backends.BACKENDS.values()} | {b.xp_module for b in backends.BACKENDS.values()}) - {
        backends.NUMPY.name, backends.NUMPY.xp_module}
    bad = []
    for m, path in modules().items():
        if m in OWN:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if any(v in names for v in _names_tested(node)):
                bad.append(f"{path.relative_to(ROOT.parent)} line {node.lineno}: {ast.unparse(node)}")
    assert not bad, "backend names compared outside coarsen_nb/backends.py:\n" + "\n".join(bad)


def test_an_array_of_a_backend():
    import numpy as np

    assert backends.is_array(np.zeros(2)) and backends.is_array(np.zeros(()))
    assert not any(backends.is_array(v) for v in (1.0, np.float64(1.0), [1.0], np.complex128(1j)))


@pytest.mark.parametrize("name", list(backends.BACKENDS))
def test_every_backend_is_complete(name):
    b = backends.get(name)
    assert b.name == name and b.xp_module and b.needs
    assert b.loads_everywhere or b.install_hint, "a backend that may not load must say what to install"
    if b.fuser is not None:
        assert callable(b.fuser.forward_lines) and callable(b.fuser.reverse_lines)
    # the backend a module name gives prints for that array module (numba compiles NumPy code)
    assert backends.for_module(b.xp_module).xp_module == b.xp_module
    assert b.frees_temporaries or b.compiles, "only a compiled backend manages its temporaries itself"


def test_another_array_namespace_is_a_plain_backend():
    b = backends.for_module("array_api_strict")
    assert (b.xp_module, b.fuser, b.prologue) == ("array_api_strict", None, "")
